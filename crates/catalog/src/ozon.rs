//! Ozon Seller API: about 50 requests per second per Client-Id across all methods, plus the
//! per-method limits the reference confirms (stock updates 80 per minute, the warehouse list one per
//! minute). A method with its own limit draws from both buckets.

use std::time::Duration;

use apistend_limiter::Quota;

use crate::error::CatalogError;
use crate::model::{
    AnswerSource, BucketScope, CredentialChannel, ErrorStyle, HeaderStyle, LatencyProfile,
    LimitGroup, Method, Operation, Rejection, Service, ServiceId,
};

fn group(id: &str, label: &str, count: u32, period: Duration) -> Result<LimitGroup, CatalogError> {
    Ok(LimitGroup {
        id: id.into(),
        label: Some(label.into()),
        quota: Quota::per_period(count, period).map_err(|source| CatalogError::Quota {
            what: format!("ozon {id}"),
            source,
        })?,
        scope: BucketScope::Key,
        documented: Some((u64::try_from(period.as_millis()).unwrap_or(u64::MAX), count)),
    })
}

pub(crate) fn service() -> Result<Service, CatalogError> {
    let groups = vec![
        group(
            "client",
            "all methods of one Client-Id",
            50,
            Duration::from_secs(1),
        )?,
        group(
            "stocks-update",
            "POST /v2/products/stocks",
            80,
            Duration::from_secs(60),
        )?,
        group(
            "warehouse-list",
            "POST /v1/warehouse/list",
            1,
            Duration::from_secs(60),
        )?,
    ];
    let op = |path: &str, groups: Vec<usize>, summary: &str| Operation {
        host: None,
        also_hosts: Vec::new(),
        method: Method::Post,
        path: path.into(),
        groups,
        cost: Default::default(),
        deprecated: false,
        category: None,
        summary: Some(summary.into()),
    };
    let operations = vec![
        op("/v3/product/list", vec![0], "product list"),
        op("/v3/product/info/list", vec![0], "product info"),
        op("/v4/product/info/stocks", vec![0], "stocks of products"),
        op("/v2/products/stocks", vec![1, 0], "update stocks"),
        op("/v1/warehouse/list", vec![2, 0], "warehouses"),
        op("/v4/product/info/limit", vec![0], "product import quota"),
    ];
    Ok(Service {
        id: ServiceId::Ozon,
        prefix: "/ozon",
        credentials: vec![CredentialChannel::ClientIdApiKey],
        rejection: Rejection {
            status: 429,
            content_type: "application/json",
            style: ErrorStyle::Ozon,
        },
        errors: ErrorStyle::Ozon,
        headers: HeaderStyle::None,
        latency: LatencyProfile { base_ms: 25 },
        groups,
        operations,
        fallback_groups: vec![0],
        operating_budget: None,
        batch_max: None,
        answers: AnswerSource::OzonFixtures,
        hosts: Vec::new(),
    })
}
