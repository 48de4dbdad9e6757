//! Errors as RFC 9457 problem details, and the typed error the handlers answer with.

use axum::body::Body;
use http::{HeaderValue, Response, StatusCode};
use serde_json::json;

use crate::error::SandboxError;

/// An error as RFC 9457 problem details.
pub(crate) fn problem(status: StatusCode, title: &str, detail: &str) -> Response<Body> {
    let body =
        json!({"type": "about:blank", "title": title, "status": status.as_u16(), "detail": detail});
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    r
}

/// What a management request can fail with, each kind with its status.
#[derive(Debug)]
pub(super) enum ApiError {
    /// 400: the request cannot be read.
    BadRequest(String),
    /// 404: what it names is not there.
    NotFound(String),
    /// 409: what it would make is there already (a key another sandbox has).
    Conflict(String),
    /// 422: it reads, but a value is not acceptable.
    Unprocessable(String),
    /// 503: the rate-limit store does not answer.
    Unavailable(String),
    /// 507: over a sandbox's bound of objects or bytes.
    Full(String),
    /// 500: the sandbox failed (logged).
    Internal(SandboxError),
}

impl From<SandboxError> for ApiError {
    fn from(e: SandboxError) -> Self {
        match e {
            SandboxError::NoSandbox { id } => ApiError::NotFound(format!("no sandbox {id:?}")),
            SandboxError::Config(why) => ApiError::Unprocessable(why),
            SandboxError::KeyTaken(_) => ApiError::Conflict(e.to_string()),
            e => ApiError::Internal(e),
        }
    }
}

impl axum::response::IntoResponse for ApiError {
    fn into_response(self) -> Response<Body> {
        match self {
            ApiError::BadRequest(d) => problem(StatusCode::BAD_REQUEST, "Bad Request", &d),
            ApiError::NotFound(d) => problem(StatusCode::NOT_FOUND, "Not Found", &d),
            ApiError::Conflict(d) => problem(StatusCode::CONFLICT, "Conflict", &d),
            ApiError::Unprocessable(d) => problem(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Unprocessable Content",
                &d,
            ),
            ApiError::Unavailable(d) => {
                problem(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable", &d)
            }
            ApiError::Full(d) => {
                problem(StatusCode::INSUFFICIENT_STORAGE, "Insufficient Storage", &d)
            }
            ApiError::Internal(e) => {
                tracing::error!(error = %e, "management API");
                problem(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error",
                    &e.to_string(),
                )
            }
        }
    }
}
