//! How the Redis store connects and decides: [`RedisConfig`], parsed once from a URL.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::error::LimiterError;

/// Where the Redis store reads "now".
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum TimeSource {
    /// Redis `TIME`, inside the script: every instance shares the server's clock (the default).
    #[default]
    Server,
    /// The caller's clock, passed to the script — for deployments whose Redis forbids `TIME` in
    /// scripts, and for tests that control time.
    Client(Arc<dyn Clock>),
}

impl std::fmt::Debug for TimeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeSource::Server => "Server",
            TimeSource::Client(_) => "Client",
        })
    }
}

/// What a decision does when Redis cannot answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Decide with a local in-memory store holding the same quotas, log a warning, and count it
    /// in `apistend_limiter_fallbacks_total` (the default: an outage of the limiter must not stop
    /// the traffic it protects).
    #[default]
    FailOpen,
    /// Return [`LimiterError::Store`].
    FailClosed,
}

/// How to reach Redis.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedisConfig {
    /// `redis://host:port[/db]` for a standalone server, or the seed nodes of a Cluster.
    pub nodes: Vec<String>,
    /// Whether `nodes` are Cluster nodes.
    pub cluster: bool,
    /// Prepended to every key.
    pub key_prefix: String,
    /// Where "now" comes from.
    pub time: TimeSource,
    /// What to do when Redis cannot answer.
    pub failure: FailurePolicy,
    /// How long one decision may wait for Redis before the failure policy applies.
    pub timeout: Duration,
    /// Extra key lifetime beyond the moment a bucket is full again.
    pub ttl_slack: Duration,
    /// After a failed connection attempt, how long to decide locally before trying again.
    pub reconnect_after: Duration,
}

impl RedisConfig {
    /// Parses `redis://…` (standalone) or `redis+cluster://host:port,host:port` (Cluster).
    ///
    /// # Errors
    /// [`LimiterError::StoreUrl`] for a URL that is not a Redis one, or a Cluster URL without a
    /// node.
    pub fn from_url(url: &str) -> Result<Self, LimiterError> {
        let url = url.trim();
        let (nodes, cluster) = if let Some(rest) = url.strip_prefix("redis+cluster://") {
            (
                rest.split(',')
                    .filter(|s| !s.is_empty())
                    .map(|n| format!("redis://{n}"))
                    .collect::<Vec<_>>(),
                true,
            )
        } else if url.starts_with("redis://")
            || url.starts_with("rediss://")
            || url.starts_with("unix://")
        {
            (vec![url.to_owned()], false)
        } else {
            return Err(LimiterError::StoreUrl {
                url: url.to_owned(),
                kind: crate::error::StoreUrlError::Unknown,
            });
        };
        if nodes.is_empty() {
            return Err(LimiterError::StoreUrl {
                url: url.to_owned(),
                kind: crate::error::StoreUrlError::NoClusterNode,
            });
        }
        Ok(Self {
            nodes,
            cluster,
            key_prefix: String::new(),
            time: TimeSource::Server,
            failure: FailurePolicy::FailOpen,
            timeout: Duration::from_millis(250),
            ttl_slack: Duration::from_secs(1),
            reconnect_after: Duration::from_millis(500),
        })
    }

    /// Sets the key prefix.
    #[must_use]
    pub fn with_key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = prefix.into();
        self
    }

    /// Sets the time source.
    #[must_use]
    pub fn with_time(mut self, time: TimeSource) -> Self {
        self.time = time;
        self
    }

    /// Sets the failure policy.
    #[must_use]
    pub fn with_failure_policy(mut self, failure: FailurePolicy) -> Self {
        self.failure = failure;
        self
    }

    /// Sets the per-decision timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the extra key lifetime.
    #[must_use]
    pub fn with_ttl_slack(mut self, slack: Duration) -> Self {
        self.ttl_slack = slack;
        self
    }
}
