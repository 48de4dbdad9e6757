//! `apistend proxy` as a process in front of a sandbox: requests paced by the client's limiter
//! (no 429 from the sandbox), WB routed to its operation's host, local refusals with
//! `Retry-After`, `X-APIStend-Waited-Ms` on every answer, metrics, and each bad input a clear
//! answer with the proxy still serving afterwards.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use apistend_testkit::{Process, serve_process, temp_dir, with_banner};

const KEY: &str = "proxy-key";

/// The sandboxes' admin token (their conduct reports).
const TOKEN: &str = "proxy-test-admin-token";

/// A sandbox with `overrides` (TOML), the demo key [`KEY`] and the admin token [`TOKEN`].
fn sandbox(name: &str, overrides: &str) -> (Process, String, std::path::PathBuf) {
    let dir = temp_dir(name);
    let file = dir.join("sandbox.toml");
    std::fs::write(&file, overrides).unwrap();
    let extra = [
        "--demo-key".as_ref(),
        KEY.as_ref(),
        "--overrides".as_ref(),
        file.as_os_str(),
        "--admin-token".as_ref(),
        TOKEN.as_ref(),
    ];
    let (p, base) = serve_process(env!("CARGO_BIN_EXE_apistend"), &dir, &extra);
    (p, base, dir)
}

/// `apistend proxy ARGS…` on a free port, and its base URL.
fn proxy(args: &[&str], env: &[(&str, &str)]) -> (Process, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apistend"));
    cmd.args(["proxy", "--listen", "127.0.0.1:0"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    with_banner(cmd, "APIStend proxy listening on ")
}

/// `apistend proxy --service ozon --upstream UPSTREAM EXTRA…`.
fn ozon_proxy(upstream: &str, extra: &[&str], env: &[(&str, &str)]) -> (Process, String) {
    let mut args = vec!["--service", "ozon", "--upstream", upstream];
    args.extend_from_slice(extra);
    proxy(&args, env)
}

/// A body `POST /v2/warehouse/list` takes (its description requires `limit`).
const WAREHOUSES: &str = r#"{"limit": 50}"#;

/// Ozon's `POST /v2/warehouse/list` through `base`.
fn warehouses(base: &str) -> Option<Answer> {
    let h = ozon_headers();
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    curl(
        "POST",
        &format!("{base}/v2/warehouse/list"),
        &h,
        Some(WAREHOUSES),
    )
}

/// One answer: status, headers (lowercase names), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `curl -i` (installed by `.ci/run`); `None` (and a loud skip) outside CI without curl.
fn curl(method: &str, url: &str, headers: &[&str], body: Option<&str>) -> Option<Answer> {
    let mut cmd = Command::new("curl");
    cmd.args(["--silent", "--include", "--max-time", "30", "-X", method]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    if let Some(b) = body {
        cmd.args(["--data-binary", b]);
    }
    let out = match cmd.arg(url).output() {
        Ok(o) => o,
        Err(e) => {
            assert!(!apistend_testkit::in_ci(), "curl is needed in CI: {e}");
            eprintln!("SKIP: curl: {e}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some(Answer {
        status,
        headers,
        body: body.to_owned(),
    })
}

fn ozon_headers() -> Vec<String> {
    vec![
        "Client-Id: 1".into(),
        format!("Api-Key: {KEY}"),
        "X-Mock-Delay: 0".into(),
        "Content-Type: application/json".into(),
    ]
}

/// The sandbox's conduct report on its keys (its only sandbox's).
fn conduct(base: &str) -> serde_json::Value {
    let auth = format!("Authorization: Bearer {TOKEN}");
    let list = curl("GET", &format!("{base}/api/v1/sandboxes"), &[&auth], None).unwrap();
    let list: serde_json::Value = serde_json::from_str(&list.body).unwrap();
    let id = list[0]["id"].as_str().unwrap();
    let url = format!("{base}/api/v1/sandboxes/{id}/conduct");
    serde_json::from_str(&curl("GET", &url, &[&auth], None).unwrap().body).unwrap()
}

/// The sandbox's count of 429s it answered for Ozon.
fn sandbox_429s(base: &str) -> u64 {
    service_429s(base, "ozon")
}

/// The sandbox's count of 429s it answered for `service`.
fn service_429s(base: &str, service: &str) -> u64 {
    let m = curl("GET", &format!("{base}/metrics"), &[], None).unwrap();
    let start = format!("apistend_requests_total{{service=\"{service}\"");
    m.body
        .lines()
        .filter(|l| l.starts_with(&start) && l.contains("status=\"429\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn requests_through_the_proxy_are_paced_so_the_sandbox_refuses_none() {
    // Sandbox and proxy agree: 3 at once, then one per 200 ms.
    let quota = "[ozon.groups.client]\nburst = 3\ninterval_ms = 200\n";
    let (_s, sandbox_base, dir) = sandbox("proxy-paced", quota);
    let file = dir.join("proxy.toml");
    std::fs::write(&file, quota).unwrap();
    let upstream = format!("{sandbox_base}/ozon");
    let overrides = file.to_str().unwrap();
    let (_p, base2) = ozon_proxy(
        &upstream,
        &["--account", "acc-7", "--overrides", overrides],
        &[],
    );
    let h = ozon_headers();
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let started = Instant::now();
    let mut waited_somewhere = false;
    for _ in 0..8 {
        let Some(a) = curl(
            "POST",
            &format!("{base2}/v2/warehouse/list"),
            &h,
            Some(WAREHOUSES),
        ) else {
            return;
        };
        assert_eq!(a.status, 200, "{}", a.body);
        assert!(a.body.contains("warehouse_id"), "{}", a.body);
        let waited: u64 = a.header("x-apistend-waited-ms").unwrap().parse().unwrap();
        waited_somewhere |= waited > 0;
    }
    // 8 requests at 3 + one per 200 ms take at least a second: the proxy waited, the sandbox
    // refused nothing.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert!(waited_somewhere);
    assert_eq!(sandbox_429s(&sandbox_base), 0);
    // The client's families are on the proxy's /metrics, per account.
    let m = curl("GET", &format!("{base2}/metrics"), &[], None).unwrap();
    assert!(
        m.body.contains(
            "apistend_client_acquisitions_total{service=\"ozon\",account=\"acc-7\",group=\"client\"} 8"
        ),
        "{}",
        m.body
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Sixteen workers at once through one proxy against MoySklad (5 requests in flight per user,
/// 45 units per 3 s at 4 a request; each answer 200 ms late): the proxy holds the service's
/// in-flight slots and paces the tokens, so the sandbox refuses none — no 1073, no 1049 — and
/// every request is answered. The share of the weight budget used is printed (a figure, not a
/// verdict: timing belongs to the benchmarks).
/// `workers` threads that each send `rounds` requests with curl, one after another; asserts every
/// answer is a 200. `false` (a loud skip) outside CI without curl.
fn all_answered_200(
    workers: usize,
    rounds: usize,
    method: &'static str,
    url: &str,
    headers: &[String],
    body: Option<&str>,
) -> bool {
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let (url, headers) = (url.to_owned(), headers.to_vec());
            let body = body.map(str::to_owned);
            std::thread::spawn(move || {
                let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
                (0..rounds)
                    .map(|_| curl(method, &url, &headers, body.as_deref()))
                    .map(|a| a.map(|a| (a.status, a.body)))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        for answer in t.join().unwrap() {
            let Some((status, body)) = answer else {
                return false;
            };
            assert_eq!(status, 200, "{body}");
        }
    }
    true
}

#[test]
fn sixteen_workers_through_the_proxy_meet_no_refusal_from_moysklad() {
    let (_s, sandbox_base, dir) = sandbox("proxy-moysklad", "");
    let upstream = format!("{sandbox_base}/moysklad/api/remap/1.2");
    let (_p, base) = proxy(&["--service", "moysklad", "--upstream", &upstream], &[]);
    let started = Instant::now();
    let url = format!("{base}/entity/product");
    let headers = [
        format!("Authorization: Bearer {KEY}"),
        "X-Mock-Delay: 200".into(),
    ];
    if !all_answered_200(16, 2, "GET", &url, &headers, None) {
        return;
    }
    let took = started.elapsed().as_secs_f64();
    assert_eq!(service_429s(&sandbox_base, "moysklad"), 0);
    let m = curl("GET", &format!("{base}/metrics"), &[], None).unwrap();
    let in_flight_retries: u64 = m
        .body
        .lines()
        .filter(|l| l.starts_with("apistend_client_retries_total{") && l.contains("in_flight"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(in_flight_retries, 0, "{}", m.body);
    // 32 requests of 4 units: 45 at once, then 15 a second.
    let budget = 45.0 + 15.0 * took;
    eprintln!(
        "32 requests in {took:.2} s: {:.2} of the weight budget",
        (32.0 * 4.0) / budget
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Yandex Market's price updates through one proxy, 16 workers of 500 offers each: the proxy
/// holds the method's 12 slots per campaign and weighs each request by its offers, so the
/// sandbox answers no 420 (neither for requests in flight nor for offers per minute).
#[test]
fn sixteen_workers_of_500_offers_through_the_proxy_meet_no_420_from_yandex_market() {
    // Both sides agree on the method's quota: 10 000 offers at once, then one a millisecond,
    // so that the second round waits a few seconds, not a minute.
    let quota = "[ymarket.groups.updatePrices]\nburst = 10000\ninterval_ms = 1\n";
    let (_s, sandbox_base, dir) = sandbox("proxy-ymarket", quota);
    let file = dir.join("sandbox.toml");
    let upstream = format!("{sandbox_base}/ymarket");
    let args = [
        "--service",
        "ymarket",
        "--upstream",
        &upstream,
        "--overrides",
    ];
    let (_p, base) = proxy(&[&args[..], &[file.to_str().unwrap()]].concat(), &[]);
    let offers: Vec<serde_json::Value> = (0..500)
        .map(|i| serde_json::json!({"offerId": format!("SKU-{i}"), "price": {"value": 100, "currencyId": "RUR"}}))
        .collect();
    let body = serde_json::json!({ "offers": offers }).to_string();
    let url = format!("{base}/v2/campaigns/7/offer-prices/updates");
    let headers = [
        format!("Api-Key: {KEY}"),
        "X-Mock-Delay: 300".into(),
        "Content-Type: application/json".into(),
    ];
    if !all_answered_200(16, 2, "POST", &url, &headers, Some(&body)) {
        return;
    }
    let m = curl("GET", &format!("{sandbox_base}/metrics"), &[], None).unwrap();
    let refusals: u64 = m
        .body
        .lines()
        .filter(|l| l.starts_with("apistend_requests_total{service=\"ymarket\""))
        .filter(|l| l.contains("status=\"420\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(refusals, 0, "{}", m.body);
    let _ = std::fs::remove_dir_all(dir);
}

/// An API with no definition, behind `--service generic`: it speaks the older
/// `RateLimit-Limit/-Remaining/-Reset` triple and is stricter than the generic nominal quota
/// (4 at once, one per 500 ms against 10 a second). Every request is answered, the sandbox's few
/// refusals are waited out as announced, and the proxy shows what it learned.
#[test]
fn the_generic_proxy_fronts_an_api_it_has_no_definition_of() {
    let dir = temp_dir("proxy-generic");
    let services = dir.join("services");
    std::fs::create_dir_all(&services).unwrap();
    std::fs::write(services.join("triple.toml"), triple()).unwrap();
    let extra = [
        "--demo-key".as_ref(),
        KEY.as_ref(),
        "--services".as_ref(),
        services.as_os_str(),
        "--admin-token".as_ref(),
        TOKEN.as_ref(),
    ];
    let (_s, sandbox_base) = serve_process(env!("CARGO_BIN_EXE_apistend"), &dir, &extra);
    let upstream = format!("{sandbox_base}/triple");
    let (_p, base) = proxy(&["--service", "generic", "--upstream", &upstream], &[]);
    let bearer = format!("Authorization: Bearer {KEY}");
    for i in 0..12 {
        let Some(a) = curl(
            "GET",
            &format!("{base}/things"),
            &[&bearer, "X-Mock-Delay: 0"],
            None,
        ) else {
            return;
        };
        assert_eq!(a.status, 200, "request {i}: {}", a.body);
    }
    let refused = service_429s(&sandbox_base, "triple");
    eprintln!("12 requests through the generic proxy: {refused} refusals by the sandbox");
    assert!(refused <= 3, "{refused}");
    let report = conduct(&sandbox_base);
    assert_eq!(report["verdict"], "clean", "{report}");
    let learned = curl("GET", &format!("{base}/learned"), &[], None).unwrap();
    let learned: serde_json::Value = serde_json::from_str(&learned.body).unwrap();
    let row = &learned["learned"][0];
    assert_eq!(
        (row["service"].as_str(), row["group"].as_str()),
        (Some("generic"), Some("default")),
        "{learned}"
    );
    assert_eq!(row["burst"].as_u64(), Some(4), "{learned}");
    // Without --upstream it has nowhere to go.
    let out = Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(["proxy", "--listen", "127.0.0.1:0", "--service", "generic"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give --upstream"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A user's service that sends the older triple of rate-limit headers, 4 at once and one per
/// 500 ms: the IETF test definition with the triple in place of the IETF fields.
fn triple() -> String {
    let ietf = "[[rate_headers]]\nname = \"RateLimit-Policy\"\nvalue = \"ietf_policy\"\n\n[[rate_headers]]\nname = \"RateLimit\"\nvalue = \"ietf_limit\"\n";
    let triple: String = [
        ("Limit", "limit"),
        ("Remaining", "remaining"),
        ("Reset", "reset_secs"),
    ]
    .iter()
    .map(|(name, value)| {
        format!("[[rate_headers]]\nname = \"RateLimit-{name}\"\nvalue = \"{value}\"\n\n")
    })
    .collect();
    let def = apistend_testkit::IETF_DEFINITION;
    assert!(
        def.contains(ietf),
        "the IETF definition names its fields so"
    );
    def.replacen("id = \"ietf\"", "id = \"triple\"", 1)
        .replacen("prefix = \"/ietf\"", "prefix = \"/triple\"", 1)
        .replacen(&format!("{ietf}\n"), &triple, 1)
        .replacen(
            "quota = { count = 20, period_ms = 2000 }",
            "quota = { burst = 4, interval_ms = 500 }",
            1,
        )
}

#[test]
fn wb_requests_go_to_their_operations_host() {
    let (_s, sandbox_base, dir) = sandbox("proxy-wb", "");
    let (_p, base) = proxy(&["--service", "wb", "--upstream", &sandbox_base], &[]);
    let auth = format!("Authorization: {KEY}");
    // /api/v3/warehouses is marketplace-api's; /ping exists on every host.
    let Some(a) = curl(
        "GET",
        &format!("{base}/api/v3/warehouses"),
        &[&auth, "X-Mock-Delay: 0"],
        None,
    ) else {
        return;
    };
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(a.body.contains("officeId"), "{}", a.body);
    assert!(
        a.header("x-ratelimit-remaining").is_some(),
        "{:?}",
        a.headers
    );
    assert!(a.header("x-apistend-waited-ms").is_some());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stricter_sandbox_teaches_the_proxy_its_quota_shown_at_learned() {
    let group = "[wb.groups.\"content-api.kontent\"]";
    let (_s, sandbox_base, dir) = sandbox(
        "proxy-learn",
        &format!("{group}\nburst = 2\ninterval_ms = 400\n"),
    );
    let model = dir.join("model.toml");
    std::fs::write(&model, format!("{group}\nburst = 5\ninterval_ms = 200\n")).unwrap();
    let (_p, base) = proxy(
        &[
            "--service",
            "wb",
            "--upstream",
            &sandbox_base,
            "--overrides",
            model.to_str().unwrap(),
        ],
        &[],
    );
    let Some(none) = curl("GET", &format!("{base}/learned"), &[], None) else {
        return;
    };
    assert_eq!(none.status, 200);
    let none: serde_json::Value = serde_json::from_str(&none.body).unwrap();
    assert_eq!(none["learned"], serde_json::json!([]), "{none}");
    assert!(
        none["note"].as_str().unwrap().contains("No row"),
        "it says why it is empty: {none}"
    );
    // Five at once against a sandbox that takes two: the rejections carry WB's
    // X-Ratelimit-Limit, and the proxy's client takes the sandbox's burst and narrows its rate.
    let url = format!("{base}/content/v2/object/all");
    let threads: Vec<_> = (0..5)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let auth = format!("Authorization: {KEY}");
                curl("GET", &url, &[&auth, "X-Mock-Delay: 0"], None).unwrap()
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let learned = curl("GET", &format!("{base}/learned"), &[], None).unwrap();
    let learned: serde_json::Value = serde_json::from_str(&learned.body).unwrap();
    let rows = &learned["learned"];
    let row = &rows[0];
    assert_eq!(row["group"], "content-api.kontent", "{rows}");
    assert_eq!(
        (row["burst"].as_u64(), row["catalog_burst"].as_u64()),
        (Some(2), Some(5))
    );
    assert!(row["interval_ms"].as_f64().unwrap() > 200.0, "{rows}");
    assert_eq!(row["from"], "headers");
    // The sandbox refused some of the five, and judges the proxy's retries: they waited what the
    // refusals announced.
    let report = conduct(&sandbox_base);
    assert_eq!(report["verdict"], "clean", "{report}");
    assert!(
        report["keys"][0]["groups"][0]["refused"].as_u64().unwrap() >= 1,
        "{report}"
    );
    let m = curl("GET", &format!("{base}/metrics"), &[], None).unwrap();
    assert!(
        m.body
            .lines()
            .any(|l| l.starts_with("apistend_client_quota_burst")
                && l.contains("content-api.kontent")
                && l.ends_with(" 2")),
        "{}",
        m.body
    );
    // What it learned can be forgotten: the catalog's quota holds again.
    let forgot = curl("DELETE", &format!("{base}/learned"), &[], None).unwrap();
    assert_eq!(forgot.status, 200, "{}", forgot.body);
    assert!(forgot.body.contains("\"forgotten\":1"), "{}", forgot.body);
    let after = curl("GET", &format!("{base}/learned"), &[], None).unwrap();
    assert!(after.body.contains("\"learned\":[]"), "{}", after.body);
    // Families of the groups it used only (WB has hundreds), and its own waits are no denials.
    let bursts = m
        .body
        .lines()
        .filter(|l| l.starts_with("apistend_client_quota_burst{"))
        .count();
    assert_eq!(bursts, 1, "{}", m.body);
    assert!(
        !m.body.contains("apistend_limiter_decisions_total"),
        "{}",
        m.body
    );
    assert!(
        m.body.contains("apistend_client_local_wait_seconds"),
        "{}",
        m.body
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_call_that_would_wait_past_the_ceiling_is_refused_locally_with_retry_after() {
    let quota = "[ozon.groups.client]\nburst = 1\ninterval_ms = 1000\n";
    let (_s, sandbox_base, dir) = sandbox("proxy-refused", "");
    let file = dir.join("proxy.toml");
    std::fs::write(&file, quota).unwrap();
    let upstream = format!("{sandbox_base}/ozon");
    // The wait ceiling at its least: one interval + 5 s.
    let overrides = file.to_str().unwrap();
    let (_p, base) = ozon_proxy(
        &upstream,
        &["--overrides", overrides],
        &[("WB_API_RATE_LIMIT_MAX_WAIT_MS", "0")],
    );
    if Command::new("curl").arg("--version").output().is_err() {
        assert!(!apistend_testkit::in_ci(), "curl is needed in CI");
        return;
    }
    // Ten at once against one per second: the ceiling (one interval + 5 s) lets about six
    // through; the others are refused without being sent.
    let url = format!("{base}/v2/warehouse/list");
    let threads: Vec<_> = (0..10)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let h = ozon_headers();
                let h: Vec<&str> = h.iter().map(String::as_str).collect();
                curl("POST", &url, &h, Some(WAREHOUSES)).unwrap()
            })
        })
        .collect();
    let answers: Vec<Answer> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let refused: Vec<&Answer> = answers.iter().filter(|a| a.status == 429).collect();
    assert!(answers.iter().any(|a| a.status == 200));
    assert!(
        !refused.is_empty(),
        "none refused: {:?}",
        answers.iter().map(|a| a.status).collect::<Vec<_>>()
    );
    for a in &refused {
        assert!(
            a.header("retry-after")
                .is_some_and(|v| v.parse::<u64>().unwrap() >= 1)
        );
        assert!(a.body.contains("refused locally"), "{}", a.body);
        assert!(a.header("x-apistend-waited-ms").is_some());
    }
    assert_eq!(sandbox_429s(&sandbox_base), 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// A fake upstream that answers every request with headers promising 100 bytes, sends 3, and
/// closes: a reset mid-body.
fn resetting_upstream() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().take(20) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
        }
    });
    format!("http://{addr}")
}

#[test]
fn bad_input_gets_a_clear_answer_and_nothing_sticks() {
    let (_s, sandbox_base, dir) = sandbox("proxy-bad", "");
    let upstream = format!("{sandbox_base}/ozon");
    let limits = ["--max-body-bytes", "64", "--read-timeout-s", "1"];
    let (_p, base) = ozon_proxy(&upstream, &limits, &[]);
    let h = ozon_headers();
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let url = format!("{base}/v2/warehouse/list");
    // Oversize body: 413, said by the proxy.
    let Some(a) = curl("POST", &url, &h, Some(&"x".repeat(1000))) else {
        return;
    };
    assert_eq!(a.status, 413, "{}", a.body);
    assert!(a.body.contains("apistend proxy"), "{}", a.body);
    // A slow client: headers, then nothing of the announced body: 408 within the read timeout.
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /v2/warehouse/list HTTP/1.1\r\nHost: {addr}\r\nClient-Id: 1\r\nApi-Key: {KEY}\r\nContent-Length: 40\r\n\r\n{{"
    )
    .unwrap();
    let mut got = String::new();
    let _ = s.read_to_string(&mut got);
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    // The proxy still serves.
    let a = curl("POST", &url, &h, Some(WAREHOUSES)).unwrap();
    assert_eq!(a.status, 200, "{}", a.body);

    // Unreachable upstream: 502 naming it, quickly.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let (_d, dbase) = ozon_proxy(&dead_url, &[], &[("WB_API_RETRY_BASE_MS", "10")]);
    let a = warehouses(&dbase).unwrap();
    assert_eq!(a.status, 502, "{}", a.body);
    assert!(
        a.body.contains("upstream unreachable") && a.body.contains(&dead_url),
        "{}",
        a.body
    );

    // A status HTTP does not name goes on with its reason phrase (Yandex Market's 420: a
    // client that reads the status line sees what the service sends).
    let (calm, _) = fake_upstream(Reply::EnhanceYourCalm);
    let (_c, cbase) = ozon_proxy(&calm, &[], &[]);
    let caddr = cbase.trim_start_matches("http://");
    let mut s = TcpStream::connect(caddr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /v2/warehouse/list HTTP/1.1\r\nHost: {caddr}\r\nClient-Id: 1\r\nApi-Key: {KEY}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .unwrap();
    let mut got = String::new();
    let _ = s.read_to_string(&mut got);
    assert!(
        got.starts_with("HTTP/1.1 420 Enhance Your Calm\r\n"),
        "{got}"
    );

    // An upstream that resets mid-body: the answer streams through as it came (its head, and
    // the body cut where the upstream cut it, as nginx and Envoy pass it on), and the next
    // request is answered too.
    let reset = resetting_upstream();
    let (_r, rbase) = ozon_proxy(&reset, &[], &[("WB_API_RETRY_BASE_MS", "10")]);
    for _ in 0..2 {
        let a = warehouses(&rbase).unwrap();
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body, "abc");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn several_services_by_prefix_and_a_path_of_none_is_404() {
    let (_s, sandbox_base, dir) = sandbox("proxy-multi", "");
    let (_p, base) = proxy(
        &[
            "--service",
            "wb",
            "--service",
            "ozon",
            "--service",
            "moysklad",
            "--upstream",
            &sandbox_base,
        ],
        &[],
    );
    let h = ozon_headers();
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let Some(a) = curl(
        "POST",
        &format!("{base}/ozon/v2/warehouse/list"),
        &h,
        Some(WAREHOUSES),
    ) else {
        return;
    };
    // Several services, the upstream an origin: each request carries its service's real host,
    // by which the sandbox routes it.
    assert_eq!(a.status, 200, "{}", a.body);
    let auth = format!("Authorization: {KEY}");
    let a = curl(
        "GET",
        &format!("{base}/wb/api/v3/warehouses"),
        &[&auth, "X-Mock-Delay: 0"],
        None,
    )
    .unwrap();
    assert_eq!(a.status, 200, "{}", a.body);
    // curl names no encoding; MoySklad answers 415 to such a request, so the proxy asks for
    // gzip (and decodes what comes back) where its caller named none.
    let bearer = format!("Authorization: Bearer {KEY}");
    let a = curl(
        "GET",
        &format!("{base}/moysklad/api/remap/1.2/entity/product"),
        &[&bearer, "X-Mock-Delay: 0"],
        None,
    )
    .unwrap();
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(a.body.contains("\"meta\""), "{}", a.body);
    let a = curl("GET", &format!("{base}/nothing/here"), &[], None).unwrap();
    assert_eq!(a.status, 404, "{}", a.body);
    assert!(a.body.contains("no service"), "{}", a.body);
    let _ = std::fs::remove_dir_all(dir);
}

/// How a fake upstream answers every request it reads.
#[derive(Clone, Copy)]
enum Reply {
    /// A 200 promising 100 bytes, 3 sent, then the connection closed.
    ResetMidBody,
    /// Nothing, for 6 s.
    Silent,
    /// A 500.
    ServerError,
    /// A 200 of this many bytes.
    Huge(usize),
    /// Yandex Market's 420, with its reason phrase.
    EnhanceYourCalm,
}

/// A fake upstream answering with `reply`, and the count of requests it has received.
fn fake_upstream(reply: Reply) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for s in l.incoming().take(50) {
            let Ok(mut s) = s else { continue };
            let counted = std::sync::Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                if s.read(&mut buf).unwrap_or(0) == 0 {
                    return;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                match reply {
                    Reply::ResetMidBody => {
                        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
                    }
                    Reply::Silent => std::thread::sleep(Duration::from_secs(6)),
                    Reply::ServerError => {
                        let _ = s.write_all(
                            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                        );
                    }
                    Reply::EnhanceYourCalm => {
                        let _ = s.write_all(
                            b"HTTP/1.1 420 Enhance Your Calm\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                        );
                    }
                    Reply::Huge(n) => {
                        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n");
                        let _ = s.write_all(head.as_bytes());
                        let piece = vec![b'x'; 1 << 16];
                        let mut left = n;
                        while left > 0 {
                            let k = left.min(piece.len());
                            if s.write_all(piece.get(..k).unwrap()).is_err() {
                                return;
                            }
                            left -= k;
                        }
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

/// RFC 9110 §9.2.2: a write that may have reached the service is never sent again — not after a
/// reset mid-answer, a timeout or a 5xx — while a read (Ozon's `POST …/list`) is retried after a
/// 5xx; the deadline counts the whole request, not each try.
#[test]
fn a_write_reaches_the_upstream_once_whatever_fails() {
    use std::sync::atomic::Ordering;
    let h = ozon_headers();
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let fast = [("WB_API_RETRY_BASE_MS", "10")];

    let (up, seen) = fake_upstream(Reply::ResetMidBody);
    let (_p, base) = ozon_proxy(&up, &[], &fast);
    let Some(a) = curl("POST", &format!("{base}/v3/product/import"), &h, Some("{}")) else {
        return;
    };
    assert_eq!(
        a.status, 200,
        "the head passes through as it came: {}",
        a.body
    );
    assert!(a.body.len() < 100, "the body is cut as the upstream cut it");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "a reset mid-answer: one copy"
    );

    let (up, seen) = fake_upstream(Reply::Silent);
    let (_p, base) = ozon_proxy(&up, &["--upstream-timeout-s", "2"], &fast);
    for path in ["/v3/product/import", "/v3/product/list"] {
        let started = Instant::now();
        let a = curl("POST", &format!("{base}{path}"), &h, Some("{}")).unwrap();
        assert_eq!(a.status, 504, "{path}: {}", a.body);
        assert!(
            started.elapsed() < Duration::from_millis(3500),
            "{path}: the deadline is the request's, not each try's: {:?}",
            started.elapsed()
        );
    }
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "a slow upstream: one copy each"
    );

    let (up, seen) = fake_upstream(Reply::ServerError);
    let (_p, base) = ozon_proxy(&up, &[], &fast);
    let a = curl("POST", &format!("{base}/v3/product/import"), &h, Some("{}")).unwrap();
    assert_eq!(a.status, 500, "{}", a.body);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "a 5xx of a write: not repeated"
    );
    let a = curl("POST", &format!("{base}/v3/product/list"), &h, Some("{}")).unwrap();
    assert_eq!(a.status, 500, "{}", a.body);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        4,
        "a 5xx of a read: three tries in all"
    );
}

/// A 300 MB answer streams through: the proxy's memory stays within 64 MB of its idle size.
#[test]
fn a_large_answer_streams_through_in_bounded_memory() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("SKIP: no /proc to read the proxy's memory from");
        return;
    }
    const SIZE: usize = 300 << 20;
    let (up, _seen) = fake_upstream(Reply::Huge(SIZE));
    let (p, base) = ozon_proxy(&up, &[], &[]);
    let pid = p.0.id();
    let idle = apistend_testkit::rss_kib(pid);
    let addr = base.trim_start_matches("http://").to_owned();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(apistend_testkit::rss_kib(pid));
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /v3/product/list HTTP/1.1\r\nHost: {addr}\r\nClient-Id: 1\r\nApi-Key: {KEY}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .unwrap();
    let mut total = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = watcher.join().unwrap();
    assert!(total > SIZE, "the whole answer came through: {total} bytes");
    eprintln!("proxy RSS idle {idle} KiB, peak {peak} KiB while streaming {SIZE} bytes");
    assert!(
        peak.saturating_sub(idle) < 64 * 1024,
        "idle {idle} KiB, peak {peak} KiB"
    );
}

/// A head that never completes is closed after the head timeout, 1 000 of them at once; a
/// malformed chunked body is a 400, not a 413.
#[test]
fn half_sent_heads_are_closed_and_bad_framing_is_a_400() {
    let (_s, sandbox_base, dir) = sandbox("proxy-heads", "");
    let upstream = format!("{sandbox_base}/ozon");
    let (p, base) = ozon_proxy(&upstream, &["--head-timeout-s", "1"], &[]);
    let addr = base.trim_start_matches("http://").to_owned();
    let mut held: Vec<TcpStream> = (0..1000)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET /v3/product/list HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(2500));
    let mut closed = 0;
    for s in &mut held {
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut b = [0u8; 64];
        if matches!(s.read(&mut b), Ok(0) | Err(_)) {
            closed += 1;
        }
    }
    assert_eq!(closed, 1000);
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    if let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", p.0.id())) {
        let n = fds.count();
        assert!(n < 100, "the proxy holds {n} file descriptors");
    }

    for body in ["zz\r\nabc\r\n0\r\n\r\n", "3\nabc\n0\n\n"] {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "POST /v3/product/list HTTP/1.1\r\nHost: {addr}\r\nClient-Id: 1\r\nApi-Key: {KEY}\r\nTransfer-Encoding: chunked\r\n\r\n{body}"
        )
        .unwrap();
        let mut got = String::new();
        let _ = s.read_to_string(&mut got);
        assert!(got.starts_with("HTTP/1.1 400"), "{body:?}: {got}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// One request of a service through its proxy: method, path, headers, body.
type Sent = (&'static str, String, Vec<String>, Option<&'static str>);

/// A request each of the other six services takes, with the demo key.
fn one_of_each() -> Vec<(&'static str, Sent)> {
    let bearer = format!("Authorization: Bearer {KEY}");
    let delay = "X-Mock-Delay: 0".to_owned();
    vec![
        (
            "ozon",
            (
                "POST",
                "/v2/warehouse/list".into(),
                ozon_headers(),
                Some(WAREHOUSES),
            ),
        ),
        (
            "amocrm",
            (
                "GET",
                "/api/v4/leads".into(),
                vec![bearer.clone(), delay.clone()],
                None,
            ),
        ),
        (
            "apify",
            (
                "GET",
                "/v2/users/me".into(),
                vec![bearer.clone(), delay.clone()],
                None,
            ),
        ),
        (
            "ymarket",
            (
                "GET",
                "/v2/campaigns".into(),
                vec![format!("Api-Key: {KEY}"), delay.clone()],
                None,
            ),
        ),
        (
            "moysklad",
            (
                "GET",
                "/api/remap/1.2/entity/product".into(),
                vec![bearer, delay.clone()],
                None,
            ),
        ),
        (
            "b24",
            (
                "POST",
                format!("/rest/1/{KEY}/crm.deal.list"),
                vec![delay],
                None,
            ),
        ),
    ]
}

/// The tokens a request of `service`'s `group` takes, as its definition gives them.
fn weight_of(service: &str, group: &str) -> u32 {
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let svc = catalog
        .service(catalog.service_id(service).unwrap())
        .unwrap();
    let g = svc.groups.iter().position(|x| x.id == group).unwrap();
    svc.operations
        .iter()
        .find(|o| o.groups.contains(&g))
        .map_or(1, |o| o.weight)
}

/// Every other service through `apistend proxy`, five requests at once into a sandbox stricter
/// than the proxy believes: the sandbox refuses some, and its verdict on the proxy's retries is
/// clean (they waited what each refusal announced).
#[test]
fn through_the_proxy_every_service_keeps_a_clean_conduct_against_a_stricter_sandbox() {
    let groups = [
        ("ozon", "client"),
        ("amocrm", "integration"),
        ("apify", "users-me"),
        ("ymarket", "getCampaigns"),
        ("moysklad", "user"),
        ("b24", "portal"),
    ];
    // Two requests at once, then one per 600 ms, whatever a request weighs (MoySklad's 4, as
    // its definition says).
    let quota = |s: &str, g: &str, at_once: u32, ms: u32| {
        let w = weight_of(s, g);
        format!(
            "[{s}.groups.{g}]\nburst = {}\ninterval_ms = {}\n",
            at_once * w,
            ms / w
        )
    };
    let strict: String = groups.iter().map(|(s, g)| quota(s, g, 2, 600)).collect();
    let loose: String = groups.iter().map(|(s, g)| quota(s, g, 10, 100)).collect();
    let (_s, sandbox_base, dir) = sandbox("proxy-conduct", &strict);
    let model = dir.join("model.toml");
    std::fs::write(&model, loose).unwrap();
    let model = model.to_str().unwrap().to_owned();
    if curl("GET", &format!("{sandbox_base}/healthz"), &[], None).is_none() {
        return;
    }
    let runs: Vec<_> = one_of_each()
        .into_iter()
        .map(|(service, (method, path, headers, body))| {
            let (up, model) = (format!("{sandbox_base}/{service}"), model.clone());
            std::thread::spawn(move || {
                let args = [
                    "--service",
                    service,
                    "--upstream",
                    &up,
                    "--overrides",
                    &model,
                ];
                let (_p, base) = proxy(&args, &[]);
                let sends: Vec<_> = (0..5)
                    .map(|_| {
                        let (url, headers) = (format!("{base}{path}"), headers.clone());
                        std::thread::spawn(move || {
                            let h: Vec<&str> = headers.iter().map(String::as_str).collect();
                            curl(method, &url, &h, body).unwrap().status
                        })
                    })
                    .collect();
                let statuses: Vec<u16> = sends.into_iter().map(|t| t.join().unwrap()).collect();
                (service, statuses)
            })
        })
        .collect();
    for r in runs {
        let (service, statuses) = r.join().unwrap();
        assert!(statuses.iter().all(|s| *s < 500), "{service}: {statuses:?}");
    }
    let report = conduct(&sandbox_base);
    assert_eq!(report["verdict"], "clean", "{report}");
    let groups = report["keys"][0]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 6, "{report}");
    // Most of them met refusals (MoySklad's may not: its tokens-left header can teach the proxy
    // the stricter quota first).
    let refused: u64 = groups.iter().map(|g| g["refused"].as_u64().unwrap()).sum();
    assert!(refused >= 6, "the sandbox refused some: {report}");
    let _ = std::fs::remove_dir_all(dir);
}
