//! What one proxy allows a request: its body, its time.

use std::time::Duration;

/// Limits of one proxy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_body_bytes: usize,
    pub(crate) read_timeout: Duration,
    /// What a request may take in all, to its answer's head.
    pub(crate) upstream_timeout: Duration,
    /// The largest answer body read whole to judge it.
    pub(crate) max_judged_body_bytes: usize,
}
