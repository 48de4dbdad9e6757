//! A call's concurrency slots: the service's limits on requests in flight (MoySklad's 5 per
//! user and 20 per account), held in the client's store beside its buckets, so that every
//! process of the account shares them; a call waits for a free slot within its ceiling and
//! deadline, and holds it until its answer is read. The server's refusal for too many in
//! flight (MoySklad's 1073) then does not come: the client never sends more at once than the
//! server takes.

use std::time::{Duration, Instant};

use apistend_limiter::HeldSlots;

use super::budget::Draws;
use super::core::Core;
use crate::error::{ClientError, RefusedBy};
use crate::metrics::inc;

/// The first pause between two looks for a free slot, and the longest (a look is one store
/// round trip; a slot comes free when an answer comes back, milliseconds to seconds later).
const FIRST_LOOK: Duration = Duration::from_millis(2);
const LONGEST_LOOK: Duration = Duration::from_millis(25);

impl Core {
    /// One slot of each of the service's in-flight limits for `plan`'s call, waiting for them
    /// up to its ceiling (and `deadline`); `None` when the service has none.
    ///
    /// # Errors
    /// [`ClientError::RateLimited`] (`refused_by: Local`) when no slot comes free in time;
    /// [`ClientError::Limiter`] when the store cannot answer.
    pub(crate) async fn hold_slots(
        &self,
        plan: &Draws<'_>,
        deadline: Option<Instant>,
    ) -> Result<Option<HeldSlots>, ClientError> {
        if plan.slots.is_empty() {
            return Ok(None);
        }
        let start = Instant::now();
        let mut pause = FIRST_LOOK;
        loop {
            if let Ok(held) = self.store.lease_all(&plan.slots).await? {
                return Ok(Some(held));
            }
            // Jitter, so that waiters do not look in lockstep.
            let wait = pause + Duration::from_micros(fastrand::u64(0..1_000));
            self.wait_within(start, plan, deadline, wait).await?;
            inc(&self.counters.slot_waits);
            pause = (pause * 2).min(LONGEST_LOOK);
        }
    }

    /// Waits `wait` more for a call that began waiting at `start`, unless that would pass its
    /// ceiling or `deadline`: then the call is refused locally, `wait` its `Retry-After`.
    ///
    /// # Errors
    /// [`ClientError::RateLimited`] (`refused_by: Local`) when it would.
    pub(super) async fn wait_within(
        &self,
        start: Instant,
        plan: &Draws<'_>,
        deadline: Option<Instant>,
        wait: Duration,
    ) -> Result<(), ClientError> {
        let late = start.elapsed() + wait > plan.ceiling
            || deadline.is_some_and(|d| Instant::now() + wait > d);
        if late {
            inc(&self.counters.local_refusals);
            return Err(ClientError::RateLimited {
                retry_after: wait,
                refused_by: RefusedBy::Local,
            });
        }
        tokio::time::sleep(wait).await;
        Ok(())
    }
}
