//! What is noted of a request on its way, for its record ([`super::observe`]) and its entry in
//! the journal ([`super::journal`]).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use http::Response;

use crate::journal::{Entry, Refused};

/// What the metrics, the dashboard and the journal need to know of a request besides its
/// answer.
#[derive(Default)]
pub(super) struct Noted {
    /// The operation's own limit group (an index into the service's groups; `usize::MAX`
    /// before the request is resolved, or when it draws from none).
    pub(super) group: usize,
    /// Whether the scenario was drawn from the sandbox's default scenario.
    pub(super) chaos: bool,
    /// The bucket's (remaining, limit) after the request's token.
    pub(super) fill: Option<(u32, u32)>,
    /// Whose request it is, when a dashboard feed is open (else not looked at).
    pub(super) whose: Option<Whose>,
    /// Refused as its description does not allow it (a refusal for the dashboard's feed).
    pub(super) invalid: bool,
    /// Why the sandbox refused it, if it did.
    pub(super) refused: Option<Refused>,
    /// The operation, as an index into the service's operations.
    pub(super) operation: Option<usize>,
    /// The number of the connection it came on (0: not known).
    pub(super) conn: u64,
    /// The request's entry in the journal when it keeps the request: whose it is, then its
    /// head and body (a slot the journal lent: [`crate::journal::Journal::slot`]).
    pub(super) entry: Option<Box<Entry>>,
    /// The answer's body as it was made (or read before it was wrapped to hold a slot), for
    /// the journal.
    pub(super) sent: Option<Bytes>,
    /// The answer wrote its head and body into the entry as it was made (else they are read
    /// from the response).
    pub(super) answered: bool,
}

/// The sandbox and key of a request, for the dashboard's feed.
pub(super) struct Whose {
    pub(super) sandbox: Arc<str>,
    pub(super) key: Arc<str>,
}

impl Noted {
    /// `step`, noting a refusal of it as `kind`.
    pub(super) fn refusing<T>(
        &mut self,
        kind: Refused,
        step: Result<T, Response<Body>>,
    ) -> Result<T, Response<Body>> {
        if step.is_err() {
            self.refused = Some(kind);
        }
        step
    }

    /// Whether the journal keeps this request and its answer's body is to be read back from
    /// the response (the answer did not write it into the entry as it was made).
    pub(super) fn body_unread(&self) -> bool {
        self.journaled() && self.sent.is_none() && !self.answered
    }

    /// Whether the journal keeps this request.
    pub(super) fn journaled(&self) -> bool {
        self.entry.is_some()
    }
}
