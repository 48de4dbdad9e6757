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

/// WB's 429 body has the fields of the `TooManyRequests` example of WB's description, each in
/// its format (the limiter's UUID in `detail`, the gateway's trace in `code`), and nothing of
/// the sandbox's own in it.
#[tokio::test]
async fn wbs_429_matches_its_description_field_by_field_in_format() {
    let Some(spec) = support::shared_file("wb-openapi/06-in-store-pickup.yaml") else {
        return;
    };
    // The example under `title: too many requests`: `key: value` lines at one indentation.
    let at = spec.find("title: too many requests").unwrap();
    let indent = spec[..at].rsplit('\n').next().unwrap().len();
    let example: Vec<(String, String)> = spec[at - indent..]
        .lines()
        .take_while(|l| l.len() > indent && !l[..indent].contains(|c: char| c != ' '))
        .filter_map(|l| {
            let (k, v) = l.trim().split_once(": ")?;
            Some((k.to_owned(), v.trim_matches('\'').to_owned()))
        })
        .collect();
    assert_eq!(example.len(), 8, "{example:?}");

    let s = support::start(|c| c).await;
    let c = support::client();
    let body: Value = loop {
        let r = c
            .get(format!("{}/wb/api/v1/seller-info", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0")
            .send()
            .await
            .unwrap();
        if r.status() == 429 {
            break r.json().await.unwrap();
        }
    };
    let hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    let uuid = |s: &str| {
        let parts: Vec<&str> = s.split('-').collect();
        parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| hex(p))
    };
    let format_of = |field: &str, value: &str| -> bool {
        match field {
            "title" => value == "too many requests",
            "detail" => value.strip_prefix("limited by ").is_some_and(uuid),
            "code" => value.split_once("-[UK-").is_some_and(|(head, tail)| {
                head.split_once('-')
                    .is_some_and(|(a, b)| a.len() == 8 && b.len() == 12 && hex(a) && hex(b))
                    && tail.len() == 12
                    && tail.ends_with(']')
                    && tail[..11].bytes().all(|b| b.is_ascii_alphanumeric())
            }),
            "requestId" => value.len() == 32 && hex(value),
            "origin" => !value.is_empty() && !value.contains("apistend"),
            "status" => value == "429",
            "statusText" => value == "Too Many Requests",
            "timestamp" => {
                value.len() == 20 && value.ends_with('Z') && value.as_bytes()[10] == b'T'
            }
            _ => false,
        }
    };
    let object = body.as_object().unwrap();
    assert_eq!(object.len(), example.len(), "{body}");
    for (field, example_value) in &example {
        assert!(
            format_of(field, example_value),
            "the description's {field}: {example_value}"
        );
        let ours = match &object[field.as_str()] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert!(format_of(field, &ours), "our {field}: {ours}");
    }
    assert!(
        !body.to_string().to_lowercase().contains("apistend"),
        "{body}"
    );
    assert!(!body.to_string().contains("sandbox"), "{body}");
}
