//! The request journal (`…/requests`): a record field by field with its secrets masked, both
//! bounds, the filters, the count, the wait-for and clear; off per sandbox; two instances on
//! one Redis listing each other's requests.

use std::time::Duration;

use crate::support::{self, TestServer};

use apistend_sandbox::{JournalBounds, SandboxConfig};
use apistend_testkit::RedisServer;
use serde_json::{Value, json};

const TOKEN: &str = "journal-test-admin-token";
const KEY: &str = "journal-key-0123456789";

/// WB's `/ping` allows 3 requests at once: more here.
const WIDE: &str = "[wb.groups.\"common-api.get.ping\"]\nburst = 100000\ninterval_ms = 1\n";

fn tuned(c: SandboxConfig, bounds: JournalBounds) -> SandboxConfig {
    let mut c = c
        .with_admin_token(TOKEN)
        .with_demo_key(KEY)
        .with_overrides(apistend_catalog::Overrides::from_toml(WIDE).unwrap());
    c.journal = bounds;
    c
}

fn bounds(requests: usize, bytes: usize, body_bytes: usize) -> JournalBounds {
    let mut b = JournalBounds::default();
    b.requests = requests;
    b.bytes = bytes;
    b.body_bytes = body_bytes;
    b
}

async fn start(b: JournalBounds) -> TestServer {
    support::start(|c| tuned(c, b)).await
}

/// `/REST` of a path under `…/sandboxes`, or nothing for the list itself.
fn slash(rest: &str) -> String {
    if rest.is_empty() {
        String::new()
    } else {
        format!("/{rest}")
    }
}

/// `GET …/sandboxes/REST` as JSON (asserting a 200).
async fn admin(s: &TestServer, path_and_query: &str) -> Value {
    let r = support::client()
        .get(format!(
            "{}/api/v1/sandboxes{}",
            s.base,
            slash(path_and_query)
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{path_and_query}");
    r.json().await.unwrap()
}

async fn demo_id(s: &TestServer) -> String {
    let all = admin(s, "").await;
    all[0]["id"].as_str().unwrap().to_owned()
}

/// `GET /wb/ping` with `key`, and `body` (validation off: a body on a GET).
async fn ping(s: &TestServer, key: &str, body: &str) -> u16 {
    ping_at(&s.base, key, body).await
}

async fn ping_at(base: &str, key: &str, body: &str) -> u16 {
    support::client()
        .get(format!("{base}/wb/ping"))
        .header("Authorization", key)
        .header("X-Mock-Delay", "0")
        .header("X-Mock-Validation", "off")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// `DELETE …/requests` on `s`: its status.
async fn clear(s: &TestServer, id: &str) -> u16 {
    support::client()
        .delete(format!("{}/api/v1/sandboxes/{id}/requests", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_record_holds_the_request_its_answer_and_the_decision_with_secrets_masked() {
    let s = start(bounds(1000, 64 << 20, 64)).await;
    let id = demo_id(&s).await;
    let sent = json!({"filter": {"visibility": "ALL"}, "limit": 2});
    let r = support::client()
        .post(format!("{}/ozon/v3/product/list?trace=1", s.base))
        .header("Client-Id", "777")
        .header("Api-Key", KEY)
        .header("X-Mock-Delay", "0")
        .json(&sent)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let answer = r.text().await.unwrap();
    let page = admin(&s, &format!("{id}/requests")).await;
    assert_eq!(page["total"], 1);
    let rec = &page["requests"][0];
    assert_eq!(rec["key"], KEY);
    assert_eq!(rec["service"], "ozon");
    assert_eq!(rec["operation"], "POST /v3/product/list");
    assert_eq!(rec["group"], "client");
    let q = &rec["request"];
    assert_eq!(q["method"], "POST");
    assert_eq!(q["path"], "/ozon/v3/product/list");
    assert_eq!(q["query"], "trace=1");
    assert_eq!(q["headers"]["api-key"], "***6789", "the key masked: {q}");
    assert_eq!(q["headers"]["client-id"], "777");
    assert_eq!(q["headers"]["content-type"], "application/json");
    let text = sent.to_string();
    assert_eq!(q["body_bytes"], text.len());
    assert_eq!(q["body"], text, "64 bytes kept: the body whole");
    assert_eq!(q["body_truncated"], false);
    let a = &rec["response"];
    assert_eq!(a["status"], 200);
    assert_eq!(a["headers"]["content-type"], "application/json");
    assert_eq!(a["body_bytes"], answer.len());
    assert_eq!(a["body_truncated"], answer.len() > 64);
    let kept = a["body"].as_str().unwrap();
    assert!(answer.starts_with(kept) && kept.len() <= 64, "{kept}");
    let d = &rec["decision"];
    assert_eq!(
        (d["limit"].as_u64(), d["remaining"].as_u64()),
        (Some(50), Some(49))
    );
    assert_eq!(
        (d["refused"].clone(), d["wait_ms"].clone()),
        (Value::Null, Value::Null)
    );
    let now = apistend_answers::clock::unix_now_ms();
    let at = rec["at_ms"].as_i64().unwrap();
    assert!((now - 10_000..=now).contains(&at), "{at} {now}");
    assert!(rec["at"].as_str().unwrap().ends_with('Z'));
    assert!(rec["latency_us"].as_u64().unwrap() > 0);

    // A Bitrix24 webhook carries the key in its path: masked there too.
    let r = support::client()
        .post(format!("{}/b24/rest/1/{KEY}/crm.deal.list", s.base))
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let page = admin(&s, &format!("{id}/requests?service=b24")).await;
    let rec = &page["requests"][0];
    assert_eq!(rec["request"]["path"], "/b24/rest/1/***6789/crm.deal.list");
    assert_eq!(rec["operation"], "POST /rest/crm.deal.list");
    let mut shown = rec.clone();
    shown.as_object_mut().unwrap().remove("key");
    assert!(
        !shown.to_string().contains(KEY),
        "masked everywhere but `key`: {shown}"
    );

    // A refusal: its kind, reason and the wait it announced (WB's X-Ratelimit-Retry).
    let r = support::client()
        .get(format!("{}/wb/ping", s.base))
        .header("Authorization", KEY)
        .header("X-Mock-Scenario", "rate_limit")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let retry: u64 = r.headers()["x-ratelimit-retry"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let page = admin(&s, &format!("{id}/requests?refused=any")).await;
    assert_eq!(page["total"], 1);
    let d = &page["requests"][0]["decision"];
    assert_eq!(d["refused"], "scenario");
    assert_eq!(d["scenario"], "rate_limit");
    assert_eq!(d["wait_ms"].as_u64(), Some(retry * 1000));
}

#[tokio::test]
async fn each_sandbox_keeps_its_latest_requests_and_all_keep_within_the_byte_budget() {
    // Three requests a sandbox.
    let s = start(bounds(3, 64 << 20, 1024)).await;
    let id = demo_id(&s).await;
    for i in 0..5 {
        assert_eq!(ping(&s, KEY, &format!("request {i}")).await, 200);
    }
    let page = admin(&s, &format!("{id}/requests")).await;
    let bodies: Vec<&str> = page["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["request"]["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["request 2", "request 3", "request 4"]);

    // 30 000 bytes in all: two sandboxes of requests of about 5 KB each as counted (a 3 KB
    // body, its head and its answer: a 4 KiB chunk each; its record; the allocator's share).
    let s = start(bounds(1000, 30_000, 4096)).await;
    let a = demo_id(&s).await;
    let (b, b_key) = second_sandbox(&s).await;
    let big = "x".repeat(3000);
    for _ in 0..5 {
        assert_eq!(ping(&s, KEY, &big).await, 200);
    }
    for _ in 0..5 {
        assert_eq!(ping(&s, &b_key, &big).await, 200);
    }
    let kept_a = admin(&s, &format!("{a}/requests")).await["total"]
        .as_u64()
        .unwrap();
    let kept_b = admin(&s, &format!("{b}/requests")).await["total"]
        .as_u64()
        .unwrap();
    assert_eq!(kept_b, 5, "the newest fit");
    assert!(
        kept_a < 5,
        "the oldest, of the other sandbox, went first: {kept_a}"
    );
    let metrics = support::metrics(&s.base).await;
    let bytes: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("apistend_journal_bytes "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes <= 30_000.0, "{bytes}");
}

/// A second sandbox and its key.
async fn second_sandbox(s: &TestServer) -> (String, String) {
    let c = support::client();
    let made: Value = c
        .post(format!("{}/api/v1/sandboxes", s.base))
        .bearer_auth(TOKEN)
        .json(&json!({"name": "second"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = made["id"].as_str().unwrap().to_owned();
    let key = made["keys"][0].as_str().unwrap().to_owned();
    (id, key)
}

#[tokio::test]
async fn filters_count_wait_for_and_clear() {
    let s = start(JournalBounds::default()).await;
    let id = demo_id(&s).await;
    let c = support::client();
    let since = apistend_answers::clock::unix_now_ms();
    for (name, price) in [("first", 1), ("second", 2)] {
        let r = c
            .post(format!("{}/amocrm/api/v4/leads", s.base))
            .bearer_auth(KEY)
            .header("X-Mock-Delay", "0")
            .json(&json!([{"name": name, "price": price}]))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    assert_eq!(ping(&s, KEY, "").await, 200);
    assert_eq!(
        ping(&s, "no-such-key-000000", "").await,
        401,
        "no sandbox's: not kept"
    );
    let count = |q: &str| {
        let s = &s;
        let id = &id;
        let q = q.to_owned();
        async move { admin(s, &format!("{id}/requests/count?{q}")).await["count"].clone() }
    };
    assert_eq!(count("").await, 3);
    assert_eq!(count("operation=POST%20/api/v4/leads").await, 2);
    assert_eq!(count("operation=/api/v4/leads").await, 2);
    assert_eq!(count("path=/wb/*").await, 1);
    assert_eq!(count("path=/wb/ping").await, 1);
    assert_eq!(count(&format!("key={KEY}")).await, 3);
    assert_eq!(count("key=other").await, 0);
    assert_eq!(count("service=wb&status=2xx").await, 1);
    assert_eq!(count("status=429").await, 0);
    assert_eq!(count("refused=none").await, 3);
    assert_eq!(count(&format!("since_ms={since}")).await, 3);
    assert_eq!(count(&format!("since_ms={}", since + 3_600_000)).await, 0);
    assert_eq!(count("body_path=$[0].name&body_value=second").await, 1);
    assert_eq!(count("body_path=$[?@.price%20%3E%201]").await, 1);
    assert_eq!(count("body_path=$[0].price&body_value=1").await, 1);
    assert_eq!(count("body_path=$.nothing").await, 0);

    let page = admin(&s, &format!("{id}/requests?order=newest&limit=1&offset=1")).await;
    assert_eq!(
        (page["total"].as_u64(), page["offset"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(
        page["requests"][0]["request"]["body"],
        r#"[{"name":"second","price":2}]"#
    );

    for bad in [
        "status=abc",
        "refused=late",
        "body_path=$[",
        "since_ms=x",
        "limit=0",
        "nope=1",
    ] {
        let r = c
            .get(format!("{}/api/v1/sandboxes/{id}/requests?{bad}", s.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{bad}");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
    }

    // The wait-for: two requests more, sent while it waits.
    let base = s.base.clone();
    let later = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        for _ in 0..2 {
            assert_eq!(ping_at(&base, KEY, "").await, 200);
        }
    });
    let started = std::time::Instant::now();
    let waited = admin(
        &s,
        &format!("{id}/requests/wait?path=/wb/ping&count=3&timeout_ms=9000"),
    )
    .await;
    assert_eq!(waited, json!({"reached": true, "count": 3}));
    assert!(started.elapsed() < Duration::from_secs(9));
    later.await.unwrap();
    let waited = admin(
        &s,
        &format!("{id}/requests/wait?path=/wb/ping&count=4&timeout_ms=200"),
    )
    .await;
    assert_eq!(waited, json!({"reached": false, "count": 3}));

    // The metrics' conduct gauges follow the journal: made again when it changed, gone with it.
    let pings = || async {
        support::metrics(&s.base)
            .await
            .lines()
            .filter(|l| l.starts_with("apistend_conduct_requests{service=\"wb\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum::<u64>()
    };
    let before = pings().await;
    assert!(before >= 3, "{before}");
    assert_eq!(ping(&s, KEY, "").await, 200);
    assert_eq!(pings().await, before + 1);
    assert_eq!(clear(&s, &id).await, 204);
    assert_eq!(count("").await, 0);
    assert_eq!(pings().await, 0, "a cleared journal judges nothing");
    let r = c
        .get(format!("{}/api/v1/sandboxes/nope/requests", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn a_sandbox_can_keep_no_journal_and_so_can_the_server() {
    let s = start(JournalBounds::default()).await;
    let id = demo_id(&s).await;
    let r = support::client()
        .put(format!("{}/api/v1/sandboxes/{id}/settings", s.base))
        .bearer_auth(TOKEN)
        .json(&json!({"journal": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(ping(&s, KEY, "").await, 200);
    assert_eq!(admin(&s, &format!("{id}/requests")).await["total"], 0);

    let s = start(bounds(0, 64 << 20, 1024)).await;
    let id = demo_id(&s).await;
    assert_eq!(ping(&s, KEY, "").await, 200);
    assert_eq!(admin(&s, &format!("{id}/requests")).await["total"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_redis_list_each_others_requests() {
    let Some(redis) = RedisServer::start("two_instances_on_one_redis_list_each_others_requests")
    else {
        return;
    };
    let url = redis.url();
    let a = support::start(|c| tuned(c, JournalBounds::default()).with_redis(&url)).await;
    let b = support::start(|c| tuned(c, JournalBounds::default()).with_redis(&url)).await;
    let id = demo_id(&a).await;
    assert_eq!(demo_id(&b).await, id, "one sandbox, shared");
    assert_eq!(ping(&a, KEY, "on a").await, 200);
    assert_eq!(ping(&b, KEY, "on b").await, 200);
    // Written off the request path: each instance's own are written before it answers, the
    // other's within a batch.
    let waited = admin(&a, &format!("{id}/requests/wait?count=2&timeout_ms=5000")).await;
    assert_eq!(waited["reached"], true, "{waited}");
    for s in [&a, &b] {
        let page = admin(s, &format!("{id}/requests")).await;
        let bodies: Vec<&str> = page["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["request"]["body"].as_str().unwrap())
            .collect();
        assert_eq!(bodies.len(), 2, "{page}");
        assert!(
            bodies.contains(&"on a") && bodies.contains(&"on b"),
            "{bodies:?}"
        );
        let instances: std::collections::BTreeSet<&str> = page["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().split('-').next().unwrap())
            .collect();
        assert_eq!(instances.len(), 2, "{instances:?}");
    }
    // A wait on one instance sees a request the other answers.
    let base = a.base.clone();
    let later = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(ping_at(&base, KEY, "").await, 200);
    });
    let waited = admin(&b, &format!("{id}/requests/wait?count=3&timeout_ms=5000")).await;
    assert_eq!(waited["reached"], true, "{waited}");
    later.await.unwrap();
    assert_eq!(clear(&b, &id).await, 204);
    assert_eq!(admin(&a, &format!("{id}/requests/count")).await["count"], 0);
}
