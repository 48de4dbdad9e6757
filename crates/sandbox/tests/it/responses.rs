//! What the operations answer: WB spec examples (with parameter checks), the built-in Bitrix24,
//! Apify and Ozon methods, and each service's own 404.

use crate::support;

use apistend_catalog::Overrides;
use serde_json::Value;

/// The embedded answers are exactly what the import makes of WB's official specs.
#[test]
fn the_embedded_wb_answers_are_what_the_import_makes_of_the_specs() {
    let Some(specs) = support::wb_specs() else {
        return;
    };
    let fresh = apistend_sandbox::SpecAnswers::load(&specs)
        .unwrap()
        .to_file_bytes();
    let committed = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../answers/data/wb-answers.pack"),
    )
    .unwrap();
    assert!(
        fresh == committed,
        "crates/answers/data/wb-answers.pack is stale: run `cargo run -p apistend -- catalog \
         import-wb-openapi ../shared/wb-openapi -o crates/catalog/data/wb.json --answers \
         crates/answers/data/wb-answers.pack`"
    );
    let embedded = apistend_sandbox::SpecAnswers::embedded("wb").unwrap();
    assert_eq!(embedded.len(), 299);
    assert_eq!(
        embedded.to_file_bytes(),
        committed,
        "the file reads back whole"
    );
}

/// Without `--wb-openapi`, WB answers from the embedded import: spec examples, parameter checks.
#[tokio::test]
async fn wb_answers_from_the_embedded_import_without_any_spec_directory() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let r = c
        .get(format!("{}/wb/api/v3/warehouses", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert!(
        body[0]["id"].is_number() && body[0]["name"].is_string(),
        "{body}"
    );
    let r = c
        .get(format!(
            "{}/wb/statistics-api/api/v1/supplier/incomes",
            s.base
        ))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "dateFrom is required");
    // A required body that is not JSON (a multipart upload) is accepted.
    let r = c
        .post(format!("{}/wb/content-api/content/v3/media/file", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .header("Content-Type", "multipart/form-data; boundary=x")
        .body("--x\r\nContent-Disposition: form-data; name=\"uploadfile\"; filename=\"a.jpg\"\r\n\r\nJPEG\r\n--x--\r\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

/// With a newer WB description (`--wb-openapi DIR`), its rules check the requests, not the
/// embedded ones: here a newer incomes report that requires `since` and no longer `dateFrom`.
#[tokio::test]
async fn a_newer_wb_description_checks_the_requests_by_its_own_rules() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("05-statistics.yaml"),
        r#"openapi: 3.0.1
info: {title: statistics, version: "2"}
servers: [{url: "https://statistics-api.wildberries.ru"}]
paths:
  /api/v1/supplier/incomes:
    get:
      parameters:
        - {name: since, in: query, required: true, schema: {type: string}}
      responses:
        "200":
          description: incomes
          content:
            application/json:
              example: [{"incomeId": 1}]
"#,
    )
    .unwrap();
    // The report allows one request a minute: this test is not about that.
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let wb = catalog.service(catalog.service_id("wb").unwrap()).unwrap();
    let wide: String = wb
        .groups
        .iter()
        .map(|g| format!("[wb.groups.\"{}\"]\nburst = 1000\ninterval_ms = 1\n", g.id))
        .collect();
    let overrides = apistend_catalog::Overrides::from_toml(&wide).unwrap();
    let s = support::start(|c| {
        c.with_newer_examples("wb", dir.path())
            .with_overrides(overrides)
    })
    .await;
    let c = support::client();
    let incomes = |q: &str| {
        c.get(format!("{}/wb/api/v1/supplier/incomes{q}", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0")
            .send()
    };
    let r = incomes("").await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.headers()["x-apistend-invalid"],
        "query.since: is required"
    );
    let r = incomes("?since=2026-01-01").await.unwrap();
    assert_eq!(r.status(), 200, "dateFrom is no longer required");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body[0]["incomeId"], 1);
}

/// A refusal in the media type the operation's description documents for its 400: WB's tariffs
/// answer `application/problem+json` (the example's `origin`, the reason as `detail`), its
/// advertising API `text/plain`; the others keep the service's JSON.
#[tokio::test]
async fn wb_refusals_use_the_media_type_their_description_documents() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let send = |req: reqwest::RequestBuilder| async {
        let r = req
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0")
            .send()
            .await
            .unwrap();
        let media = r.headers()["content-type"].to_str().unwrap().to_owned();
        (r.status().as_u16(), media, r.text().await.unwrap())
    };
    let (status, media, body) =
        send(c.get(format!("{}/wb/common-api/api/v1/tariffs/pallet", s.base))).await;
    assert_eq!((status, media.as_str()), (400, "application/problem+json"));
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["origin"], "tariffs");
    assert_eq!(body["detail"], "query.date: is required", "{body}");
    let (status, media, body) =
        send(c.post(format!("{}/wb/advert-api/adv/v1/promotion/adverts", s.base))).await;
    assert_eq!((status, media.as_str()), (400, "text/plain"));
    assert_eq!(body, "body: is required");
    let (status, media, _) = send(c.get(format!(
        "{}/wb/statistics-api/api/v1/supplier/incomes",
        s.base
    )))
    .await;
    assert_eq!((status, media.as_str()), (400, "application/json"));
}

#[tokio::test]
async fn wb_answers_from_all_fourteen_specs() {
    let Some(specs) = support::wb_specs() else {
        return;
    };
    let loaded = apistend_sandbox::SpecAnswers::load(&specs).unwrap();
    assert!(loaded.len() >= 299, "{} operations", loaded.len());
    let s = support::start(|c| c.with_newer_examples("wb", &specs)).await;
    let c = support::client();
    let get = |p: &str| {
        c.get(format!("{}/wb{p}", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0")
    };
    let r = get("/statistics-api/api/v1/supplier/incomes?dateFrom=2026-01-01")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert!(
        body.is_array() && !body.as_array().unwrap().is_empty(),
        "the spec's example: {body}"
    );
    let r = get("/api/v1/supplier/stocks").send().await.unwrap();
    assert_eq!(r.status(), 400, "dateFrom is required");
    let body: Value = r.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("dateFrom"));
    let r = get("/content/v2/object/all").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = get("/no/such/path").send().await.unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["title"], "path not found");
}

#[tokio::test]
async fn built_in_answers_of_bitrix_apify_ozon() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let b24 = |m: &str| {
        c.post(format!("{}/b24/rest/{m}.json", s.base))
            .header("X-Mock-Key", &s.key)
            .header("X-Mock-Delay", "0")
    };
    for (m, query) in [
        ("crm.deal.fields", &[][..]),
        ("crm.deal.list", &[]),
        ("crm.deal.add", &[]),
        ("profile", &[]),
        ("app.info", &[]),
        // Its two required parameters (methods.json).
        (
            "placement.bind",
            &[
                ("PLACEMENT", "CRM_DEAL_DETAIL_TAB"),
                ("HANDLER", "https://example.com/tab"),
            ],
        ),
    ] {
        let v: Value = b24(m)
            .query(query)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            v.get("result").is_some() && v.get("time").is_some(),
            "{m}: {v}"
        );
    }
    // The deals a sandbox starts with are its list's example (1, 2, 3).
    let v: Value = b24("crm.deal.get")
        .query(&[("id", "2")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["ID"], "2");
    // Method names are case-insensitive (../shared/specs/b24/limits.md), in a batch too.
    let v: Value = b24("CRM.Deal.Get")
        .query(&[("id", "3")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["ID"], "3", "{v}");
    let v: Value = b24("batch")
        .json(&serde_json::json!({"cmd": {"a": "crm.deal.Get?id=1"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["result"]["a"]["ID"], "1", "{v}");
    let v: Value = b24("batch")
        .json(&serde_json::json!({"cmd": {"a": "crm.deal.get?id=1", "b": "profile"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["result"]["a"]["ID"], "1");
    let too_many: serde_json::Map<String, Value> = (0..51)
        .map(|i| (format!("c{i}"), Value::from("profile")))
        .collect();
    let r = b24("batch")
        .json(&serde_json::json!({"cmd": too_many}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"],
        "ERROR_BATCH_LENGTH_EXCEEDED"
    );
    let r = b24("crm.nothing").send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"],
        "ERROR_METHOD_NOT_FOUND"
    );

    let apify = |m: reqwest::Method, p: &str| {
        c.request(m, format!("{}/apify{p}", s.base))
            .bearer_auth(&s.key)
            .header("X-Mock-Delay", "0")
    };
    use reqwest::Method as M;
    let me: Value = apify(M::GET, "/v2/users/me")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["data"]["plan"]["apiRateLimitBoosts"], 0);
    assert!(
        apify(M::GET, "/v2/users/me/limits")
            .send()
            .await
            .unwrap()
            .status()
            .is_success()
    );
    assert!(
        apify(M::GET, "/v2/datasets/ds1/items")
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
            .is_array()
    );
    assert_eq!(
        apify(M::PUT, "/v2/key-value-stores/kv/records/OUTPUT")
            .send()
            .await
            .unwrap()
            .status(),
        201
    );
    assert_eq!(
        apify(M::POST, "/v2/acts/apify~web-scraper/runs")
            .send()
            .await
            .unwrap()
            .status(),
        201
    );
    let r = apify(M::GET, "/v2/nothing/here").send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["type"],
        "page-not-found"
    );

    let ozon = |p: &str| {
        c.post(format!("{}/ozon{p}", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "0")
    };
    // Each with a body its description takes (no body is an empty message to Ozon's gateway,
    // and two of these require fields).
    for (p, body) in [
        ("/v3/product/list", serde_json::json!({})),
        ("/v3/product/info/list", serde_json::json!({})),
        (
            "/v4/product/info/stocks",
            serde_json::json!({"filter": {"visibility": "ALL"}, "limit": 100}),
        ),
        (
            "/v2/products/stocks",
            serde_json::json!({"stocks": [{"offer_id": "a", "product_id": 1, "stock": 1, "warehouse_id": 1}]}),
        ),
    ] {
        let r = ozon(p).json(&body).send().await.unwrap();
        assert_eq!(r.status(), 200, "{p}: {}", r.text().await.unwrap());
    }
    let r = ozon("/v9/unknown").send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], 5);
}

/// The committed answers file `name` is exactly what the import makes of `spec` (under
/// `../shared/specs`); `command` regenerates it.
fn embedded_answers_match(name: &str, spec: &str, command: &str) {
    committed_is_fresh(&format!("{name}-answers.pack"), spec, command, |path| {
        apistend_sandbox::SpecAnswers::load_file(path)
            .unwrap()
            .to_file_bytes()
    });
}

/// The committed `data/{file}` is exactly what `import` makes of `spec` (under
/// `../shared/specs`); `command` regenerates it. Skipped loudly outside CI without ../shared.
fn committed_is_fresh(
    file: &str,
    spec: &str,
    command: &str,
    import: impl Fn(&std::path::Path) -> Vec<u8>,
) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("../../../shared/specs").join(spec);
    if !path.exists() {
        assert!(
            !apistend_testkit::in_ci(),
            "{} is missing in CI",
            path.display()
        );
        eprintln!("SKIP: {} not found", path.display());
        return;
    }
    let committed = std::fs::read(root.join("../answers/data").join(file)).unwrap();
    assert!(
        import(&path) == committed,
        "crates/answers/data/{file} is stale: run `{command}`"
    );
}

/// The embedded Apify answers are exactly what the import makes of its official OpenAPI.
#[test]
fn the_embedded_apify_answers_are_what_the_import_makes_of_the_openapi() {
    embedded_answers_match(
        "apify",
        "apify/openapi.yaml",
        "cargo run -p apistend -- catalog import-apify ../shared/specs/apify/openapi.yaml \
         --definition services/apify.toml --answers crates/answers/data/apify-answers.pack",
    );
}

/// The embedded Ozon answers are exactly what the import makes of its official Seller API.
#[test]
fn the_embedded_ozon_answers_are_what_the_import_makes_of_the_openapi() {
    embedded_answers_match(
        "ozon",
        "ozon/seller-openapi.json",
        "cargo run -p apistend -- catalog import-openapi ../shared/specs/ozon/seller-openapi.json \
         --definition services/ozon.toml --answers crates/answers/data/ozon-answers.pack",
    );
}

/// The embedded Yandex Market answers are exactly what the import makes of its official OpenAPI.
#[test]
fn the_embedded_ymarket_answers_are_what_the_import_makes_of_the_openapi() {
    embedded_answers_match(
        "ymarket",
        "yandex-market/openapi.yaml",
        "cargo run -p apistend -- catalog import-answers ../shared/specs/yandex-market/openapi.yaml \
         -o crates/answers/data/ymarket-answers.pack",
    );
}

/// The embedded MoySklad answers are exactly what the import makes of its official OpenAPI.
#[test]
fn the_embedded_moysklad_answers_are_what_the_import_makes_of_the_openapi() {
    embedded_answers_match(
        "moysklad",
        "moysklad/openapi.yaml",
        "cargo run -p apistend -- catalog import-openapi ../shared/specs/moysklad/openapi.yaml \
         --definition services/moysklad.toml --answers crates/answers/data/moysklad-answers.pack \
         --extra ../shared/specs/moysklad/doc-only-endpoints.json",
    );
}

/// Ozon's product list answers with the full item shape of its documentation.
#[tokio::test]
async fn ozon_items_carry_the_documented_fields() {
    let s = support::start(|c| c).await;
    let body: Value = support::json(
        support::client()
            .post(format!("{}/ozon/v3/product/info/list", s.base))
            .header("Client-Id", "1")
            .header("Api-Key", &s.key)
            .header("X-Mock-Delay", "0")
            // The product a sandbox starts with: the example's.
            .json(&serde_json::json!({"offer_id": ["OFFER_123456789"]})),
    )
    .await;
    let item = &body["items"][0];
    for field in [
        "created_at",
        "statuses",
        "stocks",
        "visibility_details",
        "price_indexes",
        "model_info",
    ] {
        assert!(item.get(field).is_some(), "{field} missing in {item}");
    }
}

/// Sends every operation of `service` (path parameters filled, a JSON body on writes and batch
/// deletes) and returns how many answered 2xx, and the others.
async fn walk(
    s: &support::TestServer,
    service: apistend_catalog::ServiceId,
    headers: &[(&str, String)],
) -> (usize, Vec<String>) {
    let c = support::client();
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let svc = catalog.service(service).unwrap();
    let mut answered = 0;
    let mut failed = Vec::new();
    for (i, op) in svc.operations.iter().enumerate() {
        let path: String = op
            .path
            .split('/')
            .map(|seg| {
                if seg.starts_with('{') {
                    format!("r{i}")
                } else {
                    seg.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        let method = reqwest::Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
        // What is walked is the answers, not the requests (made up, not valid: `r{i}` for
        // every path parameter, `{}` for every body): validation is off, and checked by its
        // own walk (`validation::…`); and the stateless answers, not what a sandbox keeps
        // (which has no object `r{i}`: `jobs.rs`, `objects.rs`).
        let mut r = c
            .request(method, format!("{}{}{path}", s.base, svc.prefix))
            .header("X-Mock-Delay", "0")
            .header("X-Mock-Validation", "off")
            .header("X-Mock-State", "off");
        for (k, v) in headers {
            r = r.header(*k, v);
        }
        // Writes carry a body; so does a batch delete (its body lists the requests).
        let writes = matches!(
            op.method,
            apistend_catalog::Method::Post | apistend_catalog::Method::Put
        );
        if writes || op.path.ends_with("/batch") {
            r = r.json(&serde_json::json!({}));
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        if (200..300).contains(&status) {
            answered += 1;
        } else {
            failed.push(format!("{} {} → {status} {text}", op.method, op.path));
        }
    }
    (answered, failed)
}

/// Every operation of Apify's description answers 2xx, under `/v2/actors/…` and the deprecated
/// `/v2/acts/…`.
#[tokio::test]
async fn every_apify_operation_answers_under_its_current_and_deprecated_paths() {
    let s = support::start(|c| c).await;
    let bearer = format!("Bearer {}", s.key);
    let (answered, failed) = walk(&s, service_id("apify"), &[("Authorization", bearer)]).await;
    eprintln!(
        "Apify: {answered} operation paths answered 2xx, {} not",
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(answered >= 231 + 60, "{answered}");
}

/// Every operation of Ozon's Seller API answers 2xx with its documented example. The account's
/// bucket (50 per second) is opened wide first: the walk is not a rate test.
#[tokio::test]
async fn every_ozon_operation_answers() {
    let s = support::start(|c| {
        c.with_overrides(
            Overrides::from_toml("[ozon.groups.client]\nburst = 1000\ninterval_ms = 1\n").unwrap(),
        )
    })
    .await;
    let (answered, failed) = walk(
        &s,
        service_id("ozon"),
        &[("Client-Id", "1".into()), ("Api-Key", s.key.clone())],
    )
    .await;
    eprintln!(
        "Ozon: {answered} of 460 operations answered 2xx, {} not",
        failed.len()
    );
    // Two per-method limits of the head (1 per minute) let one walk through each.
    assert!(answered >= 455, "{answered}: {failed:#?}");
}

/// Every operation of Yandex Market's official OpenAPI answers 2xx: the head's own answers, the
/// others the document's examples (no more `{"status":"OK"}`).
#[tokio::test]
async fn every_yandex_market_operation_answers() {
    let s = support::start(|c| c).await;
    let (answered, failed) = walk(&s, service_id("ymarket"), &[("Api-Key", s.key.clone())]).await;
    let ops = apistend_catalog::Catalog::builtin()
        .unwrap()
        .service(service_id("ymarket"))
        .unwrap()
        .operations
        .len();
    eprintln!(
        "Yandex Market: {answered} of {ops} operations answered 2xx, {} not",
        failed.len()
    );
    assert!(answered + 5 >= ops, "{answered} of {ops}: {failed:#?}");
}

/// The embedded Bitrix24 method examples are exactly what the import makes of methods.json.
#[test]
fn the_embedded_b24_examples_are_what_the_import_makes_of_the_documentation() {
    committed_is_fresh(
        "b24-methods.pack",
        "b24/methods.json",
        "cargo run -p apistend -- catalog import-b24 ../shared/specs/b24/methods.json \
         --definition services/b24.toml --answers crates/answers/data/b24-methods.pack",
        |path| {
            let text = std::fs::read_to_string(path).unwrap();
            apistend_sandbox::B24Methods::from_methods_json(&text)
                .unwrap()
                .to_file_bytes()
        },
    );
}

/// Every documented Bitrix24 method answers its documented `result` (list methods with their
/// `total`), whatever the case of its name; an undocumented one is ERROR_METHOD_NOT_FOUND.
#[tokio::test]
async fn every_documented_bitrix24_method_answers() {
    // The portal's bucket (50, 2 per second) opened wide: the walk is not a rate test.
    let s = support::start(|c| {
        c.with_overrides(
            Overrides::from_toml("[b24.groups.portal]\nburst = 5000\ninterval_ms = 1\n").unwrap(),
        )
    })
    .await;
    let c = support::client();
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let b24 = catalog.service(service_id("b24")).unwrap();
    let mut answered = 0;
    let mut lists_with_total = 0;
    let mut failed = Vec::new();
    for op in &b24.operations {
        let method = op.path.trim_start_matches("/rest/");
        if method == "batch" {
            continue;
        }
        let r = c
            .post(format!(
                "{}/b24/rest/1/{}/{}.json",
                s.base,
                s.key,
                method.to_ascii_uppercase()
            ))
            .header("X-Mock-Delay", "0")
            // The answers are walked, not the requests (most methods require more than an
            // `ID`): validation has its own walk (`validation::every_bitrix24_method…`).
            .header("X-Mock-Validation", "off")
            // Their examples too, not what a sandbox keeps (`crm.lead.get` of an id it does
            // not hold is `Not found`).
            .header("X-Mock-State", "off")
            // What a `*.get` needs; the other methods ignore it.
            .query(&[("ID", "1")])
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        if status == 200 && body.get("result").is_some() && body.get("time").is_some() {
            answered += 1;
            if body.get("total").is_some() {
                lists_with_total += 1;
            }
        } else {
            failed.push(format!("{method} → {status} {body}"));
        }
    }
    eprintln!("Bitrix24: {answered} methods answered, {lists_with_total} with total");
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(
        answered >= 1560 && lists_with_total >= 150,
        "{answered} {lists_with_total}"
    );
    let r: Value = support::json(
        c.post(format!("{}/b24/rest/1/{}/no.such.method", s.base, s.key))
            .header("X-Mock-Delay", "0"),
    )
    .await;
    assert_eq!(r["error"], "ERROR_METHOD_NOT_FOUND", "{r}");
}

/// Answers that are not JSON are files of their documented type; answers without content have
/// no body and no `Content-Type`.
#[tokio::test]
async fn files_are_files_and_empty_answers_have_no_content_type() {
    let s = support::start(|c| c).await;
    let c = support::client();
    let r = c
        .post(format!("{}/ozon/v2/posting/fbs/act/get-pdf", s.base))
        .header("Client-Id", "1")
        .header("Api-Key", &s.key)
        .header("X-Mock-Delay", "0")
        .json(&serde_json::json!({"id": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/pdf");
    assert!(r.bytes().await.unwrap().starts_with(b"%PDF-"));
    let r = c
        .get(format!("{}/apify/v2/actor-runs/run1/log", s.base))
        .header("Authorization", format!("Bearer {}", s.key))
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let r = c
        .patch(format!(
            "{}/wb/marketplace-api/api/v3/click-collect/orders/1/confirm",
            s.base
        ))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    assert!(
        r.headers().get("content-type").is_none(),
        "{:?}",
        r.headers()
    );
    assert!(r.bytes().await.unwrap().is_empty());
}

/// The committed request rules (docs/requests.md) are exactly what `import-requests` makes of
/// each official description.
#[test]
fn the_embedded_request_rules_are_what_the_import_makes_of_the_descriptions() {
    use apistend_answers::requests::Dialect;
    let rules = |path: &std::path::Path, dialect| {
        apistend_sandbox::RequestRules::load(path, dialect)
            .unwrap()
            .to_file_bytes()
    };
    for (name, spec, flag, dialect) in [
        ("apify", "apify/openapi.yaml", "", Dialect::Json),
        (
            "ozon",
            "ozon/seller-openapi.json",
            " --json protobuf",
            Dialect::ProtobufJson,
        ),
        ("ymarket", "yandex-market/openapi.yaml", "", Dialect::Json),
        ("moysklad", "moysklad/openapi.yaml", "", Dialect::Json),
    ] {
        let command = format!(
            "cargo run -p apistend -- catalog import-requests ../shared/specs/{spec}{flag} \
             -o crates/answers/data/{name}-requests.pack"
        );
        committed_is_fresh(&format!("{name}-requests.pack"), spec, &command, |p| {
            rules(p, dialect)
        });
    }
    committed_is_fresh(
        "b24-requests.pack",
        "b24/methods.json",
        "cargo run -p apistend -- catalog import-b24 ../shared/specs/b24/methods.json \
         --definition services/b24.toml --requests crates/answers/data/b24-requests.pack",
        |path| {
            let text = std::fs::read_to_string(path).unwrap();
            apistend_sandbox::RequestRules::of_b24_methods(&text)
                .unwrap()
                .to_file_bytes()
        },
    );
    committed_is_fresh(
        "amocrm-requests.pack",
        "amocrm/endpoints.json",
        "cargo run -p apistend -- catalog import-amocrm ../shared/specs/amocrm/endpoints.json \
         --definition services/amocrm.toml --requests crates/answers/data/amocrm-requests.pack",
        |path| {
            let text = std::fs::read_to_string(path).unwrap();
            apistend_sandbox::RequestRules::of_amocrm_endpoints(&text)
                .unwrap()
                .to_file_bytes()
        },
    );
    let Some(specs) = support::wb_specs() else {
        return;
    };
    let committed = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../answers/data/wb-requests.pack"),
    )
    .unwrap();
    assert!(
        rules(&specs, Dialect::GoJson) == committed,
        "crates/answers/data/wb-requests.pack is stale: run `cargo run -p apistend -- catalog \
         import-requests ../shared/wb-openapi --json go -o crates/answers/data/wb-requests.pack`"
    );
}

/// The built-in catalog's id of the service named `name`.
fn service_id(name: &str) -> apistend_catalog::ServiceId {
    apistend_catalog::Catalog::builtin()
        .unwrap()
        .service_id(name)
        .unwrap()
}
