//! Chaos: two `apistend serve` processes on one Redis take 15 s of mixed traffic (emulated calls,
//! exhausted buckets, asked-for scenarios, management writes and reads on both) while Redis is
//! killed with SIGKILL and started again empty. Nothing may show: no 5xx that was not asked for,
//! no connection error, no panic, no sandbox lost on either instance.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use apistend_testkit::RedisServer;
use serde_json::{Value, json};

const ADMIN: &str = "chaos-admin-token-0123";
const KEY: &str = "chaos-key";

struct Instance {
    child: Child,
    base: String,
}

impl Instance {
    fn start(redis: &str, dir: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_apistend"))
            .args(["serve", "--addr", "127.0.0.1:0", "--demo-key", KEY])
            .args(["--admin-token", ADMIN, "--redis", redis, "--data"])
            .arg(dir)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let base = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .find_map(|l| {
                l.ok()?
                    .strip_prefix("APIStend sandbox listening on ")
                    .map(str::to_owned)
            })
            .expect("the sandbox prints its address");
        Self { child, base }
    }

    /// Stops it and returns what it wrote on stderr.
    fn stop(mut self) -> String {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the instance died during the run"
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        err
    }
}

#[derive(Default)]
struct Counts {
    sent: AtomicU64,
    unexpected_5xx: AtomicU64,
    connection_errors: AtomicU64,
    rate_limited: AtomicU64,
    ok: AtomicU64,
}

/// The sandboxes' names; `None` while the management API's own limit refuses (after the load).
async fn names(c: &reqwest::Client, base: &str) -> Option<Vec<String>> {
    let r = c
        .get(format!("{base}/api/v1/sandboxes"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    if r.status() == 429 {
        return None;
    }
    let v: Value = r.json().await.unwrap();
    let mut n: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    n.sort();
    Some(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_survive_redis_killed_and_back_empty_under_load() {
    let Some(mut redis) = RedisServer::start("two_instances_survive_redis_killed_and_back_empty")
    else {
        return;
    };
    let root = apistend_testkit::temp_dir("chaos");
    let (da, db) = (root.join("a"), root.join("b"));
    let a = Instance::start(&redis.url(), &da);
    let b = Instance::start(&redis.url(), &db);
    let bases = [a.base.clone(), b.base.clone()];
    let c = reqwest::Client::builder()
        .pool_max_idle_per_host(32)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    // An exhausted bucket to be refused by: the demo sandbox's Ozon client group, 1 per hour.
    let demo: Value = c
        .get(format!("{}/api/v1/sandboxes", bases[0]))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let demo_id = demo
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "demo")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // ... and a WB group wide open, so most calls are admitted (locally while Redis is away).
    for (group, limit) in [
        ("ozon/client", json!({"burst": 1, "interval_ms": 3_600_000})),
        (
            "wb/marketplace-api.skladov-prodavtsa",
            json!({"burst": 1_000_000, "per_second": 1_000_000}),
        ),
    ] {
        let r = c
            .put(format!(
                "{}/api/v1/sandboxes/{demo_id}/limits/{group}",
                bases[0]
            ))
            .bearer_auth(ADMIN)
            .json(&limit)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }

    let counts = Arc::new(Counts::default());
    let created = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let start = Instant::now();
    let end = start + Duration::from_secs(15);
    let mut tasks = Vec::new();
    for w in 0..8usize {
        let (c, bases, counts, created) = (
            c.clone(),
            bases.clone(),
            Arc::clone(&counts),
            Arc::clone(&created),
        );
        tasks.push(tokio::spawn(async move {
            let mut i = 0usize;
            while Instant::now() < end && i < 20_000 {
                i += 1;
                let base = &bases[(w + i) % 2];
                let mut creating = None;
                let (req, asked_5xx) = match i % 10 {
                    // A management write, then the sandbox it made is checked for at the end.
                    0 if w < 2 => {
                        let name = format!("chaos-{w}-{i}");
                        creating = Some(name.clone());
                        (
                            c.post(format!("{base}/api/v1/sandboxes"))
                                .bearer_auth(ADMIN)
                                .json(&json!({ "name": name })),
                            false,
                        )
                    }
                    1 => (
                        c.get(format!("{base}/api/v1/sandboxes")).bearer_auth(ADMIN),
                        false,
                    ),
                    // An asked-for server error: its 500 is not a failure.
                    2 => (
                        c.get(format!("{base}/wb/api/v3/warehouses"))
                            .header("Authorization", KEY)
                            .header("X-Mock-Delay", "0")
                            .header("X-Mock-Scenario", "server_error"),
                        true,
                    ),
                    // The exhausted bucket.
                    3 | 4 => (
                        c.post(format!("{base}/ozon/v4/product/info/limit"))
                            .header("Client-Id", "1")
                            .header("Api-Key", KEY)
                            .header("X-Mock-Delay", "0")
                            .json(&json!({})),
                        false,
                    ),
                    _ => (
                        c.get(format!("{base}/wb/api/v3/warehouses"))
                            .header("Authorization", KEY)
                            .header("X-Mock-Delay", "0"),
                        false,
                    ),
                };
                counts.sent.fetch_add(1, Ordering::Relaxed);
                match req.send().await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let _ = r.bytes().await;
                        if status >= 500 && !asked_5xx {
                            counts.unexpected_5xx.fetch_add(1, Ordering::Relaxed);
                        }
                        if status < 300 {
                            counts.ok.fetch_add(1, Ordering::Relaxed);
                        }
                        if status == 429 {
                            // The emulated buckets, and the management API's own limit.
                            counts.rate_limited.fetch_add(1, Ordering::Relaxed);
                        }
                        if let Some(name) = creating.filter(|_| status == 201) {
                            created.lock().unwrap().push(name);
                        }
                    }
                    Err(e) => {
                        eprintln!("connection error: {e}");
                        counts.connection_errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    // Redis dies at 5 s and comes back empty at 8 s.
    tokio::time::sleep(Duration::from_secs(5)).await;
    redis.stop();
    tokio::time::sleep(Duration::from_secs(3)).await;
    redis.restart();
    for t in tasks {
        t.await.unwrap();
    }
    let sent = counts.sent.load(Ordering::Relaxed);
    eprintln!(
        "sent {sent}, 2xx {}, 429s {}, unexpected 5xx {}, connection errors {}",
        counts.ok.load(Ordering::Relaxed),
        counts.rate_limited.load(Ordering::Relaxed),
        counts.unexpected_5xx.load(Ordering::Relaxed),
        counts.connection_errors.load(Ordering::Relaxed)
    );
    assert!(sent > 1000, "the load ran: {sent}");
    assert!(counts.rate_limited.load(Ordering::Relaxed) > 0);
    assert!(
        counts.ok.load(Ordering::Relaxed) > sent / 3,
        "most calls admitted"
    );
    assert_eq!(counts.unexpected_5xx.load(Ordering::Relaxed), 0);
    assert_eq!(counts.connection_errors.load(Ordering::Relaxed), 0);
    // Every sandbox made during the run is on both instances (within the sync's 250 ms).
    let mut want = created.lock().unwrap().clone();
    want.push("demo".to_owned());
    want.sort();
    let mut same = false;
    for _ in 0..50 {
        let (na, nb) = (names(&c, &bases[0]).await, names(&c, &bases[1]).await);
        if na.as_ref() == Some(&want) && nb.as_ref() == Some(&want) {
            same = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(same, "sandboxes lost or not shared: want {}", want.len());
    eprintln!(
        "{} sandboxes created during the run, all on both instances",
        want.len() - 1
    );
    for (name, i) in [("a", a), ("b", b)] {
        let err = i.stop();
        assert!(
            !err.contains("panicked"),
            "instance {name} panicked:\n{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
