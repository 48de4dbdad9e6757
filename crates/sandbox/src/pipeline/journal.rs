//! The request's entry in its sandbox's journal ([`crate::journal`]): made once it is
//! answered, from what the stages noted and the answer as it is sent. Bodies are shared, not
//! copied (up to the journal's bound); a body sent as a stream (a scenario's slow or broken
//! one) is not read.

use apistend_catalog::ServiceId;
use axum::body::{Body, Bytes, HttpBody};
use http::{HeaderMap, Method, Request, Response, Uri};
use http_body_util::BodyExt;

use super::meta::Meta;
use super::noted::Noted;
use crate::journal::{Entry, Kept};
use crate::state::AppState;

/// What the journal needs of a request that the stages consume.
pub(super) struct Heard {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
}

impl Heard {
    /// The head of `req`, when the journal keeps anything.
    pub(super) fn of(state: &AppState, req: &Request<Body>) -> Option<Self> {
        state.journal.on().then(|| Heard {
            method: req.method().clone(),
            uri: req.uri().clone(),
            headers: req.headers().clone(),
        })
    }
}

/// Keeps `resp`, the answer to `heard` (of `service`), in its sandbox's journal when it keeps
/// one; gives the response back.
pub(super) async fn keep(
    state: &AppState,
    service: ServiceId,
    heard: Heard,
    seen: &mut Noted,
    meta: &Meta,
    resp: Response<Body>,
) -> Response<Body> {
    let Some(whose) = seen.whose.as_ref().filter(|w| w.journaled) else {
        return resp;
    };
    let (resp, sent) = match seen.sent.take() {
        Some(b) => (resp, Some(b)),
        None => take_body(resp).await,
    };
    let max = state.journal.body_bytes();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // now, in µs: fits
    let at_us = (meta.started * 1e6) as u64;
    let now_us = apistend_answers::clock::unix_now_us();
    state.journal.push(Entry {
        sandbox: whose.sandbox.clone(),
        key: whose.key.clone(),
        credential: whose.credential.clone(),
        service,
        operation: seen.operation,
        group: (seen.group != usize::MAX).then_some(seen.group),
        at_us,
        latency_us: now_us.saturating_sub(at_us),
        method: heard.method,
        uri: heard.uri,
        headers: heard.headers,
        body: seen
            .body
            .take()
            .map(|b| Kept::of(&b, max))
            .unwrap_or_default(),
        status: resp.status().as_u16(),
        answer_headers: resp.headers().clone(),
        answer_body: sent.map(|b| Kept::of(&b, max)).unwrap_or_default(),
        fill: seen.fill,
        refused: seen.refused,
    });
    resp
}

/// The body of `resp` when it is whole in memory (read without a copy), and a response that
/// sends the same bytes; a streamed body is left as it is.
pub(super) async fn take_body(resp: Response<Body>) -> (Response<Body>, Option<Bytes>) {
    if resp.body().size_hint().exact().is_none() {
        return (resp, None);
    }
    let (parts, body) = resp.into_parts();
    match body.collect().await {
        Ok(c) => {
            let bytes = c.to_bytes();
            (
                Response::from_parts(parts, Body::from(bytes.clone())),
                Some(bytes),
            )
        }
        Err(_) => (Response::from_parts(parts, Body::empty()), None),
    }
}
