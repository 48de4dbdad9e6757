//! MemoryStore against governor's keyed (DashMap) limiter: 100 000 keys, 1 and 2 threads, both on a
//! fake clock so the comparison is of the algorithm and the map, not of clock reads. Also prints the
//! bytes each tracked key costs in either.
//!
//! `cargo bench -p apistend-limiter --bench memory`
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::print_stdout,
    unsafe_code,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use apistend_limiter::{ManualClock, MemoryStore, Quota};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
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

fn bench(c: &mut Criterion) {
    bytes_per_key();
    let keys = keys();
    let mut group = c.benchmark_group("keyed_100k");
    group.throughput(Throughput::Elements(1));
    for threads in [1usize, 2] {
        let g = governor_limiter();
        for k in &keys {
            let _ = g.check_key(k);
        }
        group.bench_function(format!("governor_dashmap/{threads}t"), |b| {
            b.iter_custom(|iters| {
                run_threads(threads, iters, |t, n| {
                    for i in 0..n as usize {
                        black_box(g.check_key(&keys[(i * 7919 + t * 50_000) % KEYS]).is_ok());
                    }
                })
            });
        });
        let (s, q) = ours();
        for k in &keys {
            let _ = s.acquire(k, &q, 1);
        }
        group.bench_function(format!("apistend_memory/{threads}t"), |b| {
            b.iter_custom(|iters| {
                run_threads(threads, iters, |t, n| {
                    for i in 0..n as usize {
                        black_box(
                            s.acquire(&keys[(i * 7919 + t * 50_000) % KEYS], &q, 1)
                                .unwrap(),
                        );
                    }
                })
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3)).sample_size(30);
    targets = bench
}
criterion_main!(benches);
