//! Concurrency limits: at most `max` requests in flight per key. Each request holds a slot as a
//! lease with a time to live, renewed while it is held, so the slot of a holder that crashed
//! comes back once its lease runs out. The memory table here; Redis keeps the same in a sorted
//! set (`slots.lua`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::clock::Timestamp;
use crate::error::LimiterError;

/// At most `max` requests in flight, each slot leased for `ttl` at a time.
///
/// ```
/// use std::time::Duration;
/// use apistend_limiter::{MemoryStore, Slots};
/// let store = MemoryStore::new();
/// let limit = Slots::new(1, Duration::from_secs(30))?;
/// let held = store.lease("user-1", &limit).expect("the first slot");
/// assert!(store.lease("user-1", &limit).is_none(), "one in flight at most");
/// store.release(&held);
/// assert!(store.lease("user-1", &limit).is_some());
/// # Ok::<(), apistend_limiter::LimiterError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slots {
    max: u32,
    ttl: Duration,
}

impl Slots {
    /// `max` slots (at least 1), each leased for `ttl` (at least 1 ms) at a time.
    ///
    /// # Errors
    /// [`LimiterError::Config`] for a zero `max` or a `ttl` under a millisecond.
    pub fn new(max: u32, ttl: Duration) -> Result<Self, LimiterError> {
        if max == 0 || ttl < Duration::from_millis(1) {
            return Err(LimiterError::Config(format!(
                "a concurrency limit needs max ≥ 1 and a lease of at least 1 ms, got {max} and {ttl:?}"
            )));
        }
        Ok(Self { max, ttl })
    }

    /// The most requests in flight.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// How long a lease lasts unless renewed.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    pub(crate) fn ttl_us(&self) -> u64 {
        u64::try_from(self.ttl.as_micros()).unwrap_or(u64::MAX)
    }
}

/// A held slot: give it back with `release`, keep it with `renew` every `ttl / 3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub(crate) key: String,
    pub(crate) id: u64,
}

impl Lease {
    pub(crate) fn new(key: &str) -> Self {
        Self {
            key: key.to_owned(),
            id: fastrand::u64(..),
        }
    }

    /// The key whose slot it holds.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Leases by key, each with the time its lease runs out (µs).
#[derive(Debug, Default)]
pub(crate) struct SlotTable {
    keys: Mutex<HashMap<String, Vec<(u64, Timestamp)>>>,
}

impl SlotTable {
    /// A slot of `key` for `lease` if fewer than `limit.max` unexpired leases hold one.
    pub(crate) fn take(&self, lease: &Lease, limit: &Slots, now: Timestamp) -> bool {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        let held = keys.entry(lease.key.clone()).or_default();
        held.retain(|(_, until)| *until > now);
        if held.len() >= usize::try_from(limit.max).unwrap_or(usize::MAX) {
            return false;
        }
        held.push((lease.id, now.saturating_add(limit.ttl_us())));
        true
    }

    /// Extends `lease` by `limit.ttl` from `now`; `false` if it had already run out.
    pub(crate) fn renew(&self, lease: &Lease, limit: &Slots, now: Timestamp) -> bool {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(held) = keys.get_mut(&lease.key) else {
            return false;
        };
        held.retain(|(_, until)| *until > now);
        match held.iter_mut().find(|(id, _)| *id == lease.id) {
            Some(slot) => {
                slot.1 = now.saturating_add(limit.ttl_us());
                true
            }
            None => false,
        }
    }

    /// Gives the slot back.
    pub(crate) fn release(&self, lease: &Lease) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = keys.get_mut(&lease.key) {
            held.retain(|(id, _)| *id != lease.id);
            if held.is_empty() {
                keys.remove(&lease.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_that_is_not_renewed_runs_out_and_its_slot_comes_back() {
        let t = SlotTable::default();
        let limit = Slots::new(2, Duration::from_millis(30)).unwrap();
        let (a, b, c) = (Lease::new("k"), Lease::new("k"), Lease::new("k"));
        assert!(t.take(&a, &limit, 0));
        assert!(t.take(&b, &limit, 0));
        assert!(!t.take(&c, &limit, 1));
        // a is renewed at 20 ms; b is not and runs out at 30 ms.
        assert!(t.renew(&a, &limit, 20_000));
        assert!(!t.take(&c, &limit, 29_999));
        assert!(t.take(&c, &limit, 30_000));
        assert!(!t.renew(&b, &limit, 30_001), "b's lease ran out");
        t.release(&a);
        assert!(t.take(&b, &limit, 30_002));
        assert!(!t.take(&Lease::new("k"), &limit, 30_003));
        assert!(t.take(&Lease::new("other"), &limit, 30_003), "per key");
    }
}
