//! Stage 9, operating time (where the service's definition has a budget: Bitrix24's): before
//! the call, a method over its budget is refused; after it, the answer's `time` block accounts
//! the call's processing time.

use std::time::Duration;

use apistend_catalog::{ErrorKind, Resolved, X_APISTEND_RETRY_AFTER};
use axum::body::Body;
use http::{HeaderValue, Response};

use super::answer::Answer;
use super::limit::Admitted;
use crate::buckets::Owner;
use crate::operating::{Operating, OperatingState};
use crate::state::AppState;
use apistend_answers::call::Call;

/// The budget a call runs under.
pub(super) struct Budget<'s> {
    operating: &'s Operating,
    /// The called method.
    method: String,
    /// The methods it runs inside it (a `batch`'s), and of those the blocked ones.
    nested: Vec<String>,
    blocked: Vec<String>,
}

/// The budget of `call` (`None` for a service without one, or a call of no operation). A
/// method over its budget is the service's error; inside a `batch`, each nested method is
/// checked too: a blocked one is reported in the batch's `result_error`
/// ([`Budget::take_blocked`]), the others run.
pub(super) fn before<'s>(
    state: &'s AppState,
    resolved: &Resolved<'_>,
    call: &Call,
    owner: &Owner,
    admitted: &Admitted<'_>,
) -> Result<Option<Budget<'s>>, Response<Body>> {
    let emulated = state.emulated(resolved.index);
    let (Some(operating), Some(method), Some(_)) = (
        emulated.and_then(|e| e.operating.as_ref()),
        call.rpc_method.as_deref(),
        resolved.operation,
    ) else {
        return Ok(None);
    };
    let now = admitted.meta.started;
    if let Err(blocked) = operating.check(&format!("{}:{method}", owner.key), now) {
        // Bitrix24 names no pause; the sandbox's hint is the time until the method unblocks.
        let secs = unblock_secs(&blocked, now);
        let mut a = Answer::error(
            admitted.service,
            &ErrorKind::OperatingTime,
            &admitted.meta.ctx(admitted.limit()).with_retry_after(secs),
        )
        .rate(
            admitted
                .service
                .rate_headers(&admitted.decision, &admitted.quota, false),
        );
        a.headers
            .push((X_APISTEND_RETRY_AFTER, HeaderValue::from(secs)));
        return Err(a.into_response());
    }
    let nested = emulated.map(|e| e.answers.nested(call)).unwrap_or_default();
    let blocked = nested
        .iter()
        .filter(|m| operating.check(&format!("{}:{m}", owner.key), now).is_err())
        .cloned()
        .collect();
    Ok(Some(Budget {
        operating,
        method: method.to_owned(),
        nested,
        blocked,
    }))
}

impl Budget<'_> {
    /// The blocked nested methods, for the call's answer source to report.
    pub(super) fn take_blocked(&mut self) -> Vec<String> {
        std::mem::take(&mut self.blocked)
    }

    /// Accounts the call's time to `owner` (shared by the nested methods that ran, of
    /// `blocked`) and writes the answer's `time` block.
    pub(super) fn after(
        self,
        answer: &mut Answer,
        owner: &Owner,
        blocked: &[String],
        started: f64,
        delay: Duration,
    ) {
        let ran: Vec<String> = self
            .nested
            .into_iter()
            .filter(|n| !blocked.contains(n))
            .collect();
        let text = answer.text();
        *text = self
            .operating
            .time_block(text, &owner.key, &self.method, &ran, started, delay);
    }
}

/// Whole seconds from `now` until a blocked method may be called again (at least 1).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few hundred seconds
fn unblock_secs(blocked: &OperatingState, now: f64) -> u64 {
    (blocked.unblock_at - now).ceil().max(1.0) as u64
}
