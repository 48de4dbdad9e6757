//! Error bodies written in a definition: one template per kind of error, with placeholders the
//! sandbox fills per answer. For services whose errors are data, not an algorithm (amoCRM's
//! problem+json, MoySklad's `errors` array).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error_kind::{ErrorAnswer, ErrorContext, ErrorKind, status_text};

/// The names a template is keyed by: [`ErrorKind`]'s, plus `locked` (the lockout's answer),
/// `invalid_…` (a request its description does not allow, by [`crate::Problem`]; else
/// `bad_request`) and `default` (any kind without a template of its own).
pub const TEMPLATE_NAMES: [&str; 21] = [
    "rate_limited",
    "too_many_in_flight",
    "operating_time",
    "unauthorized",
    "forbidden",
    "not_found",
    "conflict",
    "bad_request",
    "server_error",
    "unavailable",
    "too_large",
    "request_timeout",
    "gateway_timeout",
    "locked",
    "invalid_syntax",
    "invalid_media_type",
    "invalid_missing",
    "invalid_unknown",
    "invalid_type",
    "invalid_value",
    "default",
];

/// The placeholders a template body may hold.
pub const PLACEHOLDERS: [&str; 8] = [
    "{status}",
    "{status_text}",
    "{message}",
    "{field}",
    "{request_id}",
    "{timestamp}",
    "{limit}",
    "{retry_after}",
];

/// The first `{name}` in `body` that looks like a placeholder (a name of letters, digits and
/// `_` in braces) and is none of `known` (an error template's [`PLACEHOLDERS`], a link's
/// `{base}` and `{id}`…): a misspelling (`{mesage}`) would otherwise be sent as written. JSON's
/// own braces (`{"a":1}`) never look like one.
pub(crate) fn unknown_placeholder<'a>(body: &'a str, known: &[&str]) -> Option<&'a str> {
    let mut rest = body;
    while let Some(at) = rest.find('{') {
        let tail = rest.get(at..).unwrap_or("");
        let name_len = tail
            .get(1..)
            .unwrap_or("")
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if name_len > 0
            && tail.as_bytes().get(name_len + 1) == Some(&b'}')
            && let Some(candidate) = tail.get(..name_len + 2)
            && !known.contains(&candidate)
        {
            return Some(candidate);
        }
        rest = tail.get(1..).unwrap_or("");
    }
    None
}

/// One error answer of a definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Template {
    /// Its status; the kind's usual one when absent (429, 401, 404…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Its `Content-Type`; the rejection's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The body, with placeholders (see [`PLACEHOLDERS`]); values are JSON-escaped.
    pub body: String,
}

/// A definition's error templates, by name.
pub type Templates = BTreeMap<String, Template>;

/// The template name and usual status and message of `kind`.
fn of(kind: &ErrorKind) -> (&'static str, u16, &str) {
    match kind {
        ErrorKind::RateLimited => ("rate_limited", 429, "Too many requests"),
        ErrorKind::TooManyInFlight => ("too_many_in_flight", 429, "Too many parallel requests"),
        ErrorKind::OperatingTime => ("operating_time", 429, "Operating time limit"),
        ErrorKind::Unauthorized => ("unauthorized", 401, "Unauthorized"),
        ErrorKind::Forbidden => ("forbidden", 403, "Forbidden"),
        ErrorKind::Locked => ("locked", 403, "Access is blocked after repeated violations"),
        ErrorKind::NotFound => ("not_found", 404, "Not Found"),
        ErrorKind::Conflict => ("conflict", 409, "Conflict"),
        ErrorKind::BadRequest(why) | ErrorKind::Invalid { message: why, .. } => {
            ("bad_request", 400, why.as_str())
        }
        ErrorKind::ServerError => ("server_error", 500, "Internal Server Error"),
        ErrorKind::Unavailable => ("unavailable", 503, "Service Unavailable"),
        ErrorKind::TooLarge(why) => ("too_large", 413, why.as_str()),
        ErrorKind::RequestTimeout(why) => ("request_timeout", 408, why.as_str()),
        ErrorKind::GatewayTimeout => ("gateway_timeout", 504, "Gateway Timeout"),
    }
}

/// The answer for `kind` from `templates`; `rejection` is the status and content type of the
/// service's rejection (a rate-limited answer's status when its template gives none).
pub(crate) fn render(
    templates: &Templates,
    kind: &ErrorKind,
    ctx: &ErrorContext<'_>,
    rejection: (u16, &'static str),
) -> ErrorAnswer {
    let (name, usual, message) = of(kind);
    let usual = if matches!(kind, ErrorKind::RateLimited | ErrorKind::TooManyInFlight) {
        rejection.0
    } else {
        usual
    };
    // A request its description does not allow: the template of its kind of wrong first.
    let (own, field) = match kind {
        ErrorKind::Invalid { problem, field, .. } => (
            templates.get(&format!("invalid_{}", problem.as_str())),
            field.as_str(),
        ),
        _ => (None, ""),
    };
    let t = own
        .or_else(|| templates.get(name))
        .or_else(|| templates.get("default"));
    let status = t.and_then(|t| t.status).unwrap_or(usual);
    let body = t.map_or_else(String::new, |t| {
        fill(&t.body, status, (message, field), ctx)
    });
    ErrorAnswer {
        status,
        content_type: t
            .and_then(|t| t.content_type.as_deref())
            .map_or(rejection.1, crate::intern::intern),
        body,
    }
}

/// `body` with its placeholders filled; `(message, field)`: the reason, and the field it
/// names (empty unless the request broke its description).
fn fill(body: &str, status: u16, (message, field): (&str, &str), ctx: &ErrorContext<'_>) -> String {
    let esc = |s: &str| {
        let quoted = serde_json::Value::from(s).to_string();
        quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or("")
            .to_owned()
    };
    let mut out = String::with_capacity(body.len() + 64);
    let mut rest = body;
    while let Some(at) = rest.find('{') {
        out.push_str(rest.get(..at).unwrap_or(""));
        let tail = rest.get(at..).unwrap_or("");
        let hit = PLACEHOLDERS.iter().find(|p| tail.starts_with(**p));
        match hit {
            Some(p) => {
                let v = match *p {
                    "{status}" => status.to_string(),
                    "{status_text}" => status_text(status).to_owned(),
                    "{message}" => esc(message),
                    "{field}" => esc(field),
                    "{request_id}" => esc(ctx.request_id),
                    "{timestamp}" => esc(ctx.timestamp),
                    "{limit}" => ctx.limit.to_string(),
                    _ => ctx.retry_after.to_string(),
                };
                out.push_str(&v);
                rest = tail.get(p.len()..).unwrap_or("");
            }
            None => {
                out.push('{');
                rest = tail.get(1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_placeholder_is_found_and_json_braces_are_not() {
        assert_eq!(
            unknown_placeholder(r#"{"error":"{mesage}","s":{status}}"#, &PLACEHOLDERS),
            Some("{mesage}")
        );
        assert_eq!(
            unknown_placeholder(
                r#"{"a":{"b":1},"m":"{message}","x":"{}","y":"{ a }"}"#,
                &PLACEHOLDERS
            ),
            None
        );
        assert_eq!(
            unknown_placeholder("{retry_after}{limit}", &PLACEHOLDERS),
            None
        );
        assert_eq!(
            unknown_placeholder("{base}/x/{ids}", &["{base}", "{id}"]),
            Some("{ids}")
        );
    }

    #[test]
    fn placeholders_are_filled_and_escaped_and_other_braces_kept() {
        let mut t = Templates::new();
        t.insert(
            "default".into(),
            Template {
                status: None,
                content_type: Some("application/problem+json".into()),
                body: r#"{"title":"{status_text}","status":{status},"detail":"{message}","id":"{request_id}","retry":{retry_after}}"#.into(),
            },
        );
        let ctx = ErrorContext::new("r\"1", "2026-12-01T00:00:00Z", 7).with_retry_after(3);
        let a = render(
            &t,
            &ErrorKind::BadRequest("bad \"x\"".into()),
            &ctx,
            (429, "application/json"),
        );
        assert_eq!(a.status, 400);
        assert_eq!(a.content_type, "application/problem+json");
        let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(v["title"], "Bad Request");
        assert_eq!(v["detail"], "bad \"x\"");
        assert_eq!(v["id"], "r\"1");
        assert_eq!(v["retry"], 3);
        let limited = render(&t, &ErrorKind::RateLimited, &ctx, (420, "application/json"));
        assert_eq!(limited.status, 420, "the rejection's status");
    }
}
