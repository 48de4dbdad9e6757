//! Stage 10, the answer: the service's answer source first, then its OpenAPI examples.

use apistend_answers::{Refusal, Success};
use apistend_catalog::{ErrorKind, Operation, Resolved, Service};

use super::answer::Answer;
use super::meta::Meta;
use crate::state::AppState;
use apistend_answers::call::Call;

/// What `service` answers to `call` (its 404 for a call of no operation it knows); error
/// bodies name a bucket of `limit`.
pub(super) fn answer(
    state: &AppState,
    service: &Service,
    resolved: &Resolved<'_>,
    call: &Call,
    meta: &Meta,
    limit: u32,
) -> Answer {
    let ctx = || meta.ctx(limit);
    let Some(op) = resolved.operation else {
        return Answer::error(service, &ErrorKind::NotFound, &ctx());
    };
    let result = static_answer(state, service, resolved.index, op, call);
    match result {
        None => Answer::error(service, &ErrorKind::NotFound, &ctx()),
        Some(Ok(s)) => Answer::success(s, service.content_type),
        Some(Err(refusal)) => Answer::refusal(service, refusal, &ctx()),
    }
}

/// What `op` answers `call` without state: its service's answer source, then the embedded
/// examples of its official description.
pub(super) fn static_answer(
    state: &AppState,
    service: &Service,
    index: usize,
    op: &Operation,
    call: &Call,
) -> Option<Result<Success, Refusal>> {
    let emulated = state.emulated(index);
    emulated
        .and_then(|e| e.answers.answer(service, op, call))
        .or_else(|| {
            emulated
                .and_then(|e| e.examples.as_ref())
                .and_then(|e| e.answer(op.method, &op.spec_path).map(Ok))
        })
}
