//! What a service sends back: its error bodies and its rate-limit headers, as strings (the sandbox
//! puts them on the wire; the catalog knows nothing of HTTP libraries). Their vocabulary is in
//! [`crate::error_kind`] and [`crate::rate_headers`].

use std::fmt::Write as _;

use apistend_limiter::{Decision, Quota};
use serde_json::json;

use crate::error_kind::{
    B24_OPERATING_TIME_CODE, B24_RATE_LIMIT_CODE, ErrorAnswer, ErrorContext, ErrorKind, Problem,
    status_text,
};
use crate::model::{ErrorStyle, Service};
use crate::rate_headers::{RateHeaders, RateValue, When, X_APISTEND_RETRY_AFTER};

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
        // `limited by` and the limiter's UUID, written below.
        ErrorKind::RateLimited | ErrorKind::OperatingTime | ErrorKind::TooManyInFlight => {
            (429, "too many requests", "")
        }
        // What WB's gateway (Go, golang-jwt) says of a token that is not one of its JWTs, as
        // the sandbox's keys are not.
        ErrorKind::Unauthorized => (
            401,
            "unauthorized",
            "token problem; token is malformed: token contains an invalid number of segments",
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
        ErrorKind::BadRequest(why) | ErrorKind::Invalid { message: why, .. } => {
            (400, "bad request", why.as_str())
        }
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
        250 + title.len() + detail.len() + ctx.request_id.len() + ctx.timestamp.len(),
    );
    body.push_str(r#"{"title":""#);
    body.push_str(title);
    body.push_str(r#"","detail":"#);
    if status == 429 {
        body.push_str(r#""limited by "#);
        crate::wb_ids::push_limiter(&mut body, ctx.request_id);
        body.push('"');
    } else {
        push_json_string(&mut body, detail);
    }
    body.push_str(r#","code":""#);
    crate::wb_ids::push_code(&mut body, ctx.request_id);
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
        // The codes its methods answer (errors.json): a parameter missing, and one of a value
        // the method does not take.
        ErrorKind::Invalid {
            problem: Problem::Missing,
            field,
            ..
        } => (
            400,
            "ERROR_ARGUMENT",
            format!("Argument '{field}' is null or empty"),
        ),
        ErrorKind::Invalid { message, .. } => (400, "INVALID_ARG_VALUE", message.clone()),
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
        ErrorKind::BadRequest(why) | ErrorKind::Invalid { message: why, .. } => {
            (400, "invalid-input", why.clone())
        }
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
        ErrorKind::BadRequest(why) | ErrorKind::Invalid { message: why, .. } => {
            (400, 3, why.clone())
        }
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

impl Service {
    /// The rate-limit headers the real service sends with an answer, given the bucket's decision
    /// and its quota: `rejected` for the over-the-limit answer. Where the definition asks for it
    /// (services that give no pause on their rejection), [`X_APISTEND_RETRY_AFTER`] carries the
    /// pause.
    pub fn rate_headers(&self, decision: &Decision, quota: &Quota, rejected: bool) -> RateHeaders {
        let mut h = RateHeaders::default();
        for rule in &self.headers {
            let sent = match rule.on {
                When::Always => true,
                When::Allowed => !rejected,
                When::Rejected => rejected,
            };
            if sent {
                match rule.value {
                    Ok(RateValue::ResetDate) => {
                        h.push(rule.name, decision.reset_after_secs(), true);
                    }
                    Ok(RateValue::WindowMs) => h.push(rule.name, window_ms(quota), false),
                    Ok(RateValue::IetfPolicy) => h.push_ietf(
                        rule.name,
                        u64::from(decision.limit),
                        window_ms(quota).div_ceil(1000).max(1),
                        true,
                    ),
                    Ok(RateValue::IetfLimit) => h.push_ietf(
                        rule.name,
                        u64::from(decision.remaining),
                        decision.reset_after_secs(),
                        false,
                    ),
                    Ok(v) => h.push(rule.name, value(v, decision), false),
                    Err(fixed) => h.push(rule.name, fixed, false),
                }
            }
        }
        if rejected && self.apistend_retry_after {
            h.push(
                X_APISTEND_RETRY_AFTER,
                decision.retry_after_secs().max(1),
                false,
            );
        }
        h
    }
}

fn value(v: RateValue, d: &Decision) -> u64 {
    let ms = |t: std::time::Duration| u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
    match v {
        RateValue::Remaining => u64::from(d.remaining),
        RateValue::Limit => u64::from(d.limit),
        RateValue::RetryAfterSecs => d.retry_after_secs().max(1),
        RateValue::RetryAfterMs => ms(d.retry_after),
        RateValue::ResetSecs | RateValue::ResetDate => d.reset_after_secs(),
        RateValue::ResetMs => ms(d.reset_after),
        // Not one number of the decision: `rate_headers` writes them.
        RateValue::WindowMs | RateValue::IetfPolicy | RateValue::IetfLimit => 0,
    }
}

/// A quota's window (burst × interval) in whole milliseconds, rounded: 45 per 3 s is 3000.
fn window_ms(q: &Quota) -> u64 {
    let window = q.interval().saturating_mul(q.burst());
    u64::try_from(window.as_micros().saturating_add(500) / 1000).unwrap_or(u64::MAX)
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
            let code = v["code"].as_str().unwrap();
            assert!(code.contains("-[UK-") && code.ends_with(']'), "{code}");
            if status == 429 {
                let detail = v["detail"].as_str().unwrap();
                assert!(
                    detail.starts_with("limited by ") && detail.len() == 47,
                    "{detail}"
                );
            }
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
