//! The catalog as rows: one per operation, for `apistend catalog` (JSON or a table).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::model::ServiceId;

/// One operation and its limit, as `apistend catalog --format json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CatalogRow {
    /// Service id.
    pub service: &'static str,
    /// Host of the real service, when it has several.
    pub host: Option<String>,
    /// HTTP method.
    pub method: &'static str,
    /// Path template.
    pub path: String,
    /// The operation's own (most specific) limit group.
    pub group: String,
    /// Every group the operation draws from, most specific first.
    pub groups: Vec<String>,
    /// Bucket capacity of `group`.
    pub burst: u32,
    /// One token back every this many milliseconds (fractional for sub-millisecond intervals).
    pub interval_ms: f64,
    /// `gcra` or `fixed_window`.
    pub algorithm: &'static str,
    /// Bucket scope of `group`: `key`, `application` or `path_class`.
    pub scope: &'static str,
    /// Tokens an answer costs by status, when not 1.
    pub cost: BTreeMap<String, u32>,
    /// Whether the service deprecated the operation.
    pub deprecated: bool,
    /// Whether the client and `apistend proxy` may send it again when it is not known whether
    /// the service applied it (`Operation::repeatable`).
    pub repeatable: bool,
}

impl Catalog {
    /// One row per operation of `service` (or of all services).
    pub fn rows(&self, service: Option<ServiceId>) -> Vec<CatalogRow> {
        let mut rows = Vec::new();
        for svc in self
            .services()
            .iter()
            .filter(|s| service.is_none_or(|id| s.id == id))
        {
            for op in &svc.operations {
                let groups: Vec<_> = op
                    .groups
                    .iter()
                    .filter_map(|&i| svc.groups.get(i))
                    .collect();
                let Some(g) = groups.first() else { continue };
                rows.push(CatalogRow {
                    service: svc.id.as_str(),
                    host: op.host.clone(),
                    method: op.method.as_str(),
                    path: op.path.clone(),
                    group: g.id.clone(),
                    groups: groups.iter().map(|g| g.id.clone()).collect(),
                    burst: g.quota.burst(),
                    interval_ms: g.quota.interval_micros() as f64 / 1000.0,
                    algorithm: g.quota.algorithm().as_str(),
                    scope: g.scope.as_str(),
                    cost: op.cost.iter().map(|(s, t)| (s.to_string(), *t)).collect(),
                    deprecated: op.deprecated,
                    repeatable: op.repeatable,
                });
            }
        }
        rows
    }
}
