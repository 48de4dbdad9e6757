//! Apify API v2: answers that depend on the request (dataset items and their pagination,
//! key-value records, actor runs and their ids); every other operation answers with its example
//! in Apify's official OpenAPI (the embedded `apify` examples).

use apistend_catalog::{Method, Operation};
use serde_json::{Value, json};

use crate::answer::Success;
use crate::call::Call;

fn param<'a>(op: &Operation, path: &'a str, name: &str) -> &'a str {
    op.path
        .split('/')
        .zip(path.split('/'))
        .find(|(t, _)| t.trim_matches(['{', '}']) == name)
        .map_or("", |(_, v)| v)
}

/// A run as Apify's `Run` schema has it (every required field).
fn run(id: &str, actor: &str) -> Value {
    json!({"data": {
        "id": id, "actId": actor, "userId": "apistendUser01", "actorTaskId": null,
        "startedAt": crate::clock::rfc3339(crate::clock::unix_now()), "finishedAt": null,
        "status": "READY", "meta": {"origin": "API"},
        "stats": {"inputBodyLen": 0, "restartCount": 0, "resurrectCount": 0, "computeUnits": 0},
        "options": {"build": "latest", "timeoutSecs": 300, "memoryMbytes": 1024, "diskMbytes": 2048},
        "buildId": "build_apistend", "buildNumber": "0.0.1", "generalAccess": "FOLLOW_USER_SETTING",
        "defaultKeyValueStoreId": "kv_default", "defaultDatasetId": "ds_default",
        "defaultRequestQueueId": "rq_default"
    }})
}

/// A page of the demo dataset's items, with the pagination headers Apify sends (its clients read
/// them: `X-Apify-Pagination-Total`, `-Offset`, `-Count`, `-Limit`, `-Desc`).
fn dataset_items(call: &Call) -> Success {
    let items = [
        json!({"url": "https://example.com/1", "title": "One"}),
        json!({"url": "https://example.com/2", "title": "Two"}),
    ];
    let q = |name: &str| {
        call.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let offset = q("offset")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    // Without a limit Apify answers this figure.
    let limit = q("limit")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(999_999_999_999);
    let desc = q("desc").is_some_and(|v| v == "1" || v == "true");
    let mut ordered: Vec<Value> = items.to_vec();
    if desc {
        ordered.reverse();
    }
    let page: Vec<Value> = ordered.into_iter().skip(offset).take(limit).collect();
    let mut s = Success::ok(Value::Array(page.clone()));
    s.headers = vec![
        ("x-apify-pagination-total", items.len().to_string()),
        ("x-apify-pagination-offset", offset.to_string()),
        ("x-apify-pagination-count", page.len().to_string()),
        ("x-apify-pagination-limit", limit.to_string()),
        ("x-apify-pagination-desc", desc.to_string()),
    ];
    s
}

/// The answer of `op` for `call`, for the operations whose answer depends on the request;
/// `None` for the others (their OpenAPI example answers).
pub(crate) fn answer(op: &Operation, call: &Call) -> Option<Success> {
    let p = |n| param(op, &call.path, n);
    // `spec_path`: the deprecated `/v2/acts/…` answers as the `/v2/actors/…` it names.
    let body = match (op.method, op.spec_path.as_str()) {
        (Method::Get, "/v2/datasets/{datasetId}/items") => return Some(dataset_items(call)),
        (Method::Post, "/v2/datasets/{datasetId}/items") => {
            return Some(Success::new(201, json!({})));
        }
        (Method::Get, "/v2/key-value-stores/{storeId}/records/{recordKey}") => {
            json!({"key": p("recordKey"), "value": "stored by apistend"})
        }
        (Method::Put | Method::Post, "/v2/key-value-stores/{storeId}/records/{recordKey}") => {
            return Some(Success::new(201, json!({})));
        }
        (Method::Delete, "/v2/key-value-stores/{storeId}/records/{recordKey}") => {
            return Some(Success::new(204, Value::Null));
        }
        (Method::Post, "/v2/actors/{actorId}/runs") => {
            return Some(Success::new(201, run(&new_id("run"), p("actorId"))));
        }
        (Method::Post, "/v2/actor-tasks/{actorTaskId}/runs") => {
            return Some(Success::new(201, run(&new_id("run"), "task-actor")));
        }
        (Method::Get, "/v2/actor-runs/{runId}") => {
            let mut r = run(p("runId"), "actor");
            if let Some(data) = r.get_mut("data").and_then(Value::as_object_mut) {
                data.insert("status".into(), json!("SUCCEEDED"));
            }
            r
        }
        _ => return None,
    };
    Some(Success::ok(body))
}

/// An id of the kind Apify gives its objects (`run_…`).
fn new_id(prefix: &str) -> String {
    format!("{prefix}_{:016x}", fastrand::u64(..))
}
