//! What a service limits, and how: limit groups and their scope, concurrency limits, lockouts,
//! operating-time budgets, plans.

use std::collections::BTreeMap;

use apistend_limiter::Quota;

use super::ids::short_host;
use super::operation::Operation;

/// Which requests share one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BucketScope {
    /// One bucket per credential (seller account, Client-Id, portal key): the seeds' rule and
    /// the default.
    Key,
    /// One bucket per account: every key of a sandbox shares it (WB and Ozon limit per seller
    /// account, Bitrix24 per portal). A Bitrix24 local application keeps buckets of its own.
    Account,
    /// One bucket per credential part within a sandbox: the `Client-Id` of Ozon's pair, whatever
    /// key comes with it (per key when the request has no such part).
    CredentialPart,
    /// One bucket per application when the request comes from a registered application (Bitrix24
    /// local apps), otherwise per key.
    Application,
    /// One bucket per key and path class (Apify: records, runs and datasets, the user profile…).
    PathClass,
    /// One bucket per key and host: the limit applies on each domain separately (WB `/ping`).
    Host,
}

impl BucketScope {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            BucketScope::Key => "key",
            BucketScope::Account => "account",
            BucketScope::CredentialPart => "credential_part",
            BucketScope::Application => "application",
            BucketScope::PathClass => "path_class",
            BucketScope::Host => "host",
        }
    }
}

/// A bucket that some operations draw from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LimitGroup {
    /// Stable id, unique within the service (`content-api.kontent`, `portal`, `kv-records`).
    pub id: String,
    /// The name the service's documentation gives it, if any.
    pub label: Option<String>,
    /// The quota (and its algorithm).
    pub quota: Quota,
    /// Which requests share it.
    pub scope: BucketScope,
    /// The documented period and limit, when the source states them (WB tables), for display.
    pub documented: Option<(u64, u32)>,
    /// Path parameters that split the group into one bucket per resource (Apify limits per
    /// dataset, per actor, per key-value store): `datasetId`, `actorId`… The first one an
    /// operation's path has names the resource; an operation with none shares one bucket.
    pub per_resource: Vec<String>,
}

impl LimitGroup {
    /// What splits this group's bucket beyond its owner, for a request to `path` (matched by
    /// `operation`) on `host`: the host's short name for a group per host, `name=value` of the
    /// resource for a group per resource, nothing otherwise. The sandbox and the client build
    /// their bucket keys with it.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let path = "/v2/datasets/abc/items";
    /// let hit = catalog
    ///     .resolve(apistend_catalog::ServiceId::APIFY, apistend_catalog::Method::Get, path, None)
    ///     .unwrap();
    /// let group = &hit.service.groups[hit.groups[0]];
    /// assert_eq!(group.split(hit.operation, path, None).as_deref(), Some("datasetId=abc"));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn split(
        &self,
        operation: Option<&Operation>,
        path: &str,
        host: Option<&str>,
    ) -> Option<String> {
        if self.scope == BucketScope::Host {
            return Some(short_host(host.unwrap_or("-")).to_owned());
        }
        let (name, value) = operation?.resource(path, &self.per_resource)?;
        Some(format!("{name}={value}"))
    }
}

/// A concurrency limit: at most `slots.max()` requests of one owner in flight (MoySklad: 5 per
/// user, 20 per account). It applies to every request of the service, or to the calls of some
/// groups only; [`Service::in_flight_for`](super::service::Service::in_flight_for) says which
/// hold a call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InFlightLimit {
    /// Stable id, unique within the service's limits (`user`, `account`).
    pub id: String,
    /// How many, and the lease of each slot.
    pub slots: apistend_limiter::Slots,
    /// Whose requests share it: [`BucketScope::Key`] or [`BucketScope::Account`].
    pub scope: BucketScope,
    /// Path parameters that split it per resource (Yandex Market: 4 in flight per campaign).
    pub per_resource: Vec<String>,
    /// Indices into the service's groups: it holds only calls of these (every call when empty).
    pub groups: Vec<usize>,
    /// Index into the service's concurrency limits: the one it replaces for the calls it holds.
    pub instead_of: Option<usize>,
}

/// A lockout: after `after` rejections within `within_secs`, every request of that owner gets
/// the service's `locked` answer for `for_secs` (amoCRM blocks an integration that keeps
/// violating its limit with 403s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Lockout {
    /// Rejections that trigger it…
    pub after: u32,
    /// …within this many seconds.
    pub within_secs: u32,
    /// How long it lasts.
    pub for_secs: u32,
}

impl Lockout {
    /// `after` rejections within `within_secs` lock out for `for_secs`.
    #[must_use]
    pub fn new(after: u32, within_secs: u32, for_secs: u32) -> Self {
        Self {
            after,
            within_secs,
            for_secs,
        }
    }
}

/// Bitrix24's budget of method "operating" time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OperatingBudget {
    /// Seconds of execution time one method may accumulate per application or webhook…
    pub limit_secs: u32,
    /// …within this sliding window, kept as one-minute baskets.
    pub window_secs: u32,
}

impl OperatingBudget {
    /// `limit_secs` of operating time per `window_secs`.
    pub fn new(limit_secs: u32, window_secs: u32) -> Self {
        Self {
            limit_secs,
            window_secs,
        }
    }
}

/// A named set of quotas (Bitrix24's Enterprise plan, Yandex Market's `medium` tier): an override
/// file selects one for the whole catalog, a sandbox's settings for its own requests.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// Its name.
    pub name: String,
    /// Group id → the group's quota under it.
    pub quotas: BTreeMap<String, Quota>,
}
