//! `apistend load` and `apistend plot` as a user runs them.

use std::process::Command;

fn apistend() -> Command {
    Command::new(env!("CARGO_BIN_EXE_apistend"))
}

/// `apistend load` of WB's `/content/v2/object/all` with key `lk` against `base`, and `extra`.
fn load(base: &str, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    apistend()
        .args(["load", "--target", base, "--service", "wb"])
        .args(["--path", "/content/v2/object/all", "--key", "lk"])
        .args(extra)
        .env_remove("APISTEND_ADMIN_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn bad_arguments_get_a_clear_message_and_a_failure() {
    for (args, expect) in [
        (vec!["--workers", "0"], "workers"),
        (vec!["--duration", "0"], "duration"),
        (vec!["--algorithm", "leaky"], "gcra or fixed-window"),
        (vec!["--method", "FETCH"], "--method"),
    ] {
        let mut all = vec![
            "load",
            "--target",
            "http://127.0.0.1:9",
            "--service",
            "wb",
            "--path",
            "/x",
            "--key",
            "k",
        ];
        all.extend(args);
        let out = apistend().args(&all).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{expect}: {err}");
    }
    let out = apistend()
        .args([
            "load",
            "--target",
            "nope",
            "--service",
            "wb",
            "--path",
            "/x",
            "--key",
            "k",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("http://"));
}

#[test]
fn a_short_run_against_a_sandbox_reports_json() {
    let dir = apistend_testkit::temp_dir("load");
    let quota = dir.join("q.toml");
    std::fs::write(
        &quota,
        "[wb.groups.\"content-api.kontent\"]\nburst = 5\ninterval_ms = 100\n",
    )
    .unwrap();
    let (server, base) = apistend_testkit::serve_process(
        env!("CARGO_BIN_EXE_apistend"),
        &dir,
        &[
            "--demo-key".as_ref(),
            "lk".as_ref(),
            "--overrides".as_ref(),
            quota.as_os_str(),
        ],
    );
    let out = load(
        &base,
        &[
            "--workers".as_ref(),
            "4".as_ref(),
            "--duration".as_ref(),
            "2".as_ref(),
            "--json".as_ref(),
            "--overrides".as_ref(),
            quota.as_os_str(),
        ],
    );
    drop(server);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for f in [
        "sent",
        "ok",
        "rejected",
        "local_refusals",
        "achieved_rps",
        "allowed_rps",
        "utilization",
        "wait_p50_ms",
        "wait_p99_ms",
    ] {
        assert!(v.get(f).is_some(), "{f} missing: {v}");
    }
    // Zero rejections at full utilization is the benchmark's claim (BENCHMARKS.md), measured on a
    // quiet machine; here tests run side by side, so only the shape of the report is checked.
    assert!(v["ok"].as_u64().unwrap() >= 5, "{v}");
    assert!(v["utilization"].as_f64().unwrap() > 0.0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn against_a_stricter_sandbox_the_client_learns_its_quota_and_load_reports_the_sandboxs() {
    let dir = apistend_testkit::temp_dir("load-strict");
    let group = "[wb.groups.\"content-api.kontent\"]";
    let (model, strict) = (dir.join("model.toml"), dir.join("strict.toml"));
    std::fs::write(&model, format!("{group}\nburst = 5\ninterval_ms = 200\n")).unwrap();
    std::fs::write(&strict, format!("{group}\nburst = 2\ninterval_ms = 400\n")).unwrap();
    let token = "load-test-admin-token-0123";
    let (server, base) = apistend_testkit::serve_process(
        env!("CARGO_BIN_EXE_apistend"),
        &dir,
        &[
            "--demo-key".as_ref(),
            "lk".as_ref(),
            "--overrides".as_ref(),
            strict.as_os_str(),
            "--admin-token".as_ref(),
            token.as_ref(),
        ],
    );
    let out = load(
        &base,
        &[
            "--workers".as_ref(),
            "8".as_ref(),
            "--duration".as_ref(),
            "6".as_ref(),
            "--json".as_ref(),
            "--admin-token".as_ref(),
            token.as_ref(),
            "--overrides".as_ref(),
            model.as_os_str(),
        ],
    );
    drop(server);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The sandbox's own quota, from its management API: 2 + 6 s / 400 ms in 6 s.
    let server_allowed = v["server_allowed_rps"].as_f64().unwrap();
    assert!((server_allowed - 17.0 / 6.0).abs() < 0.1, "{v}");
    assert!(v["server_utilization"].as_f64().unwrap() > 0.0, "{v}");
    // A client believing 5 / 200 ms is rejected at once: it takes the burst from WB's
    // X-Ratelimit-Limit and narrows its rate below the catalog's.
    assert_eq!(v["learned_burst"], 2, "{v}");
    assert!(v["learned_interval_ms"].as_f64().unwrap() > 250.0, "{v}");
    // The sandbox's conduct report on the run's key: it met refusals and waited them out.
    assert_eq!(v["conduct"]["verdict"], "clean", "{v}");
    assert_eq!(v["conduct"]["early_retries"], 0, "{v}");
    // A wrong token is a clear failure, not a report without the figure.
    let (server, base) = apistend_testkit::serve_process(
        env!("CARGO_BIN_EXE_apistend"),
        &dir.join("again"),
        &[
            "--demo-key".as_ref(),
            "lk".as_ref(),
            "--admin-token".as_ref(),
            token.as_ref(),
        ],
    );
    let wrong = "not-the-token-0123456";
    let out = load(
        &base,
        &[
            "--duration".as_ref(),
            "1".as_ref(),
            "--admin-token".as_ref(),
            wrong.as_ref(),
        ],
    );
    drop(server);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--admin-token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn plot_draws_an_svg() {
    let dir = apistend_testkit::temp_dir("plot");
    let input = dir.join("c.json");
    std::fs::write(&input, r#"{"title":"t","x_label":"x","y_label":"y","kind":"line","series":[{"name":"a","points":[[1,0.5],[2,0.9]]}]}"#).unwrap();
    let output = dir.join("c.svg");
    let st = apistend()
        .args(["plot", "--input"])
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .status()
        .unwrap();
    assert!(st.success());
    let svg = std::fs::read_to_string(&output).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    std::fs::write(&input, "{}").unwrap();
    let out = apistend()
        .args(["plot", "--input"])
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(dir);
}
