//! Jobs move through their services' statuses: a job is started, polled while it runs, seen
//! done (or failed) after its time or once the sandbox finishes its jobs; what a job makes is
//! then read through the service's own lists. Once on one instance's memory and once with two
//! instances on one Redis (started on one, polled on the other).

use crate::objects::{Pair, TOKEN, demo_id, send};
use crate::support;

use apistend_testkit::RedisServer;
use serde_json::{Value, json};

/// An Ozon product the import's description takes (the required fields).
fn ozon_item(offer: &str, price: u32) -> Value {
    json!({
        "offer_id": offer, "name": format!("Товар {offer}"), "price": price.to_string(),
        "description_category_id": 17_028_922, "type_id": 91_565, "attributes": []
    })
}

/// The management API's `PUT …/settings` of the demo sandbox.
async fn settings(p: &Pair, body: Value) {
    let c = support::client();
    let id = demo_id(&c, p.write()).await;
    let r = c
        .put(format!("{}/api/v1/sandboxes/{id}/settings", p.write()))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

/// `POST …/jobs/finish` of the demo sandbox.
async fn finish(p: &Pair, base: &str) {
    let c = support::client();
    let id = demo_id(&c, base).await;
    let (status, v) = send(
        c.post(format!("{base}/api/v1/sandboxes/{id}/jobs/finish"))
            .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert!(v["finished_ms"].as_i64().unwrap() > 0, "{v}");
    let _ = p;
}

/// Ozon: an import answers a task, whose items are `pending` until it is done, then
/// `imported`; its products are in the lists at once (paged by `last_id`, empty at the end;
/// filtered by `offer_id`); an import of a known `offer_id` updates that product; a task set
/// to fail answers `failed` with its errors.
async fn ozon(p: &Pair) {
    let c = support::client();
    let post = |base: &str, path: &str, body: Value| {
        c.post(format!("{base}/ozon{path}"))
            .header("Client-Id", "1")
            .header("Api-Key", p.key())
            .json(&body)
    };
    settings(p, json!({"jobs": {"ozon/import_tasks": {"ms": 60_000}}})).await;
    let offers: Vec<String> = (0..5).map(|i| format!("offer-{i}")).collect();
    let items: Vec<Value> = offers.iter().map(|o| ozon_item(o, 100)).collect();
    let (status, v) = send(post(
        p.write(),
        "/v3/product/import",
        json!({ "items": items }),
    ))
    .await;
    assert_eq!(status, 200, "{v}");
    let task = v["result"]["task_id"].as_u64().expect("a task id");
    let info = |base: &str| {
        post(
            base,
            "/v1/product/import/info",
            json!({"task_id": task.to_string()}),
        )
    };
    let (status, v) = send(info(p.read())).await;
    assert_eq!(status, 200, "{v}");
    let result = &v["result"];
    assert_eq!(result["total"], 5, "{v}");
    let statuses: Vec<&Value> = result["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["status"])
        .collect();
    assert!(statuses.iter().all(|s| *s == "pending"), "{v}");
    assert_eq!(result["items"][2]["offer_id"], "offer-2");
    assert_eq!(result["items"][2]["errors"], json!([]));
    let product = result["items"][2]["product_id"].as_u64().unwrap();
    let products: Vec<u64> = result["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["product_id"].as_u64().unwrap())
        .collect();
    finish(p, p.read()).await;
    let (_, v) = send(info(p.read())).await;
    assert!(
        v["result"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == "imported"),
        "finished: {v}"
    );
    assert!(
        v["result"].get("task_id").is_none(),
        "Ozon's shape only: {v}"
    );

    // The products, by pages of two: 3 pages, the last with an empty last_id.
    let mut seen = Vec::new();
    let mut last = String::new();
    for page in 0..3 {
        let body = json!({"filter": {"offer_id": offers, "visibility": "ALL"}, "last_id": last, "limit": 2});
        let (status, v) = send(post(p.read(), "/v3/product/list", body)).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["result"]["total"], 5, "{v}");
        for i in v["result"]["items"].as_array().unwrap() {
            seen.push(i["offer_id"].as_str().unwrap().to_owned());
        }
        last = v["result"]["last_id"].as_str().unwrap().to_owned();
        assert_eq!(last.is_empty(), page == 2, "page {page}: {v}");
    }
    assert_eq!(seen, offers, "every product once, in order");
    let (status, v) = send(post(
        p.read(),
        "/v3/product/list",
        json!({"last_id": "nope"}),
    ))
    .await;
    assert_eq!(
        (status, &v["code"]),
        (400, &json!(3)),
        "a cursor it never gave: {v}"
    );

    // Read back by id and by offer: the fields written.
    let (_, v) = send(post(
        p.read(),
        "/v3/product/info/list",
        json!({"product_id": [product.to_string()]}),
    ))
    .await;
    assert_eq!(v["items"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["items"][0]["id"], product);
    assert_eq!(v["items"][0]["offer_id"], "offer-2");
    assert_eq!(v["items"][0]["name"], "Товар offer-2");

    // A known offer updates its product; the task set to fail answers failed, with errors.
    let again = json!({"items": [ozon_item("offer-2", 250)]});
    let (_, v) =
        send(post(p.write(), "/v3/product/import", again.clone()).header("X-Mock-Job", "fail"))
            .await;
    let failing = v["result"]["task_id"].as_u64().unwrap();
    assert!(failing > task, "{v}");
    let (_, v) = send(post(
        p.read(),
        "/v1/product/import/info",
        json!({"task_id": failing}),
    ))
    .await;
    assert_eq!(
        v["result"]["items"][0]["product_id"], product,
        "the same product: {v}"
    );
    assert_eq!(v["result"]["items"][0]["status"], "pending");
    finish(p, p.write()).await;
    // Another instance learns of the mark within its poll of the shared records (250 ms).
    let mut v = Value::Null;
    for _ in 0..40 {
        v = send(post(
            p.read(),
            "/v1/product/import/info",
            json!({"task_id": failing}),
        ))
        .await
        .1;
        if v["result"]["items"][0]["status"] != "pending" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(v["result"]["items"][0]["status"], "failed", "{v}");
    assert_eq!(
        v["result"]["items"][0]["errors"][0]["level"], "error",
        "{v}"
    );
    let (_, v) = send(post(
        p.read(),
        "/v3/product/info/list",
        json!({"offer_id": ["offer-2"]}),
    ))
    .await;
    assert_eq!(
        v["items"].as_array().map(Vec::len),
        Some(1),
        "no second product: {v}"
    );
    assert_eq!(v["items"][0]["price"], "250");

    // Stocks written, read back as the product's FBS stock, two a page; prices as numbers.
    let stocks: Vec<Value> = (0..3)
        .map(|i| json!({"offer_id": format!("offer-{i}"), "product_id": products[i], "stock": 10 + i, "warehouse_id": 22}))
        .collect();
    let prices = json!({"prices": [{"offer_id": "offer-0", "price": "1490", "old_price": "1990", "currency_code": "RUB"}, {"product_id": products[1], "price": "99.5"}]});
    let (status, v) = send(post(p.write(), "/v1/product/import/prices", prices)).await;
    assert_eq!(
        (status, &v["result"][0]["updated"]),
        (200, &json!(true)),
        "{v}"
    );
    let (_, v) = send(post(p.read(), "/v5/product/info/prices", json!({"filter": {"offer_id": ["offer-0"], "visibility": "ALL"}, "cursor": "", "limit": 10}))).await;
    let price = &v["items"][0]["price"];
    assert_eq!(
        (
            &price["price"],
            &price["old_price"],
            &price["currency_code"]
        ),
        (&json!(1490), &json!(1990), &json!("RUB")),
        "{v}"
    );
    let (_, v) = send(post(p.read(), "/v5/product/info/prices", json!({"filter": {"product_id": [products[1].to_string()], "visibility": "ALL"}, "cursor": "", "limit": 10}))).await;
    assert_eq!(v["items"][0]["price"]["price"], 99.5, "{v}");
    let (status, v) = send(post(
        p.write(),
        "/v2/products/stocks",
        json!({ "stocks": stocks }),
    ))
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["result"][2]["offer_id"], "offer-2", "{v}");
    assert_eq!(v["result"][2]["updated"], true, "{v}");
    let (_, v) = send(post(p.read(), "/v4/product/info/stocks", json!({"filter": {"offer_id": ["offer-1"], "visibility": "ALL"}, "cursor": "", "limit": 10}))).await;
    assert_eq!(v["items"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        (
            &v["items"][0]["stocks"][0]["type"],
            &v["items"][0]["stocks"][0]["present"]
        ),
        (&json!("fbs"), &json!(11)),
        "{v}"
    );
    let (_, v) = send(post(
        p.read(),
        "/v4/product/info/stocks",
        json!({"filter": {"visibility": "ALL"}, "cursor": "", "limit": 2}),
    ))
    .await;
    assert_eq!(v["total"], 3, "{v}");
    let next = v["cursor"].as_str().unwrap().to_owned();
    let (_, v) = send(post(
        p.read(),
        "/v4/product/info/stocks",
        json!({"filter": {"visibility": "ALL"}, "cursor": next, "limit": 2}),
    ))
    .await;
    assert_eq!(v["items"][0]["offer_id"], "offer-2", "{v}");
    assert_eq!(v["cursor"], "", "the last page: {v}");

    // A job of no time is done at once; an unknown task is Ozon's not found.
    settings(p, json!({"jobs": {"ozon/import_tasks": {"ms": 0}}})).await;
    let (_, v) = send(post(
        p.write(),
        "/v3/product/import",
        json!({"items": [ozon_item("z", 1)]}),
    ))
    .await;
    let quick = v["result"]["task_id"].as_u64().unwrap();
    let (_, v) = send(post(
        p.read(),
        "/v1/product/import/info",
        json!({"task_id": quick}),
    ))
    .await;
    assert_eq!(v["result"]["items"][0]["status"], "imported", "{v}");
    let (status, v) = send(post(
        p.read(),
        "/v1/product/import/info",
        json!({"task_id": "1"}),
    ))
    .await;
    assert_eq!((status, &v["code"]), (404, &json!(5)), "{v}");
    let (status, v) = send(
        post(
            p.write(),
            "/v3/product/import",
            json!({"items": [ozon_item("y", 1)]}),
        )
        .header("X-Mock-Job", "later"),
    )
    .await;
    assert_eq!(status, 400, "{v}");
    assert!(v["message"].as_str().unwrap().contains("X-Mock-Job"), "{v}");
}

/// Apify: a run keeps what its start answered and moves READY → RUNNING → SUCCEEDED;
/// `waitForFinish` holds the request until it is done; an actor's runs are listed by offset
/// over several pages; a run set to fail ends FAILED; a dataset's items are pushed and read
/// back page by page with the pagination headers.
async fn apify(p: &Pair) {
    let c = support::client();
    let auth = format!("Bearer {}", p.key());
    let get = |base: &str, path: &str| {
        c.get(format!("{base}/apify{path}"))
            .header("Authorization", &auth)
    };
    let post = |base: &str, path: &str, body: Value| {
        c.post(format!("{base}/apify{path}"))
            .header("Authorization", &auth)
            .json(&body)
    };
    settings(p, json!({"jobs": {"apify/runs": {"ms": 60_000}}})).await;
    let (_, v) = send(get(p.read(), "/v2/actor-runs")).await;
    let before = v["data"]["total"].as_u64().unwrap();
    let mut ids = Vec::new();
    for i in 0..5 {
        let (status, v) = send(post(
            p.write(),
            "/v2/acts/me~scraper/runs",
            json!({"page": i}),
        ))
        .await;
        assert_eq!(status, 201, "{v}");
        assert_eq!(v["data"]["status"], "READY", "{v}");
        assert_eq!(v["data"]["actId"], "me~scraper", "{v}");
        assert!(
            v["data"].get("page").is_none(),
            "the actor's input is not the run: {v}"
        );
        ids.push(v["data"]["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids[0].len(), 17, "Apify's ids: {ids:?}");
    let (_, other) = send(post(p.write(), "/v2/acts/someone~else/runs", json!({}))).await;
    let (status, v) = send(get(p.read(), &format!("/v2/actor-runs/{}", ids[0]))).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (&v["data"]["actId"], &v["data"]["status"]),
        (&json!("me~scraper"), &json!("READY")),
        "{v}"
    );
    assert_eq!(
        v["data"]["startedAt"].as_str().map(str::len),
        Some(20),
        "{v}"
    );

    // The actor's runs, two a page: three pages, only its own.
    let mut listed = Vec::new();
    for offset in [0, 2, 4] {
        let (_, v) = send(get(
            p.read(),
            &format!("/v2/acts/me~scraper/runs?offset={offset}&limit=2"),
        ))
        .await;
        let data = &v["data"];
        assert_eq!(
            (&data["total"], &data["offset"], &data["limit"]),
            (&json!(5), &json!(offset), &json!(2)),
            "{v}"
        );
        assert_eq!(
            data["count"],
            data["items"].as_array().unwrap().len(),
            "{v}"
        );
        listed.extend(
            data["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_owned()),
        );
    }
    assert_eq!(listed, ids, "each run once, in order");
    let (_, v) = send(get(p.read(), "/v2/actor-runs")).await;
    assert_eq!(v["data"]["total"], before + 6, "the user's runs: {v}");
    assert_eq!(v["data"]["count"], before + 6, "{v}");
    assert_ne!(other["data"]["id"], json!(null));

    // Aborted while it runs: ABORTED from then on, with when it stopped; a run that has
    // ended stays as it is ("Only runs that are starting or running are aborted").
    let abort = format!("/v2/acts/me~scraper/runs/{}/abort", ids[2]);
    let (status, v) = send(post(p.write(), &abort, json!({}))).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["data"]["status"], "ABORTED", "{v}");
    assert_eq!(v["data"]["id"], ids[2].as_str(), "{v}");
    assert!(v["data"].get("__abort").is_none(), "{v}");
    let stopped_at = v["data"]["finishedAt"].clone();
    assert!(stopped_at.as_str().unwrap().ends_with('Z'), "{v}");
    let (status, v) = send(post(p.write(), "/v2/actor-runs/nope/abort", json!({}))).await;
    assert_eq!(status, 404, "{v}");

    // Done: at once after finish; a run of no time waits for nothing; a failing one fails.
    finish(p, p.read()).await;
    let (_, v) = send(get(p.read(), &format!("/v2/actor-runs/{}", ids[2]))).await;
    assert_eq!(v["data"]["status"], "ABORTED", "{v}");
    assert_eq!(v["data"]["finishedAt"], stopped_at, "{v}");
    let (_, v) = send(get(p.read(), &format!("/v2/actor-runs/{}", ids[1]))).await;
    assert_eq!(v["data"]["status"], "SUCCEEDED", "{v}");
    let finished_at = v["data"]["finishedAt"].clone();
    // (On the instance that finished it: another learns of the finish within 250 ms.)
    let abort = format!("/v2/actor-runs/{}/abort", ids[1]);
    let (_, v) = send(post(p.read(), &abort, json!({}))).await;
    assert_eq!(
        (&v["data"]["status"], &v["data"]["finishedAt"]),
        (&json!("SUCCEEDED"), &finished_at),
        "{v}"
    );
    assert!(
        v["data"]["finishedAt"].as_str().unwrap().ends_with('Z'),
        "{v}"
    );
    settings(p, json!({"jobs": {"apify/runs": {"ms": 300}}})).await;
    let (_, v) =
        send(post(p.write(), "/v2/acts/me~scraper/runs", json!({})).header("X-Mock-Job", "fail"))
            .await;
    let failing = v["data"]["id"].as_str().unwrap().to_owned();
    let t = std::time::Instant::now();
    let (_, v) = send(get(
        p.read(),
        &format!("/v2/actor-runs/{failing}?waitForFinish=30"),
    ))
    .await;
    assert_eq!(v["data"]["status"], "FAILED", "waited for the end: {v}");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "not the whole 30 s"
    );
    let (status, v) = send(get(p.read(), "/v2/actor-runs/NoSuchRun00000000")).await;
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["error"]["type"], "record-not-found", "Apify's words: {v}");
    let r = c
        .delete(format!("{}/apify/v2/actor-runs/{failing}", p.write()))
        .header("Authorization", &auth)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let (status, _) = send(get(p.read(), &format!("/v2/actor-runs/{failing}"))).await;
    assert_eq!(status, 404, "deleted");

    // Key-value records: written on one instance as JSON of any kind or text, read back on
    // the other as written, each store its own; a key never written, or deleted, is Apify's 404.
    let record = |store: &str, key: &str| format!("/v2/key-value-stores/{store}/records/{key}");
    for (key, value) in [
        ("OUTPUT", json!({"ok": true})),
        ("LIST", json!([1, "two", null])),
    ] {
        let r = c
            .put(format!("{}/apify{}", p.write(), record("kv1", key)))
            .header("Authorization", &auth)
            .json(&value);
        let (status, v) = send(r).await;
        assert_eq!(status, 201, "{v}");
        assert_eq!(send(get(p.read(), &record("kv1", key))).await, (200, value));
    }
    let r = c
        .put(format!("{}/apify{}", p.write(), record("kv1", "NOTE")))
        .header("Authorization", &auth)
        .header("Content-Type", "text/plain")
        .body("plain text");
    assert_eq!(send(r).await.0, 201);
    // Read back as it was sent, with its media type: text as text, bytes as bytes.
    let raw = |store: &str, key: &str| {
        c.get(format!("{}/apify{}", p.read(), record(store, key)))
            .header("Authorization", &auth)
            .header("X-Mock-Delay", "0")
            .send()
    };
    let r = raw("kv1", "NOTE").await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/plain");
    assert_eq!(r.text().await.unwrap(), "plain text");
    let blob: &[u8] = &[0, 159, 146, 150, 255, b'\n'];
    let r = c
        .put(format!("{}/apify{}", p.write(), record("kv3", "BLOB")))
        .header("Authorization", &auth)
        .header("Content-Type", "application/octet-stream")
        .body(blob.to_vec());
    assert_eq!(send(r).await.0, 201);
    let r = raw("kv3", "BLOB").await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/octet-stream");
    assert_eq!(&r.bytes().await.unwrap()[..], blob);
    // Listed with its size as sent and the URL it is read at.
    let (_, v) = send(get(p.read(), "/v2/key-value-stores/kv3/keys")).await;
    let item = &v["data"]["items"][0];
    assert_eq!(
        (&item["key"], &item["size"]),
        (&json!("BLOB"), &json!(6)),
        "{v}"
    );
    assert_eq!(
        item["recordPublicUrl"],
        format!("{}/apify{}", p.read(), record("kv3", "BLOB")),
        "{v}"
    );
    let (status, v) = send(get(p.read(), &record("kv2", "OUTPUT"))).await;
    assert_eq!(
        (status, &v["error"]["type"]),
        (404, &json!("record-not-found")),
        "{v}"
    );
    let r = c
        .delete(format!("{}/apify{}", p.write(), record("kv1", "NOTE")))
        .header("Authorization", &auth)
        .header("X-Mock-Delay", "0");
    assert_eq!(send(r).await.0, 204);
    assert_eq!(send(get(p.read(), &record("kv1", "NOTE"))).await.0, 404);
    // Its keys, a page at a time after `exclusiveStartKey`: `isTruncated` while a page is full,
    // no next key on the last.
    let keys = |q: &str| {
        get(
            p.read(),
            &format!("/v2/key-value-stores/kv1/keys?limit=1{q}"),
        )
    };
    let (_, v) = send(keys("")).await;
    let d = &v["data"];
    assert_eq!(
        (
            &d["items"][0]["key"],
            &d["isTruncated"],
            &d["nextExclusiveStartKey"],
            &d["count"]
        ),
        (&json!("OUTPUT"), &json!(true), &json!("OUTPUT"), &json!(1)),
        "{v}"
    );
    assert_eq!(
        (&d["limit"], &d["exclusiveStartKey"]),
        (&json!(1), &Value::Null),
        "{v}"
    );
    let (_, v) = send(keys("&exclusiveStartKey=OUTPUT")).await;
    assert_eq!(v["data"]["items"][0]["key"], "LIST", "{v}");
    let (_, v) = send(keys("&exclusiveStartKey=LIST")).await;
    let d = &v["data"];
    assert_eq!(
        (&d["items"], &d["isTruncated"], &d["nextExclusiveStartKey"]),
        (&json!([]), &json!(false), &Value::Null),
        "{v}"
    );

    // A dataset: 5 items pushed (an array, then one), read back two a page.
    let (status, _) = send(post(
        p.write(),
        "/v2/datasets/my-ds/items",
        json!([{"n": 0}, {"n": 1}, {"n": 2}, {"n": 3}]),
    ))
    .await;
    assert_eq!(status, 201);
    send(post(p.write(), "/v2/datasets/my-ds/items", json!({"n": 4}))).await;
    let mut seen = Vec::new();
    for offset in [0, 2, 4] {
        let r = get(
            p.read(),
            &format!("/v2/datasets/my-ds/items?offset={offset}&limit=2"),
        )
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
        let h = |n: &str| r.headers()[n].to_str().unwrap().to_owned();
        assert_eq!(
            (
                h("x-apify-pagination-total"),
                h("x-apify-pagination-offset")
            ),
            ("5".into(), offset.to_string())
        );
        let items: Value = r.json().await.unwrap();
        seen.extend(
            items
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["n"].as_u64().unwrap()),
        );
    }
    assert_eq!(
        seen,
        [0, 1, 2, 3, 4],
        "the items as pushed, nothing of the example"
    );
    let (_, v) = send(get(p.read(), "/v2/datasets/another/items")).await;
    assert_eq!(v, json!([]), "another dataset starts empty");
}

/// WB: a price upload answers its id; its state is 1 while it is processed, then 3; its goods
/// are listed with the prices sent; an upload set to fail ends 6 with each good's error.
async fn wb_prices(p: &Pair) {
    let c = support::client();
    let at = |base: &str, path: &str| format!("{base}/wb/discounts-prices-api{path}");
    let upload = |base: &str, goods: Value| {
        c.post(at(base, "/api/v2/upload/task"))
            .header("Authorization", p.key())
            .json(&json!({ "data": goods }))
    };
    let get = |base: &str, path: &str, id: u64| {
        c.get(at(base, &format!("{path}?uploadID={id}&limit=10")))
            .header("Authorization", p.key())
    };
    settings(p, json!({"jobs": {"wb/price_tasks": {"ms": 60_000}}})).await;
    let goods = json!([{"nmID": 101, "price": 999, "discount": 30}, {"nmID": 102, "price": 500}]);
    let (status, v) = send(upload(p.write(), goods)).await;
    assert_eq!(status, 200, "{v}");
    let id = v["data"]["id"].as_u64().expect("an upload id");
    assert_eq!(v["data"]["alreadyExists"], false);
    let (status, v) = send(get(p.read(), "/api/v2/buffer/tasks", id)).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (&v["data"]["uploadID"], &v["data"]["status"]),
        (&json!(id), &json!(1)),
        "{v}"
    );
    assert_eq!(v["data"]["overAllGoodsNumber"], 2, "{v}");
    finish(p, p.read()).await;
    let (_, v) = send(get(p.read(), "/api/v2/history/tasks", id)).await;
    assert_eq!(v["data"]["status"], 3, "processed, no errors: {v}");
    let (_, v) = send(get(p.read(), "/api/v2/history/goods/task", id)).await;
    let listed = v["data"]["historyGoods"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{v}");
    assert_eq!(
        (
            &listed[0]["nmID"],
            &listed[0]["price"],
            &listed[0]["discount"]
        ),
        (&json!(101), &json!(999), &json!(30))
    );
    assert!(
        listed[1].get("discount").is_none(),
        "not sent, not made up: {v}"
    );

    let (_, v) =
        send(upload(p.write(), json!([{"nmID": 103, "price": 1}])).header("X-Mock-Job", "fail"))
            .await;
    let failing = v["data"]["id"].as_u64().unwrap();
    assert!(failing > id);
    finish(p, p.read()).await;
    let (_, v) = send(get(p.read(), "/api/v2/history/tasks", failing)).await;
    assert_eq!(v["data"]["status"], 6, "every good with errors: {v}");
    let (_, v) = send(get(p.read(), "/api/v2/history/goods/task", failing)).await;
    assert!(
        !v["data"]["historyGoods"][0]["errorText"]
            .as_str()
            .unwrap()
            .is_empty(),
        "{v}"
    );
    let (status, v) = send(get(p.read(), "/api/v2/history/tasks", 1)).await;
    assert_eq!(
        (status, &v["error"]),
        (400, &json!(true)),
        "an unknown upload: {v}"
    );
}

/// Yandex Market: a report asked for answers its id and how long it takes; its info is
/// PENDING, then DONE with a link to its file, which the sandbox serves (an XLSX workbook); a
/// report set to fail ends FAILED, with no file.
async fn ymarket_reports(p: &Pair) {
    let c = support::client();
    let generate = |base: &str| {
        c.post(format!(
            "{base}/ymarket/v2/reports/stocks-on-warehouses/generate?format=FILE"
        ))
        .header("Api-Key", p.key())
        .json(&json!({"campaignId": 1}))
    };
    let info = |base: &str, id: &str| {
        c.get(format!("{base}/ymarket/v2/reports/info/{id}"))
            .header("Api-Key", p.key())
    };
    settings(p, json!({"jobs": {"ymarket/reports": {"ms": 60_000}}})).await;
    let (status, v) = send(generate(p.write())).await;
    assert_eq!(status, 200, "{v}");
    let id = v["result"]["reportId"].as_str().unwrap().to_owned();
    assert_eq!(v["result"]["estimatedGenerationTime"], 60_000, "{v}");
    let (_, v) = send(info(p.read(), &id)).await;
    assert_eq!(v["result"]["status"], "PENDING", "{v}");
    for absent in ["file", "generationFinishedAt", "subStatus"] {
        assert!(v["result"].get(absent).is_none(), "no {absent} yet: {v}");
    }
    finish(p, p.read()).await;
    let (_, v) = send(info(p.read(), &id)).await;
    assert_eq!(v["result"]["status"], "DONE", "{v}");
    assert!(v["result"]["generationFinishedAt"].is_string(), "{v}");
    let file = v["result"]["file"].as_str().unwrap().to_owned();
    assert!(
        file.starts_with(p.read()) && file.ends_with(&format!("/{id}/file")),
        "the sandbox's link: {file}"
    );
    let r = c.get(&file).send().await.unwrap();
    assert_eq!(r.status(), 200, "a download link needs no key");
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .contains("spreadsheetml")
    );
    assert!(
        r.bytes().await.unwrap().starts_with(b"PK"),
        "a workbook (a ZIP)"
    );

    let (_, v) = send(generate(p.write()).header("X-Mock-Job", "fail")).await;
    let failing = v["result"]["reportId"].as_str().unwrap().to_owned();
    finish(p, p.read()).await;
    let (_, v) = send(info(p.read(), &failing)).await;
    assert_eq!(v["result"]["status"], "FAILED", "{v}");
    assert!(v["result"].get("file").is_none(), "{v}");
    assert!(v["result"]["subStatus"].is_string(), "{v}");
    let (status, v) = send(info(p.read(), "00000000-0000-4000-8000-000000000000")).await;
    assert_eq!((status, &v["status"]), (404, &json!("ERROR")), "{v}");
}

#[tokio::test]
async fn wb_price_uploads_move_from_1_to_3() {
    wb_prices(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn ymarket_reports_are_generated_then_downloaded() {
    ymarket_reports(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn apify_runs_move_and_datasets_keep_their_items() {
    apify(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn ozon_imports_move_from_pending_to_imported() {
    ozon(&Pair::memory(|c| c).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_on_two_instances_on_one_redis() {
    let Some(redis) = RedisServer::start("jobs_on_two_instances_on_one_redis") else {
        return;
    };
    let p = Pair::redis(&redis.url(), |c| c).await;
    ozon(&p).await;
    apify(&p).await;
    wb_prices(&p).await;
    ymarket_reports(&p).await;
}

/// The management API refuses settings for a collection that is not one of jobs, and a time
/// over a day, naming the field.
#[tokio::test]
async fn job_settings_are_checked() {
    let p = Pair::memory(|c| c).await;
    let c = support::client();
    let id = demo_id(&c, p.write()).await;
    for (body, names) in [
        (
            json!({"jobs": {"ozon/products": {"ms": 1}}}),
            "jobs.ozon/products",
        ),
        (json!({"jobs": {"nowhere": {}}}), "jobs.nowhere"),
        (
            json!({"jobs": {"ozon/import_tasks": {"ms": 86_400_001_u64}}}),
            "jobs.ozon/import_tasks.ms",
        ),
    ] {
        let (status, v) = send(
            c.put(format!("{}/api/v1/sandboxes/{id}/settings", p.write()))
                .bearer_auth(TOKEN)
                .json(&body),
        )
        .await;
        assert_eq!(status, 422, "{body}: {v}");
        assert!(v["detail"].as_str().unwrap().contains(names), "{body}: {v}");
    }
    let (status, v) = send(
        c.put(format!("{}/api/v1/sandboxes/{id}/settings", p.write()))
            .bearer_auth(TOKEN)
            .json(&json!({"jobs": {"ozon/import_tasks": {"seconds": 1}}})),
    )
    .await;
    assert_eq!(status, 400, "a field it does not know: {v}");
    assert!(v["detail"].as_str().unwrap().contains("seconds"), "{v}");
    let (status, _) = send(
        c.post(format!("{}/api/v1/sandboxes/nope/jobs/finish", p.write()))
            .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(status, 404);
}
