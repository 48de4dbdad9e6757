//! The management API: sandboxes, keys, per-sandbox limits and buckets; its token, its own rate
//! limit, its problem+json errors; state that survives a restart; sandboxes that cannot touch
//! each other; and an OpenAPI document that matches the routes.

use crate::support;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const TOKEN: &str = "test-admin-token";

struct Admin {
    c: reqwest::Client,
    base: String,
}

impl Admin {
    fn new(base: &str) -> Self {
        Self {
            c: support::client(),
            base: base.to_owned(),
        }
    }

    async fn call(&self, m: Method, path: &str, body: Option<Value>) -> reqwest::Response {
        let mut r = self
            .c
            .request(m, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(b) = body {
            r = r.json(&b);
        }
        r.send().await.unwrap()
    }

    async fn create(&self) -> (String, String) {
        let r = self
            .call(
                Method::POST,
                "/api/v1/sandboxes",
                Some(json!({"name": "t"})),
            )
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        let v: Value = r.json().await.unwrap();
        (
            v["id"].as_str().unwrap().to_owned(),
            v["keys"][0].as_str().unwrap().to_owned(),
        )
    }

    async fn ozon(&self, key: &str) -> StatusCode {
        let status = support::ozon_list(&self.c, &self.base, key).await;
        StatusCode::from_u16(status).unwrap()
    }
}

/// Failed logins are limited per client address before any token is compared: of 300 wrong
/// tokens at once, at most the burst (10) and what refills meanwhile are compared and refused
/// with 401; the rest get 429 with `Retry-After` — the right token too, until then.
#[tokio::test]
async fn failed_logins_are_limited_before_the_token_is_compared() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = support::client();
    let (mut unauthorized, mut limited) = (0, 0);
    for i in 0..300 {
        let r = c
            .get(format!("{}/api/v1/sandboxes", s.base))
            .bearer_auth(format!("guess-{i:012}"))
            .send()
            .await
            .unwrap();
        match r.status() {
            StatusCode::UNAUTHORIZED => unauthorized += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                limited += 1;
                let after: u64 = r.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!((1..=2).contains(&after), "{after}");
                assert_eq!(r.headers()["content-type"], "application/problem+json");
            }
            other => panic!("{other}"),
        }
    }
    assert!(limited >= 250, "{unauthorized} × 401, {limited} × 429");
    // Unknown management paths answer no differently: no oracle past the limit.
    let r = c
        .get(format!("{}/api/v1/nothing", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    // Once a failure has refilled, the right token is let in.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let a = Admin::new(&s.base);
    let r = a.call(Method::GET, "/api/v1/sandboxes", None).await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_token_guards_everything_and_errors_are_problem_json() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let c = support::client();
    for (token, path) in [
        (None, "/api/v1/sandboxes"),
        (Some("wrong"), "/api/v1/sandboxes"),
        (None, "/api/v1/nothing"),
    ] {
        let mut r = c.get(format!("{}{path}", s.base));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{token:?} {path}");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["status"], 401);
    }
    let a = Admin::new(&s.base);
    let r = a.call(Method::GET, "/api/v1/nothing", None).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let r = a
        .call(Method::GET, "/api/v1/sandboxes/sbx_nope", None)
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = c
        .post(format!("{}/api/v1/sandboxes", s.base))
        .bearer_auth(TOKEN)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
}

#[tokio::test]
async fn keys_limits_and_buckets_of_a_sandbox() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let (id, first) = a.create().await;
    assert_eq!(a.ozon(&first).await, StatusCode::OK);
    let r = a
        .call(Method::POST, &format!("/api/v1/sandboxes/{id}/keys"), None)
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let second = r.json::<Value>().await.unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        a.ozon(&second).await,
        StatusCode::OK,
        "an issued key works at once"
    );
    let r = a
        .call(
            Method::DELETE,
            &format!("/api/v1/sandboxes/{id}/keys/{second}"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        a.ozon(&second).await,
        StatusCode::UNAUTHORIZED,
        "a revoked key stops working at once"
    );

    // This sandbox's own quota: one Ozon request per minute.
    let r = a
        .call(
            Method::PUT,
            &format!("/api/v1/sandboxes/{id}/limits/ozon/client"),
            Some(json!({"burst": 1, "interval_ms": 60000})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let reset = a
        .call(
            Method::POST,
            &format!("/api/v1/sandboxes/{id}/buckets/reset"),
            None,
        )
        .await;
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
    assert_eq!(a.ozon(&first).await, StatusCode::OK);
    assert_eq!(
        a.ozon(&first).await,
        StatusCode::TOO_MANY_REQUESTS,
        "one token per minute now"
    );
    let r = a
        .call(
            Method::PUT,
            &format!("/api/v1/sandboxes/{id}/limits/ozon/nope"),
            Some(json!({"burst": 1})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = a
        .call(
            Method::PUT,
            &format!("/api/v1/sandboxes/{id}/limits/ozon/client"),
            Some(json!({"burst": 0})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let r = a
        .call(
            Method::PUT,
            &format!("/api/v1/sandboxes/{id}/limits/ozon/client"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST, "a limit needs a body");

    let r = a
        .call(
            Method::GET,
            &format!("/api/v1/sandboxes/{id}/buckets?service=ozon"),
            None,
        )
        .await;
    let rows: Value = r.json().await.unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == first.as_str() && r["group"] == "client")
        .expect("the spent bucket");
    assert_eq!(
        (row["limit"].as_u64(), row["remaining"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(row["retry_after_ms"].as_u64().unwrap() > 50_000);
    let r = a
        .call(
            Method::POST,
            &format!("/api/v1/sandboxes/{id}/buckets/reset?service=ozon"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(a.ozon(&first).await, StatusCode::OK, "reset: full again");
}

#[tokio::test]
async fn one_sandbox_cannot_see_or_touch_another() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let (x, kx) = a.create().await;
    let (y, ky) = a.create().await;
    a.call(
        Method::PUT,
        &format!("/api/v1/sandboxes/{x}/limits/ozon/client"),
        Some(json!({"burst": 1, "interval_ms": 60000})),
    )
    .await;
    assert_eq!(a.ozon(&kx).await, StatusCode::OK);
    assert_eq!(a.ozon(&kx).await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        a.ozon(&ky).await,
        StatusCode::OK,
        "y's buckets and quotas are its own"
    );
    assert_eq!(a.ozon(&ky).await, StatusCode::OK);
    let r = a
        .call(
            Method::DELETE,
            &format!("/api/v1/sandboxes/{x}/keys/{ky}"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND, "x cannot revoke y's key");
    assert_eq!(a.ozon(&ky).await, StatusCode::OK);
    let rows: Value = a
        .call(
            Method::GET,
            &format!("/api/v1/sandboxes/{x}/buckets?all=true&service=ozon"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["key"] == kx.as_str()),
        "x sees only its own keys' buckets"
    );
    let r = a
        .call(
            Method::POST,
            &format!("/api/v1/sandboxes/{y}/buckets/reset?key={kx}"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        a.ozon(&kx).await,
        StatusCode::TOO_MANY_REQUESTS,
        "y cannot reset x's buckets"
    );
}

#[tokio::test]
async fn a_restart_keeps_sandboxes_keys_limits_settings_apps_and_the_admin_token() {
    let dir = support::temp_dir();
    let (id, key, token) = {
        let s = support::start_in(dir.clone(), |c| c).await;
        let token = s.admin_token.clone().expect("generated on first start");
        let file = std::fs::read_to_string(dir.join(apistend_sandbox::DATA_FILE)).unwrap();
        assert!(!file.contains(&token), "only the token's hash is kept");
        let c = support::client();
        let r = c
            .post(format!("{}/api/v1/sandboxes", s.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let v: Value = r.json().await.unwrap();
        let (id, key) = (
            v["id"].as_str().unwrap().to_owned(),
            v["keys"][0].as_str().unwrap().to_owned(),
        );
        c.put(format!(
            "{}/api/v1/sandboxes/{id}/limits/ozon/client",
            s.base
        ))
        .bearer_auth(&token)
        .json(&json!({"burst": 1, "interval_ms": 60000}))
        .send()
        .await
        .unwrap();
        let r = c
            .put(format!("{}/api/v1/sandboxes/{id}/settings", s.base))
            .bearer_auth(&token)
            .json(&json!({"latency_ms": 5, "scenario": {"name": "slow", "probability": 0.0, "seed": 9}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let r = c
            .post(format!("{}/api/v1/sandboxes/{id}/b24-apps", s.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
        s.stop_keeping_dir().await;
        (id, key, token)
    };
    let s = support::start_in(dir, |c| c).await;
    assert_eq!(
        s.admin_token, None,
        "a restart shows no token: it knows only its hash"
    );
    let a = Admin {
        c: support::client(),
        base: s.base.clone(),
    };
    let r =
        a.c.get(format!("{}/api/v1/sandboxes/{id}", s.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
    assert_eq!(
        r.status(),
        StatusCode::OK,
        "the generated admin token and the sandbox survive"
    );
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["settings"]["latency_ms"], 5, "{v}");
    assert_eq!(v["settings"]["scenario"]["seed"], 9, "{v}");
    assert_eq!(v["b24_apps"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(
        a.ozon(&key).await,
        StatusCode::OK,
        "buckets start full after a restart"
    );
    assert_eq!(
        a.ozon(&key).await,
        StatusCode::TOO_MANY_REQUESTS,
        "the sandbox's own limit survives"
    );
}

#[tokio::test]
async fn the_openapi_document_matches_the_routes() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let doc: Value = a
        .call(Method::GET, "/api/v1/openapi.json", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    // Documentation: readable without the admin token too, and the same document.
    let anonymous: Value = support::client()
        .get(format!("{}/api/v1/openapi.json", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(anonymous, doc);
    let paths = doc["paths"].as_object().unwrap();
    for required in [
        "/api/v1/sandboxes",
        "/api/v1/sandboxes/{id}",
        "/api/v1/sandboxes/{id}/keys",
        "/api/v1/sandboxes/{id}/keys/{key}",
        "/api/v1/sandboxes/{id}/limits/{service}/{group}",
        "/api/v1/sandboxes/{id}/buckets",
        "/api/v1/sandboxes/{id}/buckets/reset",
        "/api/v1/sandboxes/{id}/events",
        "/api/v1/sandboxes/{id}/b24-apps",
        "/api/v1/sandboxes/{id}/b24-apps/{app}",
        "/api/v1/sandboxes/{id}/settings",
        "/api/v1/sandboxes/{id}/objects",
        "/api/v1/sandboxes/{id}/objects/counts",
    ] {
        assert!(paths.contains_key(required), "{required} is documented");
    }
    // Every documented operation answers its documented success status (deletes last).
    let (id, key) = a.create().await;
    let sandbox: Value = a
        .call(Method::GET, &format!("/api/v1/sandboxes/{id}"), None)
        .await
        .json()
        .await
        .unwrap();
    let app = sandbox["b24_apps"][0]["id"].as_str().unwrap().to_owned();
    let mut ops: Vec<(String, String, u16)> = Vec::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let status = op["responses"]
                .as_object()
                .unwrap()
                .keys()
                .find(|k| k.starts_with('2'))
                .unwrap()
                .parse()
                .unwrap();
            ops.push((method.clone(), path.clone(), status));
        }
    }
    ops.sort_by_key(|(m, p, _)| (m == "delete", p == "/api/v1/sandboxes/{id}", p.clone()));
    for (method, path, status) in ops {
        let concrete = path
            .replace("{id}", &id)
            .replace("{key}", &key)
            .replace("{app}", &app)
            .replace("{service}", "ozon")
            .replace("{group}", "client");
        let body = (method == "put").then(|| {
            if path.ends_with("/settings") {
                json!({"latency_ms": 0})
            } else if path.ends_with("/objects") {
                json!({"amocrm": {"leads": [{"id": 1}]}})
            } else {
                json!({"burst": 3, "interval_ms": 1000})
            }
        });
        let r = a
            .call(method.to_uppercase().parse().unwrap(), &concrete, body)
            .await;
        assert_eq!(r.status().as_u16(), status, "{method} {path}");
    }
}

#[tokio::test]
async fn the_management_api_has_its_own_rate_limit_with_ietf_headers() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let mut limited = None;
    for _ in 0..120 {
        let r = a.call(Method::GET, "/api/v1/sandboxes", None).await;
        assert!(
            r.headers().contains_key("ratelimit") && r.headers().contains_key("ratelimit-policy")
        );
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(r);
            break;
        }
    }
    let r = limited.expect("the admin bucket runs dry within 120 quick requests");
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    // The emulated services are not affected by it.
    let (_, key) = {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        a.create().await
    };
    assert_eq!(a.ozon(&key).await, StatusCode::OK);
}

#[tokio::test]
async fn bitrix_local_apps_have_buckets_of_their_own_and_die_with_their_removal() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let (id, key) = a.create().await;
    let r = a
        .call(
            Method::POST,
            &format!("/api/v1/sandboxes/{id}/b24-apps"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let app: Value = r.json().await.unwrap();
    let (app_id, token) = (app["id"].as_str().unwrap(), app["token"].as_str().unwrap());
    let list: Value = a
        .call(
            Method::GET,
            &format!("/api/v1/sandboxes/{id}/b24-apps"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert!(list.as_array().unwrap().iter().any(|x| x["id"] == app_id));
    let b24 = |cred: String| {
        a.c.post(format!("{}/b24/rest/profile?{cred}", s.base))
            .header("X-Mock-Delay", "0")
            .send()
    };
    // Five calls by the app, one by the key: the app's bucket shows five, the key's one.
    for _ in 0..5 {
        assert_eq!(b24(format!("auth={token}")).await.unwrap().status(), 200);
    }
    let r =
        a.c.post(format!("{}/b24/rest/profile", s.base))
            .header("X-Mock-Key", &key)
            .header("X-Mock-Delay", "0")
            .send()
            .await
            .unwrap();
    assert_eq!(r.status(), 200);
    let rows: Value = a
        .call(
            Method::GET,
            &format!("/api/v1/sandboxes/{id}/buckets?service=b24"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let spent = |who: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == who)
            .map(|r| r["limit"].as_u64().unwrap() - r["remaining"].as_u64().unwrap())
    };
    assert_eq!(spent(&format!("app:{app_id}")), Some(5), "{rows}");
    assert_eq!(spent(&key), Some(1), "{rows}");
    // Removed: its token is an unknown credential at once.
    let r = a
        .call(
            Method::DELETE,
            &format!("/api/v1/sandboxes/{id}/b24-apps/{app_id}"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(b24(format!("auth={token}")).await.unwrap().status(), 401);
    let r = a
        .call(
            Method::DELETE,
            &format!("/api/v1/sandboxes/{id}/b24-apps/{app_id}"),
            None,
        )
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
}

#[tokio::test]
async fn default_latency_and_a_reproducible_default_scenario() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let (id, key) = a.create().await;
    let settings = format!("/api/v1/sandboxes/{id}/settings");
    // Bad settings are refused, saying what is wrong.
    for (body, want) in [
        (
            json!({"scenario": {"name": "nope", "probability": 0.5}}),
            422,
        ),
        (
            json!({"scenario": {"name": "server_error", "probability": 1.5}}),
            422,
        ),
        (json!({"latency_ms": 999_999_999}), 422),
        (json!({"latency": 5}), 400),
    ] {
        let r = a.call(Method::PUT, &settings, Some(body.clone())).await;
        assert_eq!(r.status().as_u16(), want, "{body}");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
    }
    // A default latency applies to requests that send no X-Mock-Delay.
    let r = a
        .call(Method::PUT, &settings, Some(json!({"latency_ms": 300})))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let ozon = |delay: Option<&'static str>| {
        let r =
            a.c.post(format!("{}/ozon/v3/product/list", s.base))
                .header("Client-Id", "1")
                .header("Api-Key", &key);
        match delay {
            Some(d) => r.header("X-Mock-Delay", d),
            None => r,
        }
        .send()
    };
    let t = std::time::Instant::now();
    assert_eq!(ozon(None).await.unwrap().status(), 200);
    assert!(t.elapsed() >= std::time::Duration::from_millis(300));
    // A default scenario with a seed: the same seed gives the same sequence again.
    let chaos = json!({"scenario": {"name": "server_error", "probability": 0.3, "seed": 42}});
    let mut runs = Vec::new();
    for _ in 0..2 {
        let r = a.call(Method::PUT, &settings, Some(chaos.clone())).await;
        assert_eq!(r.status(), StatusCode::OK);
        let r = a
            .call(
                Method::POST,
                &format!("/api/v1/sandboxes/{id}/buckets/reset"),
                None,
            )
            .await;
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
        let mut pattern = Vec::new();
        for _ in 0..30 {
            let r = ozon(Some("0")).await.unwrap();
            let status = r.status().as_u16();
            if status == 500 {
                assert_eq!(r.headers()["x-apistend-scenario"], "server_error");
            }
            pattern.push(status);
        }
        runs.push(pattern);
    }
    assert_eq!(runs[0], runs[1], "a seed replays the same chaos");
    let failures = runs[0].iter().filter(|s| **s == 500).count();
    assert!((3..=18).contains(&failures), "{:?}", runs[0]);
    assert!(runs[0].iter().all(|s| *s == 200 || *s == 500));
    // X-Mock-Scenario still wins; the drawn scenarios are counted in /metrics.
    let r =
        a.c.post(format!("{}/ozon/v3/product/list", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &key)
            .header("X-Mock-Delay", "0")
            .header("X-Mock-Scenario", "not_found")
            .send()
            .await
            .unwrap();
    assert_eq!(r.status(), 404);
    let metrics = support::metrics(&s.base).await;
    let want = format!(
        r#"apistend_scenarios_total{{service="ozon",scenario="server_error"}} {}"#,
        failures * 2
    );
    assert!(metrics.lines().any(|l| l == want), "{want} in\n{metrics}");
    // Settings are part of the sandbox, and another sandbox is untouched.
    let v: Value = a
        .call(Method::GET, &settings, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["scenario"]["seed"], 42);
    let (_, other) = a.create().await;
    for _ in 0..10 {
        assert_eq!(a.ozon(&other).await, StatusCode::OK);
    }
}

/// A test suite's fixed credential: a key of the value asked for works at once; a key a
/// sandbox has is a 409, an unusable one a 400 or 422, and nothing changes.
#[tokio::test]
async fn a_key_of_a_chosen_value_works_at_once() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let (id, _) = a.create().await;
    let keys = format!("/api/v1/sandboxes/{id}/keys");
    let r = a
        .call(
            Method::POST,
            &keys,
            Some(json!({"key": "suite-fixed-key-1"})),
        )
        .await;
    assert_eq!(r.status(), 201);
    let ping = support::client()
        .get(format!("{}/wb/ping", s.base))
        .header("Authorization", "suite-fixed-key-1")
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(ping.status(), 200);
    let r = a
        .call(
            Method::POST,
            &keys,
            Some(json!({"key": "suite-fixed-key-1"})),
        )
        .await;
    assert_eq!(r.status(), 409);
    let r = a
        .call(Method::POST, &keys, Some(json!({"key": s.key})))
        .await;
    assert_eq!(r.status(), 409, "the demo sandbox's key");
    let r = a
        .call(Method::POST, &keys, Some(json!({"key": "has space"})))
        .await;
    assert_eq!(r.status(), 422);
    let r = a
        .call(Method::POST, &keys, Some(json!({"value": "x"})))
        .await;
    assert_eq!(r.status(), 400, "an unknown field");
    let r = a.call(Method::POST, &keys, None).await;
    assert_eq!(r.status(), 201, "no body: a random key");
    let listed: Value = a.call(Method::GET, &keys, None).await.json().await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3);
}

/// A partial `PUT …/limits` changes what it names and keeps the rest of the sandbox's own
/// quota; `DELETE` removes that quota (the catalog's applies again), and a second `DELETE` is a
/// 404 saying so.
#[tokio::test]
async fn a_limit_is_merged_by_a_partial_put_and_removed_by_delete() {
    let s = support::start(|c| c.with_admin_token(TOKEN)).await;
    let a = Admin::new(&s.base);
    let (id, _) = a.create().await;
    let path = format!("/api/v1/sandboxes/{id}/limits/ozon/client");
    let sandbox = format!("/api/v1/sandboxes/{id}");
    let call = async |method: Method, path: &str, body: Option<Value>| -> (StatusCode, Value) {
        let r = a.call(method, path, body).await;
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    };
    let quota = |v: &Value| {
        (
            v["burst"].as_u64(),
            v["interval_ms"].as_f64(),
            v["algorithm"].as_str().map(str::to_owned),
        )
    };
    let (_, set) = call(
        Method::PUT,
        &path,
        Some(json!({"burst": 2, "interval_ms": 60000})),
    )
    .await;
    assert_eq!(quota(&set), (Some(2), Some(60000.0), Some("gcra".into())));
    let (_, merged) = call(Method::PUT, &path, Some(json!({"burst": 5}))).await;
    assert_eq!(
        quota(&merged),
        (Some(5), Some(60000.0), Some("gcra".into())),
        "the interval is kept"
    );
    let (_, merged) = call(
        Method::PUT,
        &path,
        Some(json!({"algorithm": "fixed_window"})),
    )
    .await;
    assert_eq!(
        quota(&merged),
        (Some(5), Some(60000.0), Some("fixed_window".into()))
    );
    let (_, record) = call(Method::GET, &sandbox, None).await;
    assert_eq!(record["limits"].as_array().unwrap().len(), 1, "{record}");

    let (status, _) = call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, record) = call(Method::GET, &sandbox, None).await;
    assert_eq!(record["limits"], json!([]), "{record}");
    let (status, problem) = call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("no quota of its own"), "{problem}");
}
