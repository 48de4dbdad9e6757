//! `/metrics` in Prometheus text, `/healthz` and `/readyz`.

use crate::support;

use apistend_catalog::Overrides;

#[tokio::test]
async fn metrics_count_requests_rejections_and_scenarios() {
    let s = support::start(|c| {
        c.with_overrides(
            Overrides::from_toml("[ozon.groups.client]\nburst = 2\ninterval_ms = 60000\n").unwrap(),
        )
    })
    .await;
    let c = support::client();
    let ozon = |sc: Option<&'static str>| {
        let r = c
            .post(format!("{}/ozon/v3/product/list", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "0");
        match sc {
            Some(sc) => r.header("X-Mock-Scenario", sc),
            None => r,
        }
    };
    assert_eq!(ozon(None).send().await.unwrap().status(), 200);
    assert_eq!(
        ozon(Some("server_error")).send().await.unwrap().status(),
        500
    );
    assert_eq!(ozon(None).send().await.unwrap().status(), 429);
    let r = c.get(format!("{}/metrics", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = r.text().await.unwrap();
    for line in [
        r#"apistend_requests_total{service="ozon",group="client",status="200"} 1"#,
        r#"apistend_requests_total{service="ozon",group="client",status="500"} 1"#,
        r#"apistend_requests_total{service="ozon",group="client",status="429"} 1"#,
        r#"apistend_rate_limited_total{service="ozon",group="client"} 1"#,
        r#"apistend_scenarios_total{service="ozon",scenario="server_error"} 1"#,
        "apistend_store_errors_total 0",
        // Each request's share of the bucket left: ½, then 0 twice (the last one refused).
        r#"apistend_bucket_fill_ratio_bucket{service="ozon",group="client",le="0"} 2"#,
        r#"apistend_bucket_fill_ratio_bucket{service="ozon",group="client",le="0.5"} 3"#,
        r#"apistend_bucket_fill_ratio_count{service="ozon",group="client"} 3"#,
        r#"apistend_bucket_fill_ratio_sum{service="ozon",group="client"} 0.5"#,
        r#"apistend_store_degraded{store="memory"} 0"#,
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
    }
    assert_eq!(
        c.get(format!("{}/healthz", s.base))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        c.get(format!("{}/readyz", s.base))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}
