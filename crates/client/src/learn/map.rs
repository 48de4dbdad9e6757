//! The map of a client's tracks: one per bucket of its account, bounded, behind one lock.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use apistend_limiter::{LearnedRecord, Quota};

use super::quota::{LearnedFrom, LearnedQuota};
use super::track::{Report, Track};

/// Tracks at most this many buckets (when full, those without a learned quota are dropped);
/// beyond, buckets keep the catalog's quota: memory stays bounded whatever keys a program uses.
pub(super) const MAX_TRACKS: usize = 10_000;

/// How often a bucket's record in the store is read, at most: what another process of the
/// account learned is followed this soon after (a read is one store round trip).
const SYNC_EVERY: Duration = Duration::from_millis(200);

/// The learned quotas of one client.
#[derive(Debug)]
pub(crate) struct Learner {
    ttl: Duration,
    tracks: Mutex<HashMap<String, Track>>,
    /// When every learned quota was last forgotten (ms since the Unix epoch): the store's
    /// records decided before are not followed.
    forgot_ms: std::sync::atomic::AtomicU64,
}

/// Now, in ms since the Unix epoch: when a decision was made, comparable across processes.
fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
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
            forgot_ms: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How long a learned quota holds without new evidence.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Whether `key`'s record in the store is due to be read (it was not read in the last
    /// [`SYNC_EVERY`]); marks it read.
    pub(crate) fn due(&self, b: Bucket<'_>, now: Instant) -> bool {
        let mut due = false;
        self.with_track(b, now, false, |t| {
            due = t
                .synced_at
                .is_none_or(|at| now.duration_since(at) >= SYNC_EVERY);
            if due {
                t.synced_at = Some(now);
            }
        });
        due
    }

    /// What the store holds for `key` (another process's learning, merged with this one's);
    /// returns the quota now enforced when it changed.
    pub(crate) fn shared(&self, b: Bucket<'_>, r: &LearnedRecord, now: Instant) -> Option<Quota> {
        if r.decided_ms <= self.forgot_ms.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        self.with_track(b, now, false, |t| t.shared(r, now, self.ttl))
    }

    /// Whether the server has reported on `key` (or no more buckets can be tracked: then the
    /// question is moot, and no call waits on it).
    pub(crate) fn heard(&self, key: &str) -> bool {
        let tracks = self.tracks();
        tracks
            .get(key)
            .map_or(tracks.len() >= MAX_TRACKS, |t| t.heard)
    }

    /// What the store is to keep of `key`: its learned quota, bounds and when it was decided.
    pub(crate) fn record(&self, key: &str) -> Option<LearnedRecord> {
        self.tracks().get(key)?.record()
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
        self.with_track(b, now, true, |t| {
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
        self.with_track(b, now, true, |t| t.rejected(sent, now, from, self.ttl))
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
        if after != before {
            t.decided_ms = wall_ms();
        }
        (after != before).then_some(after)
    }

    /// Runs `f` on `key`'s track (made if there is none and there is room); returns the quota
    /// now enforced when it changed. `own`: a decision of this process, stamped with the time.
    fn with_track(
        &self,
        b: Bucket<'_>,
        now: Instant,
        own: bool,
        f: impl FnOnce(&mut Track),
    ) -> Option<Quota> {
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
        if own && after != before {
            t.decided_ms = wall_ms();
        }
        (after != before).then_some(after)
    }

    /// Forgets every track; gives the learned quotas that held at `now` (the catalog's hold again
    /// until new evidence).
    pub(crate) fn forget(&self, now: Instant) -> Vec<LearnedQuota> {
        let held = self.snapshot(now);
        self.tracks().clear();
        self.forgot_ms
            .store(wall_ms(), std::sync::atomic::Ordering::Relaxed);
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
