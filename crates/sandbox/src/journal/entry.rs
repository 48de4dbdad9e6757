//! One request as the pipeline saw it, kept as it came (cheap to make on the request path:
//! shared bytes, no rendering); masked and rendered only when it is read ([`super::record`]).

use std::sync::Arc;

use apistend_catalog::ServiceId;
use axum::body::Bytes;
use http::{HeaderMap, Method, Uri};
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

/// A request and its answer, as they went.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The sandbox whose key made it.
    pub(crate) sandbox: Arc<str>,
    /// The key, or `app:ID` for a Bitrix24 local application.
    pub(crate) key: Arc<str>,
    /// The credential as presented (a key, a token): masked wherever it shows.
    pub(crate) credential: Option<Arc<str>>,
    pub(crate) service: ServiceId,
    /// The operation, as an index into the service's operations.
    pub(crate) operation: Option<usize>,
    /// The operation's own limit group (an index into the service's groups).
    pub(crate) group: Option<usize>,
    /// When it arrived, in microseconds since the Unix epoch.
    pub(crate) at_us: u64,
    /// From its arrival to its answer's head.
    pub(crate) latency_us: u64,
    pub(crate) method: Method,
    pub(crate) uri: Uri,
    pub(crate) headers: HeaderMap,
    /// The start of its body (up to the journal's bound) and its whole length.
    pub(crate) body: Kept,
    pub(crate) status: u16,
    pub(crate) answer_headers: HeaderMap,
    pub(crate) answer_body: Kept,
    /// The bucket's tokens left and capacity after the request, when it reached the limit.
    pub(crate) fill: Option<(u32, u32)>,
    pub(crate) refused: Option<Refused>,
}

/// The start of a body, and its whole length.
#[derive(Debug, Clone, Default)]
pub(crate) struct Kept {
    pub(crate) bytes: Bytes,
    pub(crate) len: usize,
}

impl Kept {
    /// At most `max` bytes of `body`: shared when it is short enough, copied otherwise (a slice
    /// of a large body would keep all of it alive).
    pub(crate) fn of(body: &Bytes, max: usize) -> Self {
        let bytes = if body.len() <= max {
            body.clone()
        } else {
            Bytes::copy_from_slice(body.get(..max).unwrap_or_default())
        };
        Kept {
            bytes,
            len: body.len(),
        }
    }
}

impl Entry {
    /// What it holds, in bytes (roughly): what the journal's byte budget counts.
    pub(crate) fn weight(&self) -> usize {
        let heads = |h: &HeaderMap| {
            h.iter()
                .map(|(k, v)| k.as_str().len() + v.len() + 16)
                .sum::<usize>()
        };
        256 + self.uri.path().len()
            + self.uri.query().map_or(0, str::len)
            + heads(&self.headers)
            + heads(&self.answer_headers)
            + self.body.bytes.len()
            + self.answer_body.bytes.len()
    }

    /// When its answer was sent, in milliseconds since the Unix epoch.
    pub(crate) fn answered_ms(&self) -> u64 {
        (self.at_us + self.latency_us) / 1000
    }
}
