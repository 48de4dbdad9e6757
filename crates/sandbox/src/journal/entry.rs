//! One request as the pipeline saw it, kept as it came (cheap to make on the request path:
//! shared bytes, no rendering); masked and rendered only when it is read ([`super::record`]).

use std::sync::Arc;

use apistend_catalog::ServiceId;
use axum::body::Bytes;
use serde::{Deserialize, Serialize};

/// Why the sandbox refused a request rather than answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Refused {
    /// Over the limit of a bucket: the service's rate-limit answer.
    Limit,
    /// The request is not one the service's description allows (or a control header is not
    /// one the sandbox reads).
    Validation,
    /// The key is locked out after repeated rejections (the definition's `lockout`).
    Lockout,
    /// Too many of the key's requests at once (the definition's `in_flight`).
    InFlight,
    /// The called method's operating-time budget is spent (Bitrix24's `OPERATION_TIME_LIMIT`).
    Operating,
    /// A scenario answered instead (`X-Mock-Scenario`, or the sandbox's default scenario).
    Scenario,
}

impl Refused {
    /// Its name in the journal and its filters.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refused::Limit => "limit",
            Refused::Validation => "validation",
            Refused::Lockout => "lockout",
            Refused::InFlight => "in_flight",
            Refused::Operating => "operating",
            Refused::Scenario => "scenario",
        }
    }
}

/// A request and its answer, as they went. Its buffers are reused: the journal hands out the
/// slot of a sandbox's oldest request when the sandbox is at its bound (or a spare one), so a
/// busy sandbox journals without allocating.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The sandbox whose key made it.
    pub(crate) sandbox: Arc<str>,
    /// The key, or `app:ID` for a Bitrix24 local application.
    pub(crate) key: Arc<str>,
    /// The credential as presented, when it is not the key itself (a Bitrix24 application's
    /// token): masked wherever it shows, as the key is.
    pub(crate) credential: Option<Arc<str>>,
    pub(crate) service: ServiceId,
    /// The operation, as an index into the service's operations.
    pub(crate) operation: Option<usize>,
    /// The operation's own limit group (an index into the service's groups).
    pub(crate) group: Option<usize>,
    /// The number of the connection it came on (0: not known).
    pub(crate) conn: u64,
    /// When it arrived, in microseconds since the Unix epoch.
    pub(crate) at_us: u64,
    /// From its arrival to its answer's head.
    pub(crate) latency_us: u64,
    /// Its method, target and headers ([`super::head::request`]).
    pub(crate) head: Vec<u8>,
    /// The start of its body (up to the journal's bound, copied: a slice would keep the
    /// connection's read buffer alive).
    pub(crate) body: Vec<u8>,
    /// Its body's whole length.
    pub(crate) body_len: usize,
    pub(crate) status: u16,
    /// The answer's headers ([`super::head::answer`]).
    pub(crate) answer_head: Vec<u8>,
    /// The start of the answer's body (shared: the sandbox made it), and its whole length.
    pub(crate) answer_body: Bytes,
    pub(crate) answer_len: usize,
    /// The bucket's tokens left and capacity after the request, when it reached the limit.
    pub(crate) fill: Option<(u32, u32)>,
    pub(crate) refused: Option<Refused>,
}

impl Entry {
    /// An empty slot.
    pub(crate) fn empty() -> Box<Self> {
        Box::new(Entry {
            sandbox: Arc::from(""),
            key: Arc::from(""),
            credential: None,
            // No service yet: the pipeline names it when it fills the slot.
            service: Default::default(),
            operation: None,
            group: None,
            conn: 0,
            at_us: 0,
            latency_us: 0,
            head: Vec::new(),
            body: Vec::new(),
            body_len: 0,
            status: 0,
            answer_head: Vec::new(),
            answer_body: Bytes::new(),
            answer_len: 0,
            fill: None,
            refused: None,
        })
    }

    /// Keeps at most `max` bytes of the request's `body` (copied into this slot's buffer).
    pub(crate) fn keep_body(&mut self, body: &[u8], max: usize) {
        self.body.clear();
        self.body
            .extend_from_slice(body.get(..max.min(body.len())).unwrap_or_default());
        self.body_len = body.len();
    }

    /// Keeps at most `max` bytes of the answer's `body` (shared when it is short enough).
    pub(crate) fn keep_answer_body(&mut self, body: Bytes, max: usize) {
        self.answer_len = body.len();
        self.answer_body = if body.len() <= max {
            body
        } else {
            Bytes::copy_from_slice(body.get(..max).unwrap_or_default())
        };
    }

    /// What it holds, in bytes (its buffers' capacities): what the journal's byte budget counts.
    pub(crate) fn weight(&self) -> usize {
        256 + self.head.capacity()
            + self.answer_head.capacity()
            + self.body.capacity()
            + self.answer_body.len()
    }

    /// When its answer was sent, in milliseconds since the Unix epoch.
    pub(crate) fn answered_ms(&self) -> u64 {
        (self.at_us + self.latency_us) / 1000
    }
}
