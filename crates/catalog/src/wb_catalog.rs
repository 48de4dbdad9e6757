//! The committed WB catalog (`data/wb.json`): the format the WB importer writes and every start
//! reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the importer writes: the committed `data/wb.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WbCatalogFile {
    /// What produced the file.
    pub generator: String,
    /// The limit groups (buckets), in order of first appearance.
    pub groups: Vec<WbGroupRecord>,
    /// Every operation of the specs, in spec order.
    pub operations: Vec<WbOperationRecord>,
}

/// One bucket: a method's own limit, or one shared by a named group on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WbGroupRecord {
    /// Stable id: `{host}.{group}` for a named group, `{host}.{method}.{path}` for a method's own.
    pub id: String,
    /// The host.
    pub host: String,
    /// The group's name in the spec, for shared groups.
    pub label: Option<String>,
    /// "Период", in milliseconds.
    pub period_ms: u64,
    /// "Лимит": requests per period.
    pub limit: u32,
    /// "Интервал", in milliseconds: one token comes back every interval.
    pub interval_ms: u64,
    /// "Всплеск": the bucket capacity.
    pub burst: u32,
    /// `table` or `sentence`: how the spec wrote it (a sentence has no burst; burst = limit).
    pub form: String,
    /// Whether the limit applies separately on each domain the method is served on (WB `/ping`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_host: bool,
}

/// One operation of the specs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WbOperationRecord {
    /// The spec file it comes from.
    pub file: String,
    /// Its host.
    pub host: String,
    /// Its method.
    pub method: String,
    /// Its path template.
    pub path: String,
    /// `x-category`.
    pub category: Option<String>,
    /// `summary`.
    pub summary: Option<String>,
    /// Its bucket; `None` for the deprecated operations without a limit block.
    pub group: Option<String>,
    /// Tokens an answer costs by status, when not 1 (`{"409": 10}`).
    pub cost: BTreeMap<String, u32>,
    /// Whether the operation is deprecated.
    pub deprecated: bool,
    /// Other domains that serve a variant of the operation (WB `/ping` on every host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_hosts: Vec<String>,
    /// The largest request body it takes, in bytes, where its description says ("Максимальный
    /// размер запроса 10 Мб").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_body_bytes: Option<u64>,
}
