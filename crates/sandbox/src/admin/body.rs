//! Management request bodies, read whole before any answer.

use axum::body::Body;
use axum::extract::Request;
use http::{HeaderValue, Response, StatusCode};

use super::problem::problem;

/// Reads a management request's whole body (up to the body limit, within the read timeout)
/// before any answer: an early answer (401, 429) then never leaves an unread body behind, which
/// would cost the client its connection. A body that cannot be read answers 413 or 408 with
/// `Connection: close`.
///
/// # Errors
/// The early answer, when the body is too large or too slow.
pub(crate) async fn buffer_body(
    req: Request<hyper::body::Incoming>,
    limits: crate::state::Limits,
) -> Result<Request<Body>, Response<Body>> {
    use http_body_util::BodyExt;
    let (parts, body) = req.into_parts();
    let close = |mut r: Response<Body>| {
        r.headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
        r
    };
    let too_large = || {
        close(problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Content Too Large",
            &format!("the request body is over {} bytes", limits.max_body_bytes),
        ))
    };
    let announced = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, limits.max_body_bytes);
    match tokio::time::timeout(limits.read_timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(Request::from_parts(parts, Body::from(collected.to_bytes()))),
        Ok(Err(_)) => Err(too_large()),
        Err(_) => Err(close(problem(
            StatusCode::REQUEST_TIMEOUT,
            "Request Timeout",
            &format!(
                "the request body did not arrive within {:?}",
                limits.read_timeout
            ),
        ))),
    }
}
