//! `X-Mock-Scenario`: every failure a client must survive, in the service's own format, echoed in
//! `x-apistend-scenario`; an unknown one is a 400 listing the valid ones.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::Value;

#[tokio::test]
async fn each_scenario_in_each_format() {
    let s = support::start(|c| c.with_max_timeout(Duration::from_millis(300))).await;
    let c = support::client();
    let wb = |sc: &str| {
        c.get(format!("{}/wb/api/v3/warehouses", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0")
            .header("X-Mock-Scenario", sc)
    };
    for (sc, status) in [
        ("server_error", 500),
        ("unavailable", 503),
        ("unauthorized", 401),
        ("forbidden", 403),
        ("not_found", 404),
        ("rate_limit", 429),
    ] {
        let r = wb(sc).send().await.unwrap();
        assert_eq!(r.status(), status, "{sc}");
        assert_eq!(r.headers()["x-apistend-scenario"], sc);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["status"], status, "{sc}: WB's error body");
    }
    let b24 = c
        .post(format!("{}/b24/rest/profile", s.base))
        .header("X-Mock-Key", &s.key)
        .header("X-Mock-Delay", "0")
        .header("X-Mock-Scenario", "rate_limit")
        .send()
        .await
        .unwrap();
    assert_eq!(b24.status(), 503);
    assert_eq!(
        b24.text().await.unwrap(),
        r#"{"error":"QUERY_LIMIT_EXCEEDED","error_description":"Too many requests"}"#
    );

    let bad = wb("explode").send().await.unwrap();
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    let detail = body["detail"].as_str().unwrap();
    for name in [
        "rate_limit",
        "server_error",
        "timeout",
        "malformed",
        "reset",
        "slow",
        "conflict",
    ] {
        assert!(detail.contains(name), "{detail}");
    }

    // malformed: a success status with a truncated body
    let r = wb("malformed").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    assert!(
        serde_json::from_str::<Value>(&text).is_err(),
        "{text:?} should not parse"
    );

    // reset: the connection drops mid-answer
    let r = wb("reset").send().await;
    let failed = match r {
        Err(_) => true,
        Ok(r) => r.bytes().await.is_err(),
    };
    assert!(failed, "a reset answer must not arrive whole");

    // slow: complete, but trickling
    let t = Instant::now();
    let text = c
        .post(format!("{}/ozon/v3/product/list", s.base))
        .header("Client-Id", "1")
        .header("Api-Key", &s.key)
        .header("X-Mock-Delay", "0")
        .header("X-Mock-Scenario", "slow")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
    assert!(
        t.elapsed() >= Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );

    // timeout: the client gives up first; the server's bound is 300 ms here
    let quick = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let r = quick
        .get(format!("{}/wb/api/v3/warehouses", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Scenario", "timeout")
        .send()
        .await;
    assert!(r.unwrap_err().is_timeout());
    let t = Instant::now();
    let r = wb("timeout").send().await.unwrap();
    assert_eq!(r.status(), 504);
    assert!(t.elapsed() >= Duration::from_millis(300));
}

/// `X-Mock-Scenario: rate_limit` answers what a real exceedance of the same bucket answers,
/// headers included (WB's seller-info group: 1 per minute, burst 10 — Reset 600, Retry 60).
#[tokio::test]
async fn the_rate_limit_scenario_answers_as_a_real_exceedance() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let get = |scenario: Option<&str>| {
        let mut r = c
            .get(format!("{}/wb/api/v1/seller-info", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0");
        if let Some(sc) = scenario {
            r = r.header("X-Mock-Scenario", sc);
        }
        r.send()
    };
    let headers = |r: &reqwest::Response| {
        [
            "x-ratelimit-retry",
            "x-ratelimit-limit",
            "x-ratelimit-reset",
            "x-ratelimit-remaining",
        ]
        .map(|h| r.headers().get(h).map(|v| v.to_str().unwrap().to_owned()))
    };
    let forced = get(Some("rate_limit")).await.unwrap();
    assert_eq!(forced.status(), 429);
    let forced = headers(&forced);
    let real = loop {
        let r = get(None).await.unwrap();
        if r.status() == 429 {
            break headers(&r);
        }
        assert_eq!(r.status(), 200);
    };
    assert_eq!(forced, real);
    assert_eq!(real[2].as_deref(), Some("600"), "{real:?}");
    assert_eq!(real[0].as_deref(), Some("60"), "{real:?}");
}
