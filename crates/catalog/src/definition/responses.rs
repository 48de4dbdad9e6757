//! What a definition says its service sends: its rate-limit headers and its error templates.

use super::file::ServiceFile;
use super::source::Source;
use crate::error::CatalogError;
use crate::intern::intern;
use crate::model::ErrorStyle;
use crate::rate_headers::{MAX_RATE_HEADERS, RateHeader};
use crate::templates::{TEMPLATE_NAMES, Templates};

pub(super) fn rate_headers(
    src: &Source<'_>,
    file: &ServiceFile,
) -> Result<Vec<RateHeader>, CatalogError> {
    if file.rate_headers.len() > MAX_RATE_HEADERS {
        return Err(src.err(
            0..0,
            "rate_headers",
            format!("at most {MAX_RATE_HEADERS} headers"),
        ));
    }
    file.rate_headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let field = format!("rate_headers[{i}]");
            let name = h.name.get_ref();
            if !is_token(name) {
                return Err(src.err(
                    h.name.span(),
                    &format!("{field}.name"),
                    format!("{name:?} is not a header name"),
                ));
            }
            let value = match (h.value, h.fixed) {
                (Some(v), None) => Ok(v),
                (None, Some(n)) => Err(n),
                _ => {
                    return Err(src.err(
                        h.name.span(),
                        &field,
                        "give value (remaining, limit, retry_after_secs, retry_after_ms, reset_secs, reset_ms, reset_date, window_ms) or fixed = N",
                    ));
                }
            };
            Ok(RateHeader {
                name: intern(&name.to_ascii_lowercase()),
                value,
                on: h.on,
            })
        })
        .collect()
}

pub(super) fn templates(src: &Source<'_>, file: &ServiceFile) -> Result<Templates, CatalogError> {
    if file.errors == ErrorStyle::Template && file.error_templates.is_empty() {
        return Err(src.err(
            0..0,
            "error_templates",
            "errors = \"template\" needs error_templates (at least `default`)",
        ));
    }
    let mut out = Templates::new();
    for (name, t) in &file.error_templates {
        let field = format!("error_templates.{name}");
        if !TEMPLATE_NAMES.contains(&name.as_str()) {
            return Err(src.err(
                t.span(),
                &field,
                format!(
                    "no error kind {name:?}; one of {}",
                    TEMPLATE_NAMES.join(", ")
                ),
            ));
        }
        let tv = t.get_ref();
        if tv.status.is_some_and(|s| !(400..=599).contains(&s)) {
            return Err(src.err(t.span(), &format!("{field}.status"), "a 4xx or 5xx status"));
        }
        if let Some(unknown) =
            crate::templates::unknown_placeholder(&tv.body, &crate::templates::PLACEHOLDERS)
        {
            return Err(src.err(
                t.span(),
                &format!("{field}.body"),
                format!(
                    "{unknown} is no placeholder; the placeholders are {}",
                    crate::templates::PLACEHOLDERS.join(", ")
                ),
            ));
        }
        let json = tv
            .content_type
            .as_deref()
            .unwrap_or(&file.rejection.content_type)
            .contains("json");
        // A body that is JSON must stay JSON once filled (a message with quotes included).
        let mut one = Templates::new();
        one.insert(name.clone(), tv.clone());
        let filled = crate::templates::render(
            &one,
            &template_kind(name),
            &crate::error_kind::ErrorContext::new("req-1", "2026-01-01T00:00:00Z", 1),
            (429, "application/json"),
        )
        .body;
        if json
            && !filled.is_empty()
            && let Err(e) = serde_json::from_str::<serde_json::Value>(&filled)
        {
            return Err(src.err(
                t.span(),
                &format!("{field}.body"),
                format!("the filled body is not JSON ({e}): {filled}"),
            ));
        }
        out.insert(name.clone(), tv.clone());
    }
    Ok(out)
}

fn template_kind(name: &str) -> crate::error_kind::ErrorKind {
    use crate::error_kind::ErrorKind as K;
    match name {
        "rate_limited" => K::RateLimited,
        "too_many_in_flight" => K::TooManyInFlight,
        "operating_time" => K::OperatingTime,
        "unauthorized" => K::Unauthorized,
        "forbidden" => K::Forbidden,
        "locked" => K::Locked,
        "not_found" => K::NotFound,
        "conflict" => K::Conflict,
        "server_error" => K::ServerError,
        "unavailable" => K::Unavailable,
        "too_large" => K::TooLarge("a \"sample\" message".into()),
        "request_timeout" => K::RequestTimeout("a \"sample\" message".into()),
        "gateway_timeout" => K::GatewayTimeout,
        _ => K::BadRequest("a \"sample\" message".into()),
    }
}

/// An HTTP header name (RFC 9110 token).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}
