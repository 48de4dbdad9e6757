//! What an answer source gives: a [`Success`], or a [`Refusal`] of the call's input.

use bytes::Bytes;

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Success {
    /// Its status.
    pub status: u16,
    /// Its JSON body (`null`: none).
    pub body: serde_json::Value,
    /// Headers the real service sends with this answer (Apify's pagination).
    pub headers: Vec<(&'static str, String)>,
    /// The media type when the answer is not JSON (a PDF, a PNG, a text log): the body is then
    /// a small file of that type.
    pub media: Option<String>,
    /// The body already rendered (an OpenAPI example), sent instead of `body` when present.
    pub rendered: Option<Bytes>,
    /// The body's own bytes, of `media`, sent as they are (a value kept as it was written:
    /// Apify's records), instead of a sample of that type.
    pub bytes: Option<Bytes>,
}

impl Success {
    /// A 200 with `body`.
    pub fn ok(body: serde_json::Value) -> Self {
        Self::new(200, body)
    }

    /// Its JSON body, moved out of it: the rendered bytes parsed (`null` if they are not
    /// JSON), or `body`.
    pub fn take_json(&mut self) -> serde_json::Value {
        match self.rendered.take() {
            Some(bytes) => serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
            None => std::mem::take(&mut self.body),
        }
    }

    /// `status` with `body`, nothing else.
    pub fn new(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
            media: None,
            rendered: None,
            bytes: None,
        }
    }
}

/// Why a call that matched an operation still fails on its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The service's 400, with its reason.
    BadRequest(String),
    /// The service's 404: the call names an object that is not there.
    NotFound,
    /// An error the answer source wrote itself, whole (Bitrix24's method errors), with its
    /// status.
    Body {
        /// Its status.
        status: u16,
        /// Its body.
        body: serde_json::Value,
        /// Its media type, when not the service's (a documented `application/problem+json`).
        media: Option<String>,
    },
}
