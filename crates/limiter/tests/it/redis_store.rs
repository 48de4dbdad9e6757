//! The Redis store against real `redis-server` processes: standalone and a 3-master Cluster,
//! restarts, script-cache flushes, and both failure policies.

use std::sync::Arc;
use std::time::Duration;

use apistend_limiter::{
    Clock, Draw, FailurePolicy, LearnedRecord, LimiterError, ManualClock, Quota, RedisConfig,
    RedisStore, Store, TimeSource, bucket_key,
};
use apistend_testkit::{RedisCluster, RedisServer};

fn quota(burst: u32, ms: u64) -> Quota {
    Quota::new(burst, Duration::from_millis(ms)).unwrap()
}

#[tokio::test]
async fn server_time_buckets_are_shared_by_two_stores() {
    let Some(server) = RedisServer::start("server_time_buckets_are_shared_by_two_stores") else {
        return;
    };
    let config = RedisConfig::from_url(&server.url())
        .unwrap()
        .with_failure_policy(FailurePolicy::FailClosed);
    let a = RedisStore::new(config.clone()).unwrap();
    let b = RedisStore::new(config).unwrap();
    let q = quota(4, 60_000);
    let key = bucket_key("wb:rl", "acc-1", &["content"]);
    let mut allowed = 0;
    for i in 0..10 {
        let store = if i % 2 == 0 { &a } else { &b };
        if store.acquire(&key, &q, 1).await.unwrap().allowed {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 4);
    let d = a.acquire(&key, &q, 1).await.unwrap();
    assert!(!d.allowed);
    assert_eq!(d.limit, 4);
    assert!(
        d.retry_after > Duration::from_secs(59) && d.retry_after <= Duration::from_secs(60),
        "{d:?}"
    );
    assert_eq!(d.retry_after_secs(), 60);
    assert!(matches!(
        a.acquire(&key, &q, 5).await,
        Err(LimiterError::InsufficientCapacity {
            requested: 5,
            burst: 4
        })
    ));
    // The key expires once the bucket is full again (TTL = reset + slack).
    let ttl: i64 = server.cli(&["PTTL", &key]).parse().unwrap();
    assert!(ttl > 200_000 && ttl <= 241_000, "ttl {ttl}");
    a.reset(&key).await.unwrap();
    assert!(b.acquire(&key, &q, 1).await.unwrap().allowed);
    // Penalize through one store holds back the other.
    b.penalize(&key, &q, Duration::from_secs(30)).await.unwrap();
    let d = a.peek(&key, &q).await.unwrap();
    assert!(
        !d.allowed && d.retry_after > Duration::from_secs(29),
        "{d:?}"
    );
}

#[tokio::test]
async fn survives_script_flush_between_calls() {
    let Some(server) = RedisServer::start("survives_script_flush_between_calls") else {
        return;
    };
    let store = RedisStore::new(
        RedisConfig::from_url(&server.url())
            .unwrap()
            .with_failure_policy(FailurePolicy::FailClosed),
    )
    .unwrap();
    let q = quota(3, 1000);
    assert!(store.acquire("k", &q, 1).await.unwrap().allowed);
    assert_eq!(server.cli(&["SCRIPT", "FLUSH"]), "OK");
    let d = store.acquire("k", &q, 1).await.unwrap();
    assert!(d.allowed);
    assert_eq!(
        d.remaining, 1,
        "the state survived; only the script was reloaded"
    );
}

#[tokio::test]
async fn restart_mid_run_falls_back_then_recovers() {
    let Some(mut server) = RedisServer::start("restart_mid_run_falls_back_then_recovers") else {
        return;
    };
    let store = RedisStore::new(
        RedisConfig::from_url(&server.url())
            .unwrap()
            .with_timeout(Duration::from_millis(200)),
    )
    .unwrap();
    let q = quota(1000, 1);
    for _ in 0..20 {
        assert!(store.acquire("run", &q, 1).await.unwrap().allowed);
    }
    assert!(!store.is_degraded());
    server.stop();
    for _ in 0..20 {
        // Fail-open: decisions keep coming, from the local fallback, never as errors or denials.
        let d = store
            .acquire("run", &q, 1)
            .await
            .expect("fail-open never errors");
        assert!(d.allowed);
    }
    assert!(store.is_degraded());
    server.restart();
    let mut recovered = false;
    for _ in 0..100 {
        store.acquire("run", &q, 1).await.unwrap();
        if !store.is_degraded() && server.cli(&["EXISTS", "run"]) == "1" {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(recovered, "the store reconnects after Redis restarts");
}

#[tokio::test]
async fn fail_closed_gives_a_typed_store_error_never_a_denial() {
    let Some(mut server) =
        RedisServer::start("fail_closed_gives_a_typed_store_error_never_a_denial")
    else {
        return;
    };
    let config = RedisConfig::from_url(&server.url())
        .unwrap()
        .with_failure_policy(FailurePolicy::FailClosed)
        .with_timeout(Duration::from_millis(200));
    let store = Store::from(RedisStore::new(config).unwrap());
    assert!(store.acquire("k", &quota(1, 10), 1).await.unwrap().allowed);
    server.stop();
    let err = store.acquire("k", &quota(1, 10), 1).await.unwrap_err();
    assert!(
        matches!(err, LimiterError::Store { store: "redis", .. }),
        "{err}"
    );
    assert!(err.is_transient());
    assert!(
        err.to_string().contains("FailOpen"),
        "the error says what to do: {err}"
    );
}

#[tokio::test]
async fn unreachable_at_start_is_not_an_error_for_fail_open() {
    let port = apistend_testkit::free_port();
    let store = RedisStore::new(
        RedisConfig::from_url(&format!("redis://127.0.0.1:{port}"))
            .unwrap()
            .with_timeout(Duration::from_millis(100)),
    )
    .unwrap();
    let q = quota(2, 1000);
    assert!(store.acquire("k", &q, 1).await.unwrap().allowed);
    assert!(store.acquire("k", &q, 1).await.unwrap().allowed);
    assert!(
        !store.acquire("k", &q, 1).await.unwrap().allowed,
        "the fallback keeps the same quotas"
    );
    assert!(store.is_degraded());
    assert!(RedisConfig::from_url("http://nope").is_err());
    assert!(RedisConfig::from_url("redis+cluster://").is_err());
}

#[tokio::test]
async fn cluster_routes_each_tenant_to_its_slot() {
    let Some(cluster) = RedisCluster::start("cluster_routes_each_tenant_to_its_slot") else {
        return;
    };
    let clock = ManualClock::new();
    let shared: Arc<dyn Clock> = Arc::new(clock.clone());
    for time in [TimeSource::Server, TimeSource::Client(shared)] {
        let store = RedisStore::new(
            RedisConfig::from_url(&cluster.url())
                .unwrap()
                .with_failure_policy(FailurePolicy::FailClosed)
                .with_time(time),
        )
        .unwrap();
        let q = quota(2, 60_000);
        for tenant in 0..30 {
            let key = bucket_key("apistend", &format!("seller-{tenant}"), &["wb", "content"]);
            assert!(store.acquire(&key, &q, 2).await.unwrap().allowed, "{key}");
            assert!(!store.acquire(&key, &q, 1).await.unwrap().allowed, "{key}");
            store.reset(&key).await.unwrap();
        }
    }
    // Keys of one tenant share a slot.
    let slot = |k: &str| cluster.nodes()[0].cli(&["CLUSTER", "KEYSLOT", k]);
    assert_eq!(
        slot(&bucket_key("a", "acc", &["x"])),
        slot(&bucket_key("b", "acc", &["y", "z"]))
    );
}

/// Concurrency slots on one Redis and on a Cluster: two stores (two processes) share `max`
/// slots; a lease that is not renewed runs out and its slot comes back; one that is renewed
/// stays.
async fn slots_are_shared_and_leases_run_out(url: &str) {
    let config = RedisConfig::from_url(url)
        .unwrap()
        .with_failure_policy(FailurePolicy::FailClosed);
    let a = Store::from(RedisStore::new(config.clone()).unwrap());
    let b = Store::from(RedisStore::new(config).unwrap());
    let limit = apistend_limiter::Slots::new(2, Duration::from_millis(300)).unwrap();
    let key = bucket_key("apistend", "user-1", &["moysklad", "parallel"]);
    let first = a.lease(&key, &limit).await.unwrap().expect("a slot");
    let second = b.lease(&key, &limit).await.unwrap().expect("a slot");
    assert!(a.lease(&key, &limit).await.unwrap().is_none(), "2 at most");
    assert!(b.lease(&key, &limit).await.unwrap().is_none(), "on both");
    b.release(&second, &limit).await.unwrap();
    let third = a
        .lease(&key, &limit)
        .await
        .unwrap()
        .expect("the released slot");
    // `first` is renewed every 100 ms, `third` never: after 450 ms only third's slot is free.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(110)).await;
        assert!(a.renew(&first, &limit).await.unwrap());
    }
    assert!(!b.renew(&third, &limit).await.unwrap(), "third ran out");
    let fourth = b
        .lease(&key, &limit)
        .await
        .unwrap()
        .expect("third's slot came back");
    assert!(
        a.lease(&key, &limit).await.unwrap().is_none(),
        "first still holds one"
    );
    a.release(&first, &limit).await.unwrap();
    b.release(&fourth, &limit).await.unwrap();
    let other = bucket_key("apistend", "user-2", &["moysklad", "parallel"]);
    assert!(a.lease(&other, &limit).await.unwrap().is_some(), "per key");
}

#[tokio::test]
async fn concurrency_slots_on_redis() {
    let Some(server) = RedisServer::start("concurrency_slots_on_redis") else {
        return;
    };
    slots_are_shared_and_leases_run_out(&server.url()).await;
}

#[tokio::test]
async fn concurrency_slots_on_a_cluster() {
    let Some(cluster) = RedisCluster::start("concurrency_slots_on_a_cluster") else {
        return;
    };
    slots_are_shared_and_leases_run_out(&cluster.url()).await;
}

/// Learned records on one Redis and on a Cluster, as the memory twin keeps them: two stores
/// (two processes) merge into one record — the lowest upper bound, the highest lower bound, the
/// newer decision's quota —, a read sees it, and it runs out after its time to live.
async fn learned_records_merge_as_in_memory(url: &str) {
    let config = RedisConfig::from_url(url)
        .unwrap()
        .with_failure_policy(FailurePolicy::FailClosed);
    let a = Store::from(RedisStore::new(config.clone()).unwrap());
    let b = Store::from(RedisStore::new(config).unwrap());
    let memory = Store::from(apistend_limiter::MemoryStore::new());
    let key = bucket_key("apistend:client", "seller-1", &["wb", "content"]);
    let first = LearnedRecord {
        burst: 5,
        interval_us: 800_000,
        upper: Some(1.7),
        lower: None,
        decided_ms: 100,
        from_headers: true,
    };
    let second = LearnedRecord {
        burst: 4,
        interval_us: 900_000,
        upper: Some(2.0),
        lower: Some(0.9),
        decided_ms: 90,
        from_headers: true,
    };
    let ttl = Duration::from_millis(400);
    assert_eq!(a.learned(&key).await.unwrap(), None);
    for store in [&a, &memory] {
        store.merge_learned(&key, &first, ttl).await.unwrap();
    }
    let on_redis = b.merge_learned(&key, &second, ttl).await.unwrap();
    let in_memory = memory.merge_learned(&key, &second, ttl).await.unwrap();
    assert_eq!(on_redis, in_memory);
    assert_eq!(
        (
            on_redis.burst,
            on_redis.interval_us,
            on_redis.upper,
            on_redis.lower
        ),
        (5, 800_000, Some(1.7), Some(0.9))
    );
    assert_eq!(a.learned(&key).await.unwrap(), Some(on_redis));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(b.learned(&key).await.unwrap(), None, "ran out");
    assert_eq!(memory.learned(&key).await.unwrap(), None, "ran out");
}

#[tokio::test]
async fn learned_records_on_redis() {
    let Some(server) = RedisServer::start("learned_records_on_redis") else {
        return;
    };
    learned_records_merge_as_in_memory(&server.url()).await;
}

#[tokio::test]
async fn learned_records_on_a_cluster() {
    let Some(cluster) = RedisCluster::start("learned_records_on_a_cluster") else {
        return;
    };
    learned_records_merge_as_in_memory(&cluster.url()).await;
}

/// Concurrent requests, each drawing from a wide and a narrow bucket, share script calls and
/// still take exactly what the narrow bucket holds — from both buckets, nothing more. The store
/// then serves a second runtime after the first is gone (its batching task starts again there).
#[test]
fn concurrent_draws_share_script_calls_and_take_all_or_nothing() {
    let Some(server) = RedisServer::start("concurrent_draws_share_script_calls") else {
        return;
    };
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    let config = RedisConfig::from_url(&server.url())
        .unwrap()
        .with_failure_policy(FailurePolicy::FailClosed)
        .with_timeout(Duration::from_secs(5));
    let first = runtime();
    let store = first.block_on(async { RedisStore::new(config).unwrap() });
    let (wide, narrow) = (quota(1000, 3_600_000), quota(20, 3_600_000));
    let before = server.calls("evalsha");
    const REQUESTS: usize = 400;
    let allowed = first.block_on(async {
        let tasks: Vec<_> = (0..REQUESTS)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    let draws = [
                        Draw::new("draw:{t}:wide", wide, 1),
                        Draw::new("draw:{t}:narrow", narrow, 1),
                    ];
                    store.acquire_all(&draws).await.unwrap()
                })
            })
            .collect();
        let mut allowed = 0;
        for t in tasks {
            let drawn = t.await.unwrap();
            match drawn.refused {
                None => allowed += 1,
                Some(i) => assert_eq!(i, 1, "only the narrow bucket refuses"),
            }
        }
        allowed
    });
    let calls = server.calls("evalsha") - before;
    eprintln!("{REQUESTS} concurrent draws in {calls} script calls");
    assert_eq!(allowed, 20, "the narrow bucket's burst, no more");
    assert!(
        calls < REQUESTS as u64,
        "{calls} calls for {REQUESTS} draws: no batching"
    );
    drop(first);
    let second = runtime();
    second.block_on(async {
        // The connection's driver died with the first runtime; the connection manager connects
        // again after this first call fails (as it does after a Redis restart).
        let _ = store.peek("draw:{t}:wide", &wide).await;
        let left = store.peek("draw:{t}:wide", &wide).await.unwrap();
        assert_eq!(
            left.remaining, 980,
            "refused draws took nothing from the wide bucket"
        );
        assert!(
            !store
                .acquire("draw:{t}:narrow", &narrow, 1)
                .await
                .unwrap()
                .allowed
        );
    });
}

/// On a Cluster a draw is one call when its buckets share a tenant (a slot), and still all or
/// nothing when they do not (one call per bucket, a refusal giving back what was taken).
#[tokio::test]
async fn cluster_draws_take_all_or_nothing_within_and_across_slots() {
    let Some(cluster) = RedisCluster::start("cluster_draws_take_all_or_nothing") else {
        return;
    };
    let store = RedisStore::new(
        RedisConfig::from_url(&cluster.url())
            .unwrap()
            .with_failure_policy(FailurePolicy::FailClosed),
    )
    .unwrap();
    let (wide, narrow) = (quota(10, 3_600_000), quota(1, 3_600_000));
    for (wide_key, narrow_key) in [
        (
            bucket_key("apistend", "seller-1", &["all"]),
            bucket_key("apistend", "seller-1", &["one"]),
        ),
        (
            bucket_key("apistend", "seller-2", &["all"]),
            bucket_key("apistend", "account-2", &["one"]),
        ),
    ] {
        let draws = [
            Draw::new(&wide_key, wide, 1),
            Draw::new(&narrow_key, narrow, 1),
        ];
        assert_eq!(store.acquire_all(&draws).await.unwrap().refused, None);
        assert_eq!(store.acquire_all(&draws).await.unwrap().refused, Some(1));
        assert_eq!(
            store.peek(&wide_key, &wide).await.unwrap().remaining,
            9,
            "{wide_key}"
        );
    }
}

/// On a Cluster, concurrent draws of several tenants share calls per slot: each tenant gets
/// exactly its narrow bucket's burst, in fewer calls than draws.
#[test]
fn cluster_batches_concurrent_draws_per_slot() {
    let Some(cluster) = RedisCluster::start("cluster_batches_concurrent_draws_per_slot") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let calls = || {
        cluster
            .nodes()
            .iter()
            .map(|n| n.calls("evalsha"))
            .sum::<u64>()
    };
    let store = rt.block_on(async {
        let store = RedisStore::new(
            RedisConfig::from_url(&cluster.url())
                .unwrap()
                .with_failure_policy(FailurePolicy::FailClosed)
                .with_timeout(Duration::from_secs(5)),
        )
        .unwrap();
        store.ping().await.unwrap();
        store
    });
    let (wide, narrow) = (quota(1000, 3_600_000), quota(10, 3_600_000));
    const TENANTS: usize = 3;
    const PER_TENANT: usize = 100;
    let before = calls();
    let allowed = rt.block_on(async {
        let tasks: Vec<_> = (0..TENANTS * PER_TENANT)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let tenant = format!("seller-{}", i % TENANTS);
                    let (w, n) = (
                        bucket_key("apistend", &tenant, &["wide"]),
                        bucket_key("apistend", &tenant, &["narrow"]),
                    );
                    let draws = [Draw::new(&w, wide, 1), Draw::new(&n, narrow, 1)];
                    (
                        i % TENANTS,
                        store.acquire_all(&draws).await.unwrap().refused.is_none(),
                    )
                })
            })
            .collect();
        let mut allowed = [0usize; TENANTS];
        for t in tasks {
            let (tenant, ok) = t.await.unwrap();
            allowed[tenant] += usize::from(ok);
        }
        allowed
    });
    let made = calls() - before;
    eprintln!(
        "{} concurrent draws of {TENANTS} tenants in {made} calls",
        TENANTS * PER_TENANT
    );
    assert_eq!(
        allowed, [10; TENANTS],
        "each tenant's narrow burst, no more"
    );
    assert!(
        made < (TENANTS * PER_TENANT) as u64,
        "{made} calls: no batching"
    );
    rt.block_on(async {
        for t in 0..TENANTS {
            let w = bucket_key("apistend", &format!("seller-{t}"), &["wide"]);
            assert_eq!(store.peek(&w, &wide).await.unwrap().remaining, 990);
        }
    });
}
