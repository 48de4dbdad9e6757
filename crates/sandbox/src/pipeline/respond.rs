//! Stage 10, the answer: the service's answer source first, then its OpenAPI examples.

use apistend_catalog::{ErrorKind, Resolved, Service};

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
    let emulated = state.emulated(resolved.index);
    let result = emulated
        .and_then(|e| e.answers.answer(service, op, call))
        .or_else(|| {
            emulated
                .and_then(|e| e.examples.as_ref())
                .and_then(|e| e.answer(op.method, &op.spec_path).map(Ok))
        });
    match result {
        None => Answer::error(service, &ErrorKind::NotFound, &ctx()),
        Some(Ok(s)) => Answer::success(s, service.content_type),
        Some(Err(refusal)) => Answer::refusal(service, refusal, &ctx()),
    }
}
