//! The request's entry in its sandbox's journal ([`crate::journal`]), written into a slot the
//! journal lends (one a busy sandbox's bound let go of: no allocation): its head and body copied once its
//! credential has said whose it is (up to the journal's bound; a slice would pin the
//! connection's read buffer), its answer's head copied and its body shared once it is answered.
//! A body sent as a stream (a scenario's slow or broken one) is not read.

use std::sync::Arc;

use apistend_catalog::ServiceId;
use axum::body::{Body, Bytes, HttpBody};
use http::Response;
use http::request::Parts;
use http_body_util::BodyExt;

use super::answer::Answer;
use super::meta::Meta;
use super::noted::Noted;
use crate::journal::head;
use crate::state::AppState;

/// Notes the head and body of a request its sandbox's journal keeps (once its credential has
/// said whose it is: a request of no sandbox costs nothing here).
pub(super) fn heard(state: &AppState, parts: &Parts, body: &[u8], seen: &mut Noted) {
    if !seen.journaled() {
        return;
    }
    let mut slot = state.journal.slot();
    if let Some(e) = Arc::get_mut(&mut slot) {
        head::request(&mut e.head, &parts.method, &parts.uri, &parts.headers);
        e.keep_body(body, state.journal.body_bytes());
        seen.entry = Some(slot);
    }
}

/// Keeps `resp`, the answer to a request of `service`, in its sandbox's journal; gives the
/// response back.
pub(super) async fn keep(
    state: &AppState,
    service: ServiceId,
    seen: &mut Noted,
    meta: &Meta,
    resp: Response<Body>,
) -> Response<Body> {
    let (Some(whose), Some(mut slot)) = (seen.whose.as_ref(), seen.entry.take()) else {
        return resp;
    };
    let (resp, sent) = match seen.sent.take() {
        Some(b) => (resp, Some(b)),
        None => take_body(resp).await,
    };
    let Some(e) = Arc::get_mut(&mut slot) else {
        return resp;
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // now, in µs: fits
    let at_us = (meta.started * 1e6) as u64;
    e.sandbox.clone_from(&whose.sandbox);
    e.key.clone_from(&whose.key);
    e.credential.clone_from(&whose.credential);
    e.service = service;
    e.operation = seen.operation;
    e.conn = seen.conn;
    e.group = (seen.group != usize::MAX).then_some(seen.group);
    e.at_us = at_us;
    e.latency_us = apistend_answers::clock::unix_now_us().saturating_sub(at_us);
    e.status = resp.status().as_u16();
    head::answer(&mut e.answer_head, resp.headers());
    e.keep_answer_body(sent.unwrap_or_default(), state.journal.body_bytes());
    e.fill = seen.fill;
    e.refused = seen.refused;
    state.journal.push(slot);
    resp
}

/// The response of `answer`, its body's bytes noted for the journal when it keeps the request
/// (given by the answer as it is made, not read back).
pub(super) fn response(answer: Answer, seen: &mut Noted) -> Response<Body> {
    if seen.journaled() {
        answer.into_response_keeping(&mut seen.sent)
    } else {
        answer.into_response()
    }
}

/// The body of `resp` when it is whole in memory (read without a copy), and a response that
/// sends the same bytes; a streamed body is left as it is.
pub(super) async fn take_body(resp: Response<Body>) -> (Response<Body>, Option<Bytes>) {
    if resp.body().size_hint().exact().is_none() {
        return (resp, None);
    }
    let (parts, mut body) = resp.into_parts();
    // A body whole in memory is one frame (or none): read it alone, no buffer list.
    let bytes = match body.frame().await {
        None => Bytes::new(),
        Some(Ok(f)) if body.is_end_stream() => f.into_data().unwrap_or_default(),
        Some(Ok(f)) => {
            let mut all = f.into_data().unwrap_or_default().to_vec();
            while let Some(Ok(f)) = body.frame().await {
                all.extend_from_slice(&f.into_data().unwrap_or_default());
            }
            Bytes::from(all)
        }
        Some(Err(_)) => return (Response::from_parts(parts, Body::empty()), None),
    };
    (
        Response::from_parts(parts, Body::from(bytes.clone())),
        Some(bytes),
    )
}
