//! What the dashboard (`/ui`) reads: its embedded files, the sandbox list filtered and paged on
//! the server, the catalog's services, and the live feed of a sandbox (server-sent events:
//! bucket levels, request rates, refusals with the answer sent), which ends when the sandbox
//! shuts down. The page itself is driven in a real browser by the cli's client-library tests.

use crate::support;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

const TOKEN: &str = "dashboard-admin-token";

#[tokio::test]
async fn the_page_is_embedded_and_served_without_the_token_under_a_strict_policy() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = c.get(format!("{}/ui", s.base)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(r.headers()["location"], "/ui/");
    for (path, media, has) in [
        ("/ui/", "text/html", "/ui/app.js"),
        ("/ui/app.js", "text/javascript", "/api/v1/sandboxes"),
        ("/ui/style.css", "text/css", ".bar"),
    ] {
        let r = c.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(media)
        );
        assert!(
            r.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("default-src 'self'")
        );
        assert!(r.text().await.unwrap().contains(has), "{path}");
    }
    let r = c
        .get(format!("{}/ui/secrets.txt", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    // Plain text under the same policy as the files, the name asked for not echoed.
    let r = c
        .get(format!("{}/ui/%3Cscript%3Ealert(1)%3C%2Fscript%3E", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert!(r.headers().contains_key("content-security-policy"));
    let body = r.text().await.unwrap();
    assert!(!body.contains("script") && !body.contains('<'), "{body}");
}

#[tokio::test]
async fn the_sandbox_list_is_filtered_and_paged_on_the_server() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = support::client();
    for i in 0..7 {
        let r = c
            .post(format!("{}/api/v1/sandboxes", s.base))
            .bearer_auth(TOKEN)
            .json(&json!({"name": format!("shop-{i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
    }
    let page = |query: &'static str| {
        let c = c.clone();
        let url = format!("{}/api/v1/sandboxes?{query}", s.base);
        async move {
            let r = c.get(url).bearer_auth(TOKEN).send().await.unwrap();
            let status = r.status();
            let total = r
                .headers()
                .get("x-total-count")
                .map(|v| v.to_str().unwrap().parse::<usize>().unwrap());
            let v: Value = r.json().await.unwrap();
            (status, total, v)
        }
    };
    // The demo sandbox and seven shops.
    let (_, total, all) = page("").await;
    assert_eq!((total, all.as_array().unwrap().len()), (Some(8), 8));
    let (_, total, v) = page("q=SHOP&offset=5&limit=3").await;
    assert_eq!(total, Some(7), "the count of all that matched");
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shop-5", "shop-6"]);
    // A key finds its sandbox (exactly, whatever its case): the demo key is the demo sandbox's.
    let (_, total, v) = page("q=TEST-KEY").await;
    assert_eq!(total, Some(1), "{v}");
    assert_eq!(v[0]["keys"][0], "test-key");
    let (_, total, _) = page("q=test-ke").await;
    assert_eq!(total, Some(0), "a key matches whole, not by a part of it");
    let (status, _, v) = page("limit=many").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    let (status, _, _) = page("sort=name").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "unknown keys are refused");
}

/// Reads server-sent events from `r` until `want` says it has what it waits for.
async fn read_events(
    r: &mut reqwest::Response,
    mut want: impl FnMut(&str, &Value) -> bool,
) -> Vec<(String, Value)> {
    let mut buf = String::new();
    let mut seen = Vec::new();
    let read = async {
        while let Some(chunk) = r.chunk().await.unwrap() {
            buf.push_str(std::str::from_utf8(&chunk).unwrap());
            while let Some(cut) = buf.find("\n\n") {
                let block: String = buf.drain(..cut + 2).collect();
                let name = block
                    .lines()
                    .find_map(|l| l.strip_prefix("event: "))
                    .unwrap_or("message")
                    .to_owned();
                let data: String = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(&data).unwrap();
                let done = want(&name, &v);
                seen.push((name, v));
                if done {
                    return;
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(15), read)
        .await
        .unwrap_or_else(|_| panic!("the feed did not deliver; saw {seen:?}"));
    seen
}

/// A new sandbox whose Ozon `client` bucket holds `burst` tokens and refills one a minute: its
/// id and key.
async fn ozon_sandbox(base: &str, c: &reqwest::Client, burst: u32) -> (String, String) {
    let sb: Value = support::json(
        c.post(format!("{base}/api/v1/sandboxes"))
            .bearer_auth(TOKEN)
            .json(&json!({"name": "watched"})),
    )
    .await;
    let (id, key) = (sb["id"].as_str().unwrap(), sb["keys"][0].as_str().unwrap());
    let r = c
        .put(format!("{base}/api/v1/sandboxes/{id}/limits/ozon/client"))
        .bearer_auth(TOKEN)
        .json(&json!({"burst": burst, "interval_ms": 60000}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    (id.to_owned(), key.to_owned())
}

#[tokio::test]
async fn the_live_feed_shows_buckets_falling_rates_and_refusals_as_sent() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = support::client();
    let (id, key) = ozon_sandbox(&s.base, &c, 2).await;
    let (id, key) = (id.as_str(), key.as_str());

    let feed_url = format!(
        "{}/api/v1/sandboxes/{id}/events?service=ozon&group=client&interval_ms=200",
        s.base
    );
    let r = c.get(&feed_url).send().await.unwrap();
    assert_eq!(
        r.status(),
        StatusCode::UNAUTHORIZED,
        "the feed needs the token"
    );
    let mut feed = c.get(&feed_url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(feed.status(), StatusCode::OK);
    assert!(
        feed.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let first = read_events(&mut feed, |name, _| name == "buckets").await;
    let (_, b) = first.last().unwrap();
    assert_eq!(b["buckets"][0]["remaining"], 2, "full: {b}");
    assert_eq!(b["buckets"][0]["key"], key);

    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(support::ozon_list(&c, &s.base, key).await);
    }
    assert_eq!(statuses, [200, 200, 429]);
    let mut refused = None;
    let mut drained = false;
    let mut rates = (0, 0);
    read_events(&mut feed, |name, v| {
        match name {
            "refusal" => refused = Some(v.clone()),
            "buckets" => drained |= v["buckets"][0]["remaining"] == 0,
            "rates" => {
                for g in v["groups"].as_array().unwrap() {
                    rates.0 += g["answered"].as_u64().unwrap();
                    rates.1 += g["refused"].as_u64().unwrap();
                }
            }
            _ => {}
        }
        refused.is_some() && drained && rates.0 >= 3
    })
    .await;
    let refusal = refused.unwrap();
    assert_eq!(refusal["status"], 429);
    assert_eq!(refusal["service"], "ozon");
    assert_eq!(refusal["group"], "client");
    assert_eq!(refusal["path"], "/ozon/v3/product/list");
    assert!(
        refusal["body"].as_str().unwrap().contains("message"),
        "the body as sent: {refusal}"
    );
    assert!(refusal["headers"]["content-type"].is_string());
    assert_eq!(rates, (3, 1), "three requests, one refused");

    // A feed that asks for too much is told so; then the sandbox stops with one open.
    for (query, status) in [
        ("interval_ms=10", StatusCode::UNPROCESSABLE_ENTITY),
        ("limit=100000", StatusCode::UNPROCESSABLE_ENTITY),
        ("colour=red", StatusCode::BAD_REQUEST),
    ] {
        let r = c
            .get(format!("{}/api/v1/sandboxes/{id}/events?{query}", s.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), status, "{query}");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
    }
    let r = c
        .get(format!("{}/api/v1/sandboxes/sbx_none/events", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    tokio::time::timeout(Duration::from_secs(10), s.stop_keeping_dir())
        .await
        .expect("an open feed does not hold up the shutdown");
    let rest = tokio::time::timeout(Duration::from_secs(5), async {
        while feed.chunk().await.ok().flatten().is_some() {}
    })
    .await;
    assert!(rest.is_ok(), "the feed ended with the sandbox");
}

/// A request its description refuses is a refusal of the feed too: its status, the service's
/// body and the precise reason among its headers (docs/requests.md).
#[tokio::test]
async fn the_live_feed_shows_an_invalid_request_with_its_reason() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = support::client();
    let (id, key) = ozon_sandbox(&s.base, &c, 5).await;
    let feed_url = format!("{}/api/v1/sandboxes/{id}/events?service=ozon", s.base);
    let mut feed = c.get(&feed_url).bearer_auth(TOKEN).send().await.unwrap();
    read_events(&mut feed, |name, _| name == "buckets").await;
    let r = c
        .post(format!("{}/ozon/v3/product/list", s.base))
        .header("Client-Id", "1")
        .header("Api-Key", &key)
        .header("X-Mock-Delay", "0")
        .header("Content-Type", "application/json")
        .body(r#"{"limit": "many"}"#);
    assert_eq!(support::status(r).await, 400);
    let mut refused = None;
    read_events(&mut feed, |name, v| {
        if name == "refusal" {
            refused = Some(v.clone());
        }
        refused.is_some()
    })
    .await;
    let refusal = refused.unwrap();
    assert_eq!(refusal["status"], 400, "{refusal}");
    assert_eq!(refusal["path"], "/ozon/v3/product/list");
    let why = refusal["headers"]["x-apistend-invalid"].as_str().unwrap();
    assert!(
        why.starts_with("body.limit: 'many' does not match"),
        "{refusal}"
    );
    assert!(
        refusal["body"].as_str().unwrap().contains("\"code\":3"),
        "{refusal}"
    );
}

/// A feed opened after the traffic puts the buckets the traffic drained first (with no filter,
/// of every group of every service), each with its past from the request journal; in catalog
/// order it does not.
#[tokio::test]
async fn a_feed_opened_after_the_traffic_shows_the_drained_buckets_first_with_their_past() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = support::client();
    let (id, key) = ozon_sandbox(&s.base, &c, 3).await;
    let (id, key) = (id.as_str(), key.as_str());
    for _ in 0..4 {
        support::ozon_list(&c, &s.base, key).await;
    }
    let first_page = |order: &str| {
        let url = format!(
            "{}/api/v1/sandboxes/{id}/events?interval_ms=200&limit=5{order}",
            s.base
        );
        let c = c.clone();
        async move {
            let mut feed = c.get(url).bearer_auth(TOKEN).send().await.unwrap();
            assert_eq!(feed.status(), StatusCode::OK);
            let seen = read_events(&mut feed, |name, _| name == "buckets").await;
            seen.last().unwrap().1["buckets"].clone()
        }
    };
    let busy = first_page("").await;
    assert_eq!(busy[0]["service"], "ozon", "{busy}");
    assert_eq!(busy[0]["group"], "client", "{busy}");
    assert_eq!(busy[0]["remaining"], 0, "{busy}");
    assert!(busy[0]["last_request_ms"].is_u64(), "{busy}");
    let past: Vec<Vec<u64>> = serde_json::from_value(busy[0]["history"].clone()).unwrap();
    let levels: Vec<u64> = past.iter().map(|p| p[1]).collect();
    // The levels its requests left: 2, 1, 0 and a refusal at 0 (no refill in a minute's wait).
    assert_eq!(levels, [2, 1, 0, 0], "{busy}");
    assert!(past.windows(2).all(|w| w[0][0] <= w[1][0]), "in time order");
    assert!(busy[1].get("history").is_none(), "untouched: {busy}");

    let catalog = first_page("&order=catalog").await;
    assert_ne!(catalog[0]["service"], "ozon", "{catalog}");
    let r = c
        .get(format!(
            "{}/api/v1/sandboxes/{id}/events?order=busiest",
            s.base
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

/// Two instances on one Redis: the traffic goes to one, the feed is opened on the other, which
/// orders and draws the drained bucket from the shared journal and the shared buckets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_on_another_instance_draws_from_the_shared_journal() {
    let Some(redis) = apistend_testkit::RedisServer::start("dashboard_shared_journal") else {
        return;
    };
    let url = redis.url();
    let tune = |c: apistend_sandbox::SandboxConfig| {
        c.with_admin_token(TOKEN)
            .with_demo_key("dashboard-shared-key")
            .with_overrides(
                apistend_catalog::Overrides::from_toml(
                    "[ozon.groups.client]\nburst = 3\ninterval_ms = 60000\n",
                )
                .unwrap(),
            )
            .with_redis(&url)
    };
    let a = support::start(tune).await;
    let b = support::start(tune).await;
    let c = support::client();
    let all: Value = support::json(
        c.get(format!("{}/api/v1/sandboxes", a.base))
            .bearer_auth(TOKEN),
    )
    .await;
    let id = all[0]["id"].as_str().unwrap().to_owned();
    for _ in 0..4 {
        support::ozon_list(&c, &a.base, "dashboard-shared-key").await;
    }
    let waited: Value = support::json(
        c.get(format!(
            "{}/api/v1/sandboxes/{id}/requests/wait?count=4&timeout_ms=5000",
            b.base
        ))
        .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(waited["reached"], true, "{waited}");
    let mut feed = c
        .get(format!(
            "{}/api/v1/sandboxes/{id}/events?interval_ms=200&limit=3",
            b.base
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let seen = read_events(&mut feed, |name, _| name == "buckets").await;
    let rows = seen.last().unwrap().1["buckets"].clone();
    assert_eq!(
        (rows[0]["service"].as_str(), rows[0]["group"].as_str()),
        (Some("ozon"), Some("client")),
        "{rows}"
    );
    assert_eq!(rows[0]["remaining"], 0, "{rows}");
    let past: Vec<Vec<u64>> = serde_json::from_value(rows[0]["history"].clone()).unwrap();
    let levels: Vec<u64> = past.iter().map(|p| p[1]).collect();
    assert_eq!(levels, [2, 1, 0, 0], "{rows}");
}
