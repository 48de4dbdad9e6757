//! amoCRM's OAuth 2.0 as a client lives it: a code exchanged for a JWT access token whose claims
//! it reads, API calls with it, a refresh that revokes the old token, and a token that expires.

use crate::support;

use apistend_catalog::definition::Definitions;
use apistend_testkit::RedisServer;
use base64::Engine;
use serde_json::{Value, json};

async fn token(c: &reqwest::Client, base: &str, body: Value) -> (u16, Value) {
    let r = c
        .post(format!("{base}/amocrm/oauth2/access_token"))
        .header("X-Mock-Delay", "0")
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn account(c: &reqwest::Client, base: &str, bearer: &str) -> u16 {
    let r = c
        .get(format!("{base}/amocrm/api/v4/account"))
        .bearer_auth(bearer)
        .header("X-Mock-Delay", "0");
    support::status(r).await
}

fn claims(jwt: &str) -> Value {
    let payload = jwt.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Code → token → API call → refresh → the old token and the old refresh token refused; the
/// new ones work on `other` (another instance on the same Redis, or the same one).
async fn oauth_flow(base: &str, other: &str, code: &str) {
    let c = support::client();
    let grant = json!({"client_id": "integration-1", "client_secret": "s", "grant_type": "authorization_code",
        "code": code, "redirect_uri": "https://integration.example/oauth"});
    let (status, t) = token(&c, base, grant).await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["token_type"], "Bearer");
    assert_eq!(t["expires_in"], 86_400);
    let access = t["access_token"].as_str().unwrap().to_owned();
    let c1 = claims(&access);
    assert_eq!(c1["aud"], "integration-1");
    assert_eq!(c1["account_id"], 31_000_001);
    assert_eq!(
        c1["exp"].as_i64().unwrap() - c1["iat"].as_i64().unwrap(),
        86_400
    );
    assert_eq!(
        account(&c, other, &access).await,
        200,
        "the token is a key of the sandbox"
    );
    let refresh = t["refresh_token"].as_str().unwrap().to_owned();
    assert!(refresh.starts_with("def50200"));
    let (status, t2) = token(
        &c,
        other,
        json!({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": "integration-1"}),
    )
    .await;
    assert_eq!(status, 200, "{t2}");
    let access2 = t2["access_token"].as_str().unwrap();
    assert_ne!(access2, access);
    assert_eq!(account(&c, base, access2).await, 200);
    assert_eq!(
        account(&c, base, &access).await,
        401,
        "the old token is revoked"
    );
    let (status, again) = token(
        &c,
        base,
        json!({"grant_type": "refresh_token", "refresh_token": refresh}),
    )
    .await;
    assert_eq!(status, 401, "a refresh token is good once: {again}");
    assert_eq!(again["hint"], "Token has been revoked");
    assert_eq!(
        again["type"],
        "https://developers.amocrm.ru/v3/errors/OAuthProblemJson"
    );
}

#[tokio::test]
async fn amocrm_code_token_refresh_and_the_old_token_refused() {
    let s = support::start(|c| c).await;
    oauth_flow(&s.base, &s.base, &s.key).await;
    let c = support::client();
    for (body, status, hint) in [
        (
            json!({"grant_type": "authorization_code"}),
            400,
            "Check the `code` parameter",
        ),
        (
            json!({"grant_type": "authorization_code", "code": "nobody-has-this"}),
            401,
            "Authorization code has been revoked",
        ),
        (
            json!({"grant_type": "password"}),
            400,
            "The authorization grant type \"password\" is not supported",
        ),
        (json!({}), 400, "Check the `grant_type` parameter"),
        (
            json!({"grant_type": "refresh_token", "refresh_token": "def50200forged.x"}),
            401,
            "Cannot decrypt the refresh token",
        ),
    ] {
        let (got, v) = token(&c, &s.base, body.clone()).await;
        assert_eq!(
            (got, v["hint"].as_str().unwrap_or("")),
            (status, hint),
            "{body}: {v}"
        );
    }
    // A form body, as league/oauth2-client sends it.
    let r = c
        .post(format!("{}/amocrm/oauth2/access_token", s.base))
        .header("X-Mock-Delay", "0")
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_secret", s.key.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_issued_on_one_instance_works_on_another() {
    let Some(redis) = RedisServer::start("a_token_issued_on_one_instance_works_on_another") else {
        return;
    };
    let a = support::start(|c| c.with_redis(redis.url())).await;
    let b = support::start(|c| c.with_redis(redis.url())).await;
    // The instances share their sandboxes by polling (250 ms): wait for the token to arrive.
    let c = support::client();
    let (_, t) = token(
        &c,
        &a.base,
        json!({"grant_type": "authorization_code", "code": a.key}),
    )
    .await;
    let access = t["access_token"].as_str().unwrap().to_owned();
    let mut status = 0;
    for _ in 0..40 {
        status = account(&c, &b.base, &access).await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the other instance knows the token");
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    let text = apistend_catalog::definition::builtin_text("amocrm.toml")
        .unwrap()
        .replace("lifetime_secs = 86400", "lifetime_secs = 1");
    let defs = Definitions::builtin()
        .with_file("amocrm.toml".into(), text)
        .unwrap();
    let s = support::start(|c| c.with_definitions(defs)).await;
    let c = support::client();
    let (_, t) = token(
        &c,
        &s.base,
        json!({"grant_type": "authorization_code", "code": s.key}),
    )
    .await;
    let access = t["access_token"].as_str().unwrap().to_owned();
    assert_eq!(account(&c, &s.base, &access).await, 200);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(account(&c, &s.base, &access).await, 401, "past its exp");
}
