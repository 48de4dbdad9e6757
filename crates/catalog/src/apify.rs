//! Apify API v2: a bucket per path class — 60 requests per second per resource by default, 200 for
//! key-value store records, 400 for runs and dataset pushes, 90 for the user profile. The global
//! 250 000 per minute per user is not emulated (no debugging load reaches it).

use std::time::Duration;

use apistend_limiter::Quota;

use crate::error::CatalogError;
use crate::model::{
    AnswerSource, BucketScope, CredentialChannel, ErrorStyle, HeaderStyle, LatencyProfile,
    LimitGroup, Method, Operation, Rejection, Service, ServiceId,
};

fn class(id: &str, label: &str, per_second: u32) -> Result<LimitGroup, CatalogError> {
    Ok(LimitGroup {
        id: id.into(),
        label: Some(label.into()),
        quota: Quota::per_period(per_second, Duration::from_secs(1)).map_err(|source| {
            CatalogError::Quota {
                what: format!("apify {id}"),
                source,
            }
        })?,
        scope: BucketScope::PathClass,
        documented: Some((1000, per_second)),
    })
}

pub(crate) fn service() -> Result<Service, CatalogError> {
    let groups = vec![
        class("resource", "any resource (default)", 60)?,
        class("kv-records", "key-value store records", 200)?,
        class("runs-datasets", "actor and task runs, dataset pushes", 400)?,
        class("users-me", "the user profile /v2/users/me", 90)?,
    ];
    let op = |method, path: &str, group: usize, summary: &str| Operation {
        host: None,
        also_hosts: Vec::new(),
        method,
        path: path.into(),
        groups: vec![group],
        cost: Default::default(),
        deprecated: false,
        category: None,
        summary: Some(summary.into()),
    };
    use Method::{Delete, Get, Post, Put};
    let operations = vec![
        op(Get, "/v2/users/me", 3, "current user"),
        op(Get, "/v2/users/me/limits", 0, "account limits and usage"),
        op(Get, "/v2/datasets", 0, "list datasets"),
        op(Post, "/v2/datasets", 0, "create a dataset"),
        op(Get, "/v2/datasets/{datasetId}", 0, "get a dataset"),
        op(
            Get,
            "/v2/datasets/{datasetId}/items",
            0,
            "get dataset items",
        ),
        op(
            Post,
            "/v2/datasets/{datasetId}/items",
            2,
            "push dataset items",
        ),
        op(Get, "/v2/key-value-stores", 0, "list key-value stores"),
        op(
            Get,
            "/v2/key-value-stores/{storeId}/records/{recordKey}",
            1,
            "get a record",
        ),
        op(
            Put,
            "/v2/key-value-stores/{storeId}/records/{recordKey}",
            1,
            "store a record",
        ),
        op(
            Post,
            "/v2/key-value-stores/{storeId}/records/{recordKey}",
            1,
            "store a record",
        ),
        op(
            Delete,
            "/v2/key-value-stores/{storeId}/records/{recordKey}",
            1,
            "delete a record",
        ),
        op(Post, "/v2/acts/{actorId}/runs", 2, "run an actor"),
        op(Get, "/v2/acts/{actorId}/runs", 0, "list an actor's runs"),
        op(Post, "/v2/actor-tasks/{actorTaskId}/runs", 2, "run a task"),
        op(Get, "/v2/actor-runs/{runId}", 0, "get a run"),
        op(Get, "/v2/actor-runs", 0, "list runs"),
    ];
    Ok(Service {
        id: ServiceId::Apify,
        prefix: "/apify",
        credentials: vec![
            CredentialChannel::BearerToken,
            CredentialChannel::TokenQuery,
        ],
        rejection: Rejection {
            status: 429,
            content_type: "application/json; charset=utf-8",
            style: ErrorStyle::Apify,
        },
        errors: ErrorStyle::Apify,
        headers: HeaderStyle::Apify,
        latency: LatencyProfile { base_ms: 20 },
        groups,
        operations,
        fallback_groups: vec![0],
        operating_budget: None,
        batch_max: None,
        answers: AnswerSource::ApifyResources,
        hosts: Vec::new(),
    })
}
