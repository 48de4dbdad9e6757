//! What the server's answers teach about its quota, per bucket of the account.
//!
//! - The burst, from the header that reports the limit (WB's `X-Ratelimit-Limit`, on a 429).
//! - The rate, by bisection between what the server showed: a rejection of a request the model
//!   allowed makes the rate it was sent at an upper bound and narrows to 0.7 of it (or to the
//!   lower bound, if higher); a rate held without rejection while the server showed headroom is
//!   a lower bound, and headroom moves the rate a quarter of the way up to 0.97 of the upper
//!   bound, but never past the server's rate where that is measured (below): a probe past a
//!   precise measurement could only be rejected. A rate held only while every report left a
//!   token to spare for the hold (the server's bucket stayed full before each request); a step
//!   after which the server reports none to spare went past its rate and is taken back, the
//!   stepped rate becoming an upper bound — the reports find it before a rejection would.
//!   Headroom
//!   is a report of tokens left, or — for a service that reports nothing (Bitrix24, Ozon) —
//!   any success, which gives back 2 % of the catalog's rate at a time (AIMD, as the AWS SDKs'
//!   adaptive retry mode).
//! - A lower bound measured, for a service that reports tokens left: while the server's bucket
//!   is never full, `left + tokens seen admitted since t0` grows by exactly its refill rate, so a
//!   least-squares slope of it on time is that rate while the server is saturated, and the
//!   client's own rate (no more than the server's) while it is not. An answer that may have
//!   found the bucket full (its report plus the request's weight reaches the limit) ends a
//!   series, since a full bucket loses refill; finished series are pooled, each with its own
//!   intercept, older ones weighing less (half every minute).
//!
//! - The rate the server states, where it reports both its limit and its window (MoySklad's
//!   `X-RateLimit-Limit` and `X-Lognex-Retry-TimeInterval`): adopted at once in either
//!   direction, past the catalog's rate too (its own headers say more is allowed), and the
//!   fastest the client then goes.
//!
//! No rate is otherwise learned for a service that reports tokens left before a rejection has
//! shown the server stricter than the model; without a stated rate it only ever narrows below
//! the catalog's, and the burst follows the server's limit header either way. A learned quota
//! holds for a TTL that each rejection, measurement or statement renews; then the catalog's is
//! back. Learning is per process
//! (see `docs/architecture.md`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use apistend_limiter::{Algorithm, Quota};

/// Where a learned quota comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LearnedFrom {
    /// The server's rate-limit headers (tokens left, limit) and its rejections.
    Headers,
    /// The server's rejections alone, for a service that reports no tokens left.
    Rejections,
}

impl LearnedFrom {
    /// `headers` or `rejections`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Headers => "headers",
            Self::Rejections => "rejections",
        }
    }
}

/// A quota the client enforces on one bucket of its account instead of the catalog's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LearnedQuota {
    /// The limit group.
    pub group: String,
    /// The bucket's key in the shared store.
    pub key: String,
    /// The catalog's quota of the group.
    pub catalog: Quota,
    /// The quota enforced instead.
    pub quota: Quota,
    /// What it was learned from.
    pub from: LearnedFrom,
    /// How long it holds without new evidence.
    pub expires_in: Duration,
}

/// Tracks at most this many buckets (when full, those without a learned quota are dropped);
/// beyond, buckets keep the catalog's quota: memory stays bounded whatever keys a program uses.
const MAX_TRACKS: usize = 10_000;
/// A series longer than this is pooled and a new one begun.
const MAX_SERIES: Duration = Duration::from_secs(60);
/// Pooled evidence weighs half as much after this long.
const HALF_LIFE_S: f64 = 60.0;
/// A measured rate is used once its standard error is below this share of it.
const PRECISION: f64 = 0.08;
/// A measured rate this close to the catalog's is not told apart from it.
const TOLERANCE: f64 = 0.97;
/// The share of a measured rate, or of the rate a rejection happened at, adopted at most.
const MARGIN: f64 = 0.97;
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

impl Learner {
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            tracks: Mutex::new(HashMap::new()),
        }
    }

    fn tracks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Track>> {
        self.tracks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The quota to enforce on `key`: the learned one while it holds, else `catalog`; and
    /// whether a learned one just expired.
    pub(crate) fn quota(&self, b: Bucket<'_>, now: Instant) -> (Quota, bool) {
        let mut tracks = self.tracks();
        let Some(t) = tracks.get_mut(b.key) else {
            return (b.catalog, false);
        };
        if t.catalog != b.catalog {
            *t = Track::new(t.group.clone(), b.catalog);
        }
        let held = t.learned.is_some();
        let q = t.enforced(now);
        (q, held && t.learned.is_none())
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
        self.with_track(b, now, |t| {
            t.rejected = true;
            let at = sent.rate_per_second();
            let upper = t.upper.map_or(at, |u| u.min(at));
            t.upper = Some(upper);
            if t.lower.is_some_and(|l| l >= upper * MARGIN) {
                // The server is slower than it was: what held before holds no more.
                t.lower = None;
            }
            if t.measured.is_some_and(|m| m >= upper * MARGIN) {
                t.measured = None;
            }
            let current = t.enforced(now);
            if at > current.rate_per_second() * 1.001 {
                return;
            }
            let rate = (at * DECREASE)
                .max(t.lower.unwrap_or(0.0))
                .max(b.catalog.rate_per_second() * FLOOR);
            t.adopt(current.burst(), rate, from, now + self.ttl);
            t.changed_at = Some(now);
            t.probe = None;
        })
    }

    /// A success on `key`, for a service that reports no tokens left: headroom.
    pub(crate) fn succeeded(&self, b: Bucket<'_>, now: Instant) -> Option<Quota> {
        let mut tracks = self.tracks();
        let t = tracks.get_mut(b.key)?;
        if t.catalog != b.catalog {
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
                tracks.retain(|_, t| t.learned.is_some_and(|l| l.until > now));
            }
            if tracks.len() >= MAX_TRACKS {
                return None;
            }
            tracks.insert(b.key.to_owned(), Track::new(b.group.to_owned(), b.catalog));
        }
        let t = tracks.get_mut(b.key)?;
        if t.catalog != b.catalog {
            *t = Track::new(b.group.to_owned(), b.catalog);
        }
        let before = t.enforced(now);
        f(t);
        let after = t.enforced(now);
        (after != before).then_some(after)
    }

    /// Every learned quota that holds at `now`.
    pub(crate) fn snapshot(&self, now: Instant) -> Vec<LearnedQuota> {
        let mut out: Vec<LearnedQuota> = self
            .tracks()
            .iter_mut()
            .filter_map(|(key, t)| {
                let quota = t.enforced(now);
                let l = t.learned?;
                Some(LearnedQuota {
                    group: t.group.clone(),
                    key: key.clone(),
                    catalog: t.catalog,
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

#[derive(Debug, Clone, Copy)]
struct Learned {
    quota: Quota,
    until: Instant,
    from: LearnedFrom,
}

/// What is known of one bucket.
#[derive(Debug)]
struct Track {
    group: String,
    catalog: Quota,
    learned: Option<Learned>,
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
    /// The last step of headroom, from and to which rate (per second): while it is the rate in
    /// force, a report of no token to spare says it was a step too far.
    probe: Option<(f64, f64)>,
    /// The rate the server states (its limit over its window, where it reports both): the
    /// fastest the client goes, above the catalog's too.
    stated: Option<f64>,
}

/// One unbroken series of reports.
#[derive(Debug)]
struct Series {
    start: Instant,
    /// Tokens the server admitted since `start`.
    admitted: u64,
    sums: Sums,
}

impl Track {
    fn new(group: String, catalog: Quota) -> Self {
        Self {
            group,
            catalog,
            learned: None,
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
            probe: None,
            stated: None,
        }
    }

    /// The quota in force; an expired learned one is dropped with its evidence.
    fn enforced(&mut self, now: Instant) -> Quota {
        match self.learned {
            Some(l) if l.until > now => l.quota,
            Some(_) => {
                let (group, catalog) = (std::mem::take(&mut self.group), self.catalog);
                *self = Self::new(group, catalog);
                self.catalog
            }
            None => self.catalog,
        }
    }

    fn report(&mut self, r: Report, now: Instant) {
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
    fn measure(&mut self, now: Instant, ttl: Duration) {
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
            let from = self.learned.map_or(LearnedFrom::Headers, |l| l.from);
            self.adopt(burst, rate, from, now + ttl);
        }
    }

    /// Headroom: a rate that held for [`HOLD`] is a lower bound, and moves a quarter of the way
    /// up to 0.97 of the upper bound (by 0.5 % of the catalog's rate at least, never past it);
    /// no new evidence, so the TTL runs on. Where the server reports nothing, a rejection may
    /// as well have been a burst: no upper bound holds the rate back from the catalog's.
    fn headroom(&mut self, now: Instant) {
        let current = self.enforced(now);
        let Some(l) = self.learned else { return };
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
            self.probe = (l.from == LearnedFrom::Headers).then_some((was, rate));
        }
    }

    /// The server had no token to spare after a request. Under a rate that held with headroom
    /// its bucket stays full before each request; if it drains right after a step of headroom,
    /// the step went past the server's rate: back to the rate before it, and the stepped rate is
    /// an upper bound — found by the server's reports, before any rejection.
    fn drained(&mut self, now: Instant) {
        let Some((from, to)) = self.probe.take() else {
            return;
        };
        let current = self.enforced(now);
        let Some(l) = self.learned else { return };
        if (current.rate_per_second() - to).abs() > to * 0.001 {
            return;
        }
        self.upper = Some(self.upper.map_or(to, |u| u.min(to)));
        self.adopt(current.burst(), from, l.from, l.until);
        self.changed_at = Some(now);
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
        self.learned = (quota != self.catalog).then_some(Learned { quota, until, from });
    }
}

/// Running sums of one series' points.
#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
    yy: f64,
}

impl Sums {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.xy += x * y;
        self.yy += y * y;
    }

    /// The series centred on its own means (its own intercept).
    fn fit(&self) -> Fit {
        if self.n < 2.0 {
            return Fit::default();
        }
        Fit {
            n: self.n,
            series: 1.0,
            sxx: self.xx - self.x * self.x / self.n,
            sxy: self.xy - self.x * self.y / self.n,
            syy: self.yy - self.y * self.y / self.n,
        }
    }
}

/// Centred sums of one or more series: a common slope, one intercept each.
#[derive(Debug, Default, Clone, Copy)]
struct Fit {
    n: f64,
    series: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
}

impl Fit {
    fn plus(self, o: Self) -> Self {
        Self {
            n: self.n + o.n,
            series: self.series + o.series,
            sxx: self.sxx + o.sxx,
            sxy: self.sxy + o.sxy,
            syy: self.syy + o.syy,
        }
    }

    fn scaled(self, k: f64) -> Self {
        Self {
            n: self.n * k,
            series: self.series * k,
            sxx: self.sxx * k,
            sxy: self.sxy * k,
            syy: self.syy * k,
        }
    }

    /// The common slope and its standard error, once there are points to spare.
    fn slope(&self) -> Option<(f64, f64)> {
        let dof = self.n - self.series - 1.0;
        if dof < 4.0 || self.sxx <= f64::EPSILON {
            return None;
        }
        let b = self.sxy / self.sxx;
        let rss = (self.syy - b * self.sxy).max(0.0);
        Some((b, (rss / dof / self.sxx).sqrt()))
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // levels of a few tokens
mod tests {
    use super::*;

    fn q(burst: u32, ms: u64) -> Quota {
        Quota::new(burst, Duration::from_millis(ms)).unwrap()
    }

    fn b(catalog: Quota) -> Bucket<'static> {
        Bucket {
            key: "k",
            group: "g",
            catalog,
        }
    }

    /// A GCRA server of `burst` / `interval_ms`, saturated by a client that sends every
    /// `every_ms`: the reports it gives (time, tokens left after an admitted request, or `None`
    /// for a rejection).
    fn server(burst: u32, interval_ms: f64, every_ms: f64, secs: f64) -> Vec<(f64, Option<u32>)> {
        let mut level = f64::from(burst);
        let (mut t, mut out) = (0.0, Vec::new());
        while t < secs * 1000.0 {
            level = (level + every_ms / interval_ms).min(f64::from(burst));
            if level >= 1.0 {
                level -= 1.0;
                out.push((t / 1000.0, Some(level.floor() as u32)));
            } else {
                out.push((t / 1000.0, None));
            }
            t += every_ms;
        }
        out
    }

    /// A client of `catalog` that sends as fast as the quota it enforces lets it (a local
    /// bucket that the server's reports align down, and a pause of 1 s after each rejection, as
    /// WB's `X-Ratelimit-Retry` says) against a GCRA server of `burst` / `interval_ms`, for
    /// `secs`: the learner, the requests the server admitted, and the rejections after the
    /// first 3 s.
    fn closed_loop(catalog: Quota, burst: u32, interval_ms: f64, secs: f64) -> (Learner, u32, u32) {
        let l = Learner::new(Duration::from_secs(600));
        let t0 = Instant::now();
        let (mut server, mut local) = (f64::from(burst), f64::from(catalog.burst()));
        let (step, mut t, mut paused_until) = (0.001, 0.0, 0.0);
        let (mut admitted, mut late) = (0, 0);
        while t < secs {
            let at = t0 + Duration::from_secs_f64(t);
            let quota = l.quota(b(catalog), at).0;
            server = (server + step * 1000.0 / interval_ms).min(f64::from(burst));
            local = (local + step * quota.rate_per_second()).min(f64::from(quota.burst()));
            if t >= paused_until && local >= 1.0 {
                local -= 1.0;
                if server >= 1.0 {
                    server -= 1.0;
                    admitted += 1;
                    let left = server.floor() as u32;
                    let report = Report {
                        remaining: Some(left),
                        limit: None,
                        window: None,
                        weight: 1,
                    };
                    l.reported(b(catalog), report, at);
                    local = local.min(f64::from(left));
                } else {
                    let report = Report {
                        remaining: None,
                        limit: Some(burst),
                        window: None,
                        weight: 1,
                    };
                    l.reported(b(catalog), report, at);
                    l.rejected(b(catalog), quota, at, LearnedFrom::Headers);
                    paused_until = t + 1.0;
                    if t > 3.0 {
                        late += 1;
                    }
                }
            }
            t += step;
        }
        (l, admitted, late)
    }

    #[test]
    fn learns_a_stricter_servers_burst_and_interval_from_its_reports() {
        let catalog = q(5, 200);
        // The server: 2 at once, one every 400 ms (2.5/s), 30 s: it admits at most 77.
        let (l, admitted, late) = closed_loop(catalog, 2, 400.0, 30.0);
        let now = Instant::now() + Duration::from_secs(30);
        let (learned, _) = l.quota(b(catalog), now);
        assert_eq!(learned.burst(), 2);
        let ms = learned.interval().as_secs_f64() * 1000.0;
        assert!((400.0..=440.0).contains(&ms), "learned {ms} ms");
        // After the first rejections the measured rate caps the probes: none is refused later.
        eprintln!("admitted {admitted}, late rejections {late}");
        assert!(admitted >= 69, "admitted {admitted} of at most 77");
        assert_eq!(late, 0, "rejections after the first 3 s");
        let view = l.snapshot(now);
        assert_eq!(view.len(), 1);
        assert_eq!(
            (view[0].from, view[0].catalog),
            (LearnedFrom::Headers, catalog)
        );
    }

    /// A server that states its limit and its window (MoySklad) is believed at once, in either
    /// direction — past the catalog's rate too, since its own headers say so — and the catalog's
    /// is back after the TTL without new reports.
    #[test]
    fn a_stated_limit_per_window_is_adopted_either_way() {
        let catalog = Quota::new(45, Duration::from_secs(3) / 45).unwrap();
        let l = Learner::new(Duration::from_secs(600));
        let t0 = Instant::now();
        let stated = |limit| Report {
            remaining: Some(limit / 2),
            limit: Some(limit),
            window: Some(Duration::from_secs(3)),
            weight: 4,
        };
        let rate = |at| l.quota(b(catalog), at).0.rate_per_second();
        // What the catalog says: nothing learned.
        l.reported(b(catalog), stated(45), t0);
        assert!(l.snapshot(t0).is_empty());
        // 90 per 3 s: twice the catalog's rate and burst.
        l.reported(b(catalog), stated(90), t0);
        let (q, _) = l.quota(b(catalog), t0);
        assert_eq!(q.burst(), 90);
        assert!((rate(t0) - 30.0).abs() < 0.01, "{}", rate(t0));
        // 20 per 3 s: slower than the catalog, at once.
        let t1 = t0 + Duration::from_secs(1);
        l.reported(b(catalog), stated(20), t1);
        assert_eq!(l.quota(b(catalog), t1).0.burst(), 20);
        assert!((rate(t1) - 20.0 / 3.0).abs() < 0.01, "{}", rate(t1));
        // No report for the TTL: the catalog's again.
        let later = t1 + Duration::from_secs(601);
        assert_eq!(l.quota(b(catalog), later), (catalog, true));
    }

    /// A step of headroom after which the server reports no token to spare went past its rate:
    /// it is taken back before any rejection, and the stepped rate bounds the next steps.
    #[test]
    fn a_step_that_drains_the_servers_bucket_is_taken_back() {
        let catalog = q(5, 200);
        let l = Learner::new(Duration::from_secs(600));
        let t0 = Instant::now();
        let rate = |at| l.quota(b(catalog), at).0.rate_per_second();
        let report = |left| Report {
            remaining: Some(left),
            limit: None,
            window: None,
            weight: 1,
        };
        l.rejected(b(catalog), catalog, t0, LearnedFrom::Headers);
        let narrowed = rate(t0);
        assert!((narrowed - 3.5).abs() < 0.01, "{narrowed}");
        // A token to spare after every request for the hold: one step up.
        let mut at = t0;
        while rate(at) <= narrowed {
            at += Duration::from_millis(300);
            assert!(at < t0 + Duration::from_secs(10), "no step of headroom");
            l.reported(b(catalog), report(1), at);
        }
        let stepped = rate(at);
        // The next answer finds the bucket drained: back to the rate before the step.
        at += Duration::from_millis(300);
        l.reported(b(catalog), report(0), at);
        assert!(
            (rate(at) - narrowed).abs() < 0.01,
            "{} after {stepped}",
            rate(at)
        );
        // Headroom again later: never up to the drained step again.
        for _ in 0..200 {
            at += Duration::from_millis(300);
            l.reported(b(catalog), report(1), at);
            assert!(
                rate(at) < stepped * MARGIN + 1e-9,
                "{} past {stepped}",
                rate(at)
            );
        }
        assert!(rate(at) > narrowed, "it still climbs below the bound");
    }

    #[test]
    fn a_correct_or_more_generous_server_teaches_nothing() {
        let catalog = q(5, 200);
        for (burst, ms) in [(5, 200.0), (10, 100.0)] {
            let (l, admitted, late) = closed_loop(catalog, burst, ms, 10.0);
            assert_eq!(l.quota(b(catalog), Instant::now()).0, catalog);
            assert!(l.snapshot(Instant::now()).is_empty());
            assert_eq!(late, 0);
            assert!(admitted >= 54, "{admitted}");
        }
    }

    #[test]
    fn without_a_rejection_a_slow_slope_is_no_evidence() {
        // One of two processes on a correct catalog: it sees every report but only half the
        // admissions, so its slope is half the server's rate. No rejection: nothing learned.
        let l = Learner::new(Duration::from_secs(600));
        let catalog = q(5, 200);
        let t0 = Instant::now();
        for (i, &(t, left)) in server(5, 200.0, 100.0, 8.0).iter().enumerate() {
            if i % 2 == 0 {
                let report = Report {
                    remaining: left,
                    limit: None,
                    window: None,
                    weight: 1,
                };
                l.reported(b(catalog), report, t0 + Duration::from_secs_f64(t));
            }
        }
        assert_eq!(l.quota(b(catalog), t0).0, catalog);
    }

    #[test]
    fn a_learned_quota_expires_without_new_evidence() {
        let catalog = q(5, 200);
        let (l, _, _) = closed_loop(catalog, 2, 400.0, 10.0);
        let soon = Instant::now() + Duration::from_secs(8);
        assert_ne!(l.quota(b(catalog), soon).0, catalog);
        // Nothing renews it for the TTL of its last evidence (at most 600 s after the run).
        let later = Instant::now() + Duration::from_secs(700);
        assert_eq!(l.quota(b(catalog), later), (catalog, true));
        assert!(l.snapshot(later).is_empty());
    }

    #[test]
    fn rejections_narrow_and_successes_restore_the_rate() {
        let l = Learner::new(Duration::from_secs(600));
        let catalog = q(50, 500);
        let now = Instant::now();
        let reject = || {
            let sent = l.quota(b(catalog), now).0;
            l.rejected(b(catalog), sent, now, LearnedFrom::Rejections)
        };
        let narrowed = reject().unwrap();
        assert!(
            (narrowed.rate_per_second() - 1.4).abs() < 0.01,
            "{narrowed:?}"
        );
        let again = reject().unwrap();
        assert!((again.rate_per_second() - 0.98).abs() < 0.01, "{again:?}");
        let mut restored = 0;
        while l.quota(b(catalog), now).0 != catalog {
            l.succeeded(b(catalog), now);
            restored += 1;
            assert!(restored < 100);
        }
        // 2 % of 2/s (0.04/s) per success: from 0.98/s back to 2/s in 26.
        assert_eq!(restored, 26);
        for _ in 0..20 {
            reject();
        }
        let floor = l.quota(b(catalog), now).0.rate_per_second();
        assert!((floor - 2.0 / 64.0).abs() < 0.001, "{floor}");
    }

    #[test]
    fn tracks_stay_bounded() {
        let l = Learner::new(Duration::from_secs(600));
        let now = Instant::now();
        for i in 0..MAX_TRACKS + 10 {
            let key = format!("k{i}");
            let bucket = Bucket {
                key: &key,
                ..b(q(5, 200))
            };
            l.rejected(bucket, q(5, 200), now, LearnedFrom::Rejections);
        }
        assert_eq!(l.tracks().len(), MAX_TRACKS);
    }
}
