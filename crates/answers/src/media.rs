//! Media types, as a request's `Content-Type` and a description's `content` name them: one
//! reading for the request rules and the call.

/// `application/json; charset=utf-8` → `application/json`.
pub(crate) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether a media type is JSON (`application/json`, `…+json`).
pub(crate) fn is_json(media: &str) -> bool {
    let e = essence(media);
    e == "application/json" || e.ends_with("+json") || e == "text/json"
}
