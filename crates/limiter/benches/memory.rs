//! MemoryStore against governor's keyed (DashMap) limiter: 100 000 keys, 1 and 2 threads, both on a
//! fake clock so the comparison is of the algorithm and the map, not of clock reads. The two run in
//! alternating rounds inside this one process (which goes first alternates too), on the same keys
//! in the same order, so a machine that slows down mid-run slows both; each round's ratio is
//! governor's time over ours, and the report is the median ratio with its range. Also prints the
//! bytes each tracked key costs in either.
//!
//! `cargo bench -p apistend-limiter --bench memory [-- ROUNDS]` (default 9 rounds; about 40 s).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::print_stdout,
    unsafe_code,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use apistend_limiter::{ManualClock, MemoryStore, Quota};
use governor::clock::FakeRelativeClock;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator and only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const KEYS: usize = 100_000;

fn keys() -> Vec<String> {
    (0..KEYS)
        .map(|i| format!("wb:rl:{{acc-{i:06}}}:content"))
        .collect()
}

type Governor = governor::RateLimiter<
    String,
    governor::state::keyed::DefaultKeyedStateStore<String>,
    FakeRelativeClock,
    governor::middleware::NoOpMiddleware<<FakeRelativeClock as governor::clock::Clock>::Instant>,
>;

fn governor_limiter() -> Governor {
    let q = governor::Quota::per_second(NonZeroU32::new(1_000).unwrap())
        .allow_burst(NonZeroU32::new(1_000_000).unwrap());
    governor::RateLimiter::dashmap_with_clock(q, FakeRelativeClock::default())
}

fn ours() -> (MemoryStore<ManualClock>, Quota) {
    (
        MemoryStore::with_clock(ManualClock::new()),
        Quota::new(1_000_000, Duration::from_millis(1)).unwrap(),
    )
}

fn bytes_per_key() {
    let keys = keys();
    let key_bytes: usize = keys.iter().map(String::len).sum();
    let before = LIVE.load(Ordering::Relaxed);
    let g = governor_limiter();
    for k in &keys {
        let _ = g.check_key(k);
    }
    let gov = LIVE.load(Ordering::Relaxed) - before;
    drop(g);
    let before = LIVE.load(Ordering::Relaxed);
    let (s, q) = ours();
    for k in &keys {
        let _ = s.acquire(k, &q, 1);
    }
    let our = LIVE.load(Ordering::Relaxed) - before;
    drop(s);
    println!(
        "bytes per tracked key ({KEYS} keys of {} bytes on average): governor {:.1}, apistend {:.1} (ratio {:.2})",
        key_bytes / KEYS,
        gov as f64 / KEYS as f64,
        our as f64 / KEYS as f64,
        our as f64 / gov as f64
    );
}

fn run_threads(threads: usize, iters: u64, f: impl Fn(usize, u64) + Sync) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || f(t, iters / threads as u64));
        }
    });
    start.elapsed()
}

/// Decisions per measurement: long enough (0.2–1 s) that thread start-up is noise.
const DECISIONS: u64 = 3_000_000;

fn median_and_range(v: &[f64]) -> (f64, f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(9);
    bytes_per_key();
    let keys = keys();
    // The key a thread visits at step i: scattered, so most lookups miss the CPU caches.
    let key = |t: usize, i: usize| &keys[(i * 7919 + t * 50_000) % KEYS];
    for threads in [1usize, 2] {
        let g = governor_limiter();
        let (s, q) = ours();
        for k in &keys {
            let _ = g.check_key(k);
            let _ = s.acquire(k, &q, 1);
        }
        let run_governor = || {
            run_threads(threads, DECISIONS, |t, n| {
                for i in 0..n as usize {
                    black_box(g.check_key(key(t, i)).is_ok());
                }
            })
        };
        // Ours returns the whole decision (allowed, limit, remaining, retry and reset times).
        let run_ours = || {
            run_threads(threads, DECISIONS, |t, n| {
                for i in 0..n as usize {
                    black_box(s.acquire(key(t, i), &q, 1).unwrap());
                }
            })
        };
        // One unmeasured round of each warms caches and maps.
        run_governor();
        run_ours();
        let ns = |d: Duration| d.as_nanos() as f64 / DECISIONS as f64;
        let mut ratios = Vec::with_capacity(rounds);
        let (mut gov_ns, mut our_ns) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let (g_t, o_t) = if round % 2 == 0 {
                let g_t = run_governor();
                (g_t, run_ours())
            } else {
                let o_t = run_ours();
                (run_governor(), o_t)
            };
            gov_ns.push(ns(g_t));
            our_ns.push(ns(o_t));
            ratios.push(g_t.as_secs_f64() / o_t.as_secs_f64());
            println!(
                "{threads} thread(s) round {:>2}: governor {:>6.1} ns, apistend {:>6.1} ns, ratio {:.2}",
                round + 1,
                ns(g_t),
                ns(o_t),
                g_t.as_secs_f64() / o_t.as_secs_f64()
            );
        }
        let (m, lo, hi) = median_and_range(&ratios);
        let (gm, _, _) = median_and_range(&gov_ns);
        let (om, _, _) = median_and_range(&our_ns);
        println!(
            "{threads} thread(s), {rounds} rounds: governor {gm:.1} ns, apistend {om:.1} ns per decision (medians); ratio governor/apistend median {m:.2} (min {lo:.2}, max {hi:.2})"
        );
    }
}
