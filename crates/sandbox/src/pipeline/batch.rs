//! Stage 10 for a batch (Bitrix24's `batch`): each command in order, checked against its own
//! method's rules when it runs — as the real batch checks it, after the references to earlier
//! answers are resolved — then answered over what the sandbox keeps, or without state. An
//! invalid command is that command's error (Bitrix24's `result_error`), not the batch's:
//! the others run, unless the batch halts at the first error.

use std::sync::Mutex;

use apistend_answers::batch::{Batching, run};
use apistend_answers::call::Call;
use apistend_answers::{Refusal, Success};
use apistend_catalog::Service;
use serde_json::Value;

use super::answer::Answer;
use super::meta::Meta;
use super::objects::Kept;
use super::respond::static_answer;
use super::validate;
use crate::state::AppState;
use crate::tenants::Validation;

/// One batch request's commands, each kept where the sandbox keeps objects and its operation is
/// bound to a collection, else answered without state.
pub(super) struct Batch<'a> {
    state: &'a AppState,
    service: &'a Service,
    /// The service's index in the catalog.
    index: usize,
    /// How its commands are checked (the batch's own mode).
    mode: Validation,
    /// The sandbox's objects, when the request works on them.
    kept: Option<&'a Kept<'a>>,
    meta: &'a Meta,
    /// The limit its error bodies name.
    limit: u32,
    /// Under `report`: the first invalid command's reason, for `X-APIStend-Invalid`.
    reported: Mutex<Option<String>>,
}

impl<'a> Batch<'a> {
    /// The commands of a batch of `service` (its index `index`), checked under `mode`.
    pub(super) fn new(
        state: &'a AppState,
        service: &'a Service,
        index: usize,
        mode: Validation,
        kept: Option<&'a Kept<'a>>,
        (meta, limit): (&'a Meta, u32),
    ) -> Self {
        Self {
            state,
            service,
            index,
            mode,
            kept,
            meta,
            limit,
            reported: Mutex::new(None),
        }
    }

    /// The batch's answer: its commands run by `batching`, in order.
    pub(super) async fn answer(self, batching: &dyn Batching, call: &Call) -> Answer {
        let max = self.service.batch_max.unwrap_or(50);
        let result = run(batching, call, max, |nested| self.command(nested)).await;
        let mut answer = match result {
            Ok(s) => Answer::success(s, self.service.content_type),
            Err(r) => Answer::refusal(self.service, r, &self.meta.ctx(self.limit)),
        };
        let reported = self.reported.into_inner().ok().flatten();
        if let Some(reason) = reported {
            let value = validate::header_value(&reason);
            answer.headers.push((validate::X_APISTEND_INVALID, value));
        }
        answer
    }

    /// One command: its own rules first, then its answer.
    async fn command(&self, call: Call) -> Option<Result<Success, Refusal>> {
        if let Err(refusal) = self.check(&call) {
            return Some(Err(refusal));
        }
        let (state, index) = (self.state, self.index);
        let hit = state
            .catalog
            .resolve_at(index, call.method, &call.path, call.host.as_deref());
        let op = hit.as_ref().and_then(|h| h.operation)?;
        match (self.kept, op.binding) {
            (Some(kept), Some(binding)) => Some(kept.command(op, binding, &call).await),
            _ => static_answer(state, self.service, index, op, &call),
        }
    }

    /// `call` against its method's rules: under `strict` an invalid one is refused in the
    /// service's words; under `report` its reason is kept for the batch's answer.
    fn check(&self, call: &Call) -> Result<(), Refusal> {
        if self.mode == Validation::Off {
            return Ok(());
        }
        let rules = self
            .state
            .emulated(self.index)
            .and_then(|e| e.requests.as_ref());
        let Some(rules) = rules else {
            return Ok(());
        };
        let empty_ok = self.service.empty_body_is_empty_object;
        let Err(invalid) = rules.check(call.method, &call.path, call, empty_ok, true) else {
            return Ok(());
        };
        self.state
            .metrics
            .invalid(self.service.id, self.mode.as_str());
        if self.mode == Validation::Report {
            if let Ok(mut first) = self.reported.lock() {
                let method = call.rpc_method.as_deref().unwrap_or(&call.path);
                first.get_or_insert_with(|| format!("{method}: {invalid}"));
            }
            return Ok(());
        }
        let e = self
            .service
            .error(&invalid.kind(), &self.meta.ctx(self.limit));
        let body = serde_json::from_str(&e.body).unwrap_or(Value::String(e.body));
        Err(Refusal::Body {
            status: e.status,
            body,
            media: None,
        })
    }
}
