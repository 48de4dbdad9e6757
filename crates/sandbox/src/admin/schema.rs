//! The management API's bodies, as types: what the handlers read and write, and what the OpenAPI
//! document describes (derived from these types, so the two cannot drift apart).

use std::collections::BTreeMap;

use apistend_catalog::GroupOverride;
use serde::{Deserialize, Serialize};
use utoipa::IntoResponses;
use utoipa::{IntoParams, ToSchema};

use crate::tenants::{AppRecord, LimitRecord, SandboxRecord, SettingsRecord};

/// A sandbox: its keys, Bitrix24 local applications, own limits and defaults.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct Sandbox {
    /// `sbx_…`.
    pub(super) id: String,
    pub(super) name: String,
    /// Its API keys (each service's own credential, or `X-Mock-Key`).
    pub(super) keys: Vec<String>,
    pub(super) b24_apps: Vec<App>,
    /// The limit groups whose quota this sandbox changes.
    pub(super) limits: Vec<Limit>,
    pub(super) settings: SettingsRecord,
    /// RFC 3339.
    pub(super) created_at: String,
}

impl From<&SandboxRecord> for Sandbox {
    fn from(s: &SandboxRecord) -> Self {
        Self {
            id: s.id.clone(),
            name: s.name.clone(),
            keys: s.keys.clone(),
            b24_apps: s.b24_apps.iter().map(App::from).collect(),
            limits: s.limits.iter().map(Limit::from).collect(),
            settings: s.settings.clone(),
            created_at: s.created_at.clone(),
        }
    }
}

/// A Bitrix24 local application: its token (`auth=`) has buckets of its own.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct App {
    /// `app_…`.
    pub(super) id: String,
    pub(super) token: String,
}

impl From<&AppRecord> for App {
    fn from(a: &AppRecord) -> Self {
        Self {
            id: a.id.clone(),
            token: a.token.clone(),
        }
    }
}

/// A quota of one limit group.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct Limit {
    pub(super) service: String,
    pub(super) group: String,
    /// Bucket capacity.
    pub(super) burst: u32,
    /// One token back every this many milliseconds.
    pub(super) interval_ms: f64,
    /// `gcra` or `fixed_window`.
    pub(super) algorithm: String,
}

impl From<&LimitRecord> for Limit {
    fn from(l: &LimitRecord) -> Self {
        Self {
            service: l.service.clone(),
            group: l.group.clone(),
            burst: l.burst,
            interval_ms: millis(l.interval_us),
            algorithm: l.algorithm.clone(),
        }
    }
}

/// Microseconds as the milliseconds (with a fraction) the API writes intervals in.
#[allow(clippy::cast_precision_loss)] // the microseconds of a quota interval
pub(super) fn millis(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The body of `POST …/keys`: the key's value, when the caller chooses it (a test suite's fixed
/// credential).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct KeyBody {
    /// 1 to 2048 printable characters, no spaces; a random key when absent.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2048, pattern = "^[!-~]+$")]
    pub(super) key: Option<String>,
}

/// A key just issued.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct IssuedKey {
    pub(super) key: String,
    pub(super) sandbox: String,
}

/// A bucket and its level.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct Bucket {
    /// The key, or `app:ID` for a Bitrix24 local application.
    pub(super) key: String,
    pub(super) service: String,
    pub(super) group: String,
    pub(super) limit: u32,
    pub(super) remaining: u32,
    /// Until the next request would be allowed (0: now).
    pub(super) retry_after_ms: u64,
    /// Until the bucket is full again.
    pub(super) reset_after_ms: u64,
    /// Until the key's lockout of this service ends (amoCRM's 403 after repeated
    /// rejections), when it is locked out; a bucket reset clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) locked_for_ms: Option<u64>,
    /// In a live feed: when a request last touched it, in the last five minutes (Unix
    /// milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) last_request_ms: Option<u64>,
    /// In a live feed, the first time it is on the feed's page: its levels over the last five
    /// minutes, from the request journal, as `[at_ms, remaining, limit]` points (the level
    /// each request left, and the moment a refill made it full again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) history: Option<Vec<[u64; 3]>>,
}

/// An emulated service and its limit groups.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ServiceInfo {
    pub(super) id: String,
    /// Its path prefix on the sandbox (`/wb`).
    pub(super) prefix: String,
    pub(super) groups: Vec<GroupInfo>,
}

/// A limit group as the catalog has it.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct GroupInfo {
    pub(super) id: String,
    pub(super) burst: u32,
    pub(super) interval_ms: f64,
    pub(super) algorithm: String,
    /// Buckets per host, made on first use (not listed by the buckets routes).
    pub(super) per_host: bool,
}

/// An error, as RFC 9457 problem details (`application/problem+json`).
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct Problem {
    /// `about:blank`.
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) title: String,
    pub(super) status: u16,
    /// What was wrong, and what to send instead.
    pub(super) detail: String,
}

/// The body of `POST /api/v1/sandboxes` (may be empty).
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateBody {
    /// At most 200 bytes; `sandbox` when absent.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub(super) name: Option<String>,
}

/// The body of `PUT …/limits/{service}/{group}`: `burst` and either `interval_ms` or
/// `per_second`; what is left out keeps the catalog's value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitBody {
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub(super) burst: Option<u32>,
    /// One token back every this many milliseconds (at most a day).
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 1, maximum = 86_400_000)]
    pub(super) interval_ms: Option<u64>,
    /// Or: tokens back per second.
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub(super) per_second: Option<u32>,
    /// `gcra` (the default) or `fixed_window`.
    pub(super) algorithm: Option<Algorithm>,
}

/// A rate-limit algorithm.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum Algorithm {
    Gcra,
    FixedWindow,
}

impl LimitBody {
    /// The numbers within the bounds the document gives them.
    ///
    /// # Errors
    /// What is out of bounds (a 422: it reads, but is not acceptable).
    pub(super) fn check(&self) -> Result<(), String> {
        whole::within("burst", self.burst, 1, whole::MAX_BURST)?;
        whole::within("per_second", self.per_second, 1, whole::MAX_BURST)?;
        whole::within("interval_ms", self.interval_ms, 1, whole::MAX_INTERVAL_MS)
    }
}

impl From<LimitBody> for GroupOverride {
    fn from(b: LimitBody) -> Self {
        let mut o = GroupOverride::default();
        o.burst = b.burst;
        o.interval_ms = b.interval_ms;
        o.per_second = b.per_second;
        o.algorithm = b.algorithm.map(|a| {
            match a {
                Algorithm::Gcra => "gcra",
                Algorithm::FixedWindow => "fixed_window",
            }
            .to_owned()
        });
        o
    }
}

/// The body of `PUT …/settings`: absent fields are cleared.
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SettingsBody {
    /// Latency of every answer that asks for none (`X-Mock-Delay`), at most the sandbox's
    /// longest delay (60 s unless configured).
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0)]
    pub(super) latency_ms: Option<u64>,
    #[serde(default)]
    pub(super) scenario: Option<ChaosBody>,
    /// Service id → `account` (the sandbox's keys share its buckets) or `key`.
    #[serde(default)]
    pub(super) bucket_scope: std::collections::BTreeMap<String, crate::tenants::ScopeChoice>,
    /// Service id → the plan of its definition (Yandex Market's `medium`).
    #[serde(default)]
    pub(super) plans: std::collections::BTreeMap<String, String>,
    /// Whether requests are checked against the official descriptions: `strict` (the
    /// default), `report` or `off`.
    #[serde(default)]
    pub(super) validation: Option<crate::tenants::Validation>,
    /// Service id → its own validation, instead of `validation`.
    #[serde(default)]
    pub(super) validation_by_service:
        std::collections::BTreeMap<String, crate::tenants::Validation>,
    /// The time the sandbox's objects are stamped with (Unix seconds), instead of the clock's:
    /// repeatable `created_at`, `DATE_CREATE`.
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 253_402_300_799_u64)]
    pub(super) object_time: Option<u64>,
    /// `service/collection` of a job collection → how long its jobs take (`ms`) and whether
    /// they fail (`fails`): `{"ozon/import_tasks": {"ms": 500, "fails": true}}`.
    #[serde(default)]
    pub(super) jobs: std::collections::BTreeMap<String, JobBody>,
    /// Whether the sandbox keeps a journal of its requests (on unless `false`).
    #[serde(default)]
    pub(super) journal: Option<bool>,
}

/// How a sandbox's jobs of one collection go.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JobBody {
    /// How long each takes, in milliseconds, instead of its definition's time (at most a day).
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 86_400_000_u64)]
    pub(super) ms: Option<u64>,
    /// Whether each fails (a request's `X-Mock-Job` chooses for the job it starts).
    #[serde(default)]
    pub(super) fails: bool,
}

/// A scenario drawn for requests that name none: with `probability`, reproducibly from `seed`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ChaosBody {
    /// A name of `GET /api/v1/scenarios`.
    pub(super) name: String,
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub(super) probability: f64,
    /// Chosen and answered when absent, so the run can be replayed. At most 2^53 − 1, so that
    /// JavaScript (the dashboard) reads it exactly.
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 9_007_199_254_740_991_u64)]
    pub(super) seed: Option<u64>,
}

/// The query of `GET /api/v1/sandboxes`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct ListQuery {
    /// Only sandboxes whose name or id contains this, or that hold it as a key
    /// (case-insensitive).
    pub(super) q: Option<String>,
    /// Sandboxes to skip.
    #[serde(default, deserialize_with = "page::offset")]
    #[param(minimum = 0, maximum = 1_000_000_000)]
    pub(super) offset: usize,
    /// Sandboxes to answer at most; all when absent.
    #[serde(default, deserialize_with = "page::limit")]
    #[param(minimum = 0, maximum = 1_000_000_000)]
    pub(super) limit: Option<usize>,
}

/// Which buckets (`GET …/buckets`, `POST …/buckets/reset`).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct BucketFilter {
    /// A key, or `app:ID`.
    pub(super) key: Option<String>,
    pub(super) service: Option<String>,
    pub(super) group: Option<String>,
    /// Full buckets too (`GET`; by default only those that spent something).
    pub(super) all: Option<bool>,
    /// Buckets to skip (`GET`).
    #[serde(default, deserialize_with = "page::offset")]
    #[param(minimum = 0, maximum = 1_000_000_000)]
    pub(super) offset: usize,
    /// Buckets to answer at most (`GET`); all when absent.
    #[serde(default, deserialize_with = "page::limit")]
    #[param(minimum = 0, maximum = 1_000_000_000)]
    pub(super) limit: Option<usize>,
}

/// Whole numbers as JSON writes them: `5` and `5.0` alike (a JSON Schema integer is either).
pub(super) mod whole {
    use serde::{Deserialize, Deserializer, de::Error};

    /// The largest integer a JSON reader with doubles (JavaScript) reads exactly: 2^53 − 1.
    pub(crate) const MAX_SAFE: u64 = (1 << 53) - 1;

    /// The bounds of a quota's numbers (the `minimum`/`maximum` of their schemas; a test
    /// compares them): a burst or rate up to a million, an interval up to a day.
    pub(crate) const MAX_BURST: u64 = 1_000_000;
    pub(crate) const MAX_INTERVAL_MS: u64 = 86_400_000;

    /// `n` (named `name`) if it is from `min` to `max`.
    pub(crate) fn within<T: Into<u64> + Copy>(
        name: &str,
        n: Option<T>,
        min: u64,
        max: u64,
    ) -> Result<(), String> {
        match n.map(Into::into) {
            Some(v) if v < min || v > max => Err(format!("{name}: from {min} to {max}, got {v}")),
            _ => Ok(()),
        }
    }

    pub(super) fn option<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<u64>,
    {
        let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
            return Ok(None);
        };
        let whole = n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9_007_199_254_740_992.0)
                // Exact: a whole, non-negative f64 within 2^53.
                .map(|f| {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let w = f as u64;
                    w
                })
        });
        whole
            .and_then(|w| T::try_from(w).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected a whole number in range, got {n}")))
    }
}

/// Paging numbers, at most [`page::MAX`] (as the document says): a larger one is a mistake.
pub(super) mod page {
    use serde::{Deserialize, Deserializer, de::Error};

    /// The largest `offset` or `limit` (the `maximum` of their schemas).
    pub(super) const MAX: usize = 1_000_000_000;

    fn checked<E: Error>(n: usize) -> Result<usize, E> {
        if n > MAX {
            Err(E::custom(format!("at most {MAX}, got {n}")))
        } else {
            Ok(n)
        }
    }

    pub(crate) fn offset<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
        checked(usize::deserialize(d)?)
    }

    pub(crate) fn limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        Option::<usize>::deserialize(d)?.map(checked).transpose()
    }
}

/// What any management route may answer besides its success, each as problem details.
/// A sandbox's objects: by service, by collection, the objects in the order they were created
/// (each with its id: `id`, Bitrix24's `ID`).
#[derive(ToSchema)]
#[schema(value_type = Object, example = json!({"amocrm": {"leads": [{"id": 20000003, "name": "My deal 42"}]}}))]
#[allow(dead_code)] // a description of a body, never built
pub(super) struct Objects(
    BTreeMap<String, BTreeMap<String, Vec<serde_json::Map<String, serde_json::Value>>>>,
);

#[derive(IntoResponses)]
#[allow(dead_code)] // a description of answers, never built
pub(super) enum Errors {
    /// The request cannot be read: a body that is not the JSON asked for, a query that does not
    /// parse, a key it does not know.
    #[response(status = 400, content_type = "application/problem+json")]
    BadRequest(Problem),
    /// No admin token, or the wrong one.
    #[response(status = 401, content_type = "application/problem+json")]
    Unauthorized(Problem),
    /// What the path names is not there (a sandbox, a key, a service or group).
    #[response(status = 404, content_type = "application/problem+json")]
    NotFound(Problem),
    /// It reads, but a value is not acceptable (a quota that is not one, an unknown scenario).
    #[response(status = 422, content_type = "application/problem+json")]
    Unprocessable(Problem),
    /// The management API's own rate limit (see `RateLimit-Policy`); `Retry-After` says when.
    #[response(status = 429, content_type = "application/problem+json")]
    TooManyRequests(Problem),
    /// The sandbox failed (its data file could not be written, and the like; logged).
    #[response(status = 500, content_type = "application/problem+json")]
    Internal(Problem),
    /// The rate-limit store (Redis) does not answer.
    #[response(status = 503, content_type = "application/problem+json")]
    Unavailable(Problem),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_bounds_are_the_enforced_ones() {
        let doc = serde_json::to_value(<LimitBody as utoipa::PartialSchema>::schema()).unwrap();
        let p = &doc["properties"];
        assert_eq!(p["burst"]["maximum"], whole::MAX_BURST);
        assert_eq!(p["per_second"]["maximum"], whole::MAX_BURST);
        assert_eq!(p["interval_ms"]["maximum"], whole::MAX_INTERVAL_MS);
        let doc = serde_json::to_value(<ChaosBody as utoipa::PartialSchema>::schema()).unwrap();
        assert_eq!(doc["properties"]["seed"]["maximum"], whole::MAX_SAFE);
        for (body, ok) in [
            (r#"{"burst": 5.0, "interval_ms": 86400000}"#, true),
            (r#"{"burst": 0}"#, false),
            (r#"{"interval_ms": 86400001}"#, false),
        ] {
            let b = serde_json::from_str::<LimitBody>(body).unwrap();
            assert_eq!(b.check().is_ok(), ok, "{body}");
        }
        assert!(serde_json::from_str::<LimitBody>(r#"{"per_second": 1.5}"#).is_err());
    }
}
