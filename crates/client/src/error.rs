//! What a call can end in besides success.

use std::time::Duration;

/// Who refused a request for its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusedBy {
    /// The local limiter, before sending: the wait would pass the ceiling or the caller's deadline.
    Local,
    /// The remote service (429, or Bitrix24's 503 `QUERY_LIMIT_EXCEEDED`), after the last attempt.
    Server,
}

/// An error of a call. Rate limits carry [`retry_after`](ClientError::retry_after).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Over the rate limit, locally or at the server.
    #[error("rate limited ({refused_by:?}); retry in {retry_after:?}")]
    RateLimited {
        /// How long to wait before trying again.
        retry_after: Duration,
        /// Who refused.
        refused_by: RefusedBy,
    },
    /// The service kept failing with a 5xx.
    #[error("server error {status} after {attempts} attempt(s): {body}")]
    Server {
        /// The last status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// The last body.
        body: String,
    },
    /// The connection failed or timed out on every attempt.
    #[error("network error after {attempts} attempt(s): {source}")]
    Network {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        #[source]
        source: reqwest::Error,
    },
    /// 401: the credential is missing or wrong; retrying will not help.
    #[error("unauthorized (401): check the token: {body}")]
    Unauthorized {
        /// The service's error body.
        body: serde_json::Value,
    },
    /// 403: the credential lacks the right.
    #[error("forbidden (403): {body}")]
    Forbidden {
        /// The service's error body.
        body: serde_json::Value,
    },
    /// 404: no such resource or method.
    #[error("not found (404): {body}")]
    NotFound {
        /// The service's error body.
        body: serde_json::Value,
    },
    /// Another client error of the service, with its parsed body.
    #[error("API error {status}: {body}")]
    Api {
        /// The status.
        status: u16,
        /// The service's error body (a JSON string when it was not JSON).
        body: serde_json::Value,
    },
    /// The HTTP stack failed otherwise (not reqwest's own error) on every attempt.
    #[error("HTTP stack error after {attempts} attempt(s): {source}")]
    Transport {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        #[source]
        source: BoxError,
    },
    /// The limiter's store failed and is fail-closed.
    #[error(transparent)]
    Limiter(#[from] apistend_limiter::LimiterError),
    /// A bad setting.
    #[error("configuration: {0}")]
    Config(String),
}

impl ClientError {
    /// How long to wait before trying again, for a rate limit.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::RateLimited { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }

    /// Whether the call ended over the rate limit (for the job ladder).
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, ClientError::RateLimited { .. })
    }
}

/// The error type of the middleware: the inner service's error, or a [`ClientError`] (a local
/// refusal past the wait ceiling, or a failed fail-closed store).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
