//! The live feed's query and events, as the management API's OpenAPI document shows them
//! (`GET /api/v1/sandboxes/{id}/events`).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::schema::page;

/// The query of a live feed.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct FeedQuery {
    pub(super) key: Option<String>,
    pub(super) service: Option<String>,
    pub(super) group: Option<String>,
    /// Buckets to skip.
    #[serde(default, deserialize_with = "page::offset")]
    #[param(minimum = 0, maximum = 1_000_000_000)]
    pub(super) offset: usize,
    /// Buckets per `buckets` event, 1 to 500 (50 when absent).
    #[param(minimum = 1, maximum = 500)]
    pub(super) limit: Option<usize>,
    /// How often `buckets` and `rates` come, 200 ms to 60 s (1 s when absent).
    #[param(minimum = 200, maximum = 60000)]
    pub(super) interval_ms: Option<u64>,
    /// The order of the buckets: `activity` (the default) puts those requests touched in the
    /// last five minutes first, the most drained first; `catalog` keeps keys, services and
    /// groups in their own order.
    pub(super) order: Option<BucketOrder>,
}

/// The order of a live feed's buckets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum BucketOrder {
    /// Touched lately first, the most drained first; then the rest in catalog order.
    #[default]
    Activity,
    /// Keys, then applications; services and groups in catalog order.
    Catalog,
}

/// One server-sent event of a live feed: its name, and its data as JSON text.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct FeedEvent {
    pub(super) event: FeedEventName,
    /// JSON: `buckets` `{at_ms, offset, more, buckets: [Bucket]}`, `rates` `{at_ms, interval_ms,
    /// groups: [{service, group, answered, refused}], missed}`, `refusal` `{at_ms, key,
    /// service, group, method, path, status, headers, body}`, `gone` `{sandbox}`, `error`
    /// `{detail}`.
    pub(super) data: String,
}

/// The events of a live feed.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum FeedEventName {
    Buckets,
    Rates,
    Refusal,
    Gone,
    Error,
}

impl FeedEventName {
    /// The name on the wire (`event: buckets`).
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Buckets => "buckets",
            Self::Rates => "rates",
            Self::Refusal => "refusal",
            Self::Gone => "gone",
            Self::Error => "error",
        }
    }
}
