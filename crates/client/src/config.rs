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
    /// Defaults overridden by `WB_API_RETRY_ATTEMPTS`, `WB_API_RETRY_BASE_MS`,
    /// `WB_API_RATE_LIMIT_MAX_WAIT_MS` and `APISTEND_CLIENT_REDIS`.
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
        let num = |k: &str, min: u64, max: u64| -> Result<Option<u64>, ClientError> {
            match get(k) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
                    _ => Err(ClientError::Config(format!(
                        "{k}={v:?}: expected a whole number from {min} to {max}"
                    ))),
                },
            }
        };
        if let Some(n) = num(ENV_ATTEMPTS, 1, 20)? {
            c.attempts = u32::try_from(n).unwrap_or(3);
        }
        if let Some(n) = num(ENV_BASE_MS, 1, 600_000)? {
            c.retry_base = Duration::from_millis(n);
        }
        if let Some(n) = num(ENV_MAX_WAIT_MS, 0, 86_400_000)? {
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
}
