//! What is noted of a request on its way, for its record ([`super::observe`]).

use std::sync::Arc;

/// What the metrics and the dashboard need to know of a request besides its answer.
pub(super) struct Noted {
    /// The operation's own limit group (an index into the service's groups).
    pub(super) group: usize,
    /// Whether the scenario was drawn from the sandbox's default scenario.
    pub(super) chaos: bool,
    /// The bucket's (remaining, limit) after the request's token.
    pub(super) fill: Option<(u32, u32)>,
    /// The sandbox and key of the request, when a dashboard feed is open (else not looked at).
    pub(super) watched: Option<(Arc<str>, Arc<str>)>,
    /// Refused as its description does not allow it (a refusal for the dashboard's feed).
    pub(super) invalid: bool,
}
