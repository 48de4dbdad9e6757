//! The error answers' vocabulary: which error ([`ErrorKind`]), what its body names
//! ([`ErrorContext`]) and what is sent ([`ErrorAnswer`]); a service writes them its own way
//! ([`crate::render`], [`crate::templates`]).

/// Kinds of error answers a service gives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Over the rate limit.
    RateLimited,
    /// Over a concurrency limit: too many requests in flight (MoySklad's 1073).
    TooManyInFlight,
    /// Bitrix24: a method's operating-time budget is spent.
    OperatingTime,
    /// Missing or unknown credentials.
    Unauthorized,
    /// Credentials without the right.
    Forbidden,
    /// Nothing at this path.
    NotFound,
    /// A conflict (WB: counts as several requests).
    Conflict,
    /// A request the service rejects, with the reason.
    BadRequest(String),
    /// A request its operation's description does not allow: what is wrong, where, and the
    /// whole reason (`body.limit: want integer, but got string`).
    Invalid {
        /// What kind of wrong.
        problem: Problem,
        /// Where: `body.filter.offer_id[3]`, `query.limit`, `Content-Type`.
        field: String,
        /// The whole reason, the place first.
        message: String,
    },
    /// A client locked out after repeated violations (amoCRM's 403).
    Locked,
    /// The service failed.
    ServerError,
    /// The service is down for a while.
    Unavailable,
    /// The request body is larger than the service takes (413), with the reason.
    TooLarge(String),
    /// The request body did not arrive in time (408), with the reason.
    RequestTimeout(String),
    /// No answer in time from behind the service's gateway (504: the `timeout` scenario).
    GatewayTimeout,
}

/// What is wrong with a request its description does not allow: a service that answers each
/// kind its own way (MoySklad's codes 2001, 3000, 2016, 3005) has a template for each
/// (`invalid_syntax`, `invalid_missing`, …), else its `bad_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The body is not the syntax its `Content-Type` says (malformed JSON).
    Syntax,
    /// A body of a media type the operation does not take, or none named.
    MediaType,
    /// A required parameter, body or property is missing.
    Missing,
    /// A property the object does not take.
    Unknown,
    /// A value of the wrong type.
    Type,
    /// A value of the right type that is not allowed (an enum, a bound, a length, a pattern).
    Value,
}

impl Problem {
    /// Its name in template names (`invalid_{name}`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Syntax => "syntax",
            Self::MediaType => "media_type",
            Self::Missing => "missing",
            Self::Unknown => "unknown",
            Self::Type => "type",
            Self::Value => "value",
        }
    }
}

/// Per-request values an error body carries.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ErrorContext<'a> {
    /// The request id.
    pub request_id: &'a str,
    /// RFC 3339 UTC time of the answer.
    pub timestamp: &'a str,
    /// The capacity of the bucket that refused, for messages that name it.
    pub limit: u32,
    /// Whole seconds until a retry may pass, for bodies that say so.
    pub retry_after: u64,
}

impl<'a> ErrorContext<'a> {
    /// A context.
    pub fn new(request_id: &'a str, timestamp: &'a str, limit: u32) -> Self {
        Self {
            request_id,
            timestamp,
            limit,
            retry_after: 0,
        }
    }

    /// The same context, naming another limit (a full concurrency limit's, not a bucket's).
    #[must_use]
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = limit;
        self
    }

    /// The same context, with the pause before a retry.
    #[must_use]
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after = secs;
        self
    }
}

/// An error answer: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ErrorAnswer {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

/// The reason phrase the services send with `status`, where the catalog knows one — Yandex
/// Market's 420 `Enhance Your Calm` among them, which HTTP does not name and a server would send
/// with none.
///
/// ```
/// assert_eq!(apistend_catalog::reason_phrase(420), Some("Enhance Your Calm"));
/// assert_eq!(apistend_catalog::reason_phrase(299), None);
/// ```
pub fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        402 => "Payment Required",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        412 => "Precondition Failed",
        420 => "Enhance Your Calm",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}

/// The words of `status` in an error body (`statusText`, `{status_text}`): its reason phrase,
/// else `Error`.
pub(crate) fn status_text(status: u16) -> &'static str {
    reason_phrase(status).unwrap_or("Error")
}

/// Bitrix24's error code of a request over the limit (its 503).
pub(crate) const B24_RATE_LIMIT_CODE: &str = "QUERY_LIMIT_EXCEEDED";

/// Bitrix24's error code of a method whose operating time is spent (its 429).
pub(crate) const B24_OPERATING_TIME_CODE: &str = "OPERATION_TIME_LIMIT";
