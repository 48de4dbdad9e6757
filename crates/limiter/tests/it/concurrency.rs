//! Many threads, one key, a clock that stands still: exactly the burst gets through. And a flood
//! of one-off keys leaves the map (near) empty once their buckets are full again.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use apistend_limiter::{Algorithm, ManualClock, MemoryStore, Quota};

#[test]
fn threads_hammering_one_key_admit_exactly_the_allowed_count() {
    for algorithm in [Algorithm::Gcra, Algorithm::FixedWindow] {
        let clock = ManualClock::new();
        let store = MemoryStore::with_clock(clock.clone());
        let quota = Quota::new(1000, Duration::from_millis(1))
            .unwrap()
            .with_algorithm(algorithm);
        let admitted = Arc::new(AtomicU32::new(0));
        std::thread::scope(|s| {
            for _ in 0..8 {
                let (store, admitted) = (store.clone(), Arc::clone(&admitted));
                s.spawn(move || {
                    for _ in 0..500 {
                        if store.acquire("hot", &quota, 1).unwrap().allowed {
                            admitted.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(
            admitted.load(Ordering::Relaxed),
            1000,
            "{algorithm}: 4000 attempts on a bucket of 1000"
        );
        // The clock moves 250 intervals: exactly 250 more (GCRA), or none until the window ends.
        clock.advance(Duration::from_millis(250));
        let more = Arc::new(AtomicU32::new(0));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (store, more) = (store.clone(), Arc::clone(&more));
                s.spawn(move || {
                    for _ in 0..200 {
                        if store.acquire("hot", &quota, 1).unwrap().allowed {
                            more.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        let expected = if algorithm == Algorithm::Gcra { 250 } else { 0 };
        assert_eq!(more.load(Ordering::Relaxed), expected, "{algorithm}");
    }
}

#[test]
fn a_million_idle_keys_are_evicted() {
    let clock = ManualClock::new();
    let store = MemoryStore::with_clock(clock.clone());
    let quota = Quota::new(5, Duration::from_millis(10)).unwrap();
    for i in 0..1_000_000u32 {
        assert!(
            store
                .acquire(&format!("tenant-{i}:wb:content"), &quota, 1)
                .unwrap()
                .allowed
        );
    }
    assert!(
        store.len() > 900_000,
        "the keys are tracked while their buckets refill: {}",
        store.len()
    );
    // Past every key's reset time (10 ms), plus the sweep period.
    clock.advance(Duration::from_secs(2));
    // New traffic sweeps the shards it lands in; a few thousand keys reach every shard.
    for i in 0..5_000u32 {
        store.acquire(&format!("fresh-{i}"), &quota, 1).unwrap();
    }
    let left = store.len();
    assert!(
        left <= 5_000,
        "the map should be back to (near) empty, holds {left}"
    );
    store.sweep();
    // Full buckets are kept for a second of grace (for settled acquires), then go.
    clock.advance(Duration::from_secs(2));
    store.sweep();
    assert_eq!(store.len(), 0);
}
