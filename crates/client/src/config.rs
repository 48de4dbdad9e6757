//! Settings, read from the environment in one place, validated once, overridable by the builder.

use std::time::Duration;

use crate::error::ClientError;

/// `WB_API_RETRY_ATTEMPTS`: attempts in all, the first included (default 3).
pub const ENV_ATTEMPTS: &str = "WB_API_RETRY_ATTEMPTS";
/// `WB_API_RETRY_BASE_MS`: base of the backoff (default 500).
pub const ENV_BASE_MS: &str = "WB_API_RETRY_BASE_MS";
/// `WB_API_RATE_LIMIT_MAX_WAIT_MS`: the configured floor of the local wait ceiling (default 30000).
pub const ENV_MAX_WAIT_MS: &str = "WB_API_RATE_LIMIT_MAX_WAIT_MS";
/// `APISTEND_CLIENT_REDIS`: a Redis URL to share buckets across processes (memory when unset).
pub const ENV_REDIS: &str = "APISTEND_CLIENT_REDIS";
/// `APISTEND_RETRY_ATTEMPTS`: the service-neutral name of [`ENV_ATTEMPTS`] (wins when both
/// are set).
pub const ENV_RETRY_ATTEMPTS: &str = "APISTEND_RETRY_ATTEMPTS";
/// `APISTEND_RETRY_BASE_MS`: the service-neutral name of [`ENV_BASE_MS`].
pub const ENV_RETRY_BASE_MS: &str = "APISTEND_RETRY_BASE_MS";
/// `APISTEND_RATE_LIMIT_MAX_WAIT_MS`: the service-neutral name of [`ENV_MAX_WAIT_MS`].
pub const ENV_RATE_LIMIT_MAX_WAIT_MS: &str = "APISTEND_RATE_LIMIT_MAX_WAIT_MS";

/// Each setting's service-neutral variable and the decision record's (`WB_API_…`) one.
const NAMES: [(&str, &str); 3] = [
    (ENV_RETRY_ATTEMPTS, ENV_ATTEMPTS),
    (ENV_RETRY_BASE_MS, ENV_BASE_MS),
    (ENV_RATE_LIMIT_MAX_WAIT_MS, ENV_MAX_WAIT_MS),
];

/// The client's retry and wait settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// Base of the exponential backoff: `base·2^(attempt−1) + jitter[0, base)`.
    pub retry_base: Duration,
    /// The configured floor of the local wait ceiling.
    pub max_wait: Duration,
    /// Per-attempt HTTP timeout.
    pub request_timeout: Duration,
    /// A Redis URL for a shared store; `None`: memory.
    pub redis: Option<String>,
    /// How long a quota learned from the server's answers holds without new evidence, before
    /// the catalog's is back.
    pub learned_ttl: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            attempts: 3,
            retry_base: Duration::from_millis(500),
            max_wait: Duration::from_millis(30_000),
            request_timeout: Duration::from_secs(30),
            redis: None,
            learned_ttl: Duration::from_secs(600),
        }
    }
}

impl ClientConfig {
    /// Defaults overridden by `APISTEND_RETRY_ATTEMPTS`, `APISTEND_RETRY_BASE_MS`,
    /// `APISTEND_RATE_LIMIT_MAX_WAIT_MS` (or the decision record's `WB_API_RETRY_ATTEMPTS`,
    /// `WB_API_RETRY_BASE_MS`, `WB_API_RATE_LIMIT_MAX_WAIT_MS`: when both names of a setting are
    /// set, the service-neutral one wins and a warning is logged) and `APISTEND_CLIENT_REDIS`.
    ///
    /// # Errors
    /// [`ClientError::Config`] naming the variable whose value is not a number in range.
    pub fn from_env() -> Result<Self, ClientError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// As [`from_env`](Self::from_env), from any lookup (tests pass a map).
    ///
    /// # Errors
    /// [`ClientError::Config`] naming the bad variable.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        let mut c = Self::default();
        // The neutral name of a setting, else the decision record's: the one set, and its value.
        let named = |neutral: &str| -> Option<(String, String)> {
            let legacy = NAMES.iter().find(|(n, _)| *n == neutral).map(|(_, l)| *l)?;
            match (get(neutral), get(legacy)) {
                (Some(v), Some(_)) => {
                    tracing::warn!(
                        using = neutral,
                        ignored = legacy,
                        "both {neutral} and {legacy} are set; {neutral} wins"
                    );
                    Some((neutral.to_owned(), v))
                }
                (Some(v), None) => Some((neutral.to_owned(), v)),
                (None, Some(v)) => Some((legacy.to_owned(), v)),
                (None, None) => None,
            }
        };
        let num = |neutral: &str, min: u64, max: u64| -> Result<Option<u64>, ClientError> {
            match named(neutral) {
                None => Ok(None),
                Some((k, v)) => match v.trim().parse::<u64>() {
                    Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
                    _ => Err(ClientError::Config(format!(
                        "{k}={v:?}: expected a whole number from {min} to {max}"
                    ))),
                },
            }
        };
        if let Some(n) = num(ENV_RETRY_ATTEMPTS, 1, 20)? {
            c.attempts = u32::try_from(n).unwrap_or(3);
        }
        if let Some(n) = num(ENV_RETRY_BASE_MS, 1, 600_000)? {
            c.retry_base = Duration::from_millis(n);
        }
        if let Some(n) = num(ENV_RATE_LIMIT_MAX_WAIT_MS, 0, 86_400_000)? {
            c.max_wait = Duration::from_millis(n);
        }
        c.redis = get(ENV_REDIS).filter(|v| !v.trim().is_empty());
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn reads_and_validates_the_environment() {
        let env: HashMap<&str, &str> = [
            (ENV_ATTEMPTS, "5"),
            (ENV_BASE_MS, "100"),
            (ENV_MAX_WAIT_MS, "1000"),
        ]
        .into();
        let c = ClientConfig::from_lookup(|k| env.get(k).map(|v| (*v).to_owned())).unwrap();
        assert_eq!(
            (c.attempts, c.retry_base, c.max_wait),
            (5, Duration::from_millis(100), Duration::from_secs(1))
        );
        let bad = ClientConfig::from_lookup(|k| (k == ENV_ATTEMPTS).then(|| "zero".to_owned()))
            .unwrap_err();
        assert!(bad.to_string().contains(ENV_ATTEMPTS), "{bad}");
        assert!(
            ClientConfig::from_lookup(|k| (k == ENV_ATTEMPTS).then(|| "0".to_owned())).is_err()
        );
        assert_eq!(
            ClientConfig::from_lookup(|_| None).unwrap(),
            ClientConfig::default()
        );
    }

    #[test]
    fn the_service_neutral_names_are_read_and_win_over_the_decision_records() {
        let get = |env: HashMap<&'static str, &'static str>| {
            move |k: &str| env.get(k).map(|v| (*v).to_owned())
        };
        let neutral = ClientConfig::from_lookup(get([
            (ENV_RETRY_ATTEMPTS, "7"),
            (ENV_RETRY_BASE_MS, "50"),
            (ENV_RATE_LIMIT_MAX_WAIT_MS, "2000"),
        ]
        .into()))
        .unwrap();
        assert_eq!(
            (neutral.attempts, neutral.retry_base, neutral.max_wait),
            (7, Duration::from_millis(50), Duration::from_secs(2))
        );
        let both =
            ClientConfig::from_lookup(get([(ENV_RETRY_ATTEMPTS, "2"), (ENV_ATTEMPTS, "9")].into()))
                .unwrap();
        assert_eq!(both.attempts, 2, "the neutral name wins");
        let bad = ClientConfig::from_lookup(get([(ENV_RETRY_BASE_MS, "x")].into())).unwrap_err();
        assert!(bad.to_string().contains(ENV_RETRY_BASE_MS), "{bad}");
    }
}
