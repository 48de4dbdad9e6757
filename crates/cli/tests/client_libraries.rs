//! Unmodified popular client libraries of each service against `apistend serve`, changing only
//! their base URL: wildberries-api, apify-client, fast-bitrix24 and ozon-api (pinned in
//! `tests/compat/requirements.txt`), driven by `tests/compat/clients.py`. The libraries go into a
//! virtual environment under `target/tmp` on first run (from PyPI); without Python or PyPI the
//! test is skipped loudly, except in CI, where it must run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Skips (loudly) outside CI, fails in CI.
fn unavailable(why: &str) {
    assert!(
        !apistend_testkit::in_ci(),
        "client libraries cannot be set up in CI: {why}"
    );
    eprintln!("\n==== SKIPPED client_libraries: {why} ====\n");
}

/// The virtual environment with the pinned libraries, made (or brought up to date) when needed.
fn venv() -> Result<PathBuf, String> {
    let requirements = repo().join("tests/compat/requirements.txt");
    let wanted = std::fs::read_to_string(&requirements).map_err(|e| e.to_string())?;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compat-venv");
    // Tests run as separate processes (nextest): one sets the environment up, the others wait.
    let lock = std::fs::File::create(dir.with_extension("lock")).map_err(|e| e.to_string())?;
    lock.lock().map_err(|e| e.to_string())?;
    let python = dir.join("bin/python");
    let stamp = dir.join("requirements.installed");
    if python.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(python);
    }
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{cmd:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    run(Command::new("python3").args(["-m", "venv"]).arg(&dir))?;
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements))?;
    std::fs::write(&stamp, wanted).map_err(|e| e.to_string())?;
    Ok(python)
}

const ADMIN: &str = "compat-admin-token-0123";

fn serve(data: &Path, specs: Option<&Path>) -> (std::process::Child, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apistend"));
    cmd.args([
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--demo-key",
        "compat-key",
        "--admin-token",
        ADMIN,
        "--data",
    ])
    .arg(data)
    .env("RUST_LOG", "warn")
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    if let Some(dir) = specs {
        cmd.arg("--wb-openapi").arg(dir);
    }
    let mut child = cmd.spawn().unwrap();
    let base = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .find_map(|l| {
            l.ok()?
                .strip_prefix("APIStend sandbox listening on ")
                .map(str::to_owned)
        })
        .expect("the sandbox prints its address");
    (child, base)
}

#[test]
fn popular_client_libraries_work_by_changing_only_their_base_url() {
    let python = match venv() {
        Ok(p) => p,
        Err(why) => return unavailable(&why),
    };
    // WB's answers come from its specs: the library parses them into its models.
    let specs = apistend_testkit::wb_specs();
    let data = std::env::temp_dir().join(format!("apistend-compat-{}", std::process::id()));
    std::fs::create_dir_all(&data).unwrap();
    let (mut server, base) = serve(&data, specs.as_deref());
    let mut libraries = vec!["apify", "bitrix24", "ozon"];
    if specs.is_some() {
        libraries.insert(0, "wildberries");
    }
    let mut script = Command::new(&python)
        .arg(repo().join("tests/compat/clients.py"))
        .args([&base, "compat-key"])
        .args(&libraries)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = script.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = script.kill();
            break script.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut script.stdout.take().unwrap(), &mut out).unwrap();
    std::io::Read::read_to_string(&mut script.stderr.take().unwrap(), &mut err).unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&data);
    assert!(status.success(), "{status}\n{out}\n{err}");
    let checks: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for library in ["wb ", "apify ", "b24 ", "ozon "] {
        if library == "wb " && specs.is_none() {
            continue;
        }
        assert!(
            checks
                .iter()
                .any(|c| c["check"].as_str().unwrap_or("").starts_with(library)),
            "no check of {library}in\n{out}"
        );
    }
    assert!(checks.iter().all(|c| c["ok"] == true), "{out}");
    eprintln!("{} client-library checks passed", checks.len());
}

/// aiohttp's pool against early answers to POSTs whose bodies come in a second write (an
/// exhausted bucket's 429, the management API's 401), then every connection reused after 20 s
/// idle: nginx-like keep-alive, no "Server disconnected".
#[test]
fn a_pooled_client_keeps_its_connections_through_early_answers_and_idle_time() {
    let python = match venv() {
        Ok(p) => p,
        Err(why) => return unavailable(&why),
    };
    let data = std::env::temp_dir().join(format!("apistend-keepalive-{}", std::process::id()));
    std::fs::create_dir_all(&data).unwrap();
    let (mut server, base) = serve(&data, None);
    let out = Command::new(&python)
        .arg(repo().join("tests/compat/keepalive.py"))
        .args([&base, "compat-key", ADMIN, "20"])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&data);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    eprintln!("{v}");
    assert_eq!(v["errors"], serde_json::json!([]), "disconnects: {v}");
    assert_eq!(v["statuses"]["429"], 100, "{v}");
    assert_eq!(v["statuses"]["401"], 100, "{v}");
    assert_eq!(
        v["new_connections_after_idle"], 0,
        "every pooled connection was reused: {v}"
    );
}
