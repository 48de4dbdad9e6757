//! RedisStore at 50 concurrent callers against `redis-benchmark` running `EVALSHA` of the same
//! script with the same arguments at the same concurrency, in one run, on a redis-server started
//! here.
//!
//! `cargo bench -p apistend-limiter --bench redis`
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::panic
)]

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use apistend_limiter::{FailurePolicy, Quota, RedisConfig, RedisStore};
use apistend_testkit::RedisServer;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const CONCURRENCY: usize = 50;
const KEYSPACE: u64 = 100_000;

fn redis_benchmark(server: &RedisServer, sha: &str, requests: u64) -> f64 {
    let out = Command::new("redis-benchmark")
        .args([
            "-p",
            &server.port().to_string(),
            "-c",
            &CONCURRENCY.to_string(),
            "-n",
            &requests.to_string(),
        ])
        .args(["-r", &KEYSPACE.to_string(), "-q", "--csv"])
        .args([
            "EVALSHA",
            sha,
            "1",
            "bench:{__rand_int__}",
            // now (Redis TIME), TTL slack; one item: acquire on one bucket (GCRA, burst, µs,
            // tokens, margin).
            "",
            "1000",
            "a",
            "1",
            "g",
            "1000000",
            "1",
            "1",
            "0",
        ])
        .output()
        .expect("redis-benchmark runs (apt-get install redis-tools)");
    let text = String::from_utf8_lossy(&out.stdout);
    // CSV: "test","rps",...
    text.lines()
        .filter_map(|l| l.split(',').nth(1))
        .filter_map(|v| v.trim_matches('"').parse::<f64>().ok())
        .next()
        .unwrap_or_else(|| panic!("unexpected redis-benchmark output: {text}"))
}

fn bench(c: &mut Criterion) {
    let Some(server) = RedisServer::start("redis bench") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store = rt.block_on(async {
        RedisStore::new(
            RedisConfig::from_url(&server.url())
                .unwrap()
                .with_failure_policy(FailurePolicy::FailClosed),
        )
        .unwrap()
    });
    let quota = Quota::new(1_000_000, Duration::from_micros(1)).unwrap();
    rt.block_on(store.acquire("warm", &quota, 1)).unwrap();
    let sha = server.cli(&["SCRIPT", "LOAD", include_str!("../src/redis/limiter.lua")]);

    let anchor = redis_benchmark(&server, &sha, 200_000);
    let store = Arc::new(store);
    let measure = |iters: u64| -> Duration {
        rt.block_on(async {
            let start = Instant::now();
            let per_task = iters.div_ceil(CONCURRENCY as u64);
            let tasks: Vec<_> = (0..CONCURRENCY as u64)
                .map(|t| {
                    let store = Arc::clone(&store);
                    tokio::spawn(async move {
                        let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                        for _ in 0..per_task {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            let key = format!("bench:{{{}}}", x % KEYSPACE);
                            store.acquire(&key, &quota, 1).await.unwrap();
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            start.elapsed()
        })
    };
    let mut group = c.benchmark_group("redis_evalsha_c50");
    group.throughput(Throughput::Elements(1));
    group.bench_function("apistend_redis_store", |b| b.iter_custom(measure));
    group.finish();
    let ours = {
        let n = 200_000;
        n as f64 / measure(n).as_secs_f64()
    };
    let anchor_after = redis_benchmark(&server, &sha, 200_000);
    println!(
        "redis-benchmark EVALSHA -c {CONCURRENCY}: {anchor:.0} req/s before, {anchor_after:.0} after; apistend RedisStore: {ours:.0} req/s; ratio {:.2}",
        ours / ((anchor + anchor_after) / 2.0)
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5)).sample_size(10);
    targets = bench
}
criterion_main!(benches);
