//! A Redis that comes back empty gets the objects back: each instance mirrors what it wrote
//! (with each change's revision, and a tombstone for each deletion) and writes it back; per
//! object, the later revision stays, whichever instance comes first.

use std::time::Duration;

use apistend_testkit::{RedisCluster, RedisServer};
use serde_json::{Value, json};

use crate::objects::{Pair, TOKEN, demo_id, send};
use crate::support;

/// What both instances wrote before Redis lost everything: creates on each, an update and a
/// deletion of an object the other made, an example deleted, and amoCRM's sequential ids.
async fn write_on_both(p: &Pair, auth: &str) -> Vec<u64> {
    let c = support::client();
    let products = |base: &str| format!("{base}/moysklad/api/remap/1.2/entity/product");
    let mut ids = Vec::new();
    for (base, name) in [(p.write(), "P0"), (p.write(), "P1"), (p.read(), "P2")] {
        let (status, v) = send(
            c.post(products(base))
                .header("Authorization", auth)
                .json(&json!({"name": name})),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        ids.push(v["id"].as_str().unwrap().to_owned());
    }
    let (status, _) = send(
        c.put(format!("{}/{}", products(p.read()), ids[0]))
            .header("Authorization", auth)
            .json(&json!({"article": "A-0"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send(
        c.delete(format!("{}/{}", products(p.read()), ids[1]))
            .header("Authorization", auth),
    )
    .await;
    assert_eq!(status, 200);
    let (_, v) = send(c.get(products(p.write())).header("Authorization", auth)).await;
    let example = v["rows"][0]["id"].as_str().unwrap().to_owned();
    let (status, _) = send(
        c.delete(format!("{}/{example}", products(p.write())))
            .header("Authorization", auth),
    )
    .await;
    assert_eq!(status, 200);
    let leads = format!("{}/amocrm/api/v4/leads", p.write());
    let (_, v) = send(
        c.post(&leads)
            .header("Authorization", auth)
            .json(&json!([{"name": "L0"}, {"name": "L1"}])),
    )
    .await;
    v["_embedded"]["leads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect()
}

/// Touches the collections on `base` (an untouched one starts with its examples) and answers
/// the sandbox's export.
async fn touched_export(base: &str, auth: &str, sandbox: &str) -> Value {
    let c = support::client();
    for path in [
        "moysklad/api/remap/1.2/entity/product",
        "amocrm/api/v4/leads",
    ] {
        send(
            c.get(format!("{base}/{path}"))
                .header("Authorization", auth),
        )
        .await;
    }
    let objects = format!("{base}/api/v1/sandboxes/{sandbox}/objects");
    send(c.get(objects).bearer_auth(TOKEN)).await.1
}

async fn comes_back_whole(p: &Pair, flush: impl FnOnce()) {
    let c = support::client();
    let auth = format!("Bearer {}", p.key());
    let sandbox = demo_id(&c, p.write()).await;
    let leads = write_on_both(p, &auth).await;
    let before = touched_export(p.read(), &auth, &sandbox).await;
    assert_eq!(
        before["moysklad"]["product"].as_array().unwrap().len(),
        3,
        "{before}"
    );
    flush();
    // Each instance notices the new epoch within a poll (250 ms) and writes its mirror back.
    let mut after = Value::Null;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = touched_export(p.read(), &auth, &sandbox).await;
        if after == before {
            break;
        }
    }
    assert_eq!(after, before, "everything back, in its order");
    assert_eq!(
        touched_export(p.write(), &auth, &sandbox).await,
        before,
        "on both instances"
    );
    let (_, counts) = send(
        c.get(format!(
            "{}/api/v1/sandboxes/{sandbox}/objects/counts",
            p.write()
        ))
        .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(counts["moysklad/product"], 3, "{counts}");
    // No id given twice: the other instance goes on after the ids the first one gave.
    let (_, v) = send(
        c.post(format!("{}/amocrm/api/v4/leads", p.read()))
            .header("Authorization", &auth)
            .json(&json!([{"name": "after"}])),
    )
    .await;
    let next = v["_embedded"]["leads"][0]["id"].as_u64().unwrap();
    assert!(leads.iter().all(|&l| next > l), "{next} after {leads:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_comes_back_empty_gets_every_instances_objects_back() {
    let Some(redis) =
        RedisServer::start("a_redis_that_comes_back_empty_gets_every_instances_objects_back")
    else {
        return;
    };
    let p = Pair::redis(&redis.url(), |c| c).await;
    comes_back_whole(&p, || {
        redis.cli(&["FLUSHALL"]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_cluster_that_comes_back_empty_gets_every_instances_objects_back() {
    let Some(cluster) = RedisCluster::start(
        "a_redis_cluster_that_comes_back_empty_gets_every_instances_objects_back",
    ) else {
        return;
    };
    let p = Pair::redis(&cluster.url(), |c| c).await;
    comes_back_whole(&p, || {
        for node in cluster.nodes() {
            node.cli(&["FLUSHALL"]);
        }
    })
    .await;
}
