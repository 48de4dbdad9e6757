//! The map of a client's tracks: one per bucket of its account, bounded, behind one lock.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use apistend_limiter::Quota;

use super::quota::{LearnedFrom, LearnedQuota};
use super::track::{Report, Track};

/// Tracks at most this many buckets (when full, those without a learned quota are dropped);
/// beyond, buckets keep the catalog's quota: memory stays bounded whatever keys a program uses.
pub(super) const MAX_TRACKS: usize = 10_000;

/// The learned quotas of one client.
#[derive(Debug)]
pub(crate) struct Learner {
    ttl: Duration,
    tracks: Mutex<HashMap<String, Track>>,
}

/// The bucket an answer or a rejection is about: its key, its group, the catalog's quota.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bucket<'a> {
    pub(crate) key: &'a str,
    pub(crate) group: &'a str,
    pub(crate) catalog: Quota,
}

impl Learner {
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            tracks: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn tracks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Track>> {
        self.tracks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The quota to enforce on `key`: the learned one while it holds, else `catalog`; and
    /// whether a learned one just expired.
    pub(crate) fn quota(&self, b: Bucket<'_>, now: Instant) -> (Quota, bool) {
        let mut tracks = self.tracks();
        let Some(t) = tracks.get_mut(b.key) else {
            return (b.catalog, false);
        };
        if t.catalog() != b.catalog {
            *t = Track::new(t.group().to_owned(), b.catalog);
        }
        let held = t.learned().is_some();
        let q = t.enforced(now);
        (q, held && t.learned().is_none())
    }

    /// An answer's report on `key`; returns the quota now enforced when it changed.
    pub(crate) fn reported(&self, b: Bucket<'_>, report: Report, now: Instant) -> Option<Quota> {
        self.with_track(b, now, |t| {
            t.report(report, now);
            t.measure(now, self.ttl);
            match report.remaining {
                Some(0) => t.drained(now),
                Some(_) => t.headroom(now),
                None => {}
            }
        })
    }

    /// A rejection on `key` of a request the model allowed: the rate narrows, and the rate it
    /// was sent at becomes an upper bound. For a service that reports tokens left it is also the
    /// evidence without which no rate is measured (several processes on one account each see
    /// only their share of the admissions: their slope alone would say a correct catalog is too
    /// fast).
    ///
    /// `sent` is the quota the request was sent under: a rejection of one sent faster than the
    /// rate now enforced was already answered by a narrowing (requests in flight together are
    /// rejected together), so it narrows nothing more.
    pub(crate) fn rejected(
        &self,
        b: Bucket<'_>,
        sent: Quota,
        now: Instant,
        from: LearnedFrom,
    ) -> Option<Quota> {
        self.with_track(b, now, |t| t.rejected(sent, now, from, self.ttl))
    }

    /// A success on `key`, for a service that reports no tokens left: headroom.
    pub(crate) fn succeeded(&self, b: Bucket<'_>, now: Instant) -> Option<Quota> {
        let mut tracks = self.tracks();
        let t = tracks.get_mut(b.key)?;
        if t.catalog() != b.catalog {
            return None;
        }
        let before = t.enforced(now);
        t.headroom(now);
        let after = t.enforced(now);
        (after != before).then_some(after)
    }

    fn with_track(&self, b: Bucket<'_>, now: Instant, f: impl FnOnce(&mut Track)) -> Option<Quota> {
        let mut tracks = self.tracks();
        if !tracks.contains_key(b.key) {
            if tracks.len() >= MAX_TRACKS {
                // Make room: buckets that hold no learned quota keep only evidence.
                tracks.retain(|_, t| t.holds(now));
            }
            if tracks.len() >= MAX_TRACKS {
                return None;
            }
            tracks.insert(b.key.to_owned(), Track::new(b.group.to_owned(), b.catalog));
        }
        let t = tracks.get_mut(b.key)?;
        if t.catalog() != b.catalog {
            *t = Track::new(b.group.to_owned(), b.catalog);
        }
        let before = t.enforced(now);
        f(t);
        let after = t.enforced(now);
        (after != before).then_some(after)
    }

    /// Forgets every track; gives the learned quotas that held at `now` (the catalog's hold again
    /// until new evidence).
    pub(crate) fn forget(&self, now: Instant) -> Vec<LearnedQuota> {
        let held = self.snapshot(now);
        self.tracks().clear();
        held
    }

    /// Every learned quota that holds at `now`.
    pub(crate) fn snapshot(&self, now: Instant) -> Vec<LearnedQuota> {
        let mut out: Vec<LearnedQuota> = self
            .tracks()
            .iter_mut()
            .filter_map(|(key, t)| {
                let quota = t.enforced(now);
                let l = t.learned()?;
                Some(LearnedQuota {
                    group: t.group().to_owned(),
                    key: key.clone(),
                    catalog: t.catalog(),
                    quota,
                    from: l.from,
                    expires_in: l.until.saturating_duration_since(now),
                })
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }
}
