//! The sandbox's own metrics, served with the engine's as Prometheus text at `/metrics`
//! (metrics-exporter-prometheus renders them): requests by service, limit group and status;
//! rate-limit rejections; scenarios; store errors and the store's state. Each series' handle is
//! registered on its first use and kept, so the hot path does no registry lookup, and series
//! never used are not rendered.
//!
//! One family is kept apart: the bucket-fill histogram, observed on every request. The
//! exporter's histograms pin a crossbeam epoch and push each sample into an atomic bucket that
//! upkeep drains later — measured at 4–6 % of the gateway's throughput when it was tried — while
//! fixed bounds known at start need only one counter per bound: [`fill`] keeps those counters
//! and renders them in the histogram format after the exporter's text. The conduct report's
//! gauges ([`conduct`]) are rendered there too, from the journal at each scrape.

mod conduct;
mod fill;

mod recorder;

use std::sync::OnceLock;

use apistend_catalog::{Catalog, ServiceId};
use apistend_limiter::Store;
use metrics::{Counter, Gauge, Key, Label, Metadata, Recorder};

pub use recorder::SharedRecorder;

use crate::scenario::SCENARIOS;

/// The statuses counted one by one; anything else is `other` (the 0).
const STATUSES: [u16; 17] = [
    200, 201, 204, 400, 401, 403, 404, 408, 409, 413, 415, 422, 429, 500, 503, 504, 0,
];

static META: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

fn status_slot(status: u16) -> usize {
    STATUSES
        .iter()
        .position(|s| *s == status)
        .unwrap_or(STATUSES.len() - 1)
}

/// A handle registered on first use.
type Lazy<T> = OnceLock<T>;

pub(crate) struct Metrics {
    recorder: SharedRecorder,
    /// Per service: per group: per status.
    requests: Vec<Vec<[Lazy<Counter>; STATUSES.len()]>>,
    rejections: Vec<Vec<Lazy<Counter>>>,
    scenarios: Vec<[Lazy<Counter>; SCENARIOS.len()]>,
    /// Per service: per group: the share of the bucket left after each request.
    fill: Vec<Vec<fill::FillCells>>,
    store_errors: Counter,
    /// The catalog's services, in its order (the first index of every table above).
    service_ids: Vec<ServiceId>,
    group_ids: Vec<Vec<String>>,
}

impl Metrics {
    pub(crate) fn new(catalog: &Catalog) -> Self {
        let recorder = SharedRecorder::new();
        let service_ids: Vec<ServiceId> = catalog.services().iter().map(|s| s.id).collect();
        let group_ids: Vec<Vec<String>> = catalog
            .services()
            .iter()
            .map(|s| s.groups.iter().map(|g| g.id.clone()).collect())
            .collect();
        fn per_group<T: Default>(ids: &[Vec<String>]) -> Vec<Vec<T>> {
            ids.iter()
                .map(|g| g.iter().map(|_| T::default()).collect())
                .collect()
        }
        fn arrays<const N: usize>(ids: &[Vec<String>]) -> Vec<Vec<[Lazy<Counter>; N]>> {
            ids.iter()
                .map(|g| {
                    g.iter()
                        .map(|_| std::array::from_fn(|_| OnceLock::new()))
                        .collect()
                })
                .collect()
        }
        for (name, help) in [
            (
                "apistend_requests_total",
                "Requests answered, by service, limit group and status.",
            ),
            (
                "apistend_rate_limited_total",
                "Requests refused by an empty bucket (and rate_limit scenarios).",
            ),
            (
                "apistend_scenarios_total",
                "Scenarios answered: asked for with X-Mock-Scenario, or drawn from a sandbox's default scenario.",
            ),
            (
                "apistend_store_errors_total",
                "Rate-limit store failures seen by the pipeline.",
            ),
            (
                "apistend_lockouts_total",
                "Owners locked out after repeated rejections (amoCRM's 403), by service.",
            ),
            (
                "apistend_store_fallback_decisions_total",
                "Decisions taken locally because Redis did not answer.",
            ),
        ] {
            recorder.describe_counter(name.into(), None, help.into());
        }
        recorder.describe_gauge(
            "apistend_store_keys".into(),
            None,
            "Buckets held in this instance's memory (with Redis: its local fallback).".into(),
        );
        recorder.describe_gauge(
            "apistend_store_degraded".into(),
            None,
            "1 while Redis does not answer and decisions are local.".into(),
        );
        let store_errors =
            recorder.register_counter(&Key::from_name("apistend_store_errors_total"), &META);
        // Present from the start: a scrape shows 0, not nothing.
        store_errors.absolute(0);
        Self {
            requests: arrays(&group_ids),
            rejections: per_group(&group_ids),
            scenarios: service_ids
                .iter()
                .map(|_| std::array::from_fn(|_| OnceLock::new()))
                .collect(),
            fill: per_group(&group_ids),
            store_errors,
            recorder,
            service_ids,
            group_ids,
        }
    }

    /// The recorder the sandbox's families live in (to install as the global one).
    pub(crate) fn recorder(&self) -> &SharedRecorder {
        &self.recorder
    }

    /// Folds the facade's histogram samples (a client's, in-process) every few seconds (see
    /// [`SharedRecorder::keep_up`]).
    pub(crate) fn keep_up(&self) {
        self.recorder.keep_up();
    }

    fn svc(&self, id: ServiceId) -> usize {
        self.service_ids.iter().position(|s| *s == id).unwrap_or(0)
    }

    /// Labels `service` and `group` (and more) of `(s, g)`.
    fn labels(&self, s: usize, g: usize, more: Option<(&'static str, String)>) -> Vec<Label> {
        let service = self.service_ids.get(s).map(ToString::to_string);
        let group = self.group_ids.get(s).and_then(|v| v.get(g)).cloned();
        let mut labels = vec![
            Label::new("service", service.unwrap_or_default()),
            Label::new("group", group.unwrap_or_default()),
        ];
        labels.extend(more.map(|(k, v)| Label::new(k, v)));
        labels
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.recorder
            .register_counter(&Key::from_parts(name, labels), &META)
    }

    pub(crate) fn request(&self, id: ServiceId, group: usize, status: u16, rate_limited: bool) {
        let s = self.svc(id);
        let slot = status_slot(status);
        if let Some(c) = self
            .requests
            .get(s)
            .and_then(|g| g.get(group))
            .and_then(|st| st.get(slot))
        {
            c.get_or_init(|| {
                let status = match STATUSES.get(slot) {
                    Some(0) | None => "other".to_owned(),
                    Some(n) => n.to_string(),
                };
                let labels = self.labels(s, group, Some(("status", status)));
                self.counter("apistend_requests_total", labels)
            })
            .increment(1);
        }
        if rate_limited && let Some(c) = self.rejections.get(s).and_then(|g| g.get(group)) {
            c.get_or_init(|| {
                self.counter("apistend_rate_limited_total", self.labels(s, group, None))
            })
            .increment(1);
        }
    }

    /// An owner of service `id` was locked out. Rare: the handle is looked up each time.
    pub(crate) fn lockout(&self, id: ServiceId) {
        self.counter(
            "apistend_lockouts_total",
            vec![Label::new("service", id.to_string())],
        )
        .increment(1);
    }

    /// A request of service `id` its description does not allow, refused or (`mode` `report`)
    /// only reported. The handle is looked up each time: an invalid request is the rare one.
    pub(crate) fn invalid(&self, id: ServiceId, mode: &str) {
        self.counter(
            "apistend_invalid_requests_total",
            vec![
                Label::new("service", id.to_string()),
                Label::new("mode", mode.to_owned()),
            ],
        )
        .increment(1);
    }

    pub(crate) fn scenario(&self, id: ServiceId, name: &str) {
        let s = self.svc(id);
        if let Some(i) = SCENARIOS.iter().position(|(n, _)| *n == name)
            && let Some(c) = self.scenarios.get(s).and_then(|row| row.get(i))
        {
            c.get_or_init(|| {
                let service = self.service_ids.get(s).map(ToString::to_string);
                let labels = vec![
                    Label::new("service", service.unwrap_or_default()),
                    Label::new("scenario", name.to_owned()),
                ];
                self.counter("apistend_scenarios_total", labels)
            })
            .increment(1);
        }
    }

    /// Records how full the bucket of `group` was left by a request.
    pub(crate) fn fill(&self, id: ServiceId, group: usize, remaining: u32, limit: u32) {
        if let Some(cells) = self.fill.get(self.svc(id)).and_then(|g| g.get(group)) {
            cells.record(remaining, limit);
        }
    }

    pub(crate) fn store_error(&self) {
        self.store_errors.increment(1);
    }

    /// Prometheus text exposition format 0.0.4: every family of the registry (the sandbox's,
    /// and the engine's once the recorder is the global one), with the state of `store` and of
    /// `journal` (requests and bytes kept in this instance's memory, requests lost on the way
    /// to Redis), and the conduct `tally` of the requests the journal holds.
    pub(crate) fn render(
        &self,
        store: &Store,
        journal: crate::journal::Size,
        tally: &crate::journal::Tally,
    ) -> String {
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
        let labels = || vec![Label::new("store", kind)];
        let gauge = |name: &'static str| -> Gauge {
            self.recorder
                .register_gauge(&Key::from_parts(name, labels()), &META)
        };
        #[allow(clippy::cast_precision_loss)] // a count of buckets
        gauge("apistend_store_keys").set(keys as f64);
        gauge("apistend_store_degraded").set(f64::from(degraded));
        self.counter("apistend_store_fallback_decisions_total", labels())
            .absolute(fallbacks);
        let plain = |name: &'static str| -> Gauge {
            self.recorder.register_gauge(&Key::from_name(name), &META)
        };
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        {
            plain("apistend_journal_requests").set(journal.requests as f64);
            plain("apistend_journal_bytes").set(journal.bytes as f64);
        }
        self.recorder
            .register_counter(&Key::from_name("apistend_journal_lost_total"), &META)
            .absolute(journal.lost);
        let mut out = self.recorder.handle().render();
        fill::render(&mut out, &self.fill, |s, g| self.labels(s, g, None));
        conduct::render(&mut out, tally);
        out
    }
}
