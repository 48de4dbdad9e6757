//! Each service's own credential channel works; unknown or missing credentials get its 401.

use crate::support;

use reqwest::Method;
use serde_json::Value;

#[tokio::test]
async fn every_channel_of_every_service() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let k = &s.key;
    let ok = |r: reqwest::Response| {
        assert_eq!(r.status(), 200, "{}", r.url());
    };
    let get = |p: &str| c.get(format!("{}{p}", s.base)).header("X-Mock-Delay", "0");
    let post = |p: &str| c.post(format!("{}{p}", s.base)).header("X-Mock-Delay", "0");
    ok(get("/wb/api/v3/warehouses")
        .header("Authorization", k.as_str())
        .send()
        .await
        .unwrap());
    ok(get("/wb/api/v3/warehouses")
        .header("Authorization", format!("Bearer {k}"))
        .send()
        .await
        .unwrap());
    ok(get("/wb/marketplace-api/api/v3/warehouses")
        .header("X-Mock-Key", k.as_str())
        .send()
        .await
        .unwrap());
    ok(post("/ozon/v3/product/list")
        .header("Client-Id", "12345")
        .header("Api-Key", k.as_str())
        .send()
        .await
        .unwrap());
    ok(post(&format!("/b24/rest/1/{k}/profile.json"))
        .send()
        .await
        .unwrap());
    ok(post(&format!("/b24/rest/profile?auth={k}"))
        .send()
        .await
        .unwrap());
    ok(post("/b24/rest/profile")
        .form(&[("auth", k.as_str())])
        .send()
        .await
        .unwrap());
    ok(get("/b24/rest/app.info")
        .query(&[("auth", s.app_token.as_str())])
        .send()
        .await
        .unwrap());
    ok(get("/apify/v2/users/me")
        .header("Authorization", format!("Bearer {k}"))
        .send()
        .await
        .unwrap());
    ok(get(&format!("/apify/v2/users/me?token={k}"))
        .send()
        .await
        .unwrap());
}

#[tokio::test]
async fn unknown_or_missing_credentials_get_the_services_own_401() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let call = |m: Method, p: &str| {
        c.request(m, format!("{}{p}", s.base))
            .header("X-Mock-Delay", "0")
    };
    let json = |r: reqwest::Response| async move {
        assert_eq!(r.status(), 401, "{}", r.url());
        r.json::<Value>().await.unwrap()
    };
    let wb = json(
        call(Method::GET, "/wb/api/v3/warehouses")
            .header("Authorization", "nope")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (wb["title"].as_str(), wb["status"].as_u64()),
        (Some("unauthorized"), Some(401))
    );
    let wb = json(
        call(Method::GET, "/wb/api/v3/warehouses")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(wb["statusText"], "Unauthorized");
    let b24 = json(
        call(Method::POST, "/b24/rest/1/nope/profile.json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(b24["error"], "NO_AUTH_FOUND");
    let apify = json(
        call(Method::GET, "/apify/v2/users/me?token=nope")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(apify["error"]["type"], "token-not-provided");
    let ozon = json(
        call(Method::POST, "/ozon/v3/product/list")
            .header("Api-Key", s.key.as_str())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ozon["code"], 16, "Ozon wants Client-Id too");
}
