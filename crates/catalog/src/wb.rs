//! Wildberries: the operations and buckets of WB's official specs, from the importer's committed
//! output (`data/wb.json`).

use std::collections::BTreeMap;
use std::time::Duration;

use apistend_limiter::Quota;

use crate::error::CatalogError;
use crate::model::{
    AnswerSource, BucketScope, CredentialChannel, ErrorStyle, HeaderStyle, LatencyProfile,
    LimitGroup, Method, Operation, Rejection, Service, ServiceId, short_host,
};
use crate::wb_import::WbCatalogFile;

/// The committed catalog file, written by `apistend catalog import-wb-openapi`.
pub const WB_CATALOG_JSON: &str = include_str!("../data/wb.json");

/// The bucket of requests that match no WB operation (their 404 spends a token too). WB does not
/// document one; APIStend uses the most common WB numbers, 300 per minute with a burst of 20.
pub const WB_FALLBACK_GROUP: &str = "unmatched";

pub(crate) fn service(file: &WbCatalogFile) -> Result<Service, CatalogError> {
    let mut groups = Vec::with_capacity(file.groups.len() + 1);
    let mut index = BTreeMap::new();
    for g in &file.groups {
        let quota = Quota::wb(
            Duration::from_millis(g.period_ms),
            g.limit,
            Duration::from_millis(g.interval_ms),
            g.burst,
        )
        .map_err(|source| CatalogError::Quota {
            what: format!("wb group {}", g.id),
            source,
        })?;
        index.insert(g.id.as_str(), groups.len());
        groups.push(LimitGroup {
            id: g.id.clone(),
            label: g.label.clone(),
            quota,
            scope: if g.per_host {
                BucketScope::Host
            } else {
                BucketScope::Key
            },
            documented: Some((g.period_ms, g.limit)),
        });
    }
    let fallback = groups.len();
    groups.push(LimitGroup {
        id: WB_FALLBACK_GROUP.into(),
        label: Some("requests that match no operation".into()),
        quota: Quota::wb(Duration::from_secs(60), 300, Duration::from_millis(200), 20).map_err(
            |source| CatalogError::Quota {
                what: "wb fallback group".into(),
                source,
            },
        )?,
        scope: BucketScope::Key,
        documented: None,
    });
    let mut hosts: Vec<String> = Vec::new();
    let mut operations = Vec::with_capacity(file.operations.len());
    for op in &file.operations {
        let method = Method::parse(&op.method)
            .ok_or_else(|| CatalogError::Data(format!("wb: unknown method {}", op.method)))?;
        let group = match &op.group {
            Some(id) => vec![
                *index
                    .get(id.as_str())
                    .ok_or_else(|| CatalogError::Data(format!("wb: unknown group {id}")))?,
            ],
            None => vec![fallback],
        };
        let mut cost = BTreeMap::new();
        for (status, tokens) in &op.cost {
            let status: u16 = status
                .parse()
                .map_err(|_| CatalogError::Data(format!("wb: bad status {status}")))?;
            cost.insert(status, *tokens);
        }
        for h in std::iter::once(&op.host).chain(&op.also_hosts) {
            if !hosts.iter().any(|known| known == h) {
                hosts.push(h.clone());
            }
        }
        operations.push(Operation {
            host: Some(op.host.clone()),
            also_hosts: op.also_hosts.clone(),
            method,
            path: op.path.clone(),
            groups: group,
            cost,
            deprecated: op.deprecated,
            category: op.category.clone(),
            summary: op.summary.clone(),
        });
    }
    hosts.sort_by(|a, b| short_host(a).cmp(short_host(b)));
    Ok(Service {
        id: ServiceId::Wb,
        prefix: "/wb",
        credentials: vec![CredentialChannel::Authorization],
        rejection: Rejection {
            status: 429,
            content_type: "application/json",
            style: ErrorStyle::Wb,
        },
        errors: ErrorStyle::Wb,
        headers: HeaderStyle::Wb,
        latency: LatencyProfile { base_ms: 20 },
        groups,
        operations,
        fallback_groups: vec![fallback],
        operating_budget: None,
        batch_max: None,
        answers: AnswerSource::OpenApiExamples,
        hosts,
    })
}
