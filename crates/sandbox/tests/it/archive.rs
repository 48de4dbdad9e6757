//! Ozon's archive: products archived and unarchived by their `product_id`s, listed by
//! `visibility` (`ALL` leaves the archived out; `ARCHIVED` only those; a list by id shows them
//! whatever their visibility), and deleted from the archive by their `offer_id`s — only the
//! archived ones, each `offer_id` answered in the request's order. Once on one instance's
//! memory and once with two instances on one Redis (written on one, read on the other).

use apistend_testkit::RedisServer;
use serde_json::{Value, json};

use crate::objects::{Pair, send};
use crate::support;

async fn archive(p: &Pair) {
    let c = support::client();
    let post = |base: &str, path: &str, body: Value| {
        c.post(format!("{base}/ozon{path}"))
            .header("Client-Id", "1")
            .header("Api-Key", p.key())
            .json(&body)
    };
    let list = |base: &str, filter: Value| {
        let c = c.clone();
        let base = base.to_owned();
        let key = p.key().to_owned();
        async move {
            let (status, v) = send(
                c.post(format!("{base}/ozon/v3/product/list"))
                    .header("Client-Id", "1")
                    .header("Api-Key", key)
                    .json(&json!({"filter": filter, "limit": 100})),
            )
            .await;
            assert_eq!(status, 200, "{v}");
            v["result"]["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    (
                        i["offer_id"].as_str().unwrap().to_owned(),
                        i["archived"].clone(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    // Three products (with the sandbox's own example, four).
    let items: Vec<Value> = ["a-1", "a-2", "a-3"]
        .iter()
        .map(|o| {
            json!({"offer_id": o, "name": o, "price": "100", "description_category_id": 17_028_922,
                   "type_id": 91_565, "attributes": []})
        })
        .collect();
    let (status, v) = send(post(
        p.write(),
        "/v3/product/import",
        json!({"items": items}),
    ))
    .await;
    assert_eq!(status, 200, "{v}");
    let all = list(p.read(), json!({})).await;
    assert_eq!(all.len(), 4, "{all:?}");
    let ids: Vec<u64> = {
        let (_, v) = send(post(
            p.read(),
            "/v3/product/info/list",
            json!({"offer_id": ["a-1", "a-2", "a-3"]}),
        ))
        .await;
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ids.len(), 3);

    // Two archived: `ALL` (also the default, and any other visibility) leaves them out.
    let (status, v) = send(post(
        p.write(),
        "/v1/product/archive",
        json!({"product_id": [ids[0], ids[1]]}),
    ))
    .await;
    assert_eq!((status, &v), (200, &json!({"result": true})));
    let shown: Vec<String> = list(p.read(), json!({"visibility": "ALL"}))
        .await
        .into_iter()
        .map(|(o, archived)| {
            assert_eq!(archived, false);
            o
        })
        .collect();
    assert!(
        shown.contains(&"a-3".to_owned()) && shown.len() == 2,
        "{shown:?}"
    );
    assert_eq!(list(p.read(), json!({})).await.len(), 2, "ALL by default");
    assert_eq!(
        list(p.read(), json!({"visibility": "VISIBLE"})).await.len(),
        2
    );
    let archived = list(p.read(), json!({"visibility": "ARCHIVED"})).await;
    assert_eq!(
        archived,
        [
            ("a-1".to_owned(), json!(true)),
            ("a-2".to_owned(), json!(true))
        ]
    );
    // By id, whatever the visibility.
    let by_offer = list(
        p.read(),
        json!({"offer_id": ["a-1", "a-3"], "visibility": "ALL"}),
    )
    .await;
    assert_eq!(by_offer.len(), 2, "{by_offer:?}");
    let (_, v) = send(post(
        p.read(),
        "/v3/product/info/list",
        json!({"product_id": [ids[0].to_string()]}),
    ))
    .await;
    assert_eq!(v["items"][0]["is_archived"], true, "{v}");

    // One back from the archive.
    let (status, _) = send(post(
        p.write(),
        "/v1/product/unarchive",
        json!({"product_id": [ids[1]]}),
    ))
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        list(p.read(), json!({"visibility": "ARCHIVED"})).await,
        [("a-1".to_owned(), json!(true))]
    );
    // An id the sandbox never gave: Ozon's 404.
    let (status, v) = send(post(
        p.write(),
        "/v1/product/archive",
        json!({"product_id": [1]}),
    ))
    .await;
    assert_eq!((status, &v["code"]), (404, &json!(5)), "{v}");

    // Deleted from the archive: only the archived one; each offer_id answered in order.
    let (status, v) = send(post(
        p.write(),
        "/v2/products/delete",
        json!({"products": [{"offer_id": "a-2"}, {"offer_id": "a-1"}, {"offer_id": "none"}]}),
    ))
    .await;
    assert_eq!(status, 200, "{v}");
    let status: Vec<(&Value, &Value)> = v["status"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (&s["offer_id"], &s["is_deleted"]))
        .collect();
    assert_eq!(
        status,
        [
            (&json!("a-2"), &json!(false)),
            (&json!("a-1"), &json!(true)),
            (&json!("none"), &json!(false))
        ],
        "{v}"
    );
    assert!(
        v["status"][0]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{v}"
    );
    assert_eq!(v["status"][1]["error"], "", "{v}");
    assert!(
        list(p.read(), json!({"visibility": "ARCHIVED"}))
            .await
            .is_empty()
    );
    let left: Vec<String> = list(p.read(), json!({}))
        .await
        .into_iter()
        .map(|(o, _)| o)
        .collect();
    assert!(
        left.contains(&"a-2".to_owned()) && !left.contains(&"a-1".to_owned()),
        "{left:?}"
    );
    // A delete that names nothing deletes nothing.
    let (status, v) = send(post(
        p.write(),
        "/v2/products/delete",
        json!({"products": []}),
    ))
    .await;
    assert_eq!((status, &v), (200, &json!({"status": []})));
    assert_eq!(list(p.read(), json!({})).await.len(), 3);
}

#[tokio::test]
async fn ozon_archives_lists_by_visibility_and_deletes_from_the_archive() {
    archive(&Pair::memory(|c| c).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ozon_archive_on_two_instances_on_one_redis() {
    let Some(redis) = RedisServer::start("ozon_archive_on_two_instances_on_one_redis") else {
        return;
    };
    archive(&Pair::redis(&redis.url(), |c| c).await).await;
}
