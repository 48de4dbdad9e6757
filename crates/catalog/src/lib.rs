//! The services APIStend emulates — Wildberries, Bitrix24, Apify, Ozon — and how each limits
//! requests, as data. The sandbox and the client resolve limits here and nowhere else.
//!
//! ```
//! use apistend_catalog::{Catalog, Method, ServiceId};
//! let catalog = Catalog::builtin()?;
//! let hit = catalog.resolve(ServiceId::Wb, Method::Post, "/content/v2/cards/update", None);
//! let op = hit.operation.expect("a WB Content method");
//! let group = &hit.service.groups[op.groups[0]];
//! assert_eq!((group.quota.burst(), group.quota.interval().as_millis()), (5, 6000));
//! // every Content method but the exceptions shares one bucket
//! let other = catalog.resolve(ServiceId::Wb, Method::Get, "/content/v2/object/all", None);
//! assert_eq!(other.service.groups[other.operation.unwrap().groups[0]].id, "content-api.kontent");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod apify;
mod b24;
mod error;
mod export;
mod model;
mod overrides;
mod ozon;
mod render;
mod resolve;
mod wb;
pub mod wb_import;

pub use b24::{B24_GROUP, B24_METHODS, B24Plan};
pub use error::CatalogError;
pub use export::CatalogRow;
pub use model::{
    AnswerSource, BucketScope, CredentialChannel, ErrorStyle, HeaderStyle, LatencyProfile,
    LimitGroup, Method, OperatingBudget, Operation, Rejection, Service, ServiceId, short_host,
};
pub use overrides::{GroupOverride, Overrides, ServiceOverride};
pub use render::{ErrorAnswer, ErrorContext, ErrorKind, RateHeaders, X_APISTEND_RETRY_AFTER};
pub use wb::{WB_CATALOG_JSON, WB_FALLBACK_GROUP};

use resolve::Resolver;

/// Every service and its limits, with a resolver per service.
#[derive(Debug, Clone)]
pub struct Catalog {
    services: Vec<Service>,
    resolvers: Vec<Resolver>,
}

/// What a request resolves to.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Resolved<'a> {
    /// The service.
    pub service: &'a Service,
    /// The operation, if one matches.
    pub operation: Option<&'a Operation>,
    /// Indices into `service.groups` the request draws from: the operation's, or the service's
    /// fallback groups when nothing matches.
    pub groups: &'a [usize],
}

impl Catalog {
    /// The catalog as shipped: WB from the committed import of its specs, the others built in.
    ///
    /// # Errors
    /// [`CatalogError::Data`] if the embedded catalog file is corrupt (a build problem).
    pub fn builtin() -> Result<Self, CatalogError> {
        let file: wb_import::WbCatalogFile = serde_json::from_str(WB_CATALOG_JSON)
            .map_err(|e| CatalogError::Data(format!("data/wb.json: {e}")))?;
        Self::from_wb(&file)
    }

    /// The catalog with WB taken from `file` (e.g. a user's newer import).
    ///
    /// # Errors
    /// [`CatalogError`] for a file whose numbers or references are invalid.
    pub fn from_wb(file: &wb_import::WbCatalogFile) -> Result<Self, CatalogError> {
        let services = vec![
            wb::service(file)?,
            b24::service()?,
            apify::service()?,
            ozon::service()?,
        ];
        Ok(Self::from_services(services))
    }

    fn from_services(services: Vec<Service>) -> Self {
        let resolvers = services
            .iter()
            .map(|s| Resolver::new(&s.operations))
            .collect();
        Self {
            services,
            resolvers,
        }
    }

    /// All services.
    pub fn services(&self) -> &[Service] {
        &self.services
    }

    /// The service whose `prefix` begins `path` (as whole segments), and the rest of the path:
    /// `/wb/api/v3/warehouses` → WB and `/api/v3/warehouses`.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let (service, rest) = catalog.route("/ozon/v3/product/list").unwrap();
    /// assert_eq!((service.prefix, rest), ("/ozon", "/v3/product/list"));
    /// assert!(catalog.route("/ozonx/v3").is_none());
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    pub fn route<'p>(&self, path: &'p str) -> Option<(&Service, &'p str)> {
        self.services.iter().find_map(|s| {
            let rest = path.strip_prefix(s.prefix)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((s, rest))
        })
    }

    /// One service.
    pub fn service(&self, id: ServiceId) -> &Service {
        let i = ServiceId::ALL.iter().position(|s| *s == id).unwrap_or(0);
        self.services
            .get(i)
            .or_else(|| self.services.first())
            .unwrap_or_else(|| unreachable_services())
    }

    /// The operation `method path` of `service`, and the groups it draws from. `host` picks among
    /// operations that exist on several hosts (WB `/ping`); otherwise it may be `None`.
    pub fn resolve(
        &self,
        service: ServiceId,
        method: Method,
        path: &str,
        host: Option<&str>,
    ) -> Resolved<'_> {
        let i = ServiceId::ALL
            .iter()
            .position(|s| *s == service)
            .unwrap_or(0);
        let svc = self.service(service);
        let op = self
            .resolvers
            .get(i)
            .and_then(|r| r.resolve(method, path, host))
            .and_then(|i| svc.operations.get(i));
        Resolved {
            service: svc,
            operation: op,
            groups: op.map_or(&svc.fallback_groups, |o| &o.groups),
        }
    }

    /// Applies user overrides.
    ///
    /// # Errors
    /// [`CatalogError`] naming the unknown service or group, or the invalid numbers.
    pub fn with_overrides(mut self, overrides: &Overrides) -> Result<Self, CatalogError> {
        for (sid, o) in &overrides.services {
            let id: ServiceId = sid.parse()?;
            let svc = self.service_mut(id);
            if let Some(ms) = o.latency_ms {
                svc.latency.base_ms = ms;
            }
            if let Some(plan) = &o.plan {
                let plan = B24Plan::parse(plan)
                    .filter(|_| id == ServiceId::B24)
                    .ok_or_else(|| {
                        CatalogError::Overrides(format!(
                            "{sid}: plan {plan:?} — only b24 has plans: standard or enterprise"
                        ))
                    })?;
                if let Some(g) = svc.groups.first_mut() {
                    g.quota = plan.quota()?;
                }
            }
            for (gid, go) in &o.groups {
                let group = svc
                    .groups
                    .iter_mut()
                    .find(|g| &g.id == gid)
                    .ok_or_else(|| CatalogError::UnknownGroup {
                        service: sid.clone(),
                        group: gid.clone(),
                    })?;
                group.quota = go.apply(group.quota, &format!("{sid} group {gid}"))?;
            }
        }
        Ok(self)
    }

    /// Enforces every quota of `service` with `algorithm` (for comparing the fixed window of the
    /// decision record's first design with GCRA on the same numbers).
    #[must_use]
    pub fn with_algorithm(
        mut self,
        service: ServiceId,
        algorithm: apistend_limiter::Algorithm,
    ) -> Self {
        for g in &mut self.service_mut(service).groups {
            g.quota = g.quota.with_algorithm(algorithm);
        }
        self
    }

    fn service_mut(&mut self, id: ServiceId) -> &mut Service {
        let i = ServiceId::ALL.iter().position(|s| *s == id).unwrap_or(0);
        let len = self.services.len();
        #[allow(clippy::indexing_slicing)] // the four services are always there
        &mut self.services[i.min(len.saturating_sub(1))]
    }
}

fn unreachable_services() -> ! {
    // `Catalog` is only built with all four services.
    #[allow(clippy::panic)]
    {
        panic!("catalog without services")
    }
}
