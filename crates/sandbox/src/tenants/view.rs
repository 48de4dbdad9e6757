//! What the pipeline needs of a sandbox on every request, made once per change of the data and
//! carried by each of its credentials: no further lookup (nor lock) per request.

use foldhash::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use apistend_limiter::{Algorithm, Quota};

use super::records::{ChaosRecord, JobRecord, SandboxRecord, ScopeChoice, Validation};
use crate::scenario::Scenario;

/// One sandbox's limits and defaults, ready for the request path.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// service → group → this sandbox's own quota.
    limits: HashMap<String, HashMap<String, Quota>>,
    /// The default latency.
    pub(crate) latency_ms: Option<u64>,
    chaos: Option<Chaos>,
    /// The sandbox's id: the owner of its buckets scoped per account.
    pub(crate) sandbox: Arc<str>,
    /// `sandbox:{id}`, the tenant of those buckets' keys and the stem of per-credential-part
    /// ones (made once, not per request).
    pub(crate) account: Arc<str>,
    /// Services whose buckets the sandbox's keys share.
    per_account: Vec<String>,
    /// Service → the plan its requests get.
    plans: Vec<(String, String)>,
    /// Requests checked: the sandbox's choice, and each service's own.
    validation: Validation,
    validation_by_service: Vec<(String, Validation)>,
    /// The time its objects are stamped with, when the sandbox fixes it.
    pub(crate) object_time: Option<i64>,
    /// `service/collection` → how its jobs go.
    jobs: Vec<(String, JobRecord)>,
    /// Jobs started at or before this moment (Unix milliseconds) are done.
    pub(crate) jobs_finished_ms: Option<i64>,
    /// Its requests are kept in the journal.
    pub(crate) journal: bool,
}

#[derive(Debug)]
struct Chaos {
    record: ChaosRecord,
    scenario: Scenario,
    /// Draws so far; shared with the view this one replaces when the chaos did not change.
    drawn: Arc<AtomicU64>,
}

impl View {
    /// The view of `s`; `previous` (the view it replaces) passes on its count of chaos draws.
    pub(super) fn new(s: &SandboxRecord, previous: Option<&View>) -> Self {
        let mut limits: HashMap<String, HashMap<String, Quota>> = HashMap::default();
        for l in &s.limits {
            let algorithm = l.algorithm.parse::<Algorithm>().unwrap_or_default();
            if let Ok(q) = Quota::new(l.burst, Duration::from_micros(l.interval_us)) {
                limits
                    .entry(l.service.clone())
                    .or_default()
                    .insert(l.group.clone(), q.with_algorithm(algorithm));
            }
        }
        let chaos = s.settings.scenario.as_ref().and_then(|c| {
            // An unrelated change (a new key) keeps the sequence of draws going.
            let drawn = previous
                .and_then(|p| p.chaos.as_ref())
                .filter(|old| old.record == *c)
                .map_or_else(Arc::default, |old| Arc::clone(&old.drawn));
            Some(Chaos {
                record: c.clone(),
                scenario: Scenario::parse(&c.name)?,
                drawn,
            })
        });
        Self {
            limits,
            latency_ms: s.settings.latency_ms,
            object_time: s.settings.object_time,
            jobs: s
                .settings
                .jobs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            jobs_finished_ms: s.jobs_finished_ms,
            journal: s.settings.journal.unwrap_or(true),
            chaos,
            sandbox: s.id.as_str().into(),
            account: format!("sandbox:{}", s.id).into(),
            per_account: s
                .settings
                .bucket_scope
                .iter()
                .filter(|(_, c)| **c == ScopeChoice::Account)
                .map(|(id, _)| id.clone())
                .collect(),
            plans: s
                .settings
                .plans
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            validation: s.settings.validation.unwrap_or_default(),
            validation_by_service: s
                .settings
                .validation_by_service
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        }
    }

    /// How `service`'s requests are checked for this sandbox.
    pub(crate) fn validation(&self, service: &str) -> Validation {
        self.validation_by_service
            .iter()
            .find_map(|(s, v)| (s == service).then_some(*v))
            .unwrap_or(self.validation)
    }

    /// The plan the sandbox chose for `service`, if any.
    pub(crate) fn plan(&self, service: &str) -> Option<&str> {
        self.plans
            .iter()
            .find_map(|(s, p)| (s == service).then_some(p.as_str()))
    }

    /// How the sandbox's jobs of `service`'s collection `name` go, if it says.
    pub(crate) fn job(&self, service: &str, name: &str) -> Option<&JobRecord> {
        self.jobs.iter().find_map(|(k, j)| {
            let (s, n) = k.split_once('/')?;
            (s == service && n == name).then_some(j)
        })
    }

    /// Whether the sandbox's keys share `service`'s buckets.
    pub(crate) fn per_account(&self, service: &str) -> bool {
        self.per_account.iter().any(|s| s == service)
    }

    /// The sandbox's own quota of `service`'s `group`, if it set one.
    pub(crate) fn quota(&self, service: &str, group: &str) -> Option<Quota> {
        self.limits.get(service)?.get(group).copied()
    }

    /// The scenario the next request gets, if the dice say so.
    pub(crate) fn draw(&self) -> Option<Scenario> {
        let c = self.chaos.as_ref()?;
        let n = c.drawn.fetch_add(1, Ordering::Relaxed);
        hit(c.record.seed, n, c.record.probability).then_some(c.scenario)
    }
}

/// Whether draw `n` of `seed` falls below `p` (splitmix64 of the pair, as a fraction of 2^64).
pub(super) fn hit(seed: u64, n: u64, p: f64) -> bool {
    let mut z = seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    #[allow(clippy::cast_precision_loss)]
    let x = (z >> 11) as f64 / (1u64 << 53) as f64;
    x < p
}
