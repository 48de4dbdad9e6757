//! The conduct report in the metrics: each sandbox's report ([`super::conduct`]) tallied by
//! service and limit group — requests, refusals, early retries, retried dead ends — and its keys
//! by verdict, over the requests the journal holds when the metrics are read. A sandbox's report
//! is made again only when its journal changed since (in memory: its first and last request
//! numbers and its count); a journal in Redis is read again at most every [`SHARED_EVERY`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::conduct::{Report, Verdict};

/// The least time between two reads of a journal kept in Redis for the metrics.
pub(crate) const SHARED_EVERY: Duration = Duration::from_secs(5);

/// One service's limit group's conduct, over every key of every sandbox.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) requests: u64,
    pub(crate) refused: u64,
    pub(crate) early_retries: u64,
    pub(crate) retried_dead_ends: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, other: Self) {
        self.requests += other.requests;
        self.refused += other.refused;
        self.early_retries += other.early_retries;
        self.retried_dead_ends += other.retried_dead_ends;
    }
}

/// The conduct of every key, tallied.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    /// By (service, group; empty for requests that drew from none).
    pub(crate) groups: BTreeMap<(String, String), Counts>,
    /// Keys with a clean verdict.
    pub(crate) clean_keys: u64,
    /// Keys that broke a rule.
    pub(crate) violating_keys: u64,
}

impl Tally {
    /// The tally of one sandbox's report.
    pub(crate) fn of(report: &Report) -> Self {
        let mut t = Self::default();
        for k in &report.keys {
            match k.verdict {
                Verdict::Clean => t.clean_keys += 1,
                Verdict::Violations => t.violating_keys += 1,
            }
            for g in &k.groups {
                let at = (g.service.clone(), g.group.clone().unwrap_or_default());
                *t.groups.entry(at).or_default() += Counts {
                    requests: g.requests,
                    refused: g.refused,
                    early_retries: g.early_retries,
                    retried_dead_ends: g.retried_dead_ends.values().sum(),
                };
            }
        }
        t
    }

    /// `other` added to this one.
    pub(crate) fn add(&mut self, other: &Self) {
        self.clean_keys += other.clean_keys;
        self.violating_keys += other.violating_keys;
        for (at, c) in &other.groups {
            *self.groups.entry(at.clone()).or_default() += *c;
        }
    }
}

/// What a journal in memory looked like when its sandbox was tallied: its first and last
/// request numbers and its count.
pub(crate) type Version = (u64, u64, usize);

/// The tallies made so far, to make again only what changed.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_sandbox: HashMap<Arc<str>, (Version, Tally)>,
    shared: Option<(Instant, Tally)>,
}

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `sandbox`'s tally when its journal is still at `version`.
    pub(crate) fn get(&self, sandbox: &str, version: Version) -> Option<Tally> {
        let g = self.lock();
        let (v, t) = g.by_sandbox.get(sandbox)?;
        (*v == version).then(|| t.clone())
    }

    /// Keeps `sandbox`'s tally at `version`.
    pub(crate) fn put(&self, sandbox: Arc<str>, version: Version, tally: Tally) {
        self.lock().by_sandbox.insert(sandbox, (version, tally));
    }

    /// Forgets the sandboxes `keep` does not hold (their journals are gone).
    pub(crate) fn retain(&self, keep: &[Arc<str>]) {
        self.lock().by_sandbox.retain(|s, _| keep.contains(s));
    }

    /// The shared journal's tally, when made less than [`SHARED_EVERY`] ago.
    pub(crate) fn shared(&self) -> Option<Tally> {
        let g = self.lock();
        let (at, t) = g.shared.as_ref()?;
        (at.elapsed() < SHARED_EVERY).then(|| t.clone())
    }

    /// Keeps the shared journal's tally, made now.
    pub(crate) fn put_shared(&self, tally: Tally) {
        self.lock().shared = Some((Instant::now(), tally));
    }
}
