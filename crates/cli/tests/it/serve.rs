//! `apistend serve` as a process: the demo key on first start, graceful shutdown on SIGTERM, and
//! ten thousand concurrent delayed requests served without holding a worker each.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    base: String,
    banner: Vec<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &std::path::Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut banner = Vec::new();
    while let Some(Ok(line)) = lines.next() {
        let done = line.starts_with("try:");
        banner.push(line);
        if done {
            break;
        }
    }
    let base = banner
        .iter()
        .find_map(|l| l.strip_prefix("APIStend sandbox listening on "))
        .unwrap_or_else(|| panic!("no banner: {banner:?}"))
        .to_owned();
    Server {
        child,
        base,
        banner,
    }
}

use apistend_testkit::temp_dir;

#[test]
fn first_start_creates_and_prints_a_demo_key_that_lasts() {
    let dir = temp_dir("demo");
    let key = {
        let s = serve(&dir, &[]);
        let line = s
            .banner
            .iter()
            .find(|l| l.starts_with("demo key: "))
            .unwrap();
        let key = line
            .trim_start_matches("demo key: ")
            .split_whitespace()
            .next()
            .unwrap()
            .to_owned();
        let curl = s.banner.last().unwrap();
        assert!(
            curl.contains("curl") && curl.contains(&key) && curl.contains(&s.base),
            "{curl}"
        );
        key
    };
    let s = serve(&dir, &[]);
    assert!(
        s.banner.iter().any(|l| l.contains(&key)),
        "the demo key survives a restart"
    );
    let s2 = serve(&temp_dir("demo2"), &["--demo-key", "chosen-key"]);
    assert!(
        s2.banner
            .iter()
            .any(|l| l.starts_with("demo key: chosen-key"))
    );
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sigterm_shuts_down_gracefully() {
    let dir = temp_dir("term");
    let mut s = serve(&dir, &["--demo-key", "k"]);
    let status = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(code) = s.child.try_wait().unwrap() {
            assert!(code.success(), "{code:?}");
            break;
        }
        assert!(Instant::now() < deadline, "did not stop within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ten_thousand_concurrent_delayed_requests_are_served() {
    let dir = temp_dir("flood");
    let overrides = dir.join("unlimited.toml");
    std::fs::write(
        &overrides,
        "[ozon.groups.client]\nburst = 1000000\nper_second = 1000000\n",
    )
    .unwrap();
    let s = serve(
        &dir,
        &[
            "--demo-key",
            "k",
            "--overrides",
            overrides.to_str().unwrap(),
        ],
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (ok, elapsed) = rt.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let url = format!("{}/ozon/v3/product/list", s.base);
        let t = Instant::now();
        let tasks: Vec<_> = (0..10_000)
            .map(|_| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move {
                    let r = client
                        .post(url)
                        .header("Client-Id", "1")
                        .header("Api-Key", "k")
                        .header("X-Mock-Delay", "2000")
                        .send()
                        .await;
                    r.map(|r| r.status().as_u16()).unwrap_or(0)
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            if t.await.unwrap() == 200 {
                ok += 1;
            }
        }
        (ok, t.elapsed())
    });
    assert_eq!(ok, 10_000, "all delayed requests answered");
    // Held sequentially by a worker each, 10 000 × 2 s would take hours.
    assert!(elapsed < Duration::from_secs(120), "{elapsed:?}");
    eprintln!("10 000 requests delayed 2 s each: {elapsed:?}");
}

#[test]
fn json_logs_carry_the_request_id_of_the_error_body() {
    let dir = temp_dir("logs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--demo-key",
            "k",
            "--data",
        ])
        .arg(&dir)
        .args(["--log-format", "json"])
        .env("RUST_LOG", "apistend_sandbox=debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = stdout
        .find_map(|l| {
            l.ok()?
                .strip_prefix("APIStend sandbox listening on ")
                .map(str::to_owned)
        })
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body: serde_json::Value = rt.block_on(async {
        let r = reqwest::Client::new()
            .get(format!("{base}/wb/content/v2/object/all"))
            .header("Authorization", "not-a-key")
            .header("X-Request-Id", "trace-4711")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        r.json().await.unwrap()
    });
    assert_eq!(body["requestId"], "trace-4711", "{body}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    let line = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            let _ = child.kill();
            panic!("no log line with the request id in {seen:#?}");
        };
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        if v["request_id"] == "trace-4711" {
            break v;
        }
        seen.push(line);
    };
    assert_eq!(line["level"], "DEBUG");
    assert_eq!(line["status"], 401);
    assert_eq!(line["service"], "wb");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `apistend serve` expecting it to refuse to start; returns what it said on stderr.
fn refused(data: &std::path::Path, extra: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apistend"));
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(extra)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "it started: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_empty_or_short_admin_token_stops_the_start() {
    let dir = temp_dir("empty-token");
    let err = refused(&dir, &[], &[("APISTEND_ADMIN_TOKEN", "")]);
    assert!(err.contains("admin token is empty"), "{err}");
    let err = refused(&dir, &["--admin-token", "short"], &[]);
    assert!(err.contains("admin token is too short"), "{err}");
}

#[test]
fn a_second_process_on_one_data_directory_is_refused_with_the_holders_pid() {
    let dir = temp_dir("two-processes");
    let first = serve(&dir, &[]);
    let err = refused(&dir, &[], &[]);
    assert!(
        err.contains(&format!("in use by PID {}", first.child.id())),
        "{err}"
    );
    // The generated token is printed once, and the file keeps only its hash, private.
    let token = first
        .banner
        .iter()
        .find_map(|l| l.split("Bearer ").nth(1))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap()
        .to_owned();
    let file = dir.join("apistend-data.json");
    assert!(!std::fs::read_to_string(&file).unwrap().contains(&token));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    drop(first);
    let again = serve(&dir, &[]);
    assert!(
        !again.banner.iter().any(|l| l.contains(&token)),
        "a restart does not print the token: {:?}",
        again.banner
    );
}

/// `--tls-addr` serves HTTPS with the data directory's authority, and `apistend ca` shows that
/// authority's certificate and how to trust it.
#[test]
fn tls_listener_and_ca_command_share_the_data_directorys_authority() {
    let data = temp_dir("tls");
    let server = serve(
        &data,
        &["--tls-addr", "127.0.0.1:0", "--demo-key", "tls-demo-key"],
    );
    let tls = server
        .banner
        .iter()
        .find_map(|l| {
            l.strip_prefix("HTTPS (the services' own hostnames, and localhost) on https://")
        })
        .unwrap_or_else(|| panic!("no HTTPS line: {:?}", server.banner))
        .to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(["ca", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let path = text.lines().next().unwrap();
    let expected = std::fs::canonicalize(data.join("apistend-ca.pem")).unwrap();
    assert_eq!(path, expected.to_str().unwrap());
    for line in [
        "SSL_CERT_FILE=",
        "REQUESTS_CA_BUNDLE=",
        "NODE_EXTRA_CA_CERTS=",
        "update-ca-certificates",
        "HTTPS_PROXY=",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(!text.contains("PRIVATE KEY"), "the key is never printed");
    // curl trusts exactly that file for a real hostname resolved to the TLS listener.
    let port = tls.rsplit(':').next().unwrap();
    let out = Command::new("curl")
        .args([
            "--silent",
            "--show-error",
            "--max-time",
            "10",
            "--cacert",
            path,
        ])
        .args(["--resolve", &format!("api.apify.com:{port}:127.0.0.1")])
        .args([
            "-H",
            "Authorization: Bearer tls-demo-key",
            "-H",
            "X-Mock-Delay: 0",
        ])
        .arg(format!("https://api.apify.com:{port}/v2/users/me"))
        .output();
    match out {
        Ok(out) => {
            let body = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{body}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(body.contains("\"data\""), "{body}");
        }
        Err(e) => assert!(!apistend_testkit::in_ci(), "curl is needed in CI: {e}"),
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}

/// `apistend serve` with no spec flag and no files beside it answers every built-in service from
/// the data embedded in the binary (WB from the committed import of its specs).
#[test]
fn without_any_spec_flag_every_service_answers_from_embedded_data() {
    let data = temp_dir("embedded");
    let server = serve(&data, &["--demo-key", "embedded-demo-key"]);
    assert!(
        server
            .banner
            .iter()
            .any(|l| l
                .starts_with("operations answered from the official descriptions: wb 299, apify ")),
        "{:?}",
        server.banner
    );
    let key = "embedded-demo-key";
    let bearer = format!("Authorization: Bearer {key}");
    let wb = format!("Authorization: {key}");
    let api_key = format!("Api-Key: {key}");
    // Each as a client sends it: Ozon's warehouse list with the `limit` its description requires.
    let checks: [(&str, &str, &[&str], &str); 7] = [
        ("GET", "/wb/api/v3/warehouses", &[&wb], "\"officeId\""),
        ("GET", "/apify/v2/users/me", &[&bearer], "\"data\""),
        (
            "POST",
            "/ozon/v1/warehouse/list",
            &["Client-Id: 1", &api_key, "Content-Type: application/json"],
            "\"warehouse_id\"",
        ),
        (
            "POST",
            "/b24/rest/1/embedded-demo-key/user.current.json",
            &[],
            "\"ID\"",
        ),
        ("GET", "/ymarket/v2/campaigns", &[&api_key], "\"campaigns\""),
        ("GET", "/amocrm/api/v4/leads", &[&bearer], "\"leads\""),
        (
            "GET",
            "/moysklad/api/remap/1.2/entity/product",
            &[&bearer],
            "\"meta\"",
        ),
    ];
    for (method, path, headers, wanted) in checks {
        let mut cmd = Command::new("curl");
        cmd.args([
            "--silent",
            // Accept-Encoding, as MoySklad requires (415 without it).
            "--compressed",
            "--max-time",
            "10",
            "-X",
            method,
            "-H",
            "X-Mock-Delay: 0",
        ]);
        for h in headers {
            cmd.args(["-H", h]);
        }
        if method == "POST" && path.starts_with("/ozon/") {
            cmd.args(["--data", r#"{"limit": 50}"#]);
        }
        let out = match cmd.arg(format!("{}{path}", server.base)).output() {
            Ok(out) => out,
            Err(e) => {
                assert!(!apistend_testkit::in_ci(), "curl is needed in CI: {e}");
                return;
            }
        };
        let body = String::from_utf8_lossy(&out.stdout);
        assert!(body.contains(wanted), "{method} {path}: {body}");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}

/// `apistend ca` keeps the authority in the user's data directory, as `serve` does: run in an
/// empty working directory it writes nothing there, it finds the same authority from anywhere,
/// its proxy hint names the configured address, and a reader that stops after the first line
/// (`apistend ca | head -1`) gets no error. An older version's files in the working directory
/// are used, with a warning on how to move them.
#[test]
fn the_authority_lives_in_the_data_directory_never_the_working_one() {
    use std::path::Path;
    let home = apistend_testkit::temp_dir("ca-home");
    let (a, b) = (home.join("a"), home.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let ca = |cwd: &Path, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_apistend"))
            .arg("ca")
            .args(extra)
            .current_dir(cwd)
            .env("HOME", &home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("APISTEND_DATA")
            .env_remove("APISTEND_CA_DIR")
            .env_remove("APISTEND_ADDR")
            .output()
            .unwrap()
    };
    let first = ca(&a, &["--addr", "127.0.0.1:18080"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&a).unwrap().count(),
        0,
        "nothing in the working directory"
    );
    let text = String::from_utf8_lossy(&first.stdout).into_owned();
    let path = text.lines().next().unwrap().to_owned();
    let default = home.join(".local/share/apistend");
    assert!(
        Path::new(&path).starts_with(std::fs::canonicalize(&default).unwrap()),
        "{path}"
    );
    assert!(
        text.contains("HTTPS_PROXY=http://127.0.0.1:18080"),
        "{text}"
    );
    let again = ca(&b, &[]);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).lines().next(),
        Some(path.as_str())
    );
    assert_eq!(std::fs::read_dir(&b).unwrap().count(), 0);

    // `apistend ca | head -1`: the reader goes away after one line.
    let mut child = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .arg("ca")
        .current_dir(&a)
        .env("HOME", &home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("APISTEND_DATA")
        .env_remove("APISTEND_CA_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(line.trim_end(), path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // An older version's authority in the working directory is used, with a warning.
    std::fs::copy(
        default.join("apistend-ca-key.pem"),
        b.join("apistend-ca-key.pem"),
    )
    .unwrap();
    let old = ca(&b, &[]);
    assert!(old.status.success());
    let stderr = String::from_utf8_lossy(&old.stderr);
    assert!(
        stderr.contains("older APIStend") && stderr.contains("mv "),
        "{stderr}"
    );
    let used = String::from_utf8_lossy(&old.stdout)
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        Path::new(&used),
        std::fs::canonicalize(b.join("apistend-ca.pem")).unwrap()
    );
    let _ = std::fs::remove_dir_all(home);
}

/// `--only` keeps the catalog to the services named: theirs answer, the others' paths are 404,
/// the banner's `try:` line calls one that is there; an unknown id stops the start, naming the
/// ids there are.
#[test]
fn only_the_services_named_are_loaded() {
    let data = temp_dir("only");
    let server = serve(&data, &["--only", "wb,ozon", "--demo-key", "only-demo-key"]);
    let described = server
        .banner
        .iter()
        .find(|l| l.starts_with("operations answered from the official descriptions:"));
    assert_eq!(
        described.map(String::as_str),
        Some("operations answered from the official descriptions: wb 299, ozon 460"),
        "{:?}",
        server.banner
    );
    let try_line = server.banner.last().cloned().unwrap_or_default();
    assert!(
        try_line.contains(&format!("{}/wb/", server.base)),
        "{try_line}"
    );
    let status = |method: &str, path: &str| -> String {
        let out = Command::new("curl")
            .args(["--silent", "--max-time", "10", "-o", "/dev/null"])
            .args(["-w", "%{http_code}", "-X", method])
            .args(["-H", "X-Mock-Key: only-demo-key", "-H", "X-Mock-Delay: 0"])
            .args([
                "-H",
                "Content-Type: application/json",
                "--data",
                r#"{"limit": 50}"#,
            ])
            .arg(format!("{}{path}", server.base))
            .output();
        match out {
            Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
            Err(e) => {
                assert!(std::env::var_os("CI").is_none(), "curl: {e}");
                eprintln!("SKIP: no curl ({e})");
                "skip".into()
            }
        }
    };
    for (method, path, wanted) in [
        ("GET", "/wb/api/v3/warehouses", "200"),
        ("POST", "/ozon/v1/warehouse/list", "200"),
        ("POST", "/b24/rest/user.current.json", "404"),
        ("GET", "/moysklad/api/remap/1.2/entity/product", "404"),
    ] {
        let got = status(method, path);
        assert!(got == wanted || got == "skip", "{method} {path}: {got}");
    }
    let err = refused(
        &temp_dir("only-unknown"),
        &["--only", "wb,wildberries"],
        &[],
    );
    assert!(
        err.contains("unknown service \"wildberries\"") && err.contains("wb, b24, apify"),
        "{err}"
    );
}
