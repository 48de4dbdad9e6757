//! What is known of one bucket: the server's reports, the bounds they put on its rate, and the
//! quota in force.

use std::time::{Duration, Instant};

use apistend_limiter::{Algorithm, LearnedRecord, Quota};

use super::fit::{Fit, Series, Sums};
use super::quota::LearnedFrom;

/// A series longer than this is pooled and a new one begun.
const MAX_SERIES: Duration = Duration::from_secs(60);
/// Pooled evidence weighs half as much after this long.
const HALF_LIFE_S: f64 = 60.0;
/// A measured rate is used once its standard error is below this share of it.
const PRECISION: f64 = 0.08;
/// A measured rate this close to the catalog's is not told apart from it.
const TOLERANCE: f64 = 0.97;
/// The share of a measured rate, or of the rate a rejection happened at, adopted at most.
pub(super) const MARGIN: f64 = 0.97;
/// The share of the rate a rejection leaves, and the share of the catalog's rate headroom
/// gives back at least (the only step where the server reports nothing).
const DECREASE: f64 = 0.7;
const INCREASE: f64 = 0.02;
/// How long a rate must hold without rejection before headroom moves it up (and at least four
/// of its intervals).
const HOLD: Duration = Duration::from_secs(5);
/// The share of the way to the upper bound one step of headroom goes (every step past the
/// server's rate costs a rejection and its pause: small steps, few of them wasted).
const APPROACH: f64 = 0.25;
/// The narrowest the rate goes: this share of the catalog's.
const FLOOR: f64 = 1.0 / 64.0;

/// What the server reported in one answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Report {
    /// Tokens left after the request (`None` when not sent: WB's 429).
    pub(crate) remaining: Option<u32>,
    /// The server's limit (burst), when sent.
    pub(crate) limit: Option<u32>,
    /// The server's window (its limit per this time), when sent (MoySklad's 3000 ms).
    pub(crate) window: Option<Duration>,
    /// Tokens the request took.
    pub(crate) weight: u32,
}

/// A quota learned, enforced instead of the catalog's until `until`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Learned {
    pub(super) quota: Quota,
    pub(super) until: Instant,
    pub(super) from: LearnedFrom,
}

/// Where a bucket's learning stands: the state machine the answers drive.
///
/// - `Catalog` → `Learned`: a rejection, a measurement or a statement gives a quota other than
///   the catalog's ([`Track::adopt`]);
/// - `Learned` → `Probing`: headroom steps the rate up, where the server reports tokens left;
/// - `Probing` → `Learned`: a rejection narrows; a report of no token to spare takes the step
///   back ([`Track::drained`]); another step probes again;
/// - any → `Catalog`: the learned quota expires, or comes back equal to the catalog's.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// The catalog's quota is enforced.
    Catalog,
    /// A learned quota is enforced.
    Learned(Learned),
    /// A learned quota is enforced, just stepped up by headroom from the rate `from` to `to`
    /// (per second): while it is in force, a report of no token to spare says the step went
    /// past the server's rate.
    Probing {
        learned: Learned,
        from: f64,
        to: f64,
    },
}

impl Phase {
    fn learned(self) -> Option<Learned> {
        match self {
            Phase::Catalog => None,
            Phase::Learned(l) | Phase::Probing { learned: l, .. } => Some(l),
        }
    }
}

/// What is known of one bucket.
#[derive(Debug)]
pub(super) struct Track {
    group: String,
    catalog: Quota,
    phase: Phase,
    /// The server's limit, as last reported.
    limit: Option<u32>,
    /// The most tokens the server was seen to hold before a request.
    top: u32,
    series: Option<Series>,
    pooled: Fit,
    /// When `pooled` was last added to.
    pooled_at: Option<Instant>,
    /// Whether the server rejected a request the model allowed since the evidence began.
    rejected: bool,
    /// The lowest rate a rejection happened at.
    upper: Option<f64>,
    /// The highest rate that held, or was measured.
    lower: Option<f64>,
    /// The server's rate as last measured precisely (the slope, less its error and at least
    /// 3 %): headroom probes no faster — a probe past it could only be rejected.
    measured: Option<f64>,
    /// When the rate last changed.
    changed_at: Option<Instant>,
    /// When the server last reported no token to spare (0 left after a request): it was
    /// saturated then, so the rate held no headroom.
    saturated_at: Option<Instant>,
    /// The rate the server states (its limit over its window, where it reports both): the
    /// fastest the client goes, above the catalog's too.
    stated: Option<f64>,
    /// When the quota in force was decided, here or by another process of the account (ms
    /// since the Unix epoch; 0 for never): the newer decision wins in the store's record.
    pub(super) decided_ms: u64,
    /// When the store's record was last read.
    pub(super) synced_at: Option<Instant>,
    /// Whether the server has reported on the bucket (its tokens left or its limit).
    pub(super) heard: bool,
}

impl Track {
    pub(super) fn new(group: String, catalog: Quota) -> Self {
        Self {
            group,
            catalog,
            phase: Phase::Catalog,
            limit: None,
            top: 0,
            series: None,
            pooled: Fit::default(),
            pooled_at: None,
            rejected: false,
            upper: None,
            lower: None,
            measured: None,
            changed_at: None,
            saturated_at: None,
            stated: None,
            decided_ms: 0,
            synced_at: None,
            heard: false,
        }
    }

    /// The group of the bucket.
    pub(super) fn group(&self) -> &str {
        &self.group
    }

    /// The catalog's quota of the bucket.
    pub(super) fn catalog(&self) -> Quota {
        self.catalog
    }

    /// The learned quota, if one is enforced (expired or not).
    pub(super) fn learned(&self) -> Option<Learned> {
        self.phase.learned()
    }

    /// Whether a learned quota holds at `now`.
    pub(super) fn holds(&self, now: Instant) -> bool {
        self.learned().is_some_and(|l| l.until > now)
    }

    /// The quota in force; an expired learned one is dropped with its evidence.
    pub(super) fn enforced(&mut self, now: Instant) -> Quota {
        match self.learned() {
            Some(l) if l.until > now => l.quota,
            Some(_) => {
                let (group, catalog) = (std::mem::take(&mut self.group), self.catalog);
                *self = Self::new(group, catalog);
                self.catalog
            }
            None => self.catalog,
        }
    }

    pub(super) fn report(&mut self, r: Report, now: Instant) {
        self.heard = true;
        if let Some(l) = r.limit.filter(|&l| l > 0) {
            self.limit = Some(l);
            if let Some(w) = r.window.filter(|w| !w.is_zero()) {
                self.stated = Some(f64::from(l) / w.as_secs_f64());
            }
        }
        let Some(left) = r.remaining else { return };
        if left == 0 {
            self.saturated_at = Some(now);
        }
        let before = left.saturating_add(r.weight);
        self.top = self.top.max(before);
        let full = self.limit.unwrap_or(self.top);
        let restart = before >= full
            || self
                .series
                .as_ref()
                .is_none_or(|s| now.duration_since(s.start) > MAX_SERIES);
        if restart {
            // This answer may have found the bucket full: a new series starts from it.
            if let Some(s) = self.series.take() {
                let age = self
                    .pooled_at
                    .map_or(0.0, |at| now.duration_since(at).as_secs_f64());
                let kept = 0.5f64.powf(age / HALF_LIFE_S);
                self.pooled = self.pooled.scaled(kept).plus(s.sums.fit());
                self.pooled_at = Some(now);
            }
            let mut sums = Sums::default();
            sums.add(0.0, f64::from(left));
            self.series = Some(Series {
                start: now,
                admitted: 0,
                sums,
            });
            return;
        }
        if let Some(s) = self.series.as_mut() {
            s.admitted += u64::from(r.weight);
            let x = now.duration_since(s.start).as_secs_f64();
            s.sums.add(x, f64::from(left) + s.admitted as f64);
        }
    }

    /// Adopts the server's limit, and the measured lower bound once it is precise.
    pub(super) fn measure(&mut self, now: Instant, ttl: Duration) {
        let current = self.enforced(now);
        let burst = self.limit.unwrap_or(current.burst());
        let mut rate = current.rate_per_second();
        let mut evidence = burst != current.burst();
        // The server says its rate: faster than the model, believed at once unless a rejection
        // showed otherwise (then headroom climbs towards it); slower, believed at once.
        if let Some(stated) = self.stated
            && (rate - stated).abs() > stated * 0.01
            && (rate > stated || self.upper.is_none())
        {
            rate = stated;
            evidence = true;
        }
        if self.rejected && self.catalog.algorithm() == Algorithm::Gcra {
            let fit = self
                .series
                .as_ref()
                .map_or(self.pooled, |s| self.pooled.plus(s.sums.fit()));
            if let Some((slope, se)) = fit.slope()
                && slope > 0.0
                && se < slope * PRECISION
                && slope < self.top_rate() * TOLERANCE
            {
                // Less its error and at least 3 %: not all of the noise is in the error
                // (answers arrive out of the server's order, reports are whole tokens).
                let mut lower = (slope - se).min(slope * MARGIN);
                if let Some(u) = self.upper {
                    lower = lower.min(u * MARGIN);
                }
                self.lower = Some(self.lower.map_or(lower, |l| l.max(lower)));
                self.measured = Some(lower);
                evidence = true;
                if lower > rate * 1.02 {
                    rate = lower;
                }
            }
        }
        if evidence {
            let from = self.learned().map_or(LearnedFrom::Headers, |l| l.from);
            self.adopt(burst, rate, from, now + ttl);
        }
    }

    /// A rejection of a request the model allowed, sent under `sent`: the rate narrows (by
    /// [`DECREASE`], no lower than the rate that held or [`FLOOR`] of the catalog's), and the
    /// rate it was sent at becomes an upper bound. One sent faster than the rate now enforced
    /// was already answered by a narrowing (requests in flight together are rejected
    /// together): it narrows nothing more.
    pub(super) fn rejected(&mut self, sent: Quota, now: Instant, from: LearnedFrom, ttl: Duration) {
        self.rejected = true;
        let at = sent.rate_per_second();
        let upper = self.upper.map_or(at, |u| u.min(at));
        self.upper = Some(upper);
        if self.lower.is_some_and(|l| l >= upper * MARGIN) {
            // The server is slower than it was: what held before holds no more.
            self.lower = None;
        }
        if self.measured.is_some_and(|m| m >= upper * MARGIN) {
            self.measured = None;
        }
        let current = self.enforced(now);
        if at > current.rate_per_second() * 1.001 {
            return;
        }
        let rate = (at * DECREASE)
            .max(self.lower.unwrap_or(0.0))
            .max(self.catalog.rate_per_second() * FLOOR);
        self.adopt(current.burst(), rate, from, now + ttl);
        self.changed_at = Some(now);
        if let Some(learned) = self.learned() {
            self.phase = Phase::Learned(learned);
        }
    }

    /// Headroom: a rate that held for [`HOLD`] is a lower bound, and moves a quarter of the way
    /// up to 0.97 of the upper bound (by 0.5 % of the catalog's rate at least, never past it);
    /// no new evidence, so the TTL runs on. Where the server reports nothing, a rejection may
    /// as well have been a burst: no upper bound holds the rate back from the catalog's.
    pub(super) fn headroom(&mut self, now: Instant) {
        let current = self.enforced(now);
        let Some(l) = self.learned() else { return };
        let was = current.rate_per_second();
        let catalog = self.catalog.rate_per_second();
        let top = self.top_rate();
        if l.from == LearnedFrom::Headers {
            let hold = HOLD.max(current.interval() * 4);
            // Held: unchanged, and every report since left a token to spare, for the hold.
            let since = self.changed_at.max(self.saturated_at);
            if since.is_some_and(|at| now.duration_since(at) < hold) {
                return;
            }
            self.lower = Some(self.lower.map_or(was, |low| low.max(was)));
        }
        let target = match (l.from, self.upper) {
            (LearnedFrom::Headers, Some(u)) => (u * MARGIN)
                .min(top)
                .min(self.measured.unwrap_or(f64::INFINITY)),
            _ => top,
        };
        let step = match l.from {
            LearnedFrom::Headers => ((target - was) * APPROACH).max(catalog * INCREASE / 4.0),
            LearnedFrom::Rejections => catalog * INCREASE,
        };
        let rate = (was + step).min(target);
        if rate > was {
            self.adopt(current.burst(), rate, l.from, l.until);
            self.changed_at = Some(now);
            // Where the server reports tokens left, the step is a probe its reports can undo.
            if let Some(learned) = self.learned() {
                self.phase = match l.from {
                    LearnedFrom::Headers => Phase::Probing {
                        learned,
                        from: was,
                        to: rate,
                    },
                    LearnedFrom::Rejections => Phase::Learned(learned),
                };
            }
        }
    }

    /// The server had no token to spare after a request. Under a rate that held with headroom
    /// its bucket stays full before each request; if it drains right after a step of headroom,
    /// the step went past the server's rate: back to the rate before it, and the stepped rate is
    /// an upper bound — found by the server's reports, before any rejection.
    pub(super) fn drained(&mut self, now: Instant) {
        let Phase::Probing { learned, from, to } = self.phase else {
            return;
        };
        self.phase = Phase::Learned(learned);
        let current = self.enforced(now);
        let Some(l) = self.learned() else { return };
        if (current.rate_per_second() - to).abs() > to * 0.001 {
            return;
        }
        self.upper = Some(self.upper.map_or(to, |u| u.min(to)));
        self.adopt(current.burst(), from, l.from, l.until);
        self.changed_at = Some(now);
    }

    /// What the store keeps of this bucket for the account's other processes: the learned
    /// quota in force, the bounds, when it was decided.
    pub(super) fn record(&self) -> Option<LearnedRecord> {
        let l = self.learned()?;
        Some(LearnedRecord {
            burst: l.quota.burst(),
            interval_us: u64::try_from(l.quota.interval().as_micros()).unwrap_or(u64::MAX),
            upper: self.upper,
            lower: self.lower,
            decided_ms: self.decided_ms,
            from_headers: l.from == LearnedFrom::Headers,
        })
    }

    /// What another process of the account learned (the store's record, merged): its bounds
    /// where stricter, and its quota if decided after this one's — the fleet follows one quota,
    /// and a probe of headroom by any process restarts every process's hold.
    pub(super) fn shared(&mut self, r: &LearnedRecord, now: Instant, ttl: Duration) {
        if let Some(u) = r.upper {
            self.upper = Some(self.upper.map_or(u, |mine| mine.min(u)));
        }
        if let Some(l) = r.lower {
            self.lower = Some(self.lower.map_or(l, |mine| mine.max(l)));
        }
        if let (Some(l), Some(u)) = (self.lower, self.upper)
            && l >= u * MARGIN
        {
            self.lower = None;
        }
        if r.decided_ms <= self.decided_ms || r.interval_us == 0 {
            return;
        }
        let from = if r.from_headers {
            LearnedFrom::Headers
        } else {
            LearnedFrom::Rejections
        };
        let rate = 1e6 / r.interval_us as f64;
        self.adopt(r.burst, rate, from, now + ttl);
        if let Some(learned) = self.learned() {
            self.phase = Phase::Learned(learned);
        }
        self.changed_at = Some(now);
        self.decided_ms = r.decided_ms;
    }

    /// The fastest rate the client goes: the server's stated one, else the catalog's.
    fn top_rate(&self) -> f64 {
        self.stated
            .unwrap_or_else(|| self.catalog.rate_per_second())
    }

    /// Enforces `burst` tokens at `rate` per second (never faster than [`Track::top_rate`])
    /// until `until`; a quota equal to the catalog's is no learned quota.
    fn adopt(&mut self, burst: u32, rate: f64, from: LearnedFrom, until: Instant) {
        let rate = rate.min(self.top_rate());
        let catalog = self.catalog.interval();
        let mut interval = Duration::from_secs_f64(1.0 / rate);
        if interval.abs_diff(catalog) <= catalog / 1000 {
            interval = catalog;
        }
        let Ok(quota) = Quota::new(burst, interval) else {
            return;
        };
        let quota = quota.with_algorithm(self.catalog.algorithm());
        let learned = Learned { quota, until, from };
        self.phase = match self.phase {
            _ if quota == self.catalog => Phase::Catalog,
            Phase::Probing { from, to, .. } => Phase::Probing { learned, from, to },
            _ => Phase::Learned(learned),
        };
    }
}
