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

    // Done: at once after finish; a run of no time waits for nothing; a failing one fails.
    finish(p, p.read()).await;
    let (_, v) = send(get(p.read(), &format!("/v2/actor-runs/{}", ids[1]))).await;
    assert_eq!(v["data"]["status"], "SUCCEEDED", "{v}");
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
