//! Property tests: both stores agree with the reference model decision by decision, and GCRA never
//! admits more than `burst + d/interval` in any interval of length `d`.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{RefDecision, RefGcra, RefOp, RefWindow, bound_violation};
use apistend_limiter::{
    Algorithm, Clock, Decision, Draw, Drawn, FailurePolicy, ManualClock, MemoryStore, Op, Quota,
    RedisConfig, RedisStore, TimeSource,
};
use apistend_testkit::RedisServer;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    burst: u32,
    interval_us: u64,
    steps: Vec<(u64, usize, RefOp)>, // (advance µs, key index, op)
}

fn case() -> impl Strategy<Value = Case> {
    (1u32..8, prop_oneof![Just(1_000u64), Just(20_000), Just(333_334), 1u64..50_000]).prop_flat_map(|(burst, interval_us)| {
        let op = prop_oneof![
            8 => (1..=burst).prop_map(RefOp::Acquire),
            // Margins up to the memory store's grace (1 s), after which full buckets are swept.
            3 => (1..=burst, 0u64..(3 * interval_us).min(1_000_000)).prop_map(|(n, m)| RefOp::Settled(n, m)),
            1 => (0u64..3 * interval_us).prop_map(RefOp::Penalize),
            1 => (1..=burst).prop_map(RefOp::Refund),
            1 => (0..=burst).prop_map(RefOp::Align),
            1 => (1..=3 * burst).prop_map(RefOp::Charge),
        ];
        let step = (prop_oneof![3 => Just(0u64), 4 => 0..interval_us, 1 => 0..interval_us * u64::from(burst) * 2], 0usize..3, op);
        proptest::collection::vec(step, 1..120).prop_map(move |steps| Case { burst, interval_us, steps })
    })
}

fn check(d: &apistend_limiter::Decision, r: &RefDecision, ctx: &str) {
    assert_eq!(d.allowed, r.allowed, "allowed differs {ctx}");
    assert_eq!(
        u64::from(d.remaining),
        r.remaining,
        "remaining differs {ctx}"
    );
    assert_eq!(
        d.retry_after,
        Duration::from_micros(r.retry_us),
        "retry_after differs {ctx}"
    );
}

const KEYS: [&str; 3] = ["a:{t1}:x", "b:{t2}:y", "c:{t1}:z"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn memory_gcra_matches_model_and_bound(c in case()) {
        let clock = ManualClock::new();
        let store = MemoryStore::with_clock(clock.clone());
        let quota = Quota::new(c.burst, Duration::from_micros(c.interval_us)).unwrap();
        let mut model = RefGcra::default();
        let mut admitted: Vec<Vec<(u64, u32)>> = vec![Vec::new(); 3];
        let mut penalized = [false; 3];
        for (i, &(adv, k, op)) in c.steps.iter().enumerate() {
            clock.advance_micros(adv);
            let now = clock.now();
            let r = model.apply(KEYS[k], now, c.burst, c.interval_us, op);
            let d = match op {
                RefOp::Acquire(n) => store.acquire(KEYS[k], &quota, n).unwrap(),
                RefOp::Settled(n, m) => store.acquire_settled(KEYS[k], &quota, n, Duration::from_micros(m)).unwrap(),
                RefOp::Penalize(us) => { penalized[k] = true; store.penalize(KEYS[k], &quota, Duration::from_micros(us)) }
                RefOp::Refund(n) => { penalized[k] = true; store.refund(KEYS[k], &quota, n) }
                // Only ever stricter: the bound still holds.
                RefOp::Align(r) => store.align(KEYS[k], &quota, r),
                RefOp::Charge(n) => store.apply(KEYS[k], &quota, Op::Charge(n)).unwrap(),
            };
            check(&d, &r, &format!("at step {i} ({op:?})"));
            if let (RefOp::Acquire(n) | RefOp::Settled(n, _), true) = (op, d.allowed) { admitted[k].push((now, n)); }
        }
        for k in 0..3 {
            // Refunds give tokens back by design; the bound holds for keys that only acquire.
            if !penalized[k] {
                prop_assert_eq!(bound_violation(&admitted[k], c.burst, c.interval_us), None);
            }
        }
    }

    #[test]
    fn memory_fixed_window_matches_model(c in case()) {
        let clock = ManualClock::new();
        let store = MemoryStore::with_clock(clock.clone());
        let quota = Quota::new(c.burst, Duration::from_micros(c.interval_us)).unwrap().with_algorithm(Algorithm::FixedWindow);
        let mut model = RefWindow::default();
        for (i, &(adv, k, op)) in c.steps.iter().enumerate() {
            clock.advance_micros(adv);
            let (r, d) = match op {
                RefOp::Acquire(n) => (
                    model.acquire(KEYS[k], clock.now(), c.burst, c.interval_us, n),
                    store.acquire(KEYS[k], &quota, n).unwrap(),
                ),
                RefOp::Settled(n, m) => (
                    model.settled(KEYS[k], clock.now(), c.burst, c.interval_us, n, m),
                    store.acquire_settled(KEYS[k], &quota, n, Duration::from_micros(m)).unwrap(),
                ),
                RefOp::Charge(n) => (
                    model.charge(KEYS[k], clock.now(), c.burst, c.interval_us, n),
                    store.apply(KEYS[k], &quota, Op::Charge(n)).unwrap(),
                ),
                _ => continue,
            };
            check(&d, &r, &format!("at step {i} ({op:?})"));
        }
    }
}

/// A runtime, a manual clock, a fail-closed Redis store on `server` reading that clock, and a
/// runner of 48 cases.
fn redis_in_client_time(
    server: &RedisServer,
) -> (
    tokio::runtime::Runtime,
    ManualClock,
    RedisStore,
    proptest::test_runner::TestRunner,
) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let shared: Arc<dyn Clock> = Arc::new(clock.clone());
    let store = rt.block_on(async {
        RedisStore::new(
            RedisConfig::from_url(&server.url())
                .unwrap()
                .with_time(TimeSource::Client(shared))
                .with_failure_policy(FailurePolicy::FailClosed)
                .with_ttl_slack(Duration::from_secs(3600))
                .with_timeout(Duration::from_secs(5)),
        )
        .unwrap()
    });
    let runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    });
    (rt, clock, store, runner)
}

/// Empties every bucket a case uses (GCRA's and the fixed window's, `fw:` + key) and returns
/// the case's quota for each.
async fn fresh(store: &RedisStore, c: &Case) -> (Quota, Quota) {
    for k in KEYS {
        store.reset(k).await.unwrap();
        store.reset(&format!("fw:{k}")).await.unwrap();
    }
    let quota = Quota::new(c.burst, Duration::from_micros(c.interval_us)).unwrap();
    (quota, quota.with_algorithm(Algorithm::FixedWindow))
}

/// `op` on the bucket `key` of `quota` in `store`.
async fn run_op(store: &RedisStore, key: String, quota: Quota, op: RefOp) -> Decision {
    match op {
        RefOp::Acquire(n) => store.acquire(&key, &quota, n).await,
        RefOp::Settled(n, m) => {
            store
                .acquire_settled(&key, &quota, n, Duration::from_micros(m))
                .await
        }
        RefOp::Penalize(us) => {
            store
                .penalize(&key, &quota, Duration::from_micros(us))
                .await
        }
        RefOp::Refund(n) => store.refund(&key, &quota, n).await,
        RefOp::Align(r) => store.align(&key, &quota, r).await,
        RefOp::Charge(n) => store.apply(&key, &quota, Op::Charge(n)).await,
    }
    .unwrap()
}

/// The Redis store, in client-time mode so the test controls time, against the same model: the
/// Lua transcription and the Rust arithmetic must agree exactly.
#[test]
fn redis_store_matches_model() {
    let Some(server) = RedisServer::start("redis_store_matches_model") else {
        return;
    };
    let (rt, clock, store, mut runner) = redis_in_client_time(&server);
    runner
        .run(&case(), |c| {
            rt.block_on(async {
                let (quota, fw) = fresh(&store, &c).await;
                let mut model = RefGcra::default();
                let mut window = RefWindow::default();
                for (i, &(adv, k, op)) in c.steps.iter().enumerate() {
                    clock.advance_micros(adv);
                    let now = clock.now();
                    let r = model.apply(KEYS[k], now, c.burst, c.interval_us, op);
                    let d = run_op(&store, KEYS[k].to_owned(), quota, op).await;
                    check(&d, &r, &format!("(redis gcra) at step {i} ({op:?})"));
                    let fk = format!("fw:{}", KEYS[k]);
                    let r = match op {
                        RefOp::Acquire(n) => window.acquire(&fk, now, c.burst, c.interval_us, n),
                        RefOp::Settled(n, m) => {
                            window.settled(&fk, now, c.burst, c.interval_us, n, m)
                        }
                        RefOp::Charge(n) => window.charge(&fk, now, c.burst, c.interval_us, n),
                        _ => continue,
                    };
                    let d = run_op(&store, fk, fw, op).await;
                    check(&d, &r, &format!("(redis window) at step {i} ({op:?})"));
                }
            });
            Ok(())
        })
        .unwrap();
}

/// Steps at the same moment go to Redis together, so that they share script calls: within one
/// call the script reads each bucket once and writes it once, and later items read what earlier
/// ones wrote. Every decision must still be the model's, in order, on GCRA buckets (every op)
/// and fixed windows (acquires) alike.
#[test]
fn redis_store_batched_calls_match_model() {
    let Some(server) = RedisServer::start("redis_store_batched_calls_match_model") else {
        return;
    };
    let (rt, clock, store, mut runner) = redis_in_client_time(&server);
    let decisions = std::cell::Cell::new(0u64);
    let before = server.calls("evalsha");
    runner
        .run(&case(), |c| {
            rt.block_on(async {
                let (quota, fw) = fresh(&store, &c).await;
                let (mut model, mut window) = (RefGcra::default(), RefWindow::default());
                // A group: the steps from one that advances the clock up to the next (at most 12:
                // join_all keeps the order of first polls, and so the queue's, below 30 futures).
                let mut groups: Vec<(u64, Vec<(usize, RefOp)>)> = Vec::new();
                for &(adv, k, op) in &c.steps {
                    match groups.last_mut() {
                        Some((_, g)) if adv == 0 && g.len() < 12 => g.push((k, op)),
                        _ => groups.push((adv, vec![(k, op)])),
                    }
                }
                for (adv, group) in groups {
                    clock.advance_micros(adv);
                    let now = clock.now();
                    let mut expected = Vec::new();
                    let mut calls = Vec::new();
                    for &(k, op) in &group {
                        let key = KEYS[k];
                        expected.push(model.apply(key, now, c.burst, c.interval_us, op));
                        calls.push(run_op(&store, key.to_owned(), quota, op));
                        let fk = format!("fw:{key}");
                        let r = match op {
                            RefOp::Acquire(n) => {
                                window.acquire(&fk, now, c.burst, c.interval_us, n)
                            }
                            RefOp::Settled(n, m) => {
                                window.settled(&fk, now, c.burst, c.interval_us, n, m)
                            }
                            RefOp::Charge(n) => window.charge(&fk, now, c.burst, c.interval_us, n),
                            _ => continue,
                        };
                        expected.push(r);
                        calls.push(run_op(&store, fk, fw, op));
                    }
                    let got = futures_util::future::join_all(calls).await;
                    decisions.set(decisions.get() + got.len() as u64);
                    for (i, (d, r)) in got.iter().zip(&expected).enumerate() {
                        check(d, r, &format!("(batched) item {i} of {group:?} at {now}"));
                    }
                }
            });
            Ok(())
        })
        .unwrap();
    let calls = server.calls("evalsha") - before;
    assert!(
        calls * 2 < decisions.get(),
        "{calls} script calls for {} decisions: the steps were not batched",
        decisions.get()
    );
}

/// A request drawing from several buckets: three buckets of their own quotas and algorithms, and
/// steps that each draw `n` tokens (after `margin` µs settled) from a subset of them, in order.
#[derive(Debug, Clone)]
struct DrawCase {
    buckets: Vec<(u32, u64, bool)>, // (burst, interval µs, fixed window)
    steps: Vec<(u64, Vec<usize>, u32, u64)>, // (advance µs, buckets drawn, tokens, margin µs)
}

fn draw_case() -> impl Strategy<Value = DrawCase> {
    let bucket = (
        1u32..6,
        prop_oneof![Just(1_000u64), Just(20_000), 1u64..50_000],
        any::<bool>(),
    );
    proptest::collection::vec(bucket, 3).prop_flat_map(|buckets| {
        let min_burst = buckets.iter().map(|b| b.0).min().unwrap_or(1);
        let step = (
            prop_oneof![2 => Just(0u64), 4 => 0u64..20_000, 1 => 0u64..200_000],
            proptest::sample::subsequence(vec![0usize, 1, 2], 1..=3).prop_shuffle(),
            1..=min_burst,
            prop_oneof![3 => Just(0u64), 1 => 0u64..40_000],
        );
        proptest::collection::vec(step, 1..80).prop_map(move |steps| DrawCase {
            buckets: buckets.clone(),
            steps,
        })
    })
}

const DRAW_KEYS: [&str; 3] = ["d:{t}:one", "d:{t}:two", "d:{t}:three"];

/// The model of a draw: each bucket in turn on a copy of the models; the copy is kept when every
/// bucket gave, dropped at the first refusal.
fn model_draw(
    models: &mut (RefGcra, RefWindow),
    c: &DrawCase,
    drawn: &[usize],
    now: u64,
    n: u32,
    m: u64,
) -> (Option<usize>, RefDecision) {
    let mut copy = models.clone();
    let mut first = None;
    for (i, &b) in drawn.iter().enumerate() {
        let (burst, t, window) = c.buckets[b];
        let r = if window {
            copy.1.settled(DRAW_KEYS[b], now, burst, t, n, m)
        } else {
            copy.0
                .apply(DRAW_KEYS[b], now, burst, t, RefOp::Settled(n, m))
        };
        if !r.allowed {
            return (Some(i), r);
        }
        first.get_or_insert(r);
    }
    *models = copy;
    (None, first.expect("at least one bucket"))
}

fn draws<'a>(c: &DrawCase, drawn: &[usize], n: u32, m: u64) -> Vec<Draw<'a>> {
    drawn
        .iter()
        .map(|&b| {
            let (burst, t, window) = c.buckets[b];
            let q = Quota::new(burst, Duration::from_micros(t)).unwrap();
            let q = if window {
                q.with_algorithm(Algorithm::FixedWindow)
            } else {
                q
            };
            Draw::new(DRAW_KEYS[b], q, n).settled(Duration::from_micros(m))
        })
        .collect()
}

fn check_drawn(d: &Drawn, (refused, r): &(Option<usize>, RefDecision), ctx: &str) {
    assert_eq!(d.refused, *refused, "refusing bucket differs {ctx}");
    check(&d.decision, r, ctx);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A refused draw leaves every bucket as it was: the memory store undoes the buckets that
    /// gave before the refusing one exactly.
    #[test]
    fn memory_draws_take_from_every_bucket_or_none(c in draw_case()) {
        let clock = ManualClock::new();
        let store = MemoryStore::with_clock(clock.clone());
        let mut models = (RefGcra::default(), RefWindow::default());
        for (i, (adv, drawn, n, m)) in c.steps.iter().enumerate() {
            clock.advance_micros(*adv);
            let expected = model_draw(&mut models, &c, drawn, clock.now(), *n, *m);
            let d = store.acquire_all(&draws(&c, drawn, *n, *m)).unwrap();
            check_drawn(&d, &expected, &format!("(memory) at step {i} ({drawn:?} n={n} m={m})"));
        }
    }
}

/// The same on Redis, where one script call decides the whole draw.
#[test]
fn redis_draws_take_from_every_bucket_or_none() {
    let Some(server) = RedisServer::start("redis_draws_take_from_every_bucket_or_none") else {
        return;
    };
    let (rt, clock, store, mut runner) = redis_in_client_time(&server);
    runner
        .run(&draw_case(), |c| {
            rt.block_on(async {
                for k in DRAW_KEYS {
                    store.reset(k).await.unwrap();
                }
                let mut models = (RefGcra::default(), RefWindow::default());
                for (i, (adv, drawn, n, m)) in c.steps.iter().enumerate() {
                    clock.advance_micros(*adv);
                    let expected = model_draw(&mut models, &c, drawn, clock.now(), *n, *m);
                    let d = store.acquire_all(&draws(&c, drawn, *n, *m)).await.unwrap();
                    check_drawn(
                        &d,
                        &expected,
                        &format!("(redis) at step {i} ({drawn:?} n={n} m={m})"),
                    );
                }
            });
            Ok(())
        })
        .unwrap();
}
