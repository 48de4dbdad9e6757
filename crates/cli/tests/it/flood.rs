//! A flood of 100 000 requests with distinct unknown keys: every one spends a token of its own
//! bucket and gets a 401, and the sandbox's resident memory stays bounded (measured).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[test]
fn a_flood_of_distinct_unknown_keys_leaves_memory_bounded() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let dir = apistend_testkit::temp_dir("flood");
    let mut server = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--demo-key",
            "k",
            "--data",
        ])
        .arg(&dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let base = lines
        .next()
        .unwrap()
        .unwrap()
        .trim_start_matches("APIStend sandbox listening on ")
        .to_owned();
    let pid = server.id();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let before = apistend_testkit::rss_kib(pid);
    let unauthorized = Arc::new(AtomicU64::new(0));
    rt.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap();
        let url = format!("{base}/ozon/v3/product/list");
        let tasks: Vec<_> = (0..32u64)
            .map(|t| {
                let (client, url, unauthorized) =
                    (client.clone(), url.clone(), Arc::clone(&unauthorized));
                tokio::spawn(async move {
                    for i in 0..3125u64 {
                        let key = format!("flood-{t}-{i}-{}", "x".repeat(40));
                        let r = client
                            .post(&url)
                            .header("Client-Id", "1")
                            .header("Api-Key", key)
                            .header("X-Mock-Delay", "0")
                            .send()
                            .await
                            .unwrap();
                        if r.status() == 401 {
                            unauthorized.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let after = apistend_testkit::rss_kib(pid);
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(dir);
    assert_eq!(
        unauthorized.load(Ordering::Relaxed),
        100_000,
        "every unknown key gets the service's 401"
    );
    let grew_mib = after.saturating_sub(before) as f64 / 1024.0;
    eprintln!(
        "resident memory: {before} KiB before, {after} KiB after 100 000 distinct unknown keys (+{grew_mib:.1} MiB)"
    );
    // 100 000 one-off buckets of a few dozen bytes each: tens of MiB at most, and swept as they
    // refill (the 50-token bucket is full again 20 ms after its only request).
    assert!(grew_mib < 64.0, "+{grew_mib:.1} MiB");
}
