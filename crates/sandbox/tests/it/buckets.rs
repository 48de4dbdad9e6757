//! Who shares a bucket: key and service, Apify resource and path class, Bitrix24 local
//! application, WB limit group, a sandbox set to share buckets per account. Every request spends a token, and the limit comes first.

use crate::support;

use apistend_catalog::Overrides;

const SLOW: &str = r#"
[b24.groups.portal]
burst = 3
interval_ms = 60000
[ozon.groups.client]
burst = 2
interval_ms = 60000
[apify.groups.resource]
burst = 2
interval_ms = 60000
[wb.groups."content-api.kontent"]
burst = 2
interval_ms = 60000
[wb.groups.unmatched]
burst = 2
interval_ms = 60000
"#;

async fn slow() -> support::TestServer {
    // The demo sandbox gets a second key before the server starts.
    let dir = support::temp_dir();
    let tenants = apistend_sandbox::Tenants::open(&dir).unwrap();
    let demo = tenants.ensure_key("demo", "test-key").unwrap();
    tenants.add_key(&demo.id, "second-key").unwrap();
    drop(tenants); // the data directory's lock goes with it
    support::start_in(dir, |c| {
        c.with_overrides(Overrides::from_toml(SLOW).unwrap())
    })
    .await
}

struct Caller {
    c: reqwest::Client,
    base: String,
}

impl Caller {
    async fn status(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        scenario: Option<&str>,
    ) -> u16 {
        let mut r = self
            .c
            .request(method, format!("{}{path}", self.base))
            .header("X-Mock-Delay", "0")
            .header("X-Mock-Key", key);
        if let Some(s) = scenario {
            r = r.header("X-Mock-Scenario", s);
        }
        r.send().await.unwrap().status().as_u16()
    }
}

use reqwest::Method as M;

#[tokio::test]
async fn keys_and_services_are_independent() {
    let s = slow().await;
    let c = Caller {
        c: support::client(),
        base: s.base.clone(),
    };
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", &s.key, None)
            .await,
        200
    );
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", &s.key, None)
            .await,
        200
    );
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", &s.key, None)
            .await,
        429
    );
    // Exhausting Ozon leaves Bitrix24 untouched.
    assert_eq!(
        c.status(M::POST, "/b24/rest/profile", &s.key, None).await,
        200
    );
    // The sandbox's second key has buckets of its own.
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", "second-key", None)
            .await,
        200
    );
}

#[tokio::test]
async fn every_request_spends_a_token_and_the_limit_comes_first() {
    let s = slow().await;
    let c = Caller {
        c: support::client(),
        base: s.base.clone(),
    };
    // A 404 and a scenario spend tokens of WB's bucket for unmatched paths...
    assert_eq!(
        c.status(M::GET, "/wb/no/such/path", &s.key, None).await,
        404
    );
    assert_eq!(
        c.status(M::GET, "/wb/no/such/path", &s.key, Some("server_error"))
            .await,
        500
    );
    // ...so the third is refused, whatever scenario it asks for.
    assert_eq!(
        c.status(M::GET, "/wb/no/such/path", &s.key, Some("server_error"))
            .await,
        429
    );
    // Auth errors spend tokens of the presented credential's bucket too.
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", "bad", None)
            .await,
        401
    );
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", "bad", None)
            .await,
        401
    );
    assert_eq!(
        c.status(M::POST, "/ozon/v3/product/list", "bad", None)
            .await,
        429
    );
}

#[tokio::test]
async fn wb_content_is_one_bucket_across_its_methods() {
    let s = slow().await;
    let c = Caller {
        c: support::client(),
        base: s.base.clone(),
    };
    assert_eq!(
        c.status(M::GET, "/wb/content/v2/object/all", &s.key, None)
            .await,
        200
    );
    assert_eq!(
        c.status(
            M::GET,
            "/wb/content-api/content/v2/directory/colors",
            &s.key,
            None
        )
        .await,
        200
    );
    assert_eq!(
        c.status(M::GET, "/wb/content/v2/object/parent/all", &s.key, None)
            .await,
        429
    );
    // An exception with its own limit is not in the group: not refused by its bucket (its
    // empty body is WB's 400 now that cards are kept).
    assert_ne!(
        c.status(M::POST, "/wb/content/v2/cards/update", &s.key, None)
            .await,
        429
    );
}

#[tokio::test]
async fn apify_resources_path_classes_and_bitrix_apps_have_their_own_buckets() {
    let s = slow().await;
    let c = Caller {
        c: support::client(),
        base: s.base.clone(),
    };
    // Apify limits per resource (docs.apify.com/api/v2 "Rate limiting": 60 requests per second
    // per resource — one dataset, actor, run…): exhausting one dataset's bucket of 2 (SLOW)
    // leaves another dataset, an actor's runs and the dataset list alone.
    for _ in 0..2 {
        assert_eq!(
            c.status(M::GET, "/apify/v2/datasets/abc/items", &s.key, None)
                .await,
            200
        );
    }
    assert_eq!(
        c.status(M::GET, "/apify/v2/datasets/abc/items", &s.key, None)
            .await,
        429
    );
    assert_eq!(
        c.status(M::GET, "/apify/v2/datasets/abc", &s.key, None)
            .await,
        429,
        "the same dataset, the same class"
    );
    for path in [
        "/apify/v2/datasets/other/items",
        "/apify/v2/acts/my-actor/runs",
        "/apify/v2/datasets",
    ] {
        assert_eq!(c.status(M::GET, path, &s.key, None).await, 200, "{path}");
    }
    assert_eq!(
        c.status(M::POST, "/apify/v2/acts/my-actor/runs", &s.key, None)
            .await,
        201,
        "runs are a class of their own"
    );
    // Records and the profile are other classes (a record never written: Apify's 404).
    assert_eq!(
        c.status(
            M::GET,
            "/apify/v2/key-value-stores/s/records/k",
            &s.key,
            None
        )
        .await,
        404
    );
    assert_eq!(
        c.status(M::GET, "/apify/v2/users/me", &s.key, None).await,
        200
    );
    // Bitrix24: the key's bucket of 3 is spent, the local app's is not.
    for _ in 0..3 {
        assert_eq!(
            c.status(M::POST, "/b24/rest/profile", &s.key, None).await,
            200
        );
    }
    assert_eq!(
        c.status(M::POST, "/b24/rest/profile", &s.key, None).await,
        503
    );
    let app =
        c.c.post(format!("{}/b24/rest/profile?auth={}", s.base, s.app_token))
            .header("X-Mock-Delay", "0")
            .send()
            .await
            .unwrap();
    assert_eq!(app.status(), 200);
}

#[tokio::test]
async fn a_sandbox_set_per_account_shares_its_buckets_across_keys() {
    let dir = support::temp_dir();
    let tenants = apistend_sandbox::Tenants::open(&dir).unwrap();
    let demo = tenants.ensure_key("demo", "test-key").unwrap();
    tenants.add_key(&demo.id, "second-key").unwrap();
    drop(tenants);
    let s = support::start_in(dir, |c| {
        c.with_overrides(Overrides::from_toml(SLOW).unwrap())
            .with_admin_token("a-test-admin-token-0123")
    })
    .await;
    let c = Caller {
        c: support::client(),
        base: s.base.clone(),
    };
    let content = "/wb/content/v2/object/parent/all";
    // Per key, the seeds' rule and the default: each key has the bucket of 2.
    for key in ["test-key", "test-key", "second-key", "second-key"] {
        assert_eq!(c.status(M::GET, content, key, None).await, 200, "{key}");
    }
    let settings = format!("{}/api/v1/sandboxes/{}/settings", s.base, demo.id);
    let put = |body: serde_json::Value| {
        c.c.put(&settings)
            .bearer_auth("a-test-admin-token-0123")
            .json(&body)
            .send()
    };
    let r = put(serde_json::json!({"bucket_scope": {"nope": "account"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 422, "an unknown service is refused");
    let r = put(serde_json::json!({"bucket_scope": {"wb": "everyone"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "an unknown scope is refused");
    let r = put(serde_json::json!({"bucket_scope": {"wb": "account"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["bucket_scope"]["wb"], "account", "{body}");
    // One seller account: two keys share one bucket of 2 for WB…
    assert_eq!(c.status(M::GET, content, "test-key", None).await, 200);
    assert_eq!(c.status(M::GET, content, "second-key", None).await, 200);
    assert_eq!(c.status(M::GET, content, "test-key", None).await, 429);
    assert_eq!(c.status(M::GET, content, "second-key", None).await, 429);
    // …and Ozon, not set, stays per key.
    for key in ["test-key", "test-key", "second-key", "second-key"] {
        assert_eq!(
            c.status(M::POST, "/ozon/v3/product/list", key, None).await,
            200,
            "{key}"
        );
    }
}

/// Ozon limits per Client-Id: a definition can say so (`scope = "credential_part"`), and then
/// two keys sent with one Client-Id share its buckets while another Client-Id has its own.
#[tokio::test]
async fn buckets_per_credential_part_follow_the_client_id() {
    let dir = support::temp_dir();
    let tenants = apistend_sandbox::Tenants::open(&dir).unwrap();
    let demo = tenants.ensure_key("demo", "test-key").unwrap();
    tenants.add_key(&demo.id, "second-key").unwrap();
    drop(tenants);
    let ozon = apistend_catalog::definition::builtin_text("ozon.toml")
        .unwrap()
        .replacen(
            "quota = { count = 50, period_ms = 1000 }",
            "scope = \"credential_part\"\nquota = { count = 2, period_ms = 60000 }",
            1,
        );
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("ozon.toml".into(), ozon)
        .unwrap();
    let s = support::start_in(dir, |c| c.with_definitions(defs)).await;
    let http = support::client();
    let list = |key: &'static str, client: &'static str| {
        http.post(format!("{}/ozon/v3/product/list", s.base))
            .header("Client-Id", client)
            .header("Api-Key", key)
            .header("X-Mock-Delay", "0")
            .json(&serde_json::json!({}))
            .send()
    };
    assert_eq!(list("test-key", "111").await.unwrap().status(), 200);
    assert_eq!(list("second-key", "111").await.unwrap().status(), 200);
    assert_eq!(
        list("test-key", "111").await.unwrap().status(),
        429,
        "one Client-Id, one bucket"
    );
    assert_eq!(list("second-key", "222").await.unwrap().status(), 200);
}
