//! What the client tells of what it learned: [`LearnedQuota`], and where it came from.

use std::time::Duration;

use apistend_limiter::Quota;

/// Where a learned quota comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LearnedFrom {
    /// The server's rate-limit headers (tokens left, limit) and its rejections.
    Headers,
    /// The server's rejections alone, for a service that reports no tokens left.
    Rejections,
}

impl LearnedFrom {
    /// `headers` or `rejections`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Headers => "headers",
            Self::Rejections => "rejections",
        }
    }
}

/// A quota the client enforces on one bucket of its account instead of the catalog's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LearnedQuota {
    /// The limit group.
    pub group: String,
    /// The bucket's key in the shared store.
    pub key: String,
    /// The catalog's quota of the group.
    pub catalog: Quota,
    /// The quota enforced instead.
    pub quota: Quota,
    /// What it was learned from.
    pub from: LearnedFrom,
    /// How long it holds without new evidence.
    pub expires_in: Duration,
}
