//! The request id (of logs and error bodies) and the timestamp of error bodies.

use std::sync::OnceLock;

use apistend_catalog::ErrorContext;

use apistend_answers::clock::{rfc3339, unix_now_us};

/// Made only when something needs them: most answers need neither.
pub(super) struct Meta {
    /// When the request arrived (Unix seconds).
    pub(super) started: f64,
    /// The same in microseconds (the journal's: one reading of the clock, no float).
    pub(super) started_us: u64,
    /// The caller's `X-Request-Id`, when it is a usable one.
    given: Option<String>,
    id: OnceLock<String>,
    timestamp: OnceLock<String>,
}

impl Meta {
    /// `given`: the request's `X-Request-Id`, kept when it is a usable one.
    pub(super) fn new(given: Option<String>) -> Self {
        let given = given.filter(|v| v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()));
        let started_us = unix_now_us();
        Self {
            #[allow(clippy::cast_precision_loss)] // µs since 1970 fit a float's 52 bits
            started: started_us as f64 / 1e6,
            started_us,
            given,
            id: OnceLock::new(),
            timestamp: OnceLock::new(),
        }
    }

    /// The request id: the caller's, or one made now.
    pub(super) fn id(&self) -> &str {
        self.id.get_or_init(|| {
            self.given
                .clone()
                .unwrap_or_else(|| crate::secret::hex(&fastrand::u128(..).to_be_bytes()))
        })
    }

    /// What an error body of a bucket of `limit` names.
    pub(super) fn ctx(&self, limit: u32) -> ErrorContext<'_> {
        let ts = self.timestamp.get_or_init(|| rfc3339(self.started));
        ErrorContext::new(self.id(), ts, limit)
    }
}
