//! Services defined by files alone: amoCRM (services/amocrm.toml, no Rust code of its own) —
//! its answers, its 429 and its lockout, checked against the documented shapes.

use crate::support;

use serde_json::Value;

/// amoCRM's ten most used calls (leads, contacts, companies, tasks, pipelines, users, account —
/// the official PHP SDK's main services) answer 200 with the HAL bodies of endpoints.json.
#[tokio::test]
async fn amocrm_answers_its_most_used_endpoints_from_its_definition() {
    let s = support::start(|c| c).await;
    let http = support::client();
    let calls = [
        ("GET", "/api/v4/account", "subdomain"),
        ("GET", "/api/v4/leads", "_embedded"),
        ("GET", "/api/v4/leads/20000001", "price"),
        ("GET", "/api/v4/leads/pipelines", "_embedded"),
        ("GET", "/api/v4/contacts", "_embedded"),
        ("GET", "/api/v4/companies", "_embedded"),
        ("GET", "/api/v4/tasks", "_embedded"),
        ("GET", "/api/v4/users", "_embedded"),
        ("POST", "/api/v4/leads", "_embedded"),
        ("PATCH", "/api/v4/leads/20000001", "id"),
    ];
    for (method, path, field) in calls {
        // One integration's 7 per second: pace the calls.
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        let r = http
            .request(method.parse().unwrap(), format!("{}/amocrm{path}", s.base))
            .bearer_auth(&s.key)
            .header("X-Mock-Delay", "0")
            // A list creates (or updates) several; one lead's own path takes an object
            // (endpoints.json's examples; validation refuses the other shape).
            .json(&if path.ends_with("/20000001") {
                serde_json::json!({"name": "x"})
            } else {
                serde_json::json!([{"name": "x"}])
            })
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{method} {path}");
        assert_eq!(
            r.headers()["content-type"],
            "application/hal+json",
            "{method} {path}"
        );
        let body: Value = r.json().await.unwrap();
        assert!(body.get(field).is_some(), "{method} {path}: {body}");
    }
    // An unknown token: amoCRM's problem+json 401.
    let r = http
        .get(format!("{}/amocrm/api/v4/leads", s.base))
        .bearer_auth("not-a-key")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (&body["title"], &body["type"], &body["status"]),
        (
            &Value::from("Unauthorized"),
            &Value::from("https://httpstatus.es/401"),
            &Value::from(401)
        )
    );
    assert!(body["detail"].is_string());
}

/// amoCRM's OAuth token exchange (developers.kommo.com/reference/get-token) is made before the
/// client has a token: it answers the documented tokens without an `Authorization` header (the
/// code is a key of the sandbox: `tokens.rs` follows a token's life), and it spends nothing of
/// the integration's 7 per second.
#[tokio::test]
async fn amocrm_exchanges_oauth_tokens_without_a_token_and_outside_the_api_limit() {
    let s = support::start(|c| c).await;
    let http = support::client();
    for _ in 0..10 {
        let r = http
            .post(format!("{}/amocrm/oauth2/access_token", s.base))
            .header("X-Mock-Delay", "0")
            .json(&serde_json::json!({"client_id": "x", "client_secret": "y",
                "grant_type": "authorization_code", "code": s.key, "redirect_uri": "https://a.example"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        for field in ["token_type", "expires_in", "access_token", "refresh_token"] {
            assert!(body.get(field).is_some(), "{field} missing: {body}");
        }
    }
    // Ten exchanges within a second, and the integration still has its 7.
    let r = http
        .get(format!("{}/amocrm/api/v4/account", s.base))
        .bearer_auth(&s.key)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

/// Source: ../shared/specs/amocrm/limits.json — "not more than 7 requests per second"
/// (developers.kommo.com/docs/limitations); over it a 429 whose body is not JSON (the official
/// SDK raises AmoCRMApiTooManyRequestsException for exactly that), no rate-limit headers; an
/// integration that keeps violating gets 403 for every request, an nginx HTML page (issues #563,
/// #434). The lockout numbers are APIStend's (20 rejections within 60 s, 5 minutes).
#[tokio::test]
async fn amocrm_refuses_the_eighth_request_in_a_second_then_locks_out_a_hammering_integration() {
    let s = support::start(|c| c).await;
    let http = support::client();
    let get = |key: String| {
        http.get(format!("{}/amocrm/api/v4/leads", s.base))
            .bearer_auth(key)
            .header("X-Mock-Delay", "0")
            .send()
    };
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(get(s.key.clone()).await.unwrap().status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 429]);
    let r = get(s.key.clone()).await.unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["content-type"], "text/html");
    for h in ["retry-after", "x-ratelimit-limit", "x-ratelimit-remaining"] {
        assert!(r.headers().get(h).is_none(), "amoCRM sends no {h}");
    }
    assert!(
        r.headers().get("x-apistend-retry-after").is_some(),
        "the sandbox's own hint of the pause"
    );
    let body = r.text().await.unwrap();
    assert!(body.contains("429 Too Many Requests"), "{body}");
    assert!(serde_json::from_str::<Value>(&body).is_err(), "not JSON");

    // Two rejections so far; eighteen more within the minute lock the integration out.
    for _ in 0..18 {
        assert_eq!(get(s.key.clone()).await.unwrap().status(), 429);
    }
    let r = get(s.key.clone()).await.unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["content-type"], "text/html");
    assert!(r.text().await.unwrap().contains("403 Forbidden"));
    // Even after the bucket refilled.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    assert_eq!(get(s.key.clone()).await.unwrap().status(), 403);

    let metrics = support::metrics(&s.base).await;
    assert!(
        metrics.contains("apistend_lockouts_total{service=\"amocrm\"} 1"),
        "{metrics}"
    );

    // The lockout is state the management API shows with its bucket, and a reset clears it.
    let token = s.admin_token.clone().unwrap();
    let sandbox: Value = http
        .get(format!("{}/api/v1/sandboxes", s.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = sandbox[0]["id"].as_str().unwrap().to_owned();
    let buckets: Value = http
        .get(format!(
            "{}/api/v1/sandboxes/{id}/buckets?service=amocrm",
            s.base
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let locked = buckets[0]["locked_for_ms"].as_u64().unwrap_or(0);
    assert!((290_000..=300_000).contains(&locked), "{buckets}");
    let r = http
        .post(format!(
            "{}/api/v1/sandboxes/{id}/buckets/reset?service=amocrm",
            s.base
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        get(s.key.clone()).await.unwrap().status(),
        200,
        "a reset clears the lockout"
    );
}

/// Source: ../shared/specs/moysklad/limits.json (md/_restrictions.md, md/_general.md of the
/// official docs): 45 units per 3 s per user, a user token's request weighs 4 from 2026-12-01
/// (11 per 3 s) and the stock reports 5; over it 429, error code 1049; headers X-RateLimit-Limit,
/// X-RateLimit-Remaining, X-Lognex-Retry-TimeInterval, X-Lognex-Reset, X-Lognex-Retry-After (ms).
#[tokio::test]
async fn moysklad_weighs_requests_and_answers_1049_with_its_headers() {
    let s = support::start(|c| c).await;
    let http = support::client();
    let get = |path: &str| {
        http.get(format!("{}/moysklad/api/remap/1.2{path}", s.base))
            .bearer_auth(&s.key)
            .header("X-Mock-Delay", "0")
            .send()
    };
    let r = get("/entity/product").await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ratelimit-limit"], "45");
    assert_eq!(
        r.headers()["x-ratelimit-remaining"],
        "41",
        "a request weighs 4"
    );
    assert_eq!(r.headers()["x-lognex-retry-timeinterval"], "3000");
    assert!(r.headers().get("x-lognex-retry-after").is_none());
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["meta"]["type"], "product");
    assert!(body["rows"][0]["salePrices"].is_array(), "{body}");
    let r = get("/report/stock/all").await.unwrap();
    assert_eq!(
        r.headers()["x-ratelimit-remaining"],
        "36",
        "a stock report weighs 5"
    );
    // 36 units left: nine more requests of 4, then the tenth is over.
    for _ in 0..9 {
        assert_eq!(get("/entity/store").await.unwrap().status(), 200);
    }
    let r = get("/entity/store").await.unwrap();
    assert_eq!(r.status(), 429);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "application/json;charset=utf-8");
    assert_eq!(h["x-ratelimit-remaining"], "0");
    let retry: u64 = h["x-lognex-retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=3000).contains(&retry), "{retry} ms");
    assert!(h.get("x-lognex-reset").is_some());
    assert!(
        h.get("x-apistend-retry-after").is_none(),
        "MoySklad says it itself"
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], 1049, "{body}");
    assert!(
        body["errors"][0]["error"]
            .as_str()
            .unwrap()
            .contains("Превышено ограничение")
    );
}

/// Five requests in flight per user (limits.json, `parallel_limits`): a sixth concurrent one
/// gets 429 with code 1073, on the memory store and on Redis.
async fn moysklad_sixth_concurrent_request(s: &support::TestServer) {
    let http = support::client();
    let slow = || {
        http.get(format!("{}/moysklad/api/remap/1.2/entity/product", s.base))
            .bearer_auth(&s.key)
            .header("X-Mock-Delay", "800")
            .send()
    };
    let answers = futures_util::future::join_all((0..6).map(|_| slow())).await;
    let mut statuses: Vec<u16> = Vec::new();
    let mut refused = None;
    for r in answers {
        let r = r.unwrap();
        statuses.push(r.status().as_u16());
        if r.status() == 429 {
            refused = Some(r.json::<Value>().await.unwrap());
        }
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429]);
    assert_eq!(refused.unwrap()["errors"][0]["code"], 1073);
    // The slots came back with the answers.
    let again = futures_util::future::join_all((0..5).map(|_| slow())).await;
    assert!(again.into_iter().all(|r| r.unwrap().status() == 200));
}

#[tokio::test]
async fn moysklad_limits_requests_in_flight_on_memory() {
    let s = support::start(|c| c).await;
    moysklad_sixth_concurrent_request(&s).await;
}

#[tokio::test]
async fn moysklad_limits_requests_in_flight_on_redis() {
    let Some(redis) =
        apistend_testkit::RedisServer::start("moysklad_limits_requests_in_flight_on_redis")
    else {
        return;
    };
    let s = support::start(|c| c.with_redis(redis.url())).await;
    moysklad_sixth_concurrent_request(&s).await;
}

/// Yandex Market (services/ymarket.toml, groups generated from the official spec's
/// x-resource-limit-config). Sources: the limits page
/// (yandex.ru/dev/market/partner-api/doc/ru/concepts/limits) as ../shared/specs/yandex-market/
/// limits.json quotes it — 420 Enhance Your Calm with `{"status":"ERROR","errors":[{code,
/// message}]}` (ApiLimitErrorResponse), X-RateLimit-Resource-Limit/-Remaining/-Until (RFC 822) on
/// every answer, quotas per campaign or business, 5xx not counted, 4 requests in flight.
async fn ymarket() -> (support::TestServer, reqwest::Client) {
    let overrides = apistend_catalog::Overrides::from_toml(
        "[ymarket.groups.getCampaign]\nburst = 2\ninterval_ms = 60000\n",
    )
    .unwrap();
    (
        support::start(|c| c.with_overrides(overrides)).await,
        support::client(),
    )
}

#[tokio::test]
async fn ymarket_420_its_headers_and_quotas_per_campaign() {
    let (s, http) = ymarket().await;
    // What is tested is the limits' headers, not the requests (`{}` is no report's
    // parameters): not validated.
    let req = |method: reqwest::Method, path: &str| {
        http.request(method, format!("{}/ymarket{path}", s.base))
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "0")
            .header("X-Mock-Validation", "off")
    };
    // generateUnitedNettingReport: 1 per 2 minutes (x-resource-limit-config, tier `none`).
    let path = "/v2/reports/united-netting/generate";
    let r = req(reqwest::Method::POST, path)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ratelimit-resource-limit"], "1");
    assert_eq!(r.headers()["x-ratelimit-resource-remaining"], "0");
    let r = req(reqwest::Method::POST, path)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 420);
    assert_eq!(r.headers()["content-type"], "application/json");
    let until = r.headers()["x-ratelimit-resource-until"]
        .to_str()
        .unwrap()
        .to_owned();
    let until = httpdate::parse_http_date(&until).expect("an RFC 822 date");
    let ahead = until
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    assert!(ahead <= std::time::Duration::from_secs(121), "{ahead:?}");
    assert!(r.headers().get("x-apistend-retry-after").is_none());
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"], "ERROR");
    assert_eq!(body["errors"][0]["code"], "LIMIT_EXCEEDED");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Hit rate limit of 1")
    );

    // getCampaign (2 per minute here): one bucket per campaign.
    for _ in 0..2 {
        let r = req(reqwest::Method::GET, "/v2/campaigns/11")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["campaign"]["id"], 21_000_001);
    }
    let r = req(reqwest::Method::GET, "/v2/campaigns/11")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 420);
    let r = req(reqwest::Method::GET, "/v2/campaigns/12")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "another campaign");
    // A 5xx costs nothing: campaign 13's bucket is still full after one.
    let r = req(reqwest::Method::GET, "/v2/campaigns/13")
        .header("X-Mock-Scenario", "server_error")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    assert_eq!(r.headers()["x-ratelimit-resource-remaining"], "2");
    let r = req(reqwest::Method::GET, "/v2/campaigns/13")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-ratelimit-resource-remaining"], "1");
    // An unknown key: Yandex Market's 401 envelope.
    let r = http
        .get(format!("{}/ymarket/v2/campaigns", s.base))
        .header("Api-Key", "nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"], "ERROR");
}

#[tokio::test]
async fn ymarket_prices_weigh_their_offers() {
    let (s, http) = ymarket().await;
    // updatePrices: 10 000 offers per minute (`path: req.offers`).
    let offers = |n: usize| {
        let items: Vec<Value> = (0..n)
            .map(|i| serde_json::json!({"offerId": format!("o{i}"), "price": {"value": 100, "currencyId": "RUR"}}))
            .collect();
        serde_json::json!({ "offers": items })
    };
    let post = |body: Value| {
        http.post(format!(
            "{}/ymarket/v2/campaigns/7/offer-prices/updates",
            s.base
        ))
        .header("Api-Key", &s.key)
        .header("X-Mock-Delay", "0")
        // 6 000 offers in one request: more than the description allows in one (it is the
        // weight that is tested here), so not validated.
        .header("X-Mock-Validation", "off")
        .json(&body)
        .send()
    };
    let r = post(offers(6000)).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ratelimit-resource-remaining"], "4000");
    let r = post(offers(6000)).await.unwrap();
    assert_eq!(r.status(), 420, "6 000 more offers than the 4 000 left");
    let r = post(offers(4000)).await.unwrap();
    assert_eq!(r.status(), 200);
    let r = post(offers(10_001)).await.unwrap();
    assert_eq!(
        r.status(),
        420,
        "more than the quota ever holds: refused, not an error"
    );
}

/// A data-volume limit counted on the answer (getStocks: `resp.result.warehouses.offers.offerId`,
/// 100 000 per minute): an answer costs the offers it lists, over all its warehouses; a 5xx
/// nothing; a refusal that lists none, one.
#[tokio::test]
async fn ymarket_stocks_cost_the_offers_they_answer() {
    let answer = r#"[{"warehouseId":10000001,"offers":["#;
    let text = apistend_catalog::definition::builtin_text("ymarket.toml").unwrap();
    assert!(text.contains(answer));
    let two_more = r#"[{"warehouseId":1,"offers":[{"offerId":"A"},{"offerId":"B"}]},{"warehouseId":10000001,"offers":["#;
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("ymarket.toml".into(), text.replacen(answer, two_more, 1))
        .unwrap();
    // A token a minute, so that none comes back while the test runs (100 000 a minute: one
    // every 0.6 ms).
    let slow = "[ymarket.groups.getStocks]\nburst = 100000\ninterval_ms = 60000\n";
    let slow = apistend_catalog::Overrides::from_toml(slow).unwrap();
    let s = support::start(|c| c.with_definitions(defs).with_overrides(slow)).await;
    let http = support::client();
    let stocks = |scenario: Option<&str>, body: Value| {
        let r = http
            .post(format!("{}/ymarket/v2/campaigns/7/offers/stocks", s.base))
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "0");
        let r = match scenario {
            Some(name) => r.header("X-Mock-Scenario", name),
            None => r,
        };
        r.json(&body).send()
    };
    let remaining = |r: &reqwest::Response| {
        r.headers()["x-ratelimit-resource-remaining"]
            .to_str()
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    let r = stocks(None, serde_json::json!({})).await.unwrap();
    let (status, left) = (r.status(), remaining(&r));
    assert_eq!(status, 200, "{}", r.text().await.unwrap());
    assert_eq!(left, 100_000 - 3, "three offers in two warehouses");
    let r = stocks(Some("server_error"), serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    assert_eq!(remaining(&r), 100_000 - 3, "a 5xx costs nothing");
    let r = stocks(None, serde_json::json!({"stocksWarehouseId": "one"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "a warehouse id is a number");
    assert_eq!(remaining(&r), 100_000 - 4, "a 4xx costs one");
}

/// 4 requests in flight per campaign, and the seven methods with a `parallel-limit-value` of
/// their own instead (getOrders: 6), each message naming its number.
#[tokio::test]
async fn ymarket_allows_four_requests_in_flight_per_campaign_and_getorders_six() {
    let (s, http) = ymarket().await;
    let slow = |campaign: u32, what: &str| {
        http.get(format!("{}/ymarket/v2/campaigns/{campaign}/{what}", s.base))
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "800")
            .header("X-Mock-Validation", "off")
            .send()
    };
    let (returns, orders, other) = tokio::join!(
        futures_util::future::join_all((0..5).map(|_| slow(5, "returns"))),
        futures_util::future::join_all((0..7).map(|_| slow(5, "orders"))),
        futures_util::future::join_all((0..4).map(|_| slow(6, "returns"))),
    );
    for (answers, max) in [(returns, 4), (orders, 6)] {
        let mut statuses: Vec<u16> = Vec::new();
        let mut refused = None;
        for r in answers {
            let r = r.unwrap();
            statuses.push(r.status().as_u16());
            if r.status() == 420 {
                refused = Some(r.json::<Value>().await.unwrap());
            }
        }
        statuses.sort_unstable();
        let mut want = vec![200; max];
        want.push(420);
        assert_eq!(statuses, want);
        let refused = refused.unwrap();
        assert_eq!(
            refused["errors"][0]["message"],
            format!("Hit rate limit of {max} parallel requests")
        );
    }
    assert!(
        other.into_iter().all(|r| r.unwrap().status() == 200),
        "campaign 6 has its own 4"
    );
}

/// The spec's `medium` tier is the plan "medium", which a sandbox selects in its settings:
/// getOfferMappings is 100 per minute in tier `none` and 600 in `medium` (limits.json).
#[tokio::test]
async fn ymarket_a_sandbox_selects_the_medium_tier() {
    let dir = support::temp_dir();
    let tenants = apistend_sandbox::Tenants::open(&dir).unwrap();
    let demo = tenants.ensure_key("demo", "test-key").unwrap();
    drop(tenants);
    let s = support::start_in(dir, |c| c.with_admin_token("a-test-admin-token-0123")).await;
    let http = support::client();
    let limit = || async {
        let r = http
            .post(format!("{}/ymarket/v2/businesses/9/offer-mappings", s.base))
            .header("Api-Key", "test-key")
            .header("X-Mock-Delay", "0")
            .json(&serde_json::json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.headers()["x-ratelimit-resource-limit"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(limit().await, "100");
    let put = |body: Value| {
        http.put(format!("{}/api/v1/sandboxes/{}/settings", s.base, demo.id))
            .bearer_auth("a-test-admin-token-0123")
            .json(&body)
            .send()
    };
    let r = put(serde_json::json!({"plans": {"ymarket": "large"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["detail"].as_str().unwrap().contains("medium"),
        "{body}"
    );
    let r = put(serde_json::json!({"plans": {"ymarket": "medium"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(limit().await, "600");
}

/// Yandex Market's 420 carries its reason phrase on the status line, as the real one does
/// (`Enhance Your Calm`; HTTP names no 420, and a server without one writes none).
#[tokio::test]
async fn ymarkets_420_has_its_reason_phrase_on_the_wire() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = support::start(|c| c).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "GET /ymarket/v2/campaigns HTTP/1.1\r\nHost: {addr}\r\nApi-Key: {}\r\n\
         X-Mock-Delay: 0\r\nX-Mock-Scenario: rate_limit\r\nConnection: close\r\n\r\n",
        s.key
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        conn.read_to_end(&mut answer),
    )
    .await
    .unwrap()
    .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 420 Enhance Your Calm\r\n"),
        "{}",
        answer.lines().next().unwrap_or("")
    );
}
