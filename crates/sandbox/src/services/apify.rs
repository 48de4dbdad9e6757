//! Apify API v2: answers that depend on the request (the user, datasets and their items,
//! key-value records, actor runs); every other operation answers with its example in Apify's
//! official OpenAPI (the embedded `apify` examples).

use apistend_catalog::{Method, Operation};
use serde_json::{Value, json};

use super::Success;
use crate::call::Call;

fn param<'a>(op: &Operation, path: &'a str, name: &str) -> &'a str {
    op.path
        .split('/')
        .zip(path.split('/'))
        .find(|(t, _)| t.trim_matches(['{', '}']) == name)
        .map_or("", |(_, v)| v)
}

fn run(id: &str, actor: &str) -> Value {
    json!({"data": {"id": id, "actId": actor, "status": "READY", "startedAt": crate::clock::rfc3339(crate::clock::unix_now()),
        "defaultDatasetId": "ds_default", "defaultKeyValueStoreId": "kv_default", "buildNumber": "0.0.1"}})
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
        (Method::Get, "/v2/users/me") => json!({"data": {
            "id": "apistendUser01", "username": "apistend", "email": "demo@apistend.local", "isPaying": true,
            "profile": {"name": "APIStend Demo"}, "createdAt": "2026-01-01T00:00:00.000Z",
            "plan": {"id": "STARTER", "tier": "STARTER", "maxMonthlyUsageUsd": 49, "maxActorMemoryGbytes": 32,
                     "maxConcurrentActorRuns": 32, "apiRateLimitBoosts": 0, "dataRetentionDays": 7}
        }}),
        (Method::Get, "/v2/users/me/limits") => json!({"data": {
            "monthlyUsageCycle": {"startAt": "2026-11-01T00:00:00.000Z", "endAt": "2026-11-30T23:59:59.999Z"},
            "limits": {"maxMonthlyUsageUsd": 49, "maxMonthlyActorComputeUnits": 200, "maxActorMemoryGbytes": 32,
                       "maxActorCount": 100, "maxActorTaskCount": 1000, "maxConcurrentActorJobs": 32, "dataRetentionDays": 7},
            "current": {"monthlyUsageUsd": 1.25, "monthlyActorComputeUnits": 3.5, "activeActorJobCount": 0}
        }}),
        (Method::Get, "/v2/datasets")
        | (Method::Get, "/v2/key-value-stores")
        | (Method::Get, "/v2/actor-runs")
        | (Method::Get, "/v2/actors/{actorId}/runs") => {
            json!({"data": {"total": 0, "offset": 0, "limit": 1000, "count": 0, "desc": false, "items": []}})
        }
        (Method::Post, "/v2/datasets") => {
            return Some(Success::new(
                201,
                json!({"data": {"id": crate::tenants::new_id("ds"), "name": null, "itemCount": 0}}),
            ));
        }
        (Method::Get, "/v2/datasets/{datasetId}") => {
            json!({"data": {"id": p("datasetId"), "itemCount": 2, "cleanItemCount": 2}})
        }
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
            return Some(Success::new(
                201,
                run(&crate::tenants::new_id("run"), p("actorId")),
            ));
        }
        (Method::Post, "/v2/actor-tasks/{actorTaskId}/runs") => {
            return Some(Success::new(
                201,
                run(&crate::tenants::new_id("run"), "task-actor"),
            ));
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
