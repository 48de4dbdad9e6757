//! What a service sends back: its error bodies and its rate-limit headers, as strings (the sandbox
//! puts them on the wire; the catalog knows nothing of HTTP libraries).

use std::fmt::Write as _;

use serde_json::json;

use crate::model::{ErrorStyle, Service};

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

pub(crate) fn status_text(status: u16) -> &'static str {
    match status {
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
        _ => "Error",
    }
}

impl Service {
    /// The service's own answer for `kind`, as the real service gives it.
    pub fn error(&self, kind: &ErrorKind, ctx: &ErrorContext<'_>) -> ErrorAnswer {
        match self.errors {
            ErrorStyle::Wb => wb(kind, ctx),
            ErrorStyle::B24 => b24(kind),
            ErrorStyle::Apify => apify(kind, ctx),
            ErrorStyle::Ozon => ozon(kind),
            ErrorStyle::Template => crate::templates::render(
                &self.error_templates,
                kind,
                ctx,
                (self.rejection.status, self.rejection.content_type),
            ),
        }
    }
}

fn wb(kind: &ErrorKind, ctx: &ErrorContext<'_>) -> ErrorAnswer {
    let (status, title, detail): (u16, &str, &str) = match kind {
        ErrorKind::RateLimited | ErrorKind::OperatingTime | ErrorKind::TooManyInFlight => {
            (429, "too many requests", "limited by apistend sandbox")
        }
        ErrorKind::Unauthorized => (
            401,
            "unauthorized",
            "token problem; token is not valid for this sandbox",
        ),
        ErrorKind::Forbidden | ErrorKind::Locked => {
            (403, "forbidden", "access denied for this token")
        }
        ErrorKind::NotFound => (
            404,
            "path not found",
            "Please consult the https://dev.wildberries.ru/openapi/api-information",
        ),
        ErrorKind::Conflict => (
            409,
            "conflict",
            "the request conflicts with the current state",
        ),
        ErrorKind::BadRequest(why) => (400, "bad request", why.as_str()),
        ErrorKind::ServerError => (500, "internal server error", "internal server error"),
        ErrorKind::Unavailable => (
            503,
            "service unavailable",
            "service temporarily unavailable",
        ),
        ErrorKind::TooLarge(why) => (413, "payload too large", why.as_str()),
        ErrorKind::RequestTimeout(why) => (408, "request timeout", why.as_str()),
        ErrorKind::GatewayTimeout => (504, "gateway timeout", "the service did not answer in time"),
    };
    // Written by hand into one allocation: this body is on every WB rejection, the hot path of an
    // exhausted bucket.
    let mut body = String::with_capacity(
        190 + title.len() + detail.len() + ctx.request_id.len() + ctx.timestamp.len(),
    );
    body.push_str(r#"{"title":""#);
    body.push_str(title);
    body.push_str(r#"","detail":"#);
    push_json_string(&mut body, detail);
    body.push_str(r#","code":"apistend-"#);
    push_status(&mut body, status);
    body.push_str(r#"","requestId":"#);
    push_json_string(&mut body, ctx.request_id);
    body.push_str(r#","origin":"s2s-api-auth-catalog","status":"#);
    push_status(&mut body, status);
    body.push_str(r#","statusText":""#);
    body.push_str(status_text(status));
    body.push_str(r#"","timestamp":"#);
    push_json_string(&mut body, ctx.timestamp);
    body.push('}');
    ErrorAnswer {
        status,
        content_type: "application/json",
        body,
    }
}

/// Appends an HTTP status (three digits) without the formatting machinery, which cost more
/// than the rest of the body.
fn push_status(out: &mut String, status: u16) {
    if (100..1000).contains(&status) {
        for d in [status / 100, status / 10 % 10, status % 10] {
            out.push(char::from_digit(u32::from(d), 10).unwrap_or('0'));
        }
    } else {
        let _ = write!(out, "{status}");
    }
}

/// Appends `s` as a JSON string literal.
fn push_json_string(out: &mut String, s: &str) {
    // Every byte looked at, without stopping at the first that needs escaping: that loop has no
    // branch per byte, and the strings here (ids, timestamps, messages) almost never need it
    // (callgrind: 956 → 434 instructions a WB rejection).
    let bad = s.bytes().fold(false, |bad, b| {
        bad | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if !bad {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::Value::from(s).to_string());
    }
}

/// Bitrix24's error code of a request over the limit (its 503).
pub(crate) const B24_RATE_LIMIT_CODE: &str = "QUERY_LIMIT_EXCEEDED";

/// Bitrix24's error code of a method whose operating time is spent (its 429).
pub(crate) const B24_OPERATING_TIME_CODE: &str = "OPERATION_TIME_LIMIT";

fn b24(kind: &ErrorKind) -> ErrorAnswer {
    let (status, code, text) = match kind {
        ErrorKind::RateLimited | ErrorKind::TooManyInFlight => {
            (503, B24_RATE_LIMIT_CODE, "Too many requests".to_owned())
        }
        ErrorKind::OperatingTime => (
            429,
            B24_OPERATING_TIME_CODE,
            "Method is blocked due to operation time limit.".to_owned(),
        ),
        ErrorKind::Unauthorized => (401, "NO_AUTH_FOUND", "Wrong authorization data".to_owned()),
        ErrorKind::Forbidden | ErrorKind::Locked => (
            403,
            "insufficient_scope",
            "The request requires higher privileges than provided by the access token".to_owned(),
        ),
        ErrorKind::NotFound => (
            404,
            "ERROR_METHOD_NOT_FOUND",
            "Method not found!".to_owned(),
        ),
        ErrorKind::Conflict => (400, "ERROR_CORE", "Conflict".to_owned()),
        ErrorKind::BadRequest(why) => (400, "INVALID_REQUEST", why.clone()),
        ErrorKind::ServerError => (
            500,
            "INTERNAL_SERVER_ERROR",
            "Internal server error".to_owned(),
        ),
        ErrorKind::Unavailable => (
            503,
            "SERVICE_UNAVAILABLE",
            "Service is temporarily unavailable".to_owned(),
        ),
        ErrorKind::TooLarge(why) => (413, "REQUEST_ENTITY_TOO_LARGE", why.clone()),
        ErrorKind::RequestTimeout(why) => (408, "REQUEST_TIMEOUT", why.clone()),
        ErrorKind::GatewayTimeout => (504, "GATEWAY_TIMEOUT", "Gateway timeout".to_owned()),
    };
    ErrorAnswer {
        status,
        content_type: "application/json; charset=utf-8",
        body: json!({"error": code, "error_description": text}).to_string(),
    }
}

fn apify(kind: &ErrorKind, ctx: &ErrorContext<'_>) -> ErrorAnswer {
    let (status, ty, message) = match kind {
        ErrorKind::RateLimited | ErrorKind::OperatingTime | ErrorKind::TooManyInFlight => (
            429,
            "rate-limit-exceeded",
            format!(
                "You have exceeded the rate limit of {} requests per second",
                ctx.limit
            ),
        ),
        ErrorKind::Unauthorized => (
            401,
            "token-not-provided",
            "Authentication token was not provided".to_owned(),
        ),
        ErrorKind::Forbidden | ErrorKind::Locked => (
            403,
            "insufficient-permissions",
            "You do not have permission to perform this action".to_owned(),
        ),
        ErrorKind::NotFound => (
            404,
            "page-not-found",
            "We are sorry, but this page cannot be found".to_owned(),
        ),
        ErrorKind::Conflict => (
            409,
            "conflict",
            "The resource was changed concurrently".to_owned(),
        ),
        ErrorKind::BadRequest(why) => (400, "invalid-input", why.clone()),
        ErrorKind::ServerError => (
            500,
            "internal-server-error",
            "Internal server error".to_owned(),
        ),
        ErrorKind::Unavailable => (
            503,
            "service-unavailable",
            "Service is temporarily unavailable".to_owned(),
        ),
        ErrorKind::TooLarge(why) => (413, "request-too-large", why.clone()),
        ErrorKind::RequestTimeout(why) => (408, "request-timeout", why.clone()),
        ErrorKind::GatewayTimeout => (
            504,
            "gateway-timeout",
            "The server did not answer in time".to_owned(),
        ),
    };
    ErrorAnswer {
        status,
        content_type: "application/json; charset=utf-8",
        body: json!({"error": {"type": ty, "message": message}}).to_string(),
    }
}

fn ozon(kind: &ErrorKind) -> ErrorAnswer {
    let (status, code, message) = match kind {
        ErrorKind::RateLimited | ErrorKind::OperatingTime | ErrorKind::TooManyInFlight => (
            429,
            8,
            "You have reached request rate limit per second".to_owned(),
        ),
        ErrorKind::Unauthorized => (
            401,
            16,
            "Client-Id and Api-Key headers are required".to_owned(),
        ),
        ErrorKind::Forbidden | ErrorKind::Locked => (403, 7, "Permission denied".to_owned()),
        ErrorKind::NotFound => (404, 5, "Not Found".to_owned()),
        ErrorKind::Conflict => (409, 10, "Conflict".to_owned()),
        ErrorKind::BadRequest(why) => (400, 3, why.clone()),
        ErrorKind::ServerError => (500, 13, "Internal error".to_owned()),
        ErrorKind::Unavailable => (503, 14, "Service unavailable".to_owned()),
        ErrorKind::TooLarge(why) => (413, 3, why.clone()),
        ErrorKind::RequestTimeout(why) => (408, 4, why.clone()),
        ErrorKind::GatewayTimeout => (504, 4, "Deadline exceeded".to_owned()),
    };
    ErrorAnswer {
        status,
        content_type: "application/json",
        body: json!({"code": code, "message": message, "details": []}).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wb_bodies_are_valid_json_whatever_the_detail() {
        for (kind, status) in [
            (ErrorKind::RateLimited, 429),
            (ErrorKind::NotFound, 404),
            (
                ErrorKind::BadRequest("parameter \"x\" is\\required\n".into()),
                400,
            ),
        ] {
            let ctx = ErrorContext::new("id\"1", "2026-11-30T08:28:14Z", 5);
            let e = wb(&kind, &ctx);
            let v: serde_json::Value = serde_json::from_str(&e.body).unwrap();
            assert_eq!(v["status"], status);
            assert_eq!(v["code"], format!("apistend-{status}"));
            assert_eq!(v["requestId"], "id\"1");
            assert_eq!(v["timestamp"], "2026-11-30T08:28:14Z");
            if let ErrorKind::BadRequest(why) = &kind {
                assert_eq!(v["detail"], why.as_str());
            }
        }
    }

    #[test]
    fn a_status_is_written_as_its_digits() {
        for status in [100, 204, 429, 504, 999, 42, 1000] {
            let mut out = String::new();
            push_status(&mut out, status);
            assert_eq!(out, status.to_string());
        }
    }
}
