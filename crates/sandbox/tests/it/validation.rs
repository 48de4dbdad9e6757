//! Requests checked against the official descriptions (docs/requests.md): for each service, at
//! least five operations sent malformed JSON, a missing required field, a wrong type, a value
//! outside an enum or a bound, a missing or wrong `Content-Type`; each refused with the
//! service's documented status and body, the precise reason in `X-APIStend-Invalid`. And the
//! settings: `report`, `off`, per sandbox, per service, per request.

use apistend_catalog::{Catalog, Overrides};
use reqwest::Method as M;
use serde_json::{Value, json};

use crate::support;

/// A sandbox whose every limit group is wide open: these tests are not about limits.
async fn open() -> support::TestServer {
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let mut text = String::new();
    for svc in catalog.services() {
        for g in &svc.groups {
            text.push_str(&format!(
                "[{}.groups.\"{}\"]\nburst = 100000\ninterval_ms = 1\n",
                svc.id, g.id
            ));
        }
    }
    let overrides = Overrides::from_toml(&text).unwrap();
    support::start(|c| c.with_overrides(overrides)).await
}

/// One request: its service's prefix, method, path, body and `Content-Type`.
struct Req<'a> {
    service: &'a str,
    method: M,
    path: &'a str,
    body: Option<&'a str>,
    content_type: Option<&'a str>,
}

/// A JSON request.
fn post<'a>(service: &'a str, method: M, path: &'a str, body: &'a str) -> Req<'a> {
    Req {
        service,
        method,
        path,
        body: Some(body),
        content_type: Some("application/json"),
    }
}

/// A request without a body.
fn get<'a>(service: &'a str, path: &'a str) -> Req<'a> {
    Req {
        service,
        method: M::GET,
        path,
        body: None,
        content_type: None,
    }
}

/// Sends `r` with its service's credentials; status, `X-APIStend-Invalid` and body.
async fn send(s: &support::TestServer, r: Req<'_>) -> (u16, String, Value) {
    let c = support::client();
    let mut b = c
        .request(r.method, format!("{}/{}{}", s.base, r.service, r.path))
        .header("X-Mock-Delay", "0");
    // The credential as a real client of the service sends it, from its definition.
    let catalog = Catalog::builtin().unwrap();
    let svc = catalog.service(catalog.service_id(r.service).unwrap());
    for (name, value) in svc.unwrap().credential_headers(&s.key) {
        b = b.header(name, value);
    }
    if let Some(ct) = r.content_type {
        b = b.header("Content-Type", ct);
    }
    if let Some(body) = r.body {
        b = b.body(body.to_owned());
    }
    let resp = b.send().await.unwrap();
    let status = resp.status().as_u16();
    let why = resp
        .headers()
        .get("x-apistend-invalid")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, why, body)
}

/// Each case: the request, and the start of the reason `X-APIStend-Invalid` must give.
type Cases<'a> = Vec<(Req<'a>, &'a str)>;

/// Sends every case and checks its refusal with `shape` (the service's documented 400 body).
async fn refused(s: &support::TestServer, cases: Cases<'_>, shape: impl Fn(&Value, &str)) {
    for (req, reason) in cases {
        let label = format!("{} {}", req.method, req.path);
        let (status, why, body) = send(s, req).await;
        assert_eq!(status, 400, "{label}: {why} {body}");
        assert!(
            why.starts_with(reason),
            "{label}: X-APIStend-Invalid {why:?}, wanted {reason:?}"
        );
        shape(&body, &why);
    }
}

/// Ozon: its gateway's `rpcStatus` (seller-openapi.json, `components.schemas.rpcStatus`: `code`
/// int32, `message` string, `details` an array), code 3 (INVALID_ARGUMENT).
fn ozon_shape(body: &Value, why: &str) {
    assert_eq!(body["code"], 3, "{body}");
    assert_eq!(body["message"], why, "{body}");
    assert!(body["details"].is_array(), "{body}");
}

#[tokio::test]
async fn ozon_refuses_what_its_seller_api_refuses() {
    let s = open().await;
    let list = r#"{"filter": {"states": ["COMPLETED"]}, "limit": 1, "sort_by": "ORDER_CREATION", "sort_dir": "DESC"}"#;
    let o = |p, b| post("ozon", M::POST, p, b);
    // The description's own example is taken.
    let (status, why, _) = send(&s, o("/v3/supply-order/list", list)).await;
    assert_eq!((status, why.as_str()), (200, ""));
    // protobuf's JSON mapping: a 64-bit integer as a string, and null as a field's default.
    let (status, why, _) = send(
        &s,
        o("/v1/warehouse/list", r#"{"limit": "5", "offset": null}"#),
    )
    .await;
    assert_eq!((status, why.as_str()), (200, ""));
    let cases: Cases<'_> = vec![
        (
            o("/v3/supply-order/list", r#"{"filter": "#),
            "body: malformed JSON",
        ),
        (
            o(
                "/v3/supply-order/list",
                r#"{"filter": {"states": ["COMPLETED"]}}"#,
            ),
            "body.limit: is required",
        ),
        (
            o(
                "/v3/supply-order/list",
                r#"{"filter": {"states": ["COMPLETED"]}, "limit": 1000}"#,
            ),
            "body.limit: must be <=100",
        ),
        (
            o(
                "/v3/supply-order/list",
                r#"{"filter": {"states": ["COMPLETED"]}, "limit": 1, "sort_by": "PRICE"}"#,
            ),
            "body.sort_by: value must be one of",
        ),
        (
            o("/v2/warehouse/list", r#"{"limit": true}"#),
            "body.limit: want",
        ),
        (
            o("/v1/warehouse/list", r#"{"limit": 1000}"#),
            "body.limit: must be <=200",
        ),
        (
            o(
                "/v2/delivery-method/list",
                r#"{"limit": 1, "sort_dir": "UP"}"#,
            ),
            "body.sort_dir: value must be one of",
        ),
        (
            o(
                "/v1/analytics/product-queries",
                r#"{"date_from": "2019-08-24T14:15:22Z", "page_size": 5000}"#,
            ),
            "body.page_size: must be <=1000",
        ),
        (
            Req {
                content_type: Some("text/plain"),
                ..o("/v2/warehouse/list", r#"{"limit": 1}"#)
            },
            "Content-Type: text/plain is not accepted",
        ),
        (
            Req {
                content_type: None,
                ..o("/v2/warehouse/list", r#"{"limit": 1}"#)
            },
            "Content-Type: missing",
        ),
    ];
    refused(&s, cases, ozon_shape).await;
}

/// Bounds the descriptions state only in prose (docs/requests.md, "Bounds said in prose"):
/// Ozon's "Минимум — 1, максимум — 1000" for `/v3/product/list`'s `limit`, its "до 100
/// идентификаторов" for `/v1/product/archive`, WB's "Максимум 1 000 товаров" for a price upload;
/// each refused past the bound in the service's words, and taken at it.
#[tokio::test]
async fn bounds_said_only_in_prose_are_checked() {
    let s = open().await;
    let o = |p, b| post("ozon", M::POST, p, b);
    let ids = |n: usize| {
        let ids: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        format!(r#"{{"product_id": [{}]}}"#, ids.join(","))
    };
    let goods = |n: usize| {
        let goods: Vec<String> = (1..=n)
            .map(|i| format!(r#"{{"nmID": {i}, "price": 100}}"#))
            .collect();
        format!(r#"{{"data": [{}]}}"#, goods.join(","))
    };
    let (hundred, hundred_one) = (ids(100), ids(101));
    let (thousand, thousand_one) = (goods(1000), goods(1001));
    let upload = |b| post("wb", M::POST, "/discounts-prices-api/api/v2/upload/task", b);
    for (req, label) in [
        (
            o("/v3/product/list", r#"{"filter": {}, "limit": 1000}"#),
            "limit 1000",
        ),
        (o("/v1/product/archive", &hundred), "100 ids"),
        (upload(&thousand), "1 000 goods"),
    ] {
        let (status, why, body) = send(&s, req).await;
        // Taken by the validation: the archive then answers 404 for ids the sandbox never gave
        // (Ozon's own answer to them), the others 200.
        let want = if label == "100 ids" { 404 } else { 200 };
        assert_eq!((status, why.as_str()), (want, ""), "{label}: {body}");
    }
    let ozon: Cases<'_> = vec![
        (
            o("/v3/product/list", r#"{"filter": {}, "limit": 1001}"#),
            "body.limit: must be <=1000",
        ),
        (
            o("/v3/product/list", r#"{"filter": {}, "limit": 0}"#),
            "body.limit: must be >=1",
        ),
        (o("/v1/product/archive", &hundred_one), "body.product_id:"),
    ];
    refused(&s, ozon, ozon_shape).await;
    refused(&s, vec![(upload(&thousand_one), "body.data:")], wb_shape).await;
}

/// WB: its common error body (the specs' `response400`/`models.Error`: `title`, `detail`,
/// `code`, `requestId`, `origin`, `status`, `statusText`, `timestamp`), the reason as `detail`.
fn wb_shape(body: &Value, why: &str) {
    assert_eq!(body["detail"], why, "{body}");
    assert_eq!(body["status"], 400, "{body}");
    assert_eq!(body["statusText"], "Bad Request", "{body}");
    for field in ["title", "code", "requestId", "origin", "timestamp"] {
        assert!(body[field].is_string(), "{field} in {body}");
    }
}

#[tokio::test]
async fn wb_refuses_what_its_specs_refuse() {
    let s = open().await;
    let bids = |b| post("wb", M::POST, "/advert-api/adv/v0/bids/min", b);
    let (status, why, _) = send(
        &s,
        bids(r#"{"advert_id": 98765432, "nm_ids": [12345678], "payment_type": "cpm", "placement_types": ["search"]}"#),
    )
    .await;
    assert_eq!((status, why.as_str()), (200, ""));
    let cases: Cases<'_> = vec![
        (
            post(
                "wb",
                M::POST,
                "/content-api/content/v2/cards/upload",
                r#"{"bad":"#,
            ),
            "body: malformed JSON",
        ),
        (
            // WB's Go decoder takes a `null` for the list (as none), not an object.
            post("wb", M::POST, "/content-api/content/v2/cards/upload", "{}"),
            "body: want null or array",
        ),
        (
            bids(
                r#"{"advert_id": "x", "nm_ids": [1], "payment_type": "cpm", "placement_types": ["search"]}"#,
            ),
            "body.advert_id: want null or integer",
        ),
        (
            bids(
                r#"{"advert_id": 1, "nm_ids": [1], "payment_type": "cpa", "placement_types": ["search"]}"#,
            ),
            "body.payment_type: value must be one of 'cpm', 'cpc'",
        ),
        (
            bids(r#"{"nm_ids": [1], "payment_type": "cpm"}"#),
            "body.advert_id: is required",
        ),
        (
            post(
                "wb",
                M::POST,
                "/discounts-prices-api/api/v2/list/goods/filter",
                r#"{"nmList": "x"}"#,
            ),
            "body.nmList: want null or array",
        ),
        (
            get("wb", "/marketplace-api/api/v3/orders?limit=5000&next=0"),
            "query.limit: must be <=1000",
        ),
        (
            get("wb", "/marketplace-api/api/v3/orders?next=0"),
            "query.limit: is required",
        ),
        (
            Req {
                content_type: Some("text/plain"),
                ..bids("{}")
            },
            "Content-Type: text/plain is not accepted",
        ),
    ];
    refused(&s, cases, wb_shape).await;
}

/// Yandex Market: `ApiClientDataErrorResponse` (openapi.yaml: `status` "ERROR", `errors` of
/// `ApiErrorDTO` with `code` and `message`), code BAD_REQUEST.
fn ymarket_shape(body: &Value, why: &str) {
    assert_eq!(body["status"], "ERROR", "{body}");
    assert_eq!(body["errors"][0]["code"], "BAD_REQUEST", "{body}");
    assert_eq!(body["errors"][0]["message"], why, "{body}");
}

#[tokio::test]
async fn ymarket_refuses_what_its_openapi_refuses() {
    let s = open().await;
    let accept = |b| {
        post(
            "ymarket",
            M::PUT,
            "/v2/campaigns/1/orders/2/cancellation/accept",
            b,
        )
    };
    let decide = |b| {
        post(
            "ymarket",
            M::POST,
            "/v2/campaigns/1/orders/2/returns/3/decision",
            b,
        )
    };
    let (status, why, _) = send(
        &s,
        accept(r#"{"accepted": true, "reason": "ORDER_DELIVERED"}"#),
    )
    .await;
    assert_eq!((status, why.as_str()), (200, ""));
    let cases: Cases<'_> = vec![
        (accept(r#"{"accepted": tru"#), "body: malformed JSON"),
        (accept("{}"), "body.accepted: is required"),
        (
            accept(r#"{"accepted": "yes"}"#),
            "body.accepted: want boolean",
        ),
        (
            accept(r#"{"accepted": true, "reason": "LOST"}"#),
            "body.reason: value must be one of",
        ),
        (
            decide(r#"{"returnItemId": 1, "decisionType": "KEEP"}"#),
            "body.decisionType: value must be one of",
        ),
        (
            decide(r#"{"decisionType": "REFUND_MONEY"}"#),
            "body.returnItemId: is required",
        ),
        (
            get("ymarket", "/v2/campaigns/abc"),
            "path.campaignId: want integer",
        ),
        (
            post(
                "ymarket",
                M::POST,
                "/v1/campaigns/1/returns/cancel",
                r#"{"returnId": "one"}"#,
            ),
            "body.returnId: want integer",
        ),
        (
            Req {
                content_type: None,
                ..accept(r#"{"accepted": true}"#)
            },
            "Content-Type: missing",
        ),
    ];
    refused(&s, cases, ymarket_shape).await;
}

/// Apify: `{"error": {"type", "message"}}` (openapi.yaml's `ErrorResponse`), type invalid-input.
fn apify_shape(body: &Value, why: &str) {
    assert_eq!(body["error"]["type"], "invalid-input", "{body}");
    assert_eq!(body["error"]["message"], why, "{body}");
}

#[tokio::test]
async fn apify_refuses_what_its_openapi_refuses() {
    let s = open().await;
    let charge = |b| post("apify", M::POST, "/v2/actor-runs/r1/charge", b);
    let (status, why, _) = send(&s, charge(r#"{"eventName": "ANALYZE_PAGE", "count": 1}"#)).await;
    assert!(
        (200..300).contains(&status) && why.is_empty(),
        "{status} {why}"
    );
    let cases: Cases<'_> = vec![
        (charge(r#"{"eventName": "#), "body: malformed JSON"),
        (charge(r#"{"count": 1}"#), "body.eventName: is required"),
        (
            charge(r#"{"eventName": "A", "count": "one"}"#),
            "body.count: want",
        ),
        (
            post("apify", M::POST, "/v2/actor-tasks", "{}"),
            "body.actId: is required",
        ),
        (
            post("apify", M::POST, "/v2/webhooks", "{}"),
            "body.eventTypes: is required",
        ),
        (
            post("apify", M::POST, "/v2/tools/decode-and-verify", "{}"),
            "body.encoded: is required",
        ),
        (get("apify", "/v2/datasets?limit=abc"), "query.limit: want"),
        (
            Req {
                content_type: Some("text/plain"),
                ..charge("{}")
            },
            "Content-Type: text/plain is not accepted",
        ),
    ];
    refused(&s, cases, apify_shape).await;
}

/// MoySklad: its `errors` array (error, code, moreInfo) with the codes of its error list:
/// 2001 a body that is not JSON, 3000 a required field, 2016 a value of the wrong type, 3005 a
/// wrong value (https://dev.moysklad.ru/doc/api/remap/1.2/#oshibki).
fn moysklad_shape(body: &Value, why: &str) {
    let e = &body["errors"][0];
    let code = e["code"].as_u64().unwrap();
    let want = if why.starts_with("body: malformed") || why.starts_with("Content-Type") {
        2001
    } else if why.contains("is required") {
        3000
    } else if why.contains(": want ") {
        2016
    } else {
        3005
    };
    assert_eq!(code, want, "{why}: {body}");
    assert!(e["error"].is_string(), "{body}");
    assert!(
        e["moreInfo"].as_str().unwrap().ends_with(&code.to_string()),
        "{body}"
    );
}

#[tokio::test]
async fn moysklad_refuses_what_its_openapi_refuses() {
    let s = open().await;
    let base = "/api/remap/1.2/entity/product";
    let id = "/api/remap/1.2/entity/product/3fa85f64-5717-4562-b3fc-2c963f66afa6";
    let export = "/api/remap/1.2/entity/product/3fa85f64-5717-4562-b3fc-2c963f66afa6/export";
    let too_many = format!("{base}?limit=5000");
    let (status, why, _) = send(
        &s,
        post("moysklad", M::POST, base, r#"{"name": "a", "weight": 1.5}"#),
    )
    .await;
    assert_eq!((status, why.as_str()), (200, ""));
    let cases: Cases<'_> = vec![
        (
            post("moysklad", M::POST, base, r#"{"name": "#),
            "body: malformed JSON",
        ),
        (
            post(
                "moysklad",
                M::POST,
                base,
                r#"{"name": "a", "weight": "heavy"}"#,
            ),
            "body.weight: want number",
        ),
        (
            post("moysklad", M::PUT, id, r#"{"name": 5}"#),
            "body.name: want string",
        ),
        (
            post("moysklad", M::POST, export, "{}"),
            "body.organization: is required",
        ),
        (get("moysklad", &too_many), "query.limit: must be <=1000"),
        (
            get("moysklad", "/api/remap/1.2/entity/product/abc"),
            "path.id: 'abc' is not valid uuid",
        ),
        (
            Req {
                content_type: None,
                ..post("moysklad", M::POST, base, "{}")
            },
            "Content-Type: missing",
        ),
    ];
    refused(&s, cases, moysklad_shape).await;
}

/// MoySklad requires compression (limits.json `gzip_required`: "missing/other encoding -> 415
/// with empty body"): a request whose `Accept-Encoding` has no `gzip` (or refuses it with
/// `q=0`) is a 415 with no body, its reason in `X-APIStend-Invalid`; `X-Mock-Validation: off`
/// lets it through. Every other service takes it.
#[tokio::test]
async fn moysklad_answers_415_with_no_body_to_a_request_that_does_not_accept_gzip() {
    let s = open().await;
    let c = support::client();
    let url = format!("{}/moysklad/api/remap/1.2/entity/product", s.base);
    for (encoding, want) in [
        (None, 415),
        (Some("identity"), 415),
        (Some("deflate, gzip;q=0"), 415),
        (Some("br, GZIP;q=0.5"), 200),
        (Some("gzip"), 200),
    ] {
        let mut b = c.get(&url).bearer_auth(&s.key).header("X-Mock-Delay", "0");
        // reqwest adds `gzip` itself unless the request names an encoding: an empty value
        // stands for none.
        b = b.header("Accept-Encoding", encoding.unwrap_or(""));
        let resp = b.send().await.unwrap();
        let status = resp.status().as_u16();
        let why = resp.headers().get("x-apistend-invalid").cloned();
        let ctype = resp.headers().get("content-type").cloned();
        let body = resp.bytes().await.unwrap();
        assert_eq!(status, want, "{encoding:?}");
        if want == 415 {
            assert!(body.is_empty() && ctype.is_none(), "{encoding:?}: {body:?}");
            let why = why.unwrap();
            assert!(why.to_str().unwrap().starts_with("header accept-encoding"));
        }
    }
    let off = c
        .get(&url)
        .bearer_auth(&s.key)
        .header("Accept-Encoding", "identity")
        .header("X-Mock-Validation", "off")
        .send()
        .await
        .unwrap();
    assert_eq!(off.status(), 200);
    let other = c
        .get(format!("{}/apify/v2/acts", s.base))
        .bearer_auth(&s.key)
        .header("Accept-Encoding", "identity")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
}

/// `report` answers as if valid, with the reason; `off` checks nothing; per request
/// (`X-Mock-Validation`), per sandbox and per service (its settings); an unknown value is the
/// service's 400. Every refusal is counted in /metrics under its status and as invalid.
#[tokio::test]
async fn the_setting_strict_report_off_per_request_sandbox_and_service() {
    let s = open().await;
    let c = support::client();
    // A sandbox of its own, whose settings change below.
    let token = s.admin_token.clone().unwrap();
    let v: Value = c
        .post(format!("{}/api/v1/sandboxes", s.base))
        .bearer_auth(&token)
        .json(&json!({"name": "validation"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = v["id"].as_str().unwrap().to_owned();
    let key = v["keys"][0].as_str().unwrap().to_owned();
    let bad = |mode: Option<&str>| {
        let mut r = c
            .post(format!("{}/ozon/v2/warehouse/list", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &key)
            .header("X-Mock-Delay", "0")
            .json(&json!({"limit": "many"}));
        if let Some(m) = mode {
            r = r.header("X-Mock-Validation", m);
        }
        r.send()
    };
    let r = bad(None).await.unwrap();
    assert_eq!(r.status(), 400, "strict is the default");
    let r = bad(Some("report")).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["x-apistend-invalid"]
            .to_str()
            .unwrap()
            .starts_with("body.limit")
    );
    let r = bad(Some("off")).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-apistend-invalid").is_none());
    let r = bad(Some("lenient")).await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("X-Mock-Validation"),
        "{body}"
    );

    // The sandbox: `report` for all, then `off` for Ozon.
    let put = |settings: Value| {
        c.put(format!("{}/api/v1/sandboxes/{id}/settings", s.base))
            .bearer_auth(&token)
            .json(&settings)
            .send()
    };
    let r = put(json!({"validation": "report"})).await.unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let r = bad(None).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-apistend-invalid").is_some());
    let r = bad(Some("strict")).await.unwrap();
    assert_eq!(r.status(), 400, "the request's own choice wins");
    let r = put(json!({"validation": "strict", "validation_by_service": {"ozon": "off"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = bad(None).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-apistend-invalid").is_none());
    let r = put(json!({"validation_by_service": {"nope": "off"}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 422, "an unknown service");
    let r = put(json!({"validation": "sometimes"})).await.unwrap();
    assert!(r.status().is_client_error());

    let metrics = support::metrics(&s.base).await;
    assert!(
        metrics.lines().any(
            |l| l.starts_with("apistend_requests_total{service=\"ozon\"")
                && l.contains("status=\"400\"")
        ),
        "{metrics}"
    );
    for mode in ["strict", "report"] {
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with("apistend_invalid_requests_total")
                    && l.contains(&format!("mode=\"{mode}\""))),
            "{mode}: {metrics}"
        );
    }
}

/// A body of 10 MiB or nested 10 000 deep is refused quickly, in the service's own answer,
/// never a stack overflow.
#[tokio::test]
async fn huge_and_deep_bodies_are_refused_in_the_services_words() {
    let s = open().await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let (status, why, body) = send(&s, post("ozon", M::POST, "/v2/warehouse/list", &deep)).await;
    assert_eq!(status, 400, "{why}");
    assert!(
        why.starts_with("body: malformed JSON: recursion limit"),
        "{why}"
    );
    ozon_shape(&body, &why);
    let big = format!("{{\"limit\": 1, \"cursor\": \"{}\"}}", "x".repeat(10 << 20));
    let (status, _, body) = send(&s, post("ozon", M::POST, "/v2/warehouse/list", &big)).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], 3, "{body}");
}

/// A body is held to the size its operation's description states, not the sandbox's 1 MiB:
/// WB's card uploads take 10 MB ("Максимальный размер запроса 10 Мб", 02-products.yaml), its
/// other operations the sandbox's limit; MoySklad takes 20 MB ("Не более 20 Мб данных в одном
/// запросе", md/_restrictions.md), more is its error 1044 (md/_errors.md).
#[tokio::test]
async fn each_operation_takes_the_body_size_its_description_states() {
    let s = open().await;
    let c = support::client();
    let catalog = Catalog::builtin().unwrap();
    let sized = async |service: &str, path: &str, mib: usize| {
        let svc = catalog
            .service(catalog.service_id(service).unwrap())
            .unwrap();
        let mut b = c
            .post(format!("{}/{service}{path}", s.base))
            .header("X-Mock-Delay", "0")
            .header("X-Mock-Validation", "off")
            .header("Content-Type", "application/json");
        for (name, value) in svc.credential_headers(&s.key) {
            b = b.header(name, value);
        }
        let body = format!("[{{\"name\": \"{}\"}}]", "x".repeat((mib << 20) - 100));
        let r = b.body(body).send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
        )
    };
    let (status, body) = sized("wb", "/content/v2/cards/upload", 2).await;
    assert_ne!(status, 413, "{body}");
    let (status, body) = sized("wb", "/content/v2/cards/upload", 11).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["status"], 413, "{body}");
    assert!(
        body["title"].is_string() && body["requestId"].is_string(),
        "{body}"
    );
    let (status, body) = sized("wb", "/api/v2/upload/task", 2).await;
    assert_eq!(status, 413, "{body}");
    let (status, body) = sized("moysklad", "/api/remap/1.2/entity/product", 2).await;
    assert_ne!(status, 413, "{body}");
    let (status, body) = sized("moysklad", "/api/remap/1.2/entity/product", 21).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["errors"][0]["code"], 1044, "{body}");

    // MoySklad: "не более 1000 элементов" in any list of a request, 413 above
    // (md/_restrictions.md); checked with the validation, so `off` lets it through.
    let positions = |n: usize| {
        let items: Vec<Value> = (0..n).map(|_| json!({"quantity": 1})).collect();
        json!({"name": "x", "positions": items}).to_string()
    };
    let path = "/api/remap/1.2/entity/customerorder";
    let (status, why, body) = send(&s, post("moysklad", M::POST, path, &positions(1001))).await;
    assert_eq!(status, 413, "{why} {body}");
    assert_eq!(why, "body.positions: 1001 items, at most 1000");
    assert_eq!(body["errors"][0]["code"], 1044, "{body}");
    let (status, why, _) = send(&s, post("moysklad", M::POST, path, &positions(1000))).await;
    assert_ne!(status, 413, "{why}");
}

/// Bitrix24 (six methods): `{"error", "error_description"}` (errors.json's envelope), 400,
/// with the codes its methods answer: ERROR_ARGUMENT "Argument 'X' is null or empty" for a
/// missing parameter, INVALID_ARG_VALUE for a value the method does not take.
#[tokio::test]
async fn bitrix24_refuses_a_method_called_without_its_parameters() {
    let s = open().await;
    let c = support::client();
    let call = |method: &str, query: &[(&str, &str)], body: Option<Value>| {
        let mut r = c
            .post(format!("{}/b24/rest/1/{}/{method}.json", s.base, s.key))
            .header("X-Mock-Delay", "0")
            .query(query);
        if let Some(b) = body {
            r = r.json(&b);
        }
        r.send()
    };
    let refused = async |r: reqwest::Response, code: &str, reason: &str| {
        assert_eq!(r.status(), 400);
        let why = r.headers()["x-apistend-invalid"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(why.starts_with(reason), "{why}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"], code, "{body}");
        assert!(body["error_description"].is_string(), "{body}");
        body
    };
    // crm.deal.update: `id` (integer) required; `fields` is not.
    let body = refused(
        call("crm.deal.update", &[], None).await.unwrap(),
        "ERROR_ARGUMENT",
        "params.id: is required",
    )
    .await;
    assert_eq!(body["error_description"], "Argument 'id' is null or empty");
    refused(
        call("crm.deal.update", &[("id", "abc")], None)
            .await
            .unwrap(),
        "INVALID_ARG_VALUE",
        "params.id: want integer",
    )
    .await;
    // Found in any case, in the query, a JSON body or a form's PHP keys (deal 1 is one the
    // sandbox starts with: an id it does not hold would be Bitrix24's `Not found`).
    for r in [
        call("crm.deal.update", &[("ID", "1")], None).await.unwrap(),
        call(
            "crm.deal.update",
            &[],
            Some(json!({"id": 1, "fields": {"TITLE": "x"}})),
        )
        .await
        .unwrap(),
        call(
            "CRM.DEAL.UPDATE",
            &[("Id", "1"), ("fields[TITLE]", "x")],
            None,
        )
        .await
        .unwrap(),
    ] {
        assert!(r.headers().get("x-apistend-invalid").is_none(), "{r:?}");
        assert_eq!(r.status(), 200);
    }
    // access.name: `ACCESS` (array) required, given as PHP's `ACCESS[]`.
    refused(
        call("access.name", &[], None).await.unwrap(),
        "ERROR_ARGUMENT",
        "params.ACCESS: is required",
    )
    .await;
    let r = call("access.name", &[("ACCESS[]", "G2")], None)
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // user.get takes nothing it requires.
    assert_eq!(call("user.get", &[], None).await.unwrap().status(), 200);
    // crm.contact.get and crm.company.delete: `id` (integer); department.add: `NAME` and
    // `PARENT` (integer) — methods.json's parameters.
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: [Case<'_>; 5] = [
        (
            "crm.contact.get",
            &[],
            "ERROR_ARGUMENT",
            "params.id: is required",
        ),
        (
            "crm.contact.get",
            &[("id", "first")],
            "INVALID_ARG_VALUE",
            "params.id: want integer",
        ),
        (
            "crm.company.delete",
            &[],
            "ERROR_ARGUMENT",
            "params.id: is required",
        ),
        (
            "department.add",
            &[("PARENT", "1")],
            "ERROR_ARGUMENT",
            "params.NAME: is required",
        ),
        (
            "department.add",
            &[("NAME", "Sales"), ("PARENT", "top")],
            "INVALID_ARG_VALUE",
            "params.PARENT: want integer",
        ),
    ];
    for (method, query, code, reason) in cases {
        refused(call(method, query, None).await.unwrap(), code, reason).await;
    }
    let r = call(
        "department.add",
        &[("NAME", "Sales"), ("PARENT", "1")],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
}

/// Bitrix24's `batch` checks each command when it runs it, its `$result[…]` references
/// resolved: a command without its required parameter is that command's error in
/// `result_error` (ERROR_ARGUMENT, as the method alone answers), the others run — over the
/// sandbox's objects or without state — and `halt=1` stops there. `report` answers it and names
/// it in `X-APIStend-Invalid`; `off` checks nothing.
#[tokio::test]
async fn bitrix24_checks_each_command_of_a_batch() {
    let s = open().await;
    let c = support::client();
    let batch = |halt: u8, state: &str, validation: &str| {
        c.post(format!("{}/b24/rest/1/{}/batch.json", s.base, s.key))
            .header("X-Mock-Delay", "0")
            .header("X-Mock-State", state.to_owned())
            .header("X-Mock-Validation", validation.to_owned())
            .json(&json!({"halt": halt, "cmd": {
                "add": "crm.deal.add?fields[TITLE]=Batch deal",
                "bad": "crm.deal.get",
                "wrong": "crm.deal.get?id=abc",
                "read": "crm.deal.get?id=$result[add]",
            }}))
            .send()
    };
    let r = batch(0, "on", "strict").await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-apistend-invalid").is_none(), "{r:?}");
    let body: Value = r.json().await.unwrap();
    let out = &body["result"];
    assert_eq!(
        out["result_error"]["bad"]["error"], "ERROR_ARGUMENT",
        "{body}"
    );
    assert_eq!(
        out["result_error"]["bad"]["error_description"],
        "Argument 'id' is null or empty"
    );
    assert_eq!(
        out["result_error"]["wrong"]["error"], "INVALID_ARG_VALUE",
        "{body}"
    );
    assert_eq!(out["result"]["read"]["TITLE"], "Batch deal", "{body}");
    assert!(out["result"].get("bad").is_none(), "{body}");

    // Without state, the same check; `halt=1` stops at the first error.
    let body: Value = batch(1, "off", "strict")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let out = &body["result"];
    assert_eq!(
        out["result_error"]["bad"]["error"], "ERROR_ARGUMENT",
        "{body}"
    );
    assert!(out["result"].get("add").is_some(), "{body}");
    assert!(out["result"].get("read").is_none(), "halted: {body}");
    assert!(out["result_error"].get("wrong").is_none(), "halted: {body}");

    // `report`: every command answered, the first invalid one named.
    let r = batch(0, "on", "report").await.unwrap();
    let why = r.headers()["x-apistend-invalid"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        why.starts_with("crm.deal.get: params.id: is required"),
        "{why}"
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["result"]["result"]["read"]["TITLE"], "Batch deal",
        "{body}"
    );
    let r = batch(0, "on", "off").await.unwrap();
    assert!(r.headers().get("x-apistend-invalid").is_none(), "{r:?}");
    let metrics = support::metrics(&s.base).await;
    assert!(
        metrics.contains("apistend_invalid_requests_total{service=\"b24\",mode=\"report\"} 2"),
        "{metrics}"
    );
}

/// Every documented Bitrix24 method that requires a parameter is refused without it, and
/// answers with every required parameter given (`1`).
#[tokio::test]
async fn every_bitrix24_method_requires_its_documented_parameters() {
    let Some(text) = support::shared_file("specs/b24/methods.json") else {
        return;
    };
    let s = open().await;
    let c = support::client();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let b24 = catalog.service(catalog.service_id("b24").unwrap()).unwrap();
    // A method documented twice (REST 2 and 3) requires what both require.
    let mut methods: Vec<(String, Vec<String>)> = Vec::new();
    for m in doc["methods"].as_array().unwrap() {
        let name = m["method"].as_str().unwrap().to_ascii_lowercase();
        let required: Vec<String> = m["params"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["required"] == true)
            .filter_map(|p| p["name"].as_str())
            .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_owned)
            .collect();
        match methods.iter_mut().find(|(n, _)| *n == name) {
            Some((_, both)) => both.retain(|r| required.contains(r)),
            None => methods.push((name, required)),
        }
    }
    let (mut refused, mut accepted, mut without, mut failed) = (0, 0, 0, Vec::new());
    for (name, required) in &methods {
        if !b24
            .operations
            .iter()
            .any(|o| o.path.eq_ignore_ascii_case(&format!("/rest/{name}")))
        {
            continue;
        }
        let send = |query: Vec<(&str, &str)>| {
            c.post(format!("{}/b24/rest/1/{}/{name}.json", s.base, s.key))
                .header("X-Mock-Delay", "0")
                .query(&query)
                .send()
        };
        let r = send(required.iter().map(|n| (n.as_str(), "1")).collect())
            .await
            .unwrap();
        if r.headers().contains_key("x-apistend-invalid") {
            failed.push(format!(
                "{name} with its parameters: {:?}",
                r.headers()["x-apistend-invalid"]
            ));
        } else {
            accepted += 1;
        }
        if required.is_empty() {
            without += 1;
            continue;
        }
        let r = send(Vec::new()).await.unwrap();
        if r.status() == 400 && r.headers().contains_key("x-apistend-invalid") {
            refused += 1;
        } else {
            failed.push(format!("{name} without {required:?}: {}", r.status()));
        }
    }
    eprintln!(
        "Bitrix24: {accepted} accepted with their parameters, {refused} refused without, {without} require none"
    );
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(refused > 500, "{refused}");
}

/// Every amoCRM endpoint of endpoints.json: its documented request (ids `1`, `leads` for an
/// entity type) is taken, and a request broken where it can be — a malformed JSON body where it
/// takes one, else a word for an id in its path — is refused in amoCRM's problem+json. The
/// token exchange is outside the API (answered before validation) and not walked.
#[tokio::test]
async fn every_amocrm_endpoint_takes_its_example_and_refuses_it_broken() {
    let Some(text) = support::shared_file("specs/amocrm/endpoints.json") else {
        return;
    };
    let doc: Value = serde_json::from_str(&text).unwrap();
    let s = open().await;
    let (mut walked, mut broken, mut nothing) = (0, 0, Vec::new());
    for e in doc["endpoints"].as_array().unwrap() {
        let (method, path) = (e["method"].as_str().unwrap(), e["path"].as_str().unwrap());
        if path.starts_with("/oauth2/") {
            continue;
        }
        walked += 1;
        let fill = |id: &str| {
            path.split('/')
                .map(
                    |seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                        Some(name) if name.ends_with("id") => id.to_owned(),
                        Some(_) => "leads".to_owned(),
                        None => seg.to_owned(),
                    },
                )
                .collect::<Vec<_>>()
                .join("/")
        };
        let m = M::from_bytes(method.as_bytes()).unwrap();
        let example = e.get("example_request_body").filter(|b| !b.is_null());
        let body = example.map(Value::to_string);
        let valid = fill("1");
        let req = match &body {
            Some(b) => post("amocrm", m.clone(), &valid, b),
            None => Req {
                method: m.clone(),
                ..get("amocrm", &valid)
            },
        };
        let (status, why, answer) = send(&s, req).await;
        assert!(
            why.is_empty() && status != 400,
            "{method} {path}: {status} {why} {answer}"
        );
        // A literal path is its own endpoint's, not `/api/v4/leads/{id}`'s.
        if let Some(list) = path
            .strip_prefix("/api/v4/{entity_type}/")
            .filter(|l| !l.contains('{'))
        {
            assert!(
                answer["_embedded"][list].is_array(),
                "{method} {valid}: {answer}"
            );
        }
        let bad_path = fill("abc");
        let (req, reason) = match (&body, bad_path != valid) {
            (Some(_), _) => (post("amocrm", m, &valid, "[{"), "body: malformed JSON"),
            (None, true) => (
                Req {
                    method: m,
                    ..get("amocrm", &bad_path)
                },
                "path.",
            ),
            (None, false) => {
                nothing.push(format!("{method} {path}"));
                continue;
            }
        };
        let (status, why, answer) = send(&s, req).await;
        assert_eq!(status, 400, "{method} {path}: {why} {answer}");
        assert!(why.starts_with(reason), "{method} {path}: {why}");
        assert_eq!(answer["title"], "Bad Request", "{answer}");
        broken += 1;
    }
    eprintln!(
        "amoCRM: {walked} endpoints, {broken} refused broken, nothing to break in {}: {nothing:?}",
        nothing.len()
    );
    assert_eq!(walked, broken + nothing.len());
    // Lists and reads without an id or body take nothing endpoints.json types.
    assert!(nothing.iter().all(|n| n.starts_with("GET ")), "{nothing:?}");
}

/// amoCRM (no OpenAPI: endpoints.json): a body of the example's shape and scalar types, integer
/// ids; refused in its problem+json with `validation-errors` naming the field (`path`).
#[tokio::test]
async fn amocrm_refuses_what_its_documentation_does_not_send() {
    let s = open().await;
    let amo = |m: M, p: &'static str, b: &'static str| post("amocrm", m, p, b);
    let (status, why, _) = send(
        &s,
        amo(
            M::POST,
            "/api/v4/leads",
            r#"[{"name": "x", "price": 20000}]"#,
        ),
    )
    .await;
    assert!(
        (200..300).contains(&status) && why.is_empty(),
        "{status} {why}"
    );
    let cases: Cases<'_> = vec![
        (
            amo(M::POST, "/api/v4/leads", r#"[{"name": "#),
            "body: malformed JSON",
        ),
        (
            amo(M::POST, "/api/v4/leads", r#"{"name": "x"}"#),
            "body: want array",
        ),
        (
            amo(
                M::POST,
                "/api/v4/leads",
                r#"[{"name": "x", "price": "20000"}]"#,
            ),
            "body[0].price: want",
        ),
        (
            amo(M::PATCH, "/api/v4/leads/abc", r#"{"status_id": 1}"#),
            "path.id: want integer",
        ),
        (
            amo(
                M::POST,
                "/api/v4/tasks",
                r#"[{"text": "x", "complete_till": "tomorrow"}]"#,
            ),
            "body[0].complete_till: want",
        ),
        (
            amo(
                M::POST,
                "/api/v4/webhooks",
                r#"{"destination": "https://x", "settings": "add_lead"}"#,
            ),
            "body.settings: want",
        ),
        (
            Req {
                content_type: Some("text/plain"),
                ..amo(M::POST, "/api/v4/contacts", "[]")
            },
            "Content-Type: text/plain is not accepted",
        ),
    ];
    refused(&s, cases, |body, why| {
        assert_eq!(body["status"], 400, "{body}");
        assert_eq!(body["title"], "Bad Request", "{body}");
        let e = &body["validation-errors"][0]["errors"][0];
        assert!(e["code"].is_string(), "{body}");
        assert_eq!(e["detail"], why, "{body}");
    })
    .await;
}
