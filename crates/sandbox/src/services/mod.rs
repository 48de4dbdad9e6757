//! Built-in answers of each service: what a successful call returns when the sandbox has no
//! example of its own for it.

pub(crate) mod apify;
pub(crate) mod b24;
pub(crate) mod b24_methods;
pub(crate) mod examples;
pub(crate) mod ozon;
pub(crate) mod samples;
pub(crate) mod schema_values;
pub(crate) mod source;
pub(crate) mod spec_answers;
pub(crate) mod wb;

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Success {
    pub(crate) status: u16,
    pub(crate) body: serde_json::Value,
    /// Headers the real service sends with this answer (Apify's pagination).
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The media type when the answer is not JSON (a PDF, a PNG, a text log): the body is then
    /// a small file of that type.
    pub(crate) media: Option<String>,
    /// The body already rendered (an OpenAPI example), sent instead of `body` when present.
    pub(crate) rendered: Option<axum::body::Bytes>,
}

impl Success {
    pub(crate) fn ok(body: serde_json::Value) -> Self {
        Self::new(200, body)
    }

    pub(crate) fn new(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
            media: None,
            rendered: None,
        }
    }
}

/// Why a call that matched an operation still fails on its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The service's 400, with its reason.
    BadRequest(String),
    /// An error the answer source wrote itself, whole (Bitrix24's method errors), with its
    /// status.
    Body {
        status: u16,
        body: serde_json::Value,
        /// Its media type, when not the service's (a documented `application/problem+json`).
        media: Option<String>,
    },
}
