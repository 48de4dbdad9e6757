//! Answers as the real services give them: status, body and exactly their rate-limit headers,
//! with values that agree with the bucket (a client that waits the advertised time then succeeds).

use crate::support;

use std::time::Duration;

use apistend_catalog::Overrides;
use serde_json::Value;

const TIGHT: &str = r#"
[wb.groups."content-api.kontent"]
burst = 2
interval_ms = 1000
[apify.groups.users-me]
burst = 1
interval_ms = 60000
[ozon.groups.client]
burst = 1
interval_ms = 60000
"#;

#[tokio::test]
async fn wb_headers_agree_with_the_bucket_and_the_retry_is_honest() {
    let s = support::start(|c| c.with_overrides(Overrides::from_toml(TIGHT).unwrap())).await;
    let c = support::client();
    let get = || {
        c.get(format!("{}/wb/content/v2/object/all", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0")
    };
    let a = get().send().await.unwrap();
    assert_eq!(a.status(), 200);
    assert_eq!(a.headers()["x-ratelimit-remaining"], "1");
    assert!(
        a.headers().get("x-ratelimit-limit").is_none(),
        "WB sends Limit only on a 429"
    );
    let b = get().send().await.unwrap();
    assert_eq!(b.headers()["x-ratelimit-remaining"], "0");
    let r = get().send().await.unwrap();
    assert_eq!(r.status(), 429);
    let h = r.headers().clone();
    assert!(
        h.get("x-ratelimit-remaining").is_none(),
        "no Remaining on a 429"
    );
    assert_eq!(h["x-ratelimit-limit"], "2");
    assert_eq!(h["x-ratelimit-reset"], "2");
    assert_eq!(h["x-apistend-scenario"], "rate_limit");
    assert!(
        h.get("x-apistend-retry-after").is_none() && h.get("retry-after").is_none(),
        "WB gives its own pause"
    );
    assert_eq!(h["content-type"], "application/json");
    let retry: u64 = h["x-ratelimit-retry"].to_str().unwrap().parse().unwrap();
    assert_eq!(retry, 1);
    let body: Value = r.json().await.unwrap();
    for f in [
        "title",
        "detail",
        "code",
        "requestId",
        "origin",
        "status",
        "statusText",
        "timestamp",
    ] {
        assert!(body.get(f).is_some(), "{f} missing in {body}");
    }
    assert_eq!(
        (body["status"].as_u64(), body["statusText"].as_str()),
        (Some(429), Some("Too Many Requests"))
    );
    tokio::time::sleep(Duration::from_secs(retry)).await;
    assert_eq!(
        get().send().await.unwrap().status(),
        200,
        "waiting X-Ratelimit-Retry seconds is enough"
    );
}

#[tokio::test]
async fn a_wb_409_costs_ten_tokens() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let r = c
        .get(format!("{}/wb/api/v3/warehouses", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .header("X-Mock-Scenario", "conflict")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(r.headers()["x-apistend-scenario"], "conflict");
    // Burst 20: one token for the request, nine more for the 409.
    assert_eq!(r.headers()["x-ratelimit-remaining"], "10");
}

#[tokio::test]
async fn apify_and_ozon_rejections() {
    let s = support::start(|c| c.with_overrides(Overrides::from_toml(TIGHT).unwrap())).await;
    let c = support::client();
    let me = || {
        c.get(format!("{}/apify/v2/users/me?token={}", s.base, s.key))
            .header("X-Mock-Delay", "0")
    };
    let ok = me().send().await.unwrap();
    assert_eq!(ok.headers()["x-ratelimit-limit"], "1");
    let r = me().send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["x-ratelimit-limit"], "1");
    assert_eq!(r.headers()["x-apistend-retry-after"], "60");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate-limit-exceeded");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rate limit")
    );

    let list = || {
        c.post(format!("{}/ozon/v3/product/list", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "0")
    };
    assert_eq!(list().send().await.unwrap().status(), 200);
    let r = list().send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(
        r.headers().get("x-ratelimit-limit").is_none(),
        "Ozon sends no rate-limit headers"
    );
    assert!(r.headers().get("x-apistend-retry-after").is_some());
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], 8);
}

#[tokio::test]
async fn bitrix_answers_carry_the_time_block_and_count_operating_time() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let call = |delay: &'static str| {
        c.post(format!("{}/b24/rest/crm.deal.list.json", s.base))
            .header("X-Mock-Key", &s.key)
            .header("X-Mock-Delay", delay)
    };
    let first: Value = call("120").send().await.unwrap().json().await.unwrap();
    let t = &first["time"];
    for f in [
        "start",
        "finish",
        "duration",
        "processing",
        "date_start",
        "date_finish",
        "operating_reset_at",
        "operating",
    ] {
        assert!(t.get(f).is_some(), "{f} missing in {t}");
    }
    assert!(t["operating"].as_f64().unwrap() >= 0.12);
    assert!(t["operating_reset_at"].as_i64().unwrap() > t["start"].as_f64().unwrap() as i64);
    let second: Value = call("80").send().await.unwrap().json().await.unwrap();
    assert!(
        second["time"]["operating"].as_f64().unwrap() >= 0.2,
        "operating time accumulates per method: {second}"
    );
    let other: Value = c
        .post(format!("{}/b24/rest/crm.deal.fields", s.base))
        .header("X-Mock-Key", &s.key)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        other["time"]["operating"].as_f64().unwrap() < 0.1,
        "another method has its own budget"
    );
}

/// A Bitrix24 with a 1-second operating budget (a user definition replacing the built-in): a
/// blocked method answers 429 `OPERATION_TIME_LIMIT` with the sandbox's pause until it unblocks,
/// stays blocked inside `batch` (reported in `result_error`) while other methods run, and
/// `operating_reset_at` is ten minutes after the basket's first call.
#[tokio::test]
async fn a_blocked_method_stays_blocked_inside_batch_and_says_when_it_unblocks() {
    let text = apistend_catalog::definition::builtin_text("b24.toml")
        .unwrap()
        .replace(
            "operating_budget = { limit_secs = 480, window_secs = 600 }",
            "operating_budget = { limit_secs = 1, window_secs = 600 }",
        );
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("b24.toml".into(), text)
        .unwrap();
    let s = support::start(|c| c.with_definitions(defs)).await;
    let c = support::client();
    let call = |method: &str, delay: &str| {
        c.post(format!("{}/b24/rest/1/{}/{method}.json", s.base, s.key))
            .header("X-Mock-Delay", delay.to_owned())
    };
    let first: Value = call("crm.deal.list", "700")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let t = &first["time"];
    let start = t["start"].as_f64().unwrap();
    assert_eq!(
        t["operating_reset_at"].as_i64().unwrap(),
        (start + 600.0).floor() as i64,
        "{t}"
    );
    call("crm.deal.list", "700").send().await.unwrap();
    let blocked = call("crm.deal.list", "0").send().await.unwrap();
    assert_eq!(blocked.status(), 429);
    let pause: u64 = blocked.headers()["x-apistend-retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((590..=600).contains(&pause), "{pause}");
    let body: Value = blocked.json().await.unwrap();
    assert_eq!(body["error"], "OPERATION_TIME_LIMIT");

    let batch: Value = c
        .post(format!("{}/b24/rest/1/{}/batch.json", s.base, s.key))
        .header("X-Mock-Delay", "0")
        .json(&serde_json::json!({"halt": 0, "cmd": ["crm.deal.list", "user.current"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r = &batch["result"];
    // As PHP writes them: errors keyed 0 are a list, results keyed 1 an object.
    assert_eq!(
        r["result_error"][0]["error"], "OPERATION_TIME_LIMIT",
        "{batch}"
    );
    assert_eq!(r["result"]["1"]["ID"], "1", "user.current ran: {batch}");
    assert!(r["result"].get("0").is_none(), "{batch}");
}
