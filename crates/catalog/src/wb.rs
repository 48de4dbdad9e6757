//! Wildberries' operations and buckets from the importer's committed output (`data/wb.json`),
//! for the definition that says `import = "wb_openapi"` (`services/wb.toml`).

use std::collections::BTreeMap;
use std::time::Duration;

use apistend_limiter::Quota;

use crate::error::CatalogError;
use crate::model::{BucketScope, LimitGroup, Method, Operation, short_host};
use crate::wb_catalog::WbCatalogFile;

/// The committed catalog file, written by `apistend catalog import-wb-openapi`.
pub const WB_CATALOG_JSON: &str = include_str!("../data/wb.json");

/// The bucket of requests that match no WB operation (their 404 spends a token too), as
/// `services/wb.toml` names it.
pub const WB_FALLBACK_GROUP: &str = "unmatched";

/// What an import adds to a definition: groups, operations (with the id of their group, `None`
/// for the definition's fallback groups) and hosts.
#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) groups: Vec<LimitGroup>,
    pub(crate) operations: Vec<(Operation, Option<String>)>,
    pub(crate) hosts: Vec<String>,
}

pub(crate) fn parts(file: &WbCatalogFile) -> Result<Parts, CatalogError> {
    let mut groups = Vec::with_capacity(file.groups.len());
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
            per_resource: Vec::new(),
        });
    }
    let mut hosts: Vec<String> = Vec::new();
    let mut operations = Vec::with_capacity(file.operations.len());
    for op in &file.operations {
        let method = Method::parse(&op.method)
            .ok_or_else(|| CatalogError::Data(format!("wb: unknown method {}", op.method)))?;
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
        operations.push((
            Operation {
                host: Some(op.host.clone()),
                also_hosts: op.also_hosts.clone(),
                method,
                path: op.path.clone(),
                spec_path: op.path.clone(),
                groups: Vec::new(),
                cost,
                deprecated: op.deprecated,
                category: op.category.clone(),
                summary: op.summary.clone(),
                weight: 1,
                weight_from: None,
                cost_from: None,
                fixture: None,
                anonymous: false,
                repeatable: crate::repeat::repeatable_by_rule(method, &op.path),
                binding: None,
                max_body: op.max_body_bytes,
                request: None,
            },
            op.group.clone(),
        ));
    }
    hosts.sort_by(|a, b| short_host(a).cmp(short_host(b)));
    Ok(Parts {
        groups,
        operations,
        hosts,
    })
}
