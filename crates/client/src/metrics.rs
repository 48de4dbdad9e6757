//! Per-account, per-group quota metrics (through the `metrics` facade), and the same figures as
//! plain counters on the client for callers and tests.
//!
//! - `apistend_client_acquisitions_total{service, account, group}`
//! - `apistend_client_local_wait_seconds{service, account, group}` (histogram)
//! - `apistend_client_local_refusals_total{service, account, group}`
//! - `apistend_client_retries_total{service, account, cause}`: `rate_limit`, `in_flight` (too
//!   many requests in flight: MoySklad's 1073), `server`, `network`
//! - `apistend_client_penalties_total{service, account, group}`
//! - `apistend_client_unexpected_429_total{service, account, group}`: the server said 429 although
//!   the local limiter allowed — the sign that a quota is set wrong.
//! - `apistend_client_aligned_total{service, account, group}`: the server reported fewer tokens
//!   left than the local model held, and the shared bucket dropped to match.
//! - `apistend_client_quota_interval_seconds{service, account, group}` and
//!   `apistend_client_quota_burst{…}`: the quota the client enforces — the catalog's, or the one
//!   it learned from the server's answers (see `Client::learned`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Counters of one client.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) attempts: AtomicU64,
    pub(crate) acquisitions: AtomicU64,
    pub(crate) local_refusals: AtomicU64,
    pub(crate) retries_rate_limit: AtomicU64,
    pub(crate) retries_in_flight: AtomicU64,
    pub(crate) retries_server: AtomicU64,
    pub(crate) retries_network: AtomicU64,
    pub(crate) penalties: AtomicU64,
    pub(crate) server_rate_limits: AtomicU64,
    pub(crate) waited_micros: AtomicU64,
    pub(crate) slot_waits: AtomicU64,
}

/// A snapshot of a client's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Requests sent (every attempt).
    pub attempts: u64,
    /// Tokens acquired.
    pub acquisitions: u64,
    /// Calls refused locally without sending.
    pub local_refusals: u64,
    /// Retries after a rate-limit answer.
    pub retries_rate_limit: u64,
    /// Retries after a refusal of too many requests in flight.
    pub retries_in_flight: u64,
    /// Retries after a 5xx.
    pub retries_server: u64,
    /// Retries after a network error or timeout.
    pub retries_network: u64,
    /// Penalties written to the shared bucket.
    pub penalties: u64,
    /// Rate-limit answers of the server although the local limiter allowed.
    pub server_rate_limits: u64,
    /// Total time spent waiting locally for tokens.
    pub waited: Duration,
    /// Pauses a call made for a free in-flight slot (the service's limit on requests in flight
    /// was reached by this account's calls).
    pub slot_waits: u64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> Stats {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            attempts: g(&self.attempts),
            acquisitions: g(&self.acquisitions),
            local_refusals: g(&self.local_refusals),
            retries_rate_limit: g(&self.retries_rate_limit),
            retries_in_flight: g(&self.retries_in_flight),
            retries_server: g(&self.retries_server),
            retries_network: g(&self.retries_network),
            penalties: g(&self.penalties),
            server_rate_limits: g(&self.server_rate_limits),
            waited: Duration::from_micros(g(&self.waited_micros)),
            slot_waits: g(&self.slot_waits),
        }
    }
}

pub(crate) fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Why a call was retried.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RetryCause {
    RateLimit,
    InFlight,
    Server,
    Network,
}

/// One group's metric handles for one account.
#[derive(Debug)]
pub(crate) struct GroupHandles {
    pub(crate) acquisitions: metrics::Counter,
    pub(crate) local_wait: metrics::Histogram,
    pub(crate) local_refusals: metrics::Counter,
    pub(crate) penalties: metrics::Counter,
    pub(crate) unexpected_429: metrics::Counter,
    pub(crate) aligned: metrics::Counter,
    pub(crate) interval: metrics::Gauge,
    pub(crate) burst: metrics::Gauge,
}

/// A client's metric handles: the retry counters registered with the global recorder when the
/// client is built (install the recorder before that), each group's on the group's first use —
/// a service of hundreds of groups (WB's) shows only those the process called. Kept once made:
/// recording is then an atomic increment, with no label vector built and no registry lookup.
#[derive(Debug)]
pub(crate) struct Handles {
    service: String,
    account: String,
    /// Group id → its catalog quota and its handles, once used.
    groups: std::collections::HashMap<String, (apistend_limiter::Quota, OnceLock<GroupHandles>)>,
    pub(crate) retries_rate_limit: metrics::Counter,
    pub(crate) retries_in_flight: metrics::Counter,
    pub(crate) retries_server: metrics::Counter,
    pub(crate) retries_network: metrics::Counter,
}

impl GroupHandles {
    /// Registers group `group`'s handles for `account`, its quota gauges at `quota`.
    fn register(
        service: &str,
        account: &str,
        group: &str,
        quota: &apistend_limiter::Quota,
    ) -> Self {
        let l = [
            ("service", service.to_owned()),
            ("account", account.to_owned()),
            ("group", group.to_owned()),
        ];
        let h = GroupHandles {
            acquisitions: metrics::counter!("apistend_client_acquisitions_total", &l),
            local_wait: metrics::histogram!("apistend_client_local_wait_seconds", &l),
            local_refusals: metrics::counter!("apistend_client_local_refusals_total", &l),
            penalties: metrics::counter!("apistend_client_penalties_total", &l),
            unexpected_429: metrics::counter!("apistend_client_unexpected_429_total", &l),
            aligned: metrics::counter!("apistend_client_aligned_total", &l),
            interval: metrics::gauge!("apistend_client_quota_interval_seconds", &l),
            burst: metrics::gauge!("apistend_client_quota_burst", &l),
        };
        h.interval.set(quota.interval().as_secs_f64());
        h.burst.set(f64::from(quota.burst()));
        h
    }
}

impl Handles {
    /// The handles of `account` for `service` (its groups' made on first use).
    pub(crate) fn new(service: &apistend_catalog::Service, account: &str) -> Self {
        let sid = service.id.to_string();
        let groups = service
            .groups
            .iter()
            .map(|g| (g.id.clone(), (g.quota, OnceLock::new())))
            .collect();
        let retries = |cause: &'static str| metrics::counter!("apistend_client_retries_total", "service" => sid.clone(), "account" => account.to_owned(), "cause" => cause);
        Self {
            retries_rate_limit: retries("rate_limit"),
            retries_in_flight: retries("in_flight"),
            retries_server: retries("server"),
            retries_network: retries("network"),
            service: sid,
            account: account.to_owned(),
            groups,
        }
    }

    /// Counts a retry in the client's counters and its metric.
    pub(crate) fn retry(&self, counters: &Counters, cause: RetryCause) {
        let (counter, handle) = match cause {
            RetryCause::RateLimit => (&counters.retries_rate_limit, &self.retries_rate_limit),
            RetryCause::InFlight => (&counters.retries_in_flight, &self.retries_in_flight),
            RetryCause::Server => (&counters.retries_server, &self.retries_server),
            RetryCause::Network => (&counters.retries_network, &self.retries_network),
        };
        inc(counter);
        handle.increment(1);
    }

    /// Counts an alignment of group `id`'s bucket to the server's report.
    pub(crate) fn aligned(&self, id: &str) {
        if let Some(h) = self.group(id) {
            h.aligned.increment(1);
        }
    }

    /// Shows the quota group `id` is now enforced with.
    pub(crate) fn learned(&self, id: &str, quota: &apistend_limiter::Quota) {
        if let Some(h) = self.group(id) {
            h.interval.set(quota.interval().as_secs_f64());
            h.burst.set(f64::from(quota.burst()));
        }
    }

    /// The handles of group `id` (every group of the service has them), registered on its
    /// first use.
    pub(crate) fn group(&self, id: &str) -> Option<&GroupHandles> {
        let (quota, cell) = self.groups.get(id)?;
        Some(cell.get_or_init(|| GroupHandles::register(&self.service, &self.account, id, quota)))
    }
}
