//! `X-Mock-Delay` and the default latency profile.

use crate::support;

use std::time::{Duration, Instant};

#[tokio::test]
async fn delays_are_waited_bounded_and_validated() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let req = |d: Option<&str>| {
        let r = c
            .post(format!("{}/ozon/v3/product/list", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &s.key);
        match d {
            Some(d) => r.header("X-Mock-Delay", d),
            None => r,
        }
    };
    let t = Instant::now();
    assert_eq!(req(Some("300")).send().await.unwrap().status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(300));
    let t = Instant::now();
    assert_eq!(req(None).send().await.unwrap().status(), 200);
    assert!(
        t.elapsed() >= Duration::from_millis(25),
        "Ozon's default profile is 25 ms"
    );
    for bad in ["abc", "-5", "1.5", "60001"] {
        let r = req(Some(bad)).send().await.unwrap();
        assert_eq!(r.status(), 400, "{bad}");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["code"], 3, "Ozon's own error format");
    }
}
