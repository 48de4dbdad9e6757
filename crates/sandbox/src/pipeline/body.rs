//! Stage 1, the body: read whole, within the sandbox's size and time limits — or, for a
//! service whose definition states larger bodies (MoySklad's 20 MB), within its largest; once
//! the operation is known, held to that operation's own ([`within`]).

use apistend_catalog::{ErrorKind, Operation, Service};
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
    let most = service
        .largest_body
        .and_then(|b| usize::try_from(b).ok())
        .map_or(limits.max_body_bytes, |b| b.max(limits.max_body_bytes));
    let read = tokio::time::timeout(limits.read_timeout, axum::body::to_bytes(body, most)).await;
    let kind = match read {
        Ok(Ok(body)) => return Ok(body),
        Ok(Err(_)) => ErrorKind::TooLarge(format!("request body over {most} bytes")),
        Err(_) => ErrorKind::RequestTimeout(format!(
            "the request body did not arrive within {:?}",
            limits.read_timeout
        )),
    };
    Err(closing(
        Answer::error(service, &kind, &meta.ctx(0)).into_response(),
    ))
}

/// The body, read, held to the largest `op` takes (its definition's `max_body_bytes`, else its
/// service's, else the sandbox's): over it, the service's 413. Read whole already, the
/// connection stays open.
pub(super) fn within(
    state: &AppState,
    service: &Service,
    op: Option<&Operation>,
    body: &Bytes,
    meta: &Meta,
) -> Result<(), Response<Body>> {
    let sandbox = u64::try_from(state.limits.max_body_bytes).unwrap_or(u64::MAX);
    let limit = service.body_limit(op).unwrap_or(sandbox);
    if u64::try_from(body.len()).is_ok_and(|n| n <= limit) {
        return Ok(());
    }
    let kind = ErrorKind::TooLarge(format!("request body over {limit} bytes"));
    Err(Answer::error(service, &kind, &meta.ctx(0)).into_response())
}
