//! Every documented metric family is exported by the binary: the sandbox's and the engine's on
//! `apistend serve`'s `/metrics`, the client's and the engine's on `apistend load --metrics-addr`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use apistend_testkit::{Process, serve_process, temp_dir};

/// `curl` (installed by `.ci/run`): the body of `url`, with `headers`.
fn get(url: &str, headers: &[&str]) -> Option<String> {
    let mut cmd = Command::new("curl");
    // Ozon's warehouse list as a client sends it (its description requires `limit`).
    cmd.args([
        "--silent",
        "--max-time",
        "10",
        "-X",
        "POST",
        "-d",
        r#"{"limit": 50}"#,
    ]);
    cmd.args(["-H", "Content-Type: application/json"]);
    if url.ends_with("/metrics") {
        cmd.args(["-X", "GET"]);
    }
    for h in headers {
        cmd.args(["-H", h]);
    }
    match cmd.arg(url).output() {
        Ok(out) => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Err(e) => {
            assert!(!apistend_testkit::in_ci(), "curl is needed in CI: {e}");
            eprintln!("SKIP: curl: {e}");
            None
        }
    }
}

/// A sandbox whose Ozon bucket holds `burst` (refilling one a minute), and its base URL.
fn serve(dir: &std::path::Path, burst: u32) -> (Process, String) {
    let quota = dir.join("q.toml");
    let text = format!("[ozon.groups.client]\nburst = {burst}\ninterval_ms = 60000\n");
    std::fs::write(&quota, text).unwrap();
    let extra = [
        "--demo-key".as_ref(),
        "metrics-key".as_ref(),
        "--overrides".as_ref(),
        quota.as_os_str(),
    ];
    serve_process(env!("CARGO_BIN_EXE_apistend"), dir, &extra)
}

fn assert_families(text: &str, families: &[&str]) {
    for f in families {
        assert!(
            text.lines()
                .any(|l| l.starts_with(f) && !l.starts_with('#')),
            "{f} missing from /metrics:\n{text}"
        );
    }
}

#[test]
fn serve_exports_the_sandbox_and_engine_families() {
    let dir = temp_dir("metrics-serve");
    let (_server, base) = serve(&dir, 2);
    let url = format!("{base}/ozon/v2/warehouse/list");
    let key = ["Client-Id: 1", "Api-Key: metrics-key", "X-Mock-Delay: 0"];
    // Two allowed, one refused by the empty bucket, one scenario.
    for _ in 0..3 {
        if get(&url, &key).is_none() {
            return;
        }
    }
    let mut with_scenario = key.to_vec();
    with_scenario.push("X-Mock-Scenario: server_error");
    get(&url, &with_scenario);
    let text = get(&format!("{base}/metrics"), &[]).unwrap();
    assert_families(
        &text,
        &[
            "apistend_requests_total{service=\"ozon\",group=\"client\",status=\"200\"} 2",
            "apistend_requests_total{service=\"ozon\",group=\"client\",status=\"429\"} 2",
            "apistend_rate_limited_total{service=\"ozon\",group=\"client\"} 2",
            "apistend_scenarios_total{service=\"ozon\",scenario=\"rate_limit\"}",
            "apistend_bucket_fill_ratio_bucket{service=\"ozon\",group=\"client\",le=\"0\"}",
            "apistend_bucket_fill_ratio_count",
            "apistend_store_keys{store=\"memory\"}",
            "apistend_store_degraded{store=\"memory\"} 0",
            "apistend_store_fallback_decisions_total{store=\"memory\"} 0",
            "apistend_store_errors_total 0",
            "apistend_limiter_decisions_total{store=\"memory\",outcome=\"allowed\"}",
            "apistend_limiter_decisions_total{store=\"memory\",outcome=\"denied\"}",
        ],
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn load_exports_the_client_families_on_its_metrics_address() {
    let dir = temp_dir("metrics-load");
    // Room for the whole run: the client keeps sending while it is scraped.
    let (_server, base) = serve(&dir, 100_000);
    let mut load = Process(
        Command::new(env!("CARGO_BIN_EXE_apistend"))
            .args([
                "load",
                "--target",
                &base,
                "--service",
                "ozon",
                "--method",
                "POST",
            ])
            .args([
                "--path",
                "/v2/warehouse/list",
                "--key",
                "metrics-key",
                "--account",
                "acc-1",
            ])
            .args(["--workers", "2", "--duration", "6", "--json"])
            .args(["--metrics-addr", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let line = BufReader::new(load.0.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.starts_with("metrics on "))
        .expect("load prints its metrics address");
    let url = line.trim_start_matches("metrics on ").to_owned();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let Some(text) = get(&url, &[]) else { return };
    assert_families(
        &text,
        &[
            "apistend_client_acquisitions_total{service=\"ozon\",account=\"acc-1\",group=\"client\"}",
            "apistend_client_local_wait_seconds",
            "apistend_client_local_refusals_total{service=\"ozon\",account=\"acc-1\",group=\"client\"}",
            "apistend_client_retries_total{service=\"ozon\",account=\"acc-1\",cause=\"rate_limit\"}",
            "apistend_client_penalties_total",
            "apistend_client_unexpected_429_total",
            "apistend_limiter_decisions_total{store=\"memory\",outcome=\"allowed\"}",
        ],
    );
    let _ = std::fs::remove_dir_all(dir);
}
