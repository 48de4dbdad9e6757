//! `apistend serve --services DIR`: built-in definitions copied under other ids and prefixes
//! (Ozon's, and Bitrix24's with its operating-time budget and `batch`) work as those services do
//! — limits, credentials, batch and answers — and a bad file stops the start with its file, line
//! and field.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../services");

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path, services: &Path) -> Server {
    serve_with(data, services, &[])
}

fn serve_with(data: &Path, services: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(["serve", "--addr", "127.0.0.1:0", "--demo-key", "svc-key-1"])
        .arg("--data")
        .arg(data)
        .arg("--services")
        .arg(services)
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = lines
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("APIStend sandbox listening on ")
                .map(str::to_owned)
        })
        .expect("a banner");
    Server { child, base }
}

/// The built-in `name` with its id and prefix replaced.
fn copy(name: &str, id: &str, prefix: &str, dir: &Path) {
    let text = std::fs::read_to_string(Path::new(ROOT).join(format!("{name}.toml"))).unwrap();
    let text = text
        .replacen(&format!("id = \"{name}\""), &format!("id = \"{id}\""), 1)
        .replacen(
            &format!("prefix = \"/{name}\""),
            &format!("prefix = \"{prefix}\""),
            1,
        );
    std::fs::write(dir.join(format!("{id}.toml")), text).unwrap();
}

#[test]
fn copied_definitions_are_services_under_their_new_prefixes() {
    let services = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    copy("ozon", "market2", "/m2", services.path());
    copy("b24", "portal2", "/bx", services.path());
    let s = serve(data.path(), services.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let post = |path: &str| {
            http.post(format!("{}{path}", s.base))
                .header("X-Mock-Delay", "0")
        };

        // Ozon's credentials, answers and its one-per-minute warehouse list, under /m2.
        let ozon = |path: &str| {
            post(path)
                .header("Client-Id", "42")
                .header("Api-Key", "svc-key-1")
                .header("Content-Type", "application/json")
                .body(r#"{"limit": 50}"#)
        };
        let r = ozon("/m2/v1/warehouse/list").send().await.unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        assert!(body["result"].is_array(), "{body}");
        let r = ozon("/m2/v1/warehouse/list").send().await.unwrap();
        assert_eq!(r.status(), 429, "the copy keeps Ozon's limit");
        let body: Value = r.json().await.unwrap();
        assert!(
            body["code"].is_number() && body["message"].is_string(),
            "{body}"
        );
        // Its buckets are its own: the built-in Ozon's warehouse list is still free.
        let r = ozon("/ozon/v1/warehouse/list").send().await.unwrap();
        assert_eq!(r.status(), 200);
        let r = post("/m2/v1/warehouse/list")
            .header("Client-Id", "42")
            .header("Api-Key", "unknown-key")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "credentials are checked");

        // Bitrix24's webhook path, time block and batch, under /bx.
        let r = post("/bx/rest/1/svc-key-1/user.current.json")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        assert!(body["result"].is_object(), "{body}");
        assert!(body["time"]["operating_reset_at"].is_number(), "{body}");
        let form: Vec<(String, String)> = (0..3)
            .map(|i| (format!("cmd[c{i}]"), "crm.deal.get?id=1".to_owned()))
            .collect();
        let r = post("/bx/rest/1/svc-key-1/batch.json")
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        assert_eq!(
            body["result"]["result"]
                .as_object()
                .map(serde_json::Map::len),
            Some(3),
            "{body}"
        );
        let too_many: Vec<(String, String)> = (0..51)
            .map(|i| (format!("cmd[c{i}]"), "crm.deal.get?id=1".to_owned()))
            .collect();
        let r = post("/bx/rest/1/svc-key-1/batch.json")
            .form(&too_many)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"], "ERROR_BATCH_LENGTH_EXCEEDED");
        // The portal's leaky bucket: 50, then Bitrix24's 503 QUERY_LIMIT_EXCEEDED. Three
        // requests are spent above.
        let mut statuses = Vec::new();
        for _ in 0..50 {
            let r = post("/bx/rest/1/svc-key-1/profile.json")
                .send()
                .await
                .unwrap();
            statuses.push(r.status().as_u16());
            if r.status() == 503 {
                let body: Value = r.json().await.unwrap();
                assert_eq!(body["error"], "QUERY_LIMIT_EXCEEDED");
                break;
            }
        }
        assert_eq!(statuses.last(), Some(&503), "{statuses:?}");
        assert!(
            statuses.len() >= 47,
            "{} admitted before the 503",
            statuses.len() - 1
        );
    });
}

/// What `apistend serve` says when it refuses to start.
fn refused_start(data: &Path, services: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .arg("--data")
        .arg(data)
        .arg("--services")
        .arg(services)
        .output()
        .unwrap();
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_definition_stops_the_start_with_its_file_line_and_field() {
    let services = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    copy("ozon", "market2", "/m2", services.path());
    let path = services.path().join("market2.toml");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "groups = [\"warehouse-list\", \"client\"]",
        "groups = [\"warehouses\"]",
        1,
    );
    std::fs::write(&path, &text).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"warehouses\""))
        .unwrap()
        + 1;
    let err = refused_start(data.path(), services.path());
    let want = format!("market2.toml:{line}: operations[4].groups[0]: no group \"warehouses\"");
    assert!(err.contains(&want), "{err}");

    // A prefix the sandbox answers itself is refused.
    copy("ozon", "market2", "/metrics", services.path());
    let err = refused_start(data.path(), services.path());
    assert!(
        err.contains("prefix /metrics is one of the sandbox's own routes"),
        "{err}"
    );

    // The catalog command reads the same directory.
    std::fs::remove_file(&path).unwrap();
    copy("ozon", "market2", "/m2", services.path());
    let out = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args([
            "catalog",
            "--format",
            "json",
            "--service",
            "market2",
            "--services",
        ])
        .arg(services.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Ozon's 460 operations (its official OpenAPI's), under the copy's name.
    assert_eq!(rows.as_array().unwrap().len(), 460, "{rows}");
    assert!(rows[0]["service"] == "market2", "{rows}");
}

/// A concurrency slot held by a process that is killed comes back when its lease runs out: the
/// other process, on the same Redis, is refused while the lease lives and served after.
#[test]
fn a_killed_holders_slot_returns_after_its_lease() {
    let Some(redis) =
        apistend_testkit::RedisServer::start("a_killed_holders_slot_returns_after_its_lease")
    else {
        return;
    };
    let services = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(ROOT).join("moysklad.toml")).unwrap();
    // One slot, leased for 1.5 s (renewed every 0.5 s while held).
    let text = text.replacen(
        "id = \"user\"\nmax = 5",
        "id = \"user\"\nmax = 1\nlease_ms = 1500",
        1,
    );
    assert!(text.contains("lease_ms = 1500"));
    std::fs::write(services.path().join("moysklad.toml"), text).unwrap();
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let url = redis.url();
    let mut a = serve_with(da.path(), services.path(), &["--redis", &url]);
    let b = serve_with(db.path(), services.path(), &["--redis", &url]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let get = |base: &str, delay: &str| {
            http.get(format!("{base}/moysklad/api/remap/1.2/entity/product"))
                .bearer_auth("svc-key-1")
                .header("X-Mock-Delay", delay)
                .send()
        };
        // A holds the slot with a 30 s answer; B is refused with MoySklad's 1073.
        let held = tokio::spawn(get(&a.base, "30000"));
        tokio::time::sleep(std::time::Duration::from_millis(700)).await;
        let r = get(&b.base, "0").await.unwrap();
        assert_eq!(r.status(), 429);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["errors"][0]["code"], 1073, "{body}");
        // Held past its first lease: A renews it.
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(
            get(&b.base, "0").await.unwrap().status(),
            429,
            "renewed while held"
        );
        let _ = a.child.kill();
        let _ = a.child.wait();
        assert!(held.await.unwrap().is_err(), "A is gone");
        let started = std::time::Instant::now();
        loop {
            let s = get(&b.base, "0").await.unwrap().status();
            if s == 200 {
                break;
            }
            assert_eq!(s, 429);
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "the slot never came back"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        eprintln!(
            "the killed holder's slot came back after {:?}",
            started.elapsed()
        );
    });
    drop(b);
}

/// The start banner lists every loaded service with its prefix, and the file of a user's; a
/// file that does not parse is refused in the format of every other definition error
/// (`FILE:LINE: field: reason`), with no prefix of the command line's.
#[test]
fn the_banner_lists_the_services_and_a_parse_error_has_the_one_format() {
    let services = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    copy("ozon", "market2", "/m2", services.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(["serve", "--addr", "127.0.0.1:0", "--only", "wb,market2"])
        .arg("--data")
        .arg(data.path())
        .arg("--services")
        .arg(services.path())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let listed = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .take(20)
        .find_map(|l| l.strip_prefix("services: ").map(str::to_owned));
    let _ = child.kill();
    let _ = child.wait();
    let file = services.path().join("market2.toml");
    assert_eq!(
        listed.as_deref(),
        Some(format!("wb /wb, market2 /m2 ({})", file.display()).as_str())
    );

    std::fs::write(
        services.path().join("broken.toml"),
        "id = \"x\"\nprefix = [\n",
    )
    .unwrap();
    let err = refused_start(data.path(), services.path());
    let broken = services.path().join("broken.toml");
    assert!(err.contains(&format!("{}:", broken.display())), "{err}");
    assert!(!err.contains("--services"), "{err}");
}
