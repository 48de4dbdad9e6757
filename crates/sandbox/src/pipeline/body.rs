//! Stage 1, the body: read whole, within the sandbox's size and time limits.

use apistend_catalog::{ErrorKind, Service};
use axum::body::{Body, Bytes, HttpBody};
use http::Response;

use super::answer::{Answer, closing};
use super::meta::Meta;
use crate::state::AppState;

/// The request's body. Too large or too slow, the answer is the service's 413 or 408, and the
/// connection closes (the rest of the body was not read, so the next request could not be found).
pub(super) async fn read(
    state: &AppState,
    service: &Service,
    body: Body,
    meta: &Meta,
) -> Result<Bytes, Response<Body>> {
    // A body known to be empty (hyper knows it from the headers: no Transfer-Encoding, no
    // Content-Length or 0) is not polled for (that spares a round through the connection task
    // on every bodiless GET), nor timed (nor a clock read and a timer entry).
    if body.is_end_stream() {
        return Ok(Bytes::new());
    }
    let limits = &state.limits;
    let read = tokio::time::timeout(
        limits.read_timeout,
        axum::body::to_bytes(body, limits.max_body_bytes),
    )
    .await;
    let kind = match read {
        Ok(Ok(body)) => return Ok(body),
        Ok(Err(_)) => {
            ErrorKind::TooLarge(format!("request body over {} bytes", limits.max_body_bytes))
        }
        Err(_) => ErrorKind::RequestTimeout(format!(
            "the request body did not arrive within {:?}",
            limits.read_timeout
        )),
    };
    Err(closing(
        Answer::error(service, &kind, &meta.ctx(0)).into_response(),
    ))
}
