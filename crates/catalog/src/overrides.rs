//! User overrides, from TOML: any group's quota and a service's defaults.
//!
//! ```toml
//! [b24]
//! plan = "enterprise"        # Bitrix24 only: standard | enterprise
//! latency_ms = 0             # the service's default latency
//!
//! [wb.groups."content-api.kontent"]
//! burst = 10
//! interval_ms = 300
//!
//! [ozon.groups.client]
//! per_second = 100           # instead of interval_ms
//! algorithm = "fixed_window"
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use apistend_limiter::{Algorithm, Quota};
use serde::{Deserialize, Serialize};

use crate::error::CatalogError;

/// Overrides of several services, keyed by service id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Overrides {
    /// Per service id (`wb`, `b24`, `apify`, `ozon`).
    pub services: BTreeMap<String, ServiceOverride>,
}

/// Overrides of one service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServiceOverride {
    /// Default latency in milliseconds.
    pub latency_ms: Option<u32>,
    /// Bitrix24 plan: `standard` or `enterprise`.
    pub plan: Option<String>,
    /// Per limit-group id.
    #[serde(default)]
    pub groups: BTreeMap<String, GroupOverride>,
}

/// A new quota for one limit group: give `burst` and either `interval_ms` or `per_second`.
/// Omitted fields keep the group's values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GroupOverride {
    /// Bucket capacity.
    pub burst: Option<u32>,
    /// One token back every this many milliseconds.
    pub interval_ms: Option<u64>,
    /// Or: tokens back per second.
    pub per_second: Option<u32>,
    /// `gcra` or `fixed_window`.
    pub algorithm: Option<String>,
}

impl GroupOverride {
    /// A group override of burst and interval.
    pub fn new(burst: u32, interval: Duration) -> Self {
        Self {
            burst: Some(burst),
            interval_ms: Some(u64::try_from(interval.as_millis()).unwrap_or(u64::MAX)),
            per_second: None,
            algorithm: None,
        }
    }

    /// `base` with this override applied.
    ///
    /// # Errors
    /// [`CatalogError::Quota`] for numbers that do not make a quota, or both `interval_ms` and
    /// `per_second`.
    pub fn apply(&self, base: Quota, what: &str) -> Result<Quota, CatalogError> {
        let err = |source| CatalogError::Quota {
            what: what.to_owned(),
            source,
        };
        let interval = match (self.interval_ms, self.per_second) {
            (Some(_), Some(_)) => {
                return Err(CatalogError::Overrides(format!(
                    "{what}: give interval_ms or per_second, not both"
                )));
            }
            (Some(ms), None) => Duration::from_millis(ms),
            (None, Some(0)) => return Err(err(apistend_limiter::QuotaError::ZeroInterval)),
            (None, Some(n)) => Duration::from_micros(1_000_000u64.div_ceil(u64::from(n))),
            (None, None) => base.interval(),
        };
        let algorithm = match &self.algorithm {
            Some(a) => a.parse::<Algorithm>().map_err(err)?,
            None => base.algorithm(),
        };
        Ok(Quota::new(self.burst.unwrap_or(base.burst()), interval)
            .map_err(err)?
            .with_algorithm(algorithm))
    }
}

impl Overrides {
    /// Parses a TOML override file.
    ///
    /// # Errors
    /// [`CatalogError::Overrides`] with the parser's message (line and column) for bad TOML or
    /// unknown fields.
    pub fn from_toml(text: &str) -> Result<Self, CatalogError> {
        toml::from_str(text).map_err(|e| CatalogError::Overrides(e.to_string()))
    }
}
