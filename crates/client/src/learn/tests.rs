//! The learner against simulated servers.

#![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // levels of a few tokens

use std::time::{Duration, Instant};

use apistend_limiter::Quota;

use super::map::MAX_TRACKS;
use super::track::MARGIN;
use super::{Bucket, LearnedFrom, Learner, Report};

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

/// What another process of the account learned, from the store: a newer decision's quota is
/// followed and its bounds merged; an older one's quota is not, its stricter bound is; a record
/// decided before a forget is not followed back.
#[test]
fn a_shared_record_is_followed_when_newer_and_its_bounds_always() {
    let catalog = q(5, 600);
    let (l, t0) = (Learner::new(Duration::from_secs(600)), Instant::now());
    let theirs = apistend_limiter::LearnedRecord {
        burst: 5,
        interval_us: 857_143,
        upper: Some(1.6),
        lower: None,
        decided_ms: 1_000,
        from_headers: true,
    };
    let followed = l
        .shared(b(catalog), &theirs, t0)
        .expect("a newer quota is followed");
    assert_eq!(followed.interval(), Duration::from_micros(857_143));
    let mine = l.record("k").unwrap();
    assert_eq!((mine.upper, mine.decided_ms), (Some(1.6), 1_000));
    // An older record: its quota is not taken, its stricter bound is.
    let older = apistend_limiter::LearnedRecord {
        interval_us: 2_000_000,
        upper: Some(1.2),
        decided_ms: 500,
        ..theirs
    };
    assert_eq!(l.shared(b(catalog), &older, t0), None);
    let mine = l.record("k").unwrap();
    assert_eq!((mine.interval_us, mine.upper), (857_143, Some(1.2)));
    // A forget: what the store still holds, decided before it, is not followed back.
    l.forget(t0);
    assert_eq!(l.shared(b(catalog), &theirs, t0), None);
    assert!(l.record("k").is_none());
}
