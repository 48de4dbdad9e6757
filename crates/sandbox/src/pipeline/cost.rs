//! Stage 11, cost after the answer: what the answer costs beyond the tokens taken up front (a
//! WB 409 counts as 10, or 33; a Yandex Market answer counted on its items, as many as it
//! lists), or less (a Yandex Market 5xx costs nothing).

use std::cmp::Ordering;

use apistend_catalog::Resolved;
use apistend_limiter::{Decision, Op};

use super::answer::Answer;
use super::meta::Meta;
use crate::buckets::{self, Owner, Spend};
use crate::state::AppState;

/// What settles the answer's cost: [`Op::Charge`] of what it costs beyond the tokens taken up
/// front, or [`Op::Refund`] of what it costs less; `None` when it costs what was taken (nearly
/// every answer).
pub(super) fn difference(resolved: &Resolved<'_>, at: &Spend<'_>, answer: &Answer) -> Option<Op> {
    let taken = at.weight;
    let cost = resolved
        .operation
        .map_or(taken, |o| o.cost_of(answer.status, taken, answer.json()));
    match cost.cmp(&taken) {
        Ordering::Greater => Some(Op::Charge(cost - taken)),
        Ordering::Less => Some(Op::Refund(taken - cost)),
        Ordering::Equal => None,
    }
}

/// Settles the cost with `op` on every bucket; the bucket afterwards (`decision` when the store
/// could not be asked, which is logged).
pub(super) async fn settle(
    state: &AppState,
    resolved: &Resolved<'_>,
    owner: &Owner,
    at: &Spend<'_>,
    op: Op,
    decision: Decision,
    meta: &Meta,
) -> Decision {
    match buckets::settle(&state.store, resolved, owner, at, op).await {
        Ok(after) => after.unwrap_or(decision),
        Err(e) => {
            tracing::warn!(request_id = meta.id(), error = %e, "could not settle the answer's cost");
            decision
        }
    }
}
