//! What every request shares: the catalog, the buckets' store, the tenants, each service's
//! answers, and the sandbox's limits.

use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::{Catalog, ServiceId};
use apistend_limiter::{MemoryStore, Store};

use crate::operating::Operating;
use crate::tenants::Tenants;
use apistend_answers::Answers;
use apistend_answers::{RequestRules, SpecAnswers};

#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_delay_ms: u64,
    pub(crate) max_timeout_ms: u64,
    pub(crate) max_body_bytes: usize,
    pub(crate) read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_header_bytes: usize,
}

pub(crate) struct AppState {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) store: Store,
    pub(crate) tenants: Tenants,
    /// What is emulated of each service beside its definition, in the catalog's order.
    pub(crate) services: Vec<Emulated>,
    /// Owners locked out after repeated rejections, for services whose definition says so.
    pub(crate) lockouts: crate::lockout::LockoutBook,
    /// The dashboard's live feeds.
    pub(crate) watch: crate::watch::Watch,
    pub(crate) limits: Limits,
    pub(crate) admin_limiter: MemoryStore,
    pub(crate) admin_quota: apistend_limiter::Quota,
    /// The management API's OpenAPI document, made at start.
    pub(crate) openapi: axum::body::Bytes,
    pub(crate) metrics: crate::metrics::Metrics,
    pub(crate) sync: Option<Arc<crate::sync::TenantSync>>,
    /// Certificates for the hostnames of the definitions.
    pub(crate) tls: crate::tls::Tls,
    /// `CONNECT`s to other hosts are tunnelled, not refused.
    pub(crate) passthrough: bool,
    /// Internal ranges a tunnel may reach all the same.
    pub(crate) passthrough_allow: Vec<ipnet::IpNet>,
    /// The objects each sandbox keeps (its services' `resources`).
    pub(crate) objects: crate::objects::Objects,
    /// Every sandbox's requests, for tests to ask about.
    pub(crate) journal: crate::journal::Journal,
}

impl AppState {
    /// What is emulated of the catalog's service at `index` ([`apistend_catalog::Resolved`]'s).
    pub(crate) fn emulated(&self, index: usize) -> Option<&Emulated> {
        self.services.get(index)
    }
}

/// What the sandbox holds of one service beside its definition.
pub(crate) struct Emulated {
    /// Its answer source, as its definition names it.
    pub(crate) answers: Box<dyn Answers>,
    /// Its OpenAPI examples (its definition's `examples`), for what its source does not answer.
    pub(crate) examples: Option<SpecAnswers>,
    /// Its operating-time budget, if its definition has one (Bitrix24's).
    pub(crate) operating: Option<Operating>,
    /// The request rules of its official description (its definition's `examples` names
    /// them), for the validation stage.
    pub(crate) requests: Option<RequestRules>,
    /// The objects each of its resources starts with in a sandbox, made on first use.
    seeds: Vec<std::sync::OnceLock<Vec<serde_json::Value>>>,
}

impl Emulated {
    /// The objects its resource at `index` starts with in every sandbox (`make`s, once).
    pub(crate) fn seed(
        &self,
        index: usize,
        make: impl FnOnce() -> Vec<serde_json::Value>,
    ) -> &[serde_json::Value] {
        self.seeds.get(index).map_or(&[], |s| s.get_or_init(make))
    }
}

impl Emulated {
    /// What is emulated of each service of `catalog`, in its order: `examples` are the sets of
    /// OpenAPI examples, by service; `newer` the request rules of newer descriptions, by the
    /// name of the embedded ones they replace (`--wb-openapi`'s `wb`).
    ///
    /// # Errors
    /// When an embedded answers file is corrupt (a build problem).
    pub(crate) fn of_catalog(
        catalog: &Catalog,
        mut examples: Vec<(ServiceId, SpecAnswers)>,
        newer: &[(&str, RequestRules)],
    ) -> Result<Vec<Self>, crate::error::SandboxError> {
        catalog
            .services()
            .iter()
            .map(|s| {
                let at = examples.iter().position(|(id, _)| *id == s.id);
                // A user's document checks the requests of its operations, read now; a
                // built-in names embedded rules.
                let described = match (&s.openapi, &s.requests) {
                    (Some(path), _) => Some(RequestRules::load(
                        path,
                        apistend_answers::requests::Dialect::Json,
                    )?),
                    (None, Some(name)) => match newer.iter().find(|(n, _)| n == name) {
                        Some((_, rules)) => Some(rules.clone()),
                        None => RequestRules::embedded(name)?,
                    },
                    (None, None) => None,
                };
                // What the definition writes itself (`[operations.request]`) comes first.
                let mut declared = s
                    .operations
                    .iter()
                    .filter_map(|o| Some((o.method, o.spec_path.as_str(), o.request.as_ref()?)))
                    .peekable();
                let requests = match declared.peek() {
                    None => described,
                    Some(_) => Some(RequestRules::declared(declared, described).map_err(|e| {
                        apistend_answers::AnswersError::OfService {
                            service: s.id.to_string(),
                            source: Box::new(e),
                        }
                    })?),
                };
                Ok(Emulated {
                    answers: apistend_answers::source_of(s.answers)?,
                    examples: at.map(|i| examples.swap_remove(i).1),
                    operating: s.operating_budget.map(Operating::new),
                    requests,
                    seeds: s
                        .resources
                        .iter()
                        .map(|_| std::sync::OnceLock::new())
                        .collect(),
                })
            })
            .collect()
    }
}
