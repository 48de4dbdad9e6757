//! The sandbox against a minimal axum hello-world built here, in one run, through the same client:
//! requests per second and p50/p99 latency on a WB operation whose quota is effectively unlimited
//! (the allowed path) and on an exhausted bucket (the rejected path).
//!
//! `cargo bench -p apistend-sandbox --bench gateway` (about 30 s; loopback only, bounded).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use apistend_catalog::Overrides;
use apistend_sandbox::{Sandbox, SandboxConfig};

// The allocator of the `apistend` binary, so the bench measures what ships.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CONNECTIONS: usize = 32;
const WARMUP: Duration = Duration::from_secs(1);
const RUN: Duration = Duration::from_secs(5);

struct Load {
    rps: f64,
    p50_us: u128,
    p99_us: u128,
    statuses: Vec<(u16, usize)>,
}

async fn run(
    client: &reqwest::Client,
    url: &str,
    headers: &Arc<Vec<(&'static str, String)>>,
    d: Duration,
) -> (Vec<u128>, BTreeMap<u16, usize>) {
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (client, url, headers) = (client.clone(), url.to_owned(), Arc::clone(headers));
            tokio::spawn(async move {
                let end = Instant::now() + d;
                let mut lat = Vec::with_capacity(100_000);
                let mut statuses = BTreeMap::<u16, usize>::new();
                while Instant::now() < end {
                    let t = Instant::now();
                    let mut req = client.get(&url);
                    for (k, v) in headers.iter() {
                        req = req.header(*k, v);
                    }
                    let resp = req.send().await.unwrap();
                    let status = resp.status().as_u16();
                    let _ = resp.bytes().await.unwrap();
                    lat.push(t.elapsed().as_micros());
                    *statuses.entry(status).or_default() += 1;
                }
                (lat, statuses)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut statuses = BTreeMap::<u16, usize>::new();
    for t in tasks {
        let (lat, st) = t.await.unwrap();
        all.extend(lat);
        for (k, v) in st {
            *statuses.entry(k).or_default() += v;
        }
    }
    (all, statuses)
}

async fn load(url: String, headers: Vec<(&'static str, String)>) -> Load {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()
        .unwrap();
    let headers = Arc::new(headers);
    run(&client, &url, &headers, WARMUP).await;
    let t = Instant::now();
    let (mut lat, statuses) = run(&client, &url, &headers, RUN).await;
    let secs = t.elapsed().as_secs_f64();
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    Load {
        rps: lat.len() as f64 / secs,
        p50_us: pct(0.5),
        p99_us: pct(0.99),
        statuses: statuses.into_iter().collect(),
    }
}

/// `wrk` (Debian package `wrk`) when installed: a C load generator that takes less of the two
/// cores than the Rust client, so the servers are what is measured.
/// When this process is pinned to core 0, wrk is started on core 1 through `taskset`: a child
/// inherits its parent's CPU mask, so a plain `wrk` would share core 0 with the servers.
fn wrk(url: &str, headers: &[(&'static str, String)], pinned: bool) -> Option<Load> {
    let mut cmd = if pinned {
        let mut c = std::process::Command::new("taskset");
        c.args(["-c", "1", "wrk"]);
        c
    } else {
        std::process::Command::new("wrk")
    };
    cmd.args([
        "-t1",
        &format!("-c{CONNECTIONS}"),
        &format!("-d{}s", RUN.as_secs()),
        "--latency",
    ]);
    for (k, v) in headers {
        cmd.arg("-H").arg(format!("{k}: {v}"));
    }
    let out = cmd.arg(url).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |prefix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix).map(|r| r.trim().to_owned()))
    };
    let micros = |v: String| -> u128 {
        let (num, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
        let n: f64 = num.parse().unwrap_or(0.0);
        (match unit {
            "us" => n,
            "ms" => n * 1e3,
            "s" => n * 1e6,
            _ => n,
        }) as u128
    };
    let non2xx = field("Non-2xx or 3xx responses:")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let total = text
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once(" requests in ")
                .and_then(|(n, _)| n.parse::<usize>().ok())
        })
        .unwrap_or(0);
    Some(Load {
        rps: field("Requests/sec:")?.parse().ok()?,
        p50_us: micros(field("50%")?),
        p99_us: micros(field("99%")?),
        statuses: vec![(200, total - non2xx.min(total)), (0, non2xx)],
    })
}

fn report(name: &str, l: &Load) {
    println!(
        "{name:<34} {:>9.0} req/s   p50 {:>5} µs   p99 {:>6} µs   statuses {:?}",
        l.rps, l.p50_us, l.p99_us, l.statuses
    );
}

fn main() {
    // Pin this process (and the server threads it starts) to core 0; wrk runs on core 1. Without
    // pinning, the two compete for both cores and runs differ by ±30 %.
    let pinned = std::process::Command::new("taskset")
        .args(["-a", "-cp", "0", &std::process::id().to_string()])
        .output()
        .is_ok_and(|o| o.status.success());
    // The servers get their own runtime (one worker: they share the 2 cores with the load).
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let overrides = Overrides::from_toml(
        "[wb.groups.\"marketplace-api.skladov-prodavtsa\"]\nburst = 1000000\nper_second = 1000000\n\
         [wb.groups.\"common-api.get.api-v1-seller-info\"]\nburst = 1\ninterval_ms = 3600000\n",
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("apistend-bench-{}", std::process::id()));
    let (sandbox_base, hello_base) = server_rt.block_on(async {
        let sandbox = Sandbox::new(
            SandboxConfig::new(&dir)
                .with_demo_key("bench-key")
                .with_overrides(overrides),
        )
        .await
        .unwrap();
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let sandbox_base = format!("http://{}", l.local_addr().unwrap());
        tokio::spawn(sandbox.serve(l, std::future::pending()));
        let hello =
            axum::Router::new().route("/", axum::routing::get(|| async { "Hello, World!" }));
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let hello_base = format!("http://{}", l.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(l, hello).await });
        (sandbox_base, hello_base)
    });
    let auth = vec![
        ("authorization", "bench-key".to_owned()),
        ("x-mock-delay", "0".to_owned()),
    ];
    let _server = std::thread::spawn(move || server_rt.block_on(std::future::pending::<()>()));
    let has_wrk = std::process::Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok();
    // One measurement: wrk when installed (a C load generator that leaves the servers their core),
    // else the Rust client.
    let measure = |url: String, headers: &[(&'static str, String)]| -> Load {
        if has_wrk {
            wrk(&url, headers, pinned).unwrap()
        } else {
            client_rt.block_on(load(url, headers.to_vec()))
        }
    };
    if has_wrk {
        println!(
            "wrk -t1 -c{CONNECTIONS} -d{}s (statuses: 200 = 2xx, 0 = other); pinned (servers core 0, wrk core 1): {pinned}",
            RUN.as_secs()
        );
        // Warm-up.
        let _ = measure(format!("{hello_base}/"), &[]);
    } else {
        println!(
            "wrk not found: the Rust client drives the load (it competes with the servers for the 2 cores); {CONNECTIONS} keep-alive connections, {RUN:?} per run after {WARMUP:?} warm-up"
        );
    }
    let hello = measure(format!("{hello_base}/"), &[]);
    report("axum hello-world", &hello);
    let health = measure(format!("{sandbox_base}/healthz"), &[]);
    report("sandbox /healthz (no pipeline)", &health);
    let allowed = measure(format!("{sandbox_base}/wb/api/v3/warehouses"), &auth);
    report("sandbox WB, allowed path", &allowed);
    let rejected = measure(format!("{sandbox_base}/wb/api/v1/seller-info"), &auth);
    report("sandbox WB, rejected path (429)", &rejected);
    let hello2 = measure(format!("{hello_base}/"), &[]);
    report("axum hello-world (again)", &hello2);
    let anchor = (hello.rps + hello2.rps) / 2.0;
    println!(
        "ratio allowed/hello {:.2}, rejected/hello {:.2}",
        allowed.rps / anchor,
        rejected.rps / anchor
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::process::exit(0);
}
