//! The sandbox's own counters, served as Prometheus text at `/metrics`: requests by service,
//! limit group and status; rate-limit rejections; scenarios; how full buckets are when requests
//! arrive; store errors and the store's state. Lock-free: one atomic per (service, group, status
//! class), sized from the catalog at start.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use apistend_catalog::{Catalog, ServiceId};
use apistend_limiter::Store;

use crate::scenario::SCENARIOS;

/// The statuses counted one by one; anything else is `other`.
const STATUSES: [u16; 14] = [
    200, 201, 204, 400, 401, 403, 404, 409, 413, 429, 500, 503, 504, 0,
];

/// Upper bounds of the bucket-fill histogram (the share of the bucket left after a request).
const FILL_BOUNDS: [f64; 6] = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9];

fn status_slot(status: u16) -> usize {
    STATUSES
        .iter()
        .position(|s| *s == status)
        .unwrap_or(STATUSES.len() - 1)
}

pub(crate) struct Metrics {
    /// Per service: per group: per status.
    requests: Vec<Vec<[AtomicU64; STATUSES.len()]>>,
    rejections: Vec<Vec<AtomicU64>>,
    scenarios: Vec<[AtomicU64; SCENARIOS.len()]>,
    /// Per service: per group: requests whose fill fell in each bound (the last: above all).
    fill: Vec<Vec<[AtomicU64; FILL_BOUNDS.len() + 1]>>,
    /// Per service: per group: the sum of fills, in millionths.
    fill_sum: Vec<Vec<AtomicU64>>,
    store_errors: AtomicU64,
    /// The catalog's services, in its order (the first index of every table above).
    service_ids: Vec<ServiceId>,
    group_ids: Vec<Vec<String>>,
}

impl Metrics {
    pub(crate) fn new(catalog: &Catalog) -> Self {
        let service_ids: Vec<ServiceId> = catalog.services().iter().map(|s| s.id).collect();
        let group_ids: Vec<Vec<String>> = catalog
            .services()
            .iter()
            .map(|s| s.groups.iter().map(|g| g.id.clone()).collect())
            .collect();
        // One cell per service and group (and per status, scenario or fill bound within).
        let per_group = || -> Vec<Vec<AtomicU64>> {
            group_ids
                .iter()
                .map(|g| g.iter().map(|_| AtomicU64::new(0)).collect())
                .collect()
        };
        fn arrays<const N: usize>(ids: &[Vec<String>]) -> Vec<Vec<[AtomicU64; N]>> {
            ids.iter()
                .map(|g| {
                    g.iter()
                        .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                        .collect()
                })
                .collect()
        }
        Self {
            requests: arrays(&group_ids),
            rejections: per_group(),
            scenarios: group_ids
                .iter()
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
            fill: arrays(&group_ids),
            fill_sum: per_group(),
            store_errors: AtomicU64::new(0),
            service_ids,
            group_ids,
        }
    }

    fn svc(&self, id: ServiceId) -> usize {
        self.service_ids.iter().position(|s| *s == id).unwrap_or(0)
    }

    pub(crate) fn request(&self, id: ServiceId, group: usize, status: u16, rate_limited: bool) {
        let s = self.svc(id);
        if let Some(slot) = self
            .requests
            .get(s)
            .and_then(|g| g.get(group))
            .and_then(|st| st.get(status_slot(status)))
        {
            slot.fetch_add(1, Ordering::Relaxed);
        }
        if rate_limited && let Some(r) = self.rejections.get(s).and_then(|g| g.get(group)) {
            r.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn scenario(&self, id: ServiceId, name: &str) {
        if let (Some(row), Some(i)) = (
            self.scenarios.get(self.svc(id)),
            SCENARIOS.iter().position(|(n, _)| *n == name),
        ) && let Some(c) = row.get(i)
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Records how full the bucket of `group` was left by a request.
    pub(crate) fn fill(&self, id: ServiceId, group: usize, remaining: u32, limit: u32) {
        let s = self.svc(id);
        let share = f64::from(remaining.min(limit)) / f64::from(limit.max(1));
        let slot = FILL_BOUNDS
            .iter()
            .position(|b| share <= *b)
            .unwrap_or(FILL_BOUNDS.len());
        if let Some(c) = self
            .fill
            .get(s)
            .and_then(|g| g.get(group))
            .and_then(|b| b.get(slot))
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(sum) = self.fill_sum.get(s).and_then(|g| g.get(group)) {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            sum.fetch_add((share * 1e6) as u64, Ordering::Relaxed);
        }
    }

    pub(crate) fn store_error(&self) {
        self.store_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Prometheus text exposition format 0.0.4, with the state of `store`.
    pub(crate) fn render(&self, store: &Store) -> String {
        let mut out = String::new();
        let group = |s: usize, g: usize| {
            self.group_ids
                .get(s)
                .and_then(|v| v.get(g))
                .map_or("", String::as_str)
        };
        header(
            &mut out,
            "apistend_requests_total",
            "Requests answered, by service, limit group and status.",
        );
        for (s, id) in self.service_ids.iter().enumerate() {
            for (g, statuses) in self.requests.get(s).into_iter().flatten().enumerate() {
                for (i, c) in statuses.iter().enumerate() {
                    let status = STATUSES
                        .get(i)
                        .filter(|s| **s != 0)
                        .map_or("other".to_owned(), u16::to_string);
                    sample(
                        &mut out,
                        "apistend_requests_total",
                        &format!(
                            "service=\"{id}\",group=\"{}\",status=\"{status}\"",
                            group(s, g)
                        ),
                        c,
                    );
                }
            }
        }
        header(
            &mut out,
            "apistend_rate_limited_total",
            "Requests refused by an empty bucket (and rate_limit scenarios).",
        );
        for (s, id) in self.service_ids.iter().enumerate() {
            for (g, c) in self.rejections.get(s).into_iter().flatten().enumerate() {
                sample(
                    &mut out,
                    "apistend_rate_limited_total",
                    &format!("service=\"{id}\",group=\"{}\"", group(s, g)),
                    c,
                );
            }
        }
        header(
            &mut out,
            "apistend_scenarios_total",
            "Scenarios answered: asked for with X-Mock-Scenario, or drawn from a sandbox's default scenario.",
        );
        for (s, id) in self.service_ids.iter().enumerate() {
            for (i, c) in self.scenarios.get(s).into_iter().flatten().enumerate() {
                let name = SCENARIOS.get(i).map_or("", |(n, _)| n);
                sample(
                    &mut out,
                    "apistend_scenarios_total",
                    &format!("service=\"{id}\",scenario=\"{name}\""),
                    c,
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP apistend_bucket_fill_ratio Share of the bucket left after each request, by service and limit group.\n# TYPE apistend_bucket_fill_ratio histogram"
        );
        for (s, id) in self.service_ids.iter().enumerate() {
            for (g, slots) in self.fill.get(s).into_iter().flatten().enumerate() {
                let counts: Vec<u64> = slots.iter().map(|c| c.load(Ordering::Relaxed)).collect();
                let total: u64 = counts.iter().sum();
                if total == 0 {
                    continue;
                }
                let labels = format!("service=\"{id}\",group=\"{}\"", group(s, g));
                let mut cumulative = 0;
                for (bound, n) in FILL_BOUNDS.iter().zip(&counts) {
                    cumulative += n;
                    let _ = writeln!(
                        out,
                        "apistend_bucket_fill_ratio_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                    );
                }
                let _ = writeln!(
                    out,
                    "apistend_bucket_fill_ratio_bucket{{{labels},le=\"+Inf\"}} {total}"
                );
                let sum = self
                    .fill_sum
                    .get(s)
                    .and_then(|v| v.get(g))
                    .map_or(0, |c| c.load(Ordering::Relaxed));
                #[allow(clippy::cast_precision_loss)]
                let sum = sum as f64 / 1e6;
                let _ = writeln!(out, "apistend_bucket_fill_ratio_sum{{{labels}}} {sum}");
                let _ = writeln!(out, "apistend_bucket_fill_ratio_count{{{labels}}} {total}");
            }
        }
        let (kind, keys, degraded, fallbacks) = match store {
            Store::Redis(r) => (
                "redis",
                r.fallback_len(),
                u8::from(r.is_degraded()),
                r.fallback_decisions(),
            ),
            Store::Memory(m) => ("memory", m.len(), 0, 0),
            _ => ("other", 0, 0, 0),
        };
        let _ = writeln!(
            out,
            "# HELP apistend_store_keys Buckets held in this instance's memory (with Redis: its local fallback).\n# TYPE apistend_store_keys gauge\napistend_store_keys{{store=\"{kind}\"}} {keys}"
        );
        let _ = writeln!(
            out,
            "# HELP apistend_store_degraded 1 while Redis does not answer and decisions are local.\n# TYPE apistend_store_degraded gauge\napistend_store_degraded{{store=\"{kind}\"}} {degraded}"
        );
        let _ = writeln!(
            out,
            "# HELP apistend_store_fallback_decisions_total Decisions taken locally because Redis did not answer.\n# TYPE apistend_store_fallback_decisions_total counter\napistend_store_fallback_decisions_total{{store=\"{kind}\"}} {fallbacks}"
        );
        header(
            &mut out,
            "apistend_store_errors_total",
            "Rate-limit store failures seen by the pipeline.",
        );
        let _ = writeln!(
            out,
            "apistend_store_errors_total {}",
            self.store_errors.load(Ordering::Relaxed)
        );
        out
    }
}

fn header(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
}

/// One sample line; counters still at zero are left out.
fn sample(out: &mut String, name: &str, labels: &str, c: &AtomicU64) {
    let n = c.load(Ordering::Relaxed);
    if n > 0 {
        let _ = writeln!(out, "{name}{{{labels}}} {n}");
    }
}
