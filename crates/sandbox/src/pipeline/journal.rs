//! The request's entry in its sandbox's journal ([`crate::journal`]), written into a slot the
//! journal lends (one a busy sandbox's bound let go of: no allocation): its head and body copied
//! once its credential has said whose it is (up to the journal's bound; a slice would pin the
//! connection's read buffer), then its answer's head and body, written by the answer as it is
//! made (or read back from a response made otherwise). A body sent as a stream (a scenario's
//! slow or broken one) is not read.

use std::sync::Arc;

use apistend_catalog::ServiceId;
use axum::body::{Body, Bytes, HttpBody};
use http::Response;
use http::request::Parts;
use http_body_util::BodyExt;

use super::answer::Answer;
use super::meta::Meta;
use super::noted::Noted;
use crate::journal::Entry;
use crate::journal::entry::share;
use crate::journal::{Filling, head};
use crate::state::AppState;

/// A slot for a request of `sandbox`'s `key` (presented as `credential` when that is not the
/// key): a busy sandbox's slot points at its name and key already (no count changed).
pub(super) fn whose(
    state: &AppState,
    sandbox: &Arc<str>,
    key: &Arc<str>,
    credential: Option<&str>,
) -> Box<Entry> {
    let mut e = state.journal.slot();
    share(&mut e.sandbox, sandbox);
    share(&mut e.key, key);
    if e.credential.as_deref() != credential {
        e.credential = credential.map(Arc::from);
    }
    e
}

/// Notes the head and body of a request its sandbox's journal keeps (once its credential has
/// said whose it is: a request of no sandbox costs nothing here).
pub(super) fn heard(state: &AppState, parts: &Parts, body: &[u8], seen: &mut Noted) {
    if let Some(e) = seen.entry.as_deref_mut() {
        let head = |b: &mut Vec<u8>| head::request(b, &parts.method, &parts.uri, &parts.headers);
        e.request(head, body, state.journal.body_bytes());
    }
}

/// Keeps `resp`, the answer to a request of `service`, in its sandbox's journal: its head and
/// body written into the slot by the answer as it was made ([`response`]), else read here (the
/// body's bytes in `seen.sent`, read by [`take_body`]). By reference: nothing of the response
/// moves for it.
pub(super) fn keep(
    state: &AppState,
    service: ServiceId,
    seen: &mut Noted,
    meta: &Meta,
    resp: &Response<Body>,
) {
    let Some(mut e) = seen.entry.take() else {
        return;
    };
    let at_us = meta.started_us;
    e.service = service;
    e.operation = seen.operation;
    e.conn = seen.conn;
    e.group = (seen.group != usize::MAX).then_some(seen.group);
    e.at_us = at_us;
    e.latency_us = apistend_answers::clock::unix_now_us().saturating_sub(at_us);
    e.status = resp.status().as_u16();
    if !seen.answered {
        e.answer_head(|b| head::answer(b, resp.headers()));
        let sent = seen.sent.take().unwrap_or_default();
        e.keep_answer_body(&sent, state.journal.body_bytes());
    }
    e.fill = seen.fill;
    e.refused = seen.refused;
    state.journal.push(e);
}

/// The response of `answer`, its body's bytes noted for the journal when it keeps the request
/// (given by the answer as it is made, not read back).
pub(super) fn response(state: &AppState, answer: Answer, seen: &mut Noted) -> Response<Body> {
    if seen.journaled() {
        // The answer's head and body go straight into the slot, as it makes them.
        let max = state.journal.body_bytes();
        let entry = seen.entry.as_deref_mut();
        seen.answered = entry.is_some();
        answer.into_response_keeping(entry.map(|e| Filling::new(e, max)))
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
