//! The persisted records: what the data file and the shared Redis state hold. Unknown fields
//! are refused rather than dropped (a file written by a newer version must not be downgraded),
//! and every value is checked when read, naming the field.

use std::collections::BTreeMap;
use std::time::Duration;

use apistend_limiter::{Algorithm, Quota};
use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::scenario::Scenario;

/// The data file's format version. Version 1 kept the admin token in plain text; version 2
/// keeps its SHA-256, a revision per sandbox and tombstones for deletions.
pub(crate) const DATA_VERSION: u32 = 2;

/// The longest a sandbox's job may take: a day.
pub(crate) const MAX_JOB_MS: u64 = 86_400_000;

/// One sandbox: an isolated set of keys, buckets and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SandboxRecord {
    /// Its id.
    pub id: String,
    /// A human name.
    pub name: String,
    /// Its API keys.
    pub keys: Vec<String>,
    /// Bitrix24 local applications: each has a bucket of its own.
    #[serde(default)]
    pub b24_apps: Vec<AppRecord>,
    /// Limit groups whose quota this sandbox changes.
    #[serde(default)]
    pub limits: Vec<LimitRecord>,
    /// What its requests get when they ask for nothing.
    #[serde(default)]
    pub settings: SettingsRecord,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// Every job this sandbox started at or before this moment (Unix milliseconds) is done:
    /// the management API's `POST …/jobs/finish`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs_finished_ms: Option<i64>,
    /// Revision of this record (microseconds since the epoch, raised past every revision seen):
    /// instances sharing one Redis keep, of two versions of a sandbox, the later one.
    #[serde(default)]
    pub rev: u64,
}

/// A Bitrix24 local application of a sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AppRecord {
    /// The application id.
    pub id: String,
    /// The access token it sends as `auth=`.
    pub token: String,
}

/// A sandbox's own quota for one limit group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LimitRecord {
    /// Service id.
    pub service: String,
    /// Group id.
    pub group: String,
    /// Bucket capacity.
    pub burst: u32,
    /// One token back every this many microseconds.
    pub interval_us: u64,
    /// `gcra` or `fixed_window`.
    pub algorithm: String,
}

/// A sandbox's defaults for requests that ask for nothing themselves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SettingsRecord {
    /// Latency of every answer, in milliseconds, when a request sends no `X-Mock-Delay` (instead
    /// of the service's own profile).
    #[serde(default)]
    pub latency_ms: Option<u64>,
    /// A scenario drawn at random for requests that send no `X-Mock-Scenario`.
    #[serde(default)]
    pub scenario: Option<ChaosRecord>,
    /// Service id → whose buckets its requests spend, instead of each group's own scope:
    /// `account` (every key of the sandbox shares them) or `key` (the default).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bucket_scope: BTreeMap<String, ScopeChoice>,
    /// Service id → the plan of its definition this sandbox's requests get (Yandex Market's
    /// `medium` tier, Bitrix24's `enterprise`); the catalog's quotas otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plans: BTreeMap<String, String>,
    /// Whether requests are checked against the official descriptions: `strict` (the
    /// default: refused as the real service refuses), `report` (answered, with the reason in
    /// `X-APIStend-Invalid`) or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    /// Service id → its own validation, instead of `validation`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub validation_by_service: BTreeMap<String, Validation>,
    /// The time the objects this sandbox keeps are stamped with (Unix seconds: `created_at`,
    /// `DATE_CREATE`, MoySklad's `updated`), instead of the clock's: repeatable answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_time: Option<i64>,
    /// `service/collection` of a job collection → how this sandbox's jobs of it go
    /// (`ozon/import_tasks`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub jobs: BTreeMap<String, JobRecord>,
    /// Whether the sandbox keeps a journal of its requests (`…/requests`, `…/conduct`): on
    /// unless `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<bool>,
}

/// How a sandbox's jobs of one collection go.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JobRecord {
    /// How long each takes, in milliseconds, instead of its definition's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    /// Whether each fails (a request's `X-Mock-Job` chooses for the job it starts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fails: bool,
}

/// How a request that its operation's description does not allow is treated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Validation {
    /// Refused, as the real service refuses it (the default).
    #[default]
    Strict,
    /// Answered as if it were valid, the reason in `X-APIStend-Invalid`, and counted.
    Report,
    /// Not checked.
    Off,
}

impl Validation {
    /// `strict`, `report` or `off` (`X-Mock-Validation`'s values), in any case.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Strict, Self::Report, Self::Off]
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(s))
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Report => "report",
            Self::Off => "off",
        }
    }
}

/// A sandbox's choice of bucket scope for one service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScopeChoice {
    /// Each group's own scope (per key unless the definition says otherwise).
    Key,
    /// One seller account: all keys of the sandbox share the service's buckets.
    Account,
}

/// Reproducible chaos: the n-th request of the sandbox (counted from when this was set, or from
/// start) gets `scenario` when a hash of (`seed`, n) falls below `probability`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ChaosRecord {
    /// A scenario name, as `X-Mock-Scenario` takes it.
    pub name: String,
    /// From 0 to 1.
    pub probability: f64,
    /// The same seed gives the same sequence of hits.
    pub seed: u64,
}

impl SettingsRecord {
    /// Checks the settings, saying what is wrong.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown scenario, a probability outside 0..=1, or a
    /// latency above `max_delay_ms`.
    pub fn validate(&self, max_delay_ms: u64) -> Result<(), SandboxError> {
        self.check(max_delay_ms).map_err(SandboxError::Config)
    }

    fn check(&self, max_delay_ms: u64) -> Result<(), String> {
        if let Some(ms) = self.latency_ms
            && ms > max_delay_ms
        {
            return Err(format!(
                "latency_ms: at most {max_delay_ms} (the server's largest delay), got {ms}"
            ));
        }
        for (name, j) in &self.jobs {
            if let Some(ms) = j.ms
                && ms > MAX_JOB_MS
            {
                return Err(format!(
                    "jobs.{name}.ms: at most {MAX_JOB_MS} (a day), got {ms}"
                ));
            }
        }
        if let Some(c) = &self.scenario {
            if Scenario::parse(&c.name).is_none() {
                return Err(format!(
                    "scenario.name: unknown scenario {:?}; valid: {}",
                    c.name,
                    Scenario::valid_list()
                ));
            }
            if !(0.0..=1.0).contains(&c.probability) {
                return Err(format!(
                    "scenario.probability: from 0 to 1, got {}",
                    c.probability
                ));
            }
        }
        Ok(())
    }
}

impl LimitRecord {
    /// The quota it holds (`None` if the record is broken: a checked record never is).
    pub(crate) fn quota(&self) -> Option<Quota> {
        let algorithm = self.algorithm.parse::<Algorithm>().ok()?;
        Quota::new(self.burst, Duration::from_micros(self.interval_us))
            .ok()
            .map(|q| q.with_algorithm(algorithm))
    }

    fn check(&self) -> Result<(), String> {
        let algorithm = self
            .algorithm
            .parse::<Algorithm>()
            .map_err(|_| format!("algorithm: gcra or fixed_window, got {:?}", self.algorithm))?;
        Quota::new(self.burst, Duration::from_micros(self.interval_us))
            .map(|q| q.with_algorithm(algorithm))
            .map(drop)
            .map_err(|e| format!("burst/interval_us: {e}"))
    }
}

impl SandboxRecord {
    /// Checks every value of the record, naming the first wrong field.
    pub(crate) fn check(&self, max_delay_ms: u64) -> Result<(), String> {
        if self.id.is_empty() {
            return Err("id: empty".to_owned());
        }
        for (i, k) in self.keys.iter().enumerate() {
            check_key(k).map_err(|e| format!("keys[{i}]: {e}"))?;
        }
        for (i, a) in self.b24_apps.iter().enumerate() {
            check_key(&a.token).map_err(|e| format!("b24_apps[{i}].token: {e}"))?;
        }
        for (i, l) in self.limits.iter().enumerate() {
            l.check().map_err(|e| format!("limits[{i}].{e}"))?;
        }
        self.settings
            .check(max_delay_ms)
            .map_err(|e| format!("settings.{e}"))
    }
}

/// A sandbox deleted at revision `rev`: instances that still hold it learn of the deletion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tombstone {
    pub(crate) id: String,
    pub(crate) rev: u64,
}

/// The admin token's hash, with its revision (the latest configured one wins across instances).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdminRecord {
    pub(crate) sha256: String,
    pub(crate) rev: u64,
}

/// The data file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataFile {
    pub(crate) version: u32,
    /// Version 1's plain-text token: read once, replaced by its hash, never written again.
    #[serde(default, skip_serializing)]
    pub(crate) admin_token: Option<String>,
    #[serde(default)]
    pub(crate) admin: Option<AdminRecord>,
    pub(crate) sandboxes: Vec<SandboxRecord>,
    #[serde(default)]
    pub(crate) deleted: Vec<Tombstone>,
}

/// A data file's version, read alone: a newer version's file is named as such before its new
/// fields are called unknown.
#[derive(Deserialize)]
struct VersionOnly {
    version: Option<u32>,
}

impl DataFile {
    /// Why `text` cannot be read by this version, if it is a newer version's file (whatever
    /// else it holds).
    pub(crate) fn newer(text: &str) -> Option<String> {
        let version = serde_json::from_str::<VersionOnly>(text).ok()?.version?;
        (version > DATA_VERSION).then(|| {
            format!(
                "version: {version} was written by a newer APIStend (this one reads up to {DATA_VERSION})"
            )
        })
    }

    /// Checks the version and every value, naming the first wrong field.
    pub(crate) fn check(&self, max_delay_ms: u64) -> Result<(), String> {
        if self.version > DATA_VERSION {
            return Err(format!(
                "version: {} was written by a newer APIStend (this one reads up to {DATA_VERSION})",
                self.version
            ));
        }
        if let Some(a) = &self.admin
            && crate::secret::TokenHash::parse(&a.sha256).is_none()
        {
            return Err("admin.sha256: not a SHA-256 in hex".to_owned());
        }
        for (i, s) in self.sandboxes.iter().enumerate() {
            s.check(max_delay_ms)
                .map_err(|e| format!("sandboxes[{i}] ({}).{e}", s.id))?;
        }
        Ok(())
    }
}

/// The longest key: an OAuth access token a service issues is a key too (amoCRM's JWTs are
/// about 600 bytes).
pub(crate) const MAX_KEY_BYTES: usize = 2048;

/// Whether `key` can be a key or token: 1 to [`MAX_KEY_BYTES`] printable characters, no spaces.
pub(crate) fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty()
        || key.len() > MAX_KEY_BYTES
        || key.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!(
            "{key:?} is not usable as a key: 1 to {MAX_KEY_BYTES} bytes of printable characters, no spaces"
        ));
    }
    Ok(())
}

/// What a change touched, for sharing it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Touched {
    /// A sandbox (created, changed or deleted).
    Sandbox(String),
    /// The admin token.
    Admin,
}

/// A record as instances exchange it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Shared {
    /// A sandbox as it is.
    Sandbox(Box<SandboxRecord>),
    /// A deleted sandbox.
    Deleted(Tombstone),
    /// The admin token's hash.
    Admin(AdminRecord),
}

impl Touched {
    /// Its field in the shared Redis hash.
    pub(crate) fn field(&self) -> String {
        match self {
            Touched::Sandbox(id) => format!("sbx:{id}"),
            Touched::Admin => "admin".to_owned(),
        }
    }
}

impl Shared {
    /// The revision.
    pub(crate) fn rev(&self) -> u64 {
        match self {
            Shared::Sandbox(s) => s.rev,
            Shared::Deleted(t) => t.rev,
            Shared::Admin(a) => a.rev,
        }
    }

    /// What it is about.
    pub(crate) fn touched(&self) -> Touched {
        match self {
            Shared::Sandbox(s) => Touched::Sandbox(s.id.clone()),
            Shared::Deleted(t) => Touched::Sandbox(t.id.clone()),
            Shared::Admin(_) => Touched::Admin,
        }
    }
}
