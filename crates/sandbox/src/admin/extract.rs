//! The management API's extractors: a JSON object body and a query string, each rejected as
//! problem details (400) with the reason — the API's answer to a request it cannot read.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use serde::de::DeserializeOwned;

use super::problem::ApiError;

/// A JSON object body; `None` for no body or `null` (a body that may be left out). Arrays,
/// whitespace alone and anything but an object are refused: serde would read a struct from an
/// array of its fields, which is not a body this API takes.
#[derive(Debug)]
pub(super) struct JsonObject<T>(pub(super) Option<T>);

/// Why a body is not the JSON object asked for.
#[derive(Debug)]
pub(super) struct BodyRejection(String);

impl BodyRejection {
    /// The 400, with what the route expects.
    pub(super) fn expected(self, what: &str) -> ApiError {
        ApiError::BadRequest(format!("{}; {what}", self.0))
    }

    /// The 400, after what the route expects.
    pub(super) fn after(self, what: &str) -> ApiError {
        ApiError::BadRequest(format!("{what}: {}", self.0))
    }
}

impl IntoResponse for BodyRejection {
    fn into_response(self) -> Response {
        ApiError::BadRequest(self.0).into_response()
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonObject<T> {
    type Rejection = BodyRejection;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let body = Bytes::from_request(req, state)
            .await
            .map_err(|e| BodyRejection(format!("unreadable body: {}", e.body_text())))?;
        parse_object(&body).map(JsonObject).map_err(BodyRejection)
    }
}

/// `body` as a JSON object, or `None` for no body or `null`.
fn parse_object<T: DeserializeOwned>(body: &Bytes) -> Result<Option<T>, String> {
    let text = body.trim_ascii();
    if body.is_empty() || text == b"null" {
        return Ok(None);
    }
    if text.first() != Some(&b'{') {
        return Err("invalid JSON body: expected an object".to_owned());
    }
    serde_json::from_slice(text)
        .map(Some)
        .map_err(|e| format!("invalid JSON body: {e}"))
}

/// A query string; one that does not parse is a 400 naming why.
#[derive(Debug)]
pub(super) struct ApiQuery<T>(pub(super) T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| ApiQuery(q))
            .map_err(|e| ApiError::BadRequest(format!("query string: {}", e.body_text())))
    }
}
