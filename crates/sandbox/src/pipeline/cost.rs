//! Stage 10, cost after the answer: what the answer costs beyond the tokens taken up front (a
//! WB 409 counts as 10, or 33), or less (a Yandex Market 5xx costs nothing).

use std::cmp::Ordering;

use apistend_catalog::Resolved;
use apistend_limiter::{Decision, Op};

use super::meta::Meta;
use crate::buckets::{self, Owner, Spend};
use crate::state::AppState;

/// Charges or refunds the difference; the bucket afterwards (`decision` when nothing changed
/// or the store could not be asked, which is logged).
pub(super) async fn settle(
    state: &AppState,
    resolved: &Resolved<'_>,
    owner: &Owner,
    at: &Spend<'_>,
    status: u16,
    decision: Decision,
    meta: &Meta,
) -> Decision {
    let taken = at.weight;
    let cost = resolved
        .operation
        .map_or(taken, |o| o.cost_of(status, taken));
    let op = match cost.cmp(&taken) {
        Ordering::Greater => Op::Charge(cost - taken),
        Ordering::Less => Op::Refund(taken - cost),
        Ordering::Equal => return decision,
    };
    let settled = buckets::settle(&state.store, resolved, owner, at, op).await;
    match settled {
        Ok(after) => after.unwrap_or(decision),
        Err(e) => {
            tracing::warn!(request_id = meta.id(), error = %e, "could not settle the answer's cost");
            decision
        }
    }
}
