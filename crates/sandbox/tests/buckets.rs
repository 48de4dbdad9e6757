//! Who shares a bucket: key and service, Apify path class, Bitrix24 local application, WB limit
//! group. Every request spends a token, and the limit comes first.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

mod support;

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
    // An exception with its own limit is not in the group.
    assert_eq!(
        c.status(M::POST, "/wb/content/v2/cards/update", &s.key, None)
            .await,
        200
    );
}

#[tokio::test]
async fn apify_path_classes_and_bitrix_apps_have_their_own_buckets() {
    let s = slow().await;
    let c = Caller {
        c: support::client(),
        base: s.base.clone(),
    };
    assert_eq!(
        c.status(M::GET, "/apify/v2/datasets", &s.key, None).await,
        200
    );
    assert_eq!(
        c.status(M::GET, "/apify/v2/datasets/abc", &s.key, None)
            .await,
        200
    );
    assert_eq!(
        c.status(M::GET, "/apify/v2/datasets", &s.key, None).await,
        429
    );
    // Records and the profile are other classes.
    assert_eq!(
        c.status(
            M::GET,
            "/apify/v2/key-value-stores/s/records/k",
            &s.key,
            None
        )
        .await,
        200
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
