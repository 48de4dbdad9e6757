//! A quota learned from a remote service's answers, kept beside its bucket so that every process
//! of an account follows what any one of them learned: the record, how two records merge, and
//! the memory store's table of them (Redis keeps the same in a hash, `learned.lua`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Records kept at most by one memory store (past it, expired ones go; then the write is
/// dropped: a learned quota is advice, and every process keeps its own).
const MAX_RECORDS: usize = 10_000;

/// What the processes of an account learned of one bucket. Rates are per second.
///
/// Two records merge field by field ([`LearnedRecord::merge`]): the strictest evidence wins —
/// the lowest upper bound, the highest lower bound — and the quota of the newer decision.
///
/// ```
/// use apistend_limiter::LearnedRecord;
/// let a = LearnedRecord { burst: 20, interval_us: 500_000, upper: Some(3.0), lower: None, decided_ms: 10, from_headers: true };
/// let b = LearnedRecord { burst: 20, interval_us: 400_000, upper: Some(4.0), lower: Some(1.5), decided_ms: 20, from_headers: true };
/// let m = a.merge(&b);
/// assert_eq!((m.upper, m.lower, m.interval_us, m.decided_ms), (Some(3.0), Some(1.5), 400_000, 20));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnedRecord {
    /// The burst to enforce.
    pub burst: u32,
    /// The interval between tokens to enforce, in µs.
    pub interval_us: u64,
    /// The lowest rate a rejection happened at.
    pub upper: Option<f64>,
    /// The highest rate that held, or was measured.
    pub lower: Option<f64>,
    /// When the quota was decided, in ms since the Unix epoch: the newer decision's quota wins.
    pub decided_ms: u64,
    /// Whether it was learned from the service's rate-limit headers (else from its rejections).
    pub from_headers: bool,
}

impl LearnedRecord {
    /// `self` and `other` as one: the lowest upper bound, the highest lower bound, the newer
    /// decision's quota.
    #[must_use]
    pub fn merge(&self, other: &Self) -> Self {
        let newer = if other.decided_ms > self.decided_ms {
            other
        } else {
            self
        };
        Self {
            upper: either(self.upper, other.upper, f64::min),
            lower: either(self.lower, other.lower, f64::max),
            ..*newer
        }
    }
}

fn either(a: Option<f64>, b: Option<f64>, pick: fn(f64, f64) -> f64) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    }
}

/// The memory store's records, each with the time it runs out (µs on the store's clock).
#[derive(Debug, Default)]
pub(crate) struct LearnedTable {
    records: Mutex<HashMap<String, (LearnedRecord, u64)>>,
}

impl LearnedTable {
    /// The record of `key`, unless it ran out by `now`.
    pub(crate) fn read(&self, key: &str, now: u64) -> Option<LearnedRecord> {
        let records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records
            .get(key)
            .filter(|(_, until)| *until > now)
            .map(|(r, _)| *r)
    }

    /// Merges `record` into `key`'s, to run out `ttl_us` after `now`; the merged record.
    pub(crate) fn merge(
        &self,
        key: &str,
        record: &LearnedRecord,
        now: u64,
        ttl_us: u64,
    ) -> LearnedRecord {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        if records.len() >= MAX_RECORDS && !records.contains_key(key) {
            records.retain(|_, (_, until)| *until > now);
            if records.len() >= MAX_RECORDS {
                return *record;
            }
        }
        let until = now.saturating_add(ttl_us);
        let merged = match records.get(key) {
            Some((old, old_until)) if *old_until > now => old.merge(record),
            _ => *record,
        };
        records.insert(key.to_owned(), (merged, until));
        merged
    }
}
