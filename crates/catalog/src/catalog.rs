//! [`Catalog`]: every service and its limits, and how a request resolves to its operation and
//! limit groups.

use crate::error::CatalogError;
use crate::model::{Method, Operation, Service, ServiceId};
use crate::overrides::Overrides;
use crate::wb::WB_CATALOG_JSON;
use crate::{definition, hostnames};
use definition::Definitions;

use crate::resolve::Resolver;
use std::sync::{Arc, OnceLock};

/// Every service and its limits, with a resolver per service. A clone shares them (three
/// reference counts); overriding a quota copies the services once, never the routers.
#[derive(Debug, Clone)]
pub struct Catalog {
    services: Arc<Vec<Service>>,
    resolvers: Arc<Vec<Resolver>>,
    hostnames: Arc<hostnames::HostIndex>,
}

/// The built-in catalog, parsed once per process.
static BUILTIN_CATALOG: OnceLock<Catalog> = OnceLock::new();

/// What a request resolves to.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Resolved<'a> {
    /// The service.
    pub service: &'a Service,
    /// Its position in [`Catalog::services`]: an index for tables kept beside the catalog.
    pub index: usize,
    /// The operation, if one matches.
    pub operation: Option<&'a Operation>,
    /// Its position in the service's [`operations`](crate::Service::operations): an index for
    /// tables kept beside the catalog (the request journal's operation of a request).
    pub operation_index: Option<usize>,
    /// Indices into `service.groups` the request draws from: the operation's, or the service's
    /// fallback groups when nothing matches.
    pub groups: &'a [usize],
}

impl Catalog {
    /// The catalog as shipped: the built-in definitions, WB's operations from the committed
    /// import of its specs. Parsed on the first call of the process; every later call is a
    /// clone that shares it.
    ///
    /// # Errors
    /// [`CatalogError`] if an embedded file is corrupt (a build problem).
    pub fn builtin() -> Result<Self, CatalogError> {
        if let Some(c) = BUILTIN_CATALOG.get() {
            return Ok(c.clone());
        }
        let built = Self::load(&Definitions::builtin(), None)?;
        Ok(BUILTIN_CATALOG.get_or_init(|| built).clone())
    }

    /// The catalog with WB's operations taken from `file` (e.g. a user's newer import).
    ///
    /// # Errors
    /// [`CatalogError`] for a file whose numbers or references are invalid.
    pub fn from_wb(file: &crate::wb_catalog::WbCatalogFile) -> Result<Self, CatalogError> {
        Self::load(&Definitions::builtin(), Some(file))
    }

    /// The catalog of `definitions`; `wb` replaces the committed WB import.
    ///
    /// # Errors
    /// [`CatalogError::Definition`] naming the file, line and field of the first invalid
    /// definition, or two services with one id or one prefix.
    pub fn load(
        definitions: &Definitions,
        wb: Option<&crate::wb_catalog::WbCatalogFile>,
    ) -> Result<Self, CatalogError> {
        let committed;
        let wb = match wb {
            Some(f) => f,
            None => {
                committed =
                    serde_json::from_str::<crate::wb_catalog::WbCatalogFile>(WB_CATALOG_JSON)
                        .map_err(|e| CatalogError::Data(format!("data/wb.json: {e}")))?;
                &committed
            }
        };
        let mut services: Vec<Service> = Vec::with_capacity(definitions.files().len());
        for (file, text, parsed) in definitions.files() {
            let src = definition::Source { file, text };
            let imports = definition::Imports { wb };
            let svc = match parsed {
                Some(parsed) => definition::build(&src, parsed, imports)?,
                None => definition::build(&src, &src.parse()?, imports)?,
            };
            if let Some(other) = services
                .iter()
                .find(|s| s.id == svc.id || s.prefix == svc.prefix)
            {
                return Err(CatalogError::Definition {
                    file: file.to_owned(),
                    line: 1,
                    field: "prefix".into(),
                    reason: format!(
                        "service {} ({}) has the same id or prefix as {} ({})",
                        svc.id, svc.prefix, other.id, other.prefix
                    ),
                });
            }
            services.push(svc);
        }
        if services.is_empty() {
            return Err(CatalogError::Data("no service definitions".into()));
        }
        // A name several definitions claim goes to the last one loaded: a user's copy of a
        // built-in (loaded after it) takes its hostnames along with its operations.
        let mut index = hostnames::HostIndex::default();
        for (i, s) in services.iter().enumerate() {
            for name in s.hosts.iter().chain(&s.hostnames) {
                index.add(name, i);
            }
        }
        Ok(Self::from_services(services, index))
    }

    fn from_services(services: Vec<Service>, hostnames: hostnames::HostIndex) -> Self {
        let resolvers = services
            .iter()
            .map(|s| Resolver::new(&s.operations))
            .collect();
        Self {
            services: Arc::new(services),
            resolvers: Arc::new(resolvers),
            hostnames: Arc::new(hostnames),
        }
    }

    /// The service a client addressing `name` (a `Host` or TLS server name without its port)
    /// means: one of its `hosts`, or a name its `hostnames` cover (`*.bitrix24.ru` covers every
    /// portal). Any case; `None` for `localhost` and every name no definition claims.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// assert_eq!(catalog.by_hostname("content-api.wildberries.ru").unwrap().prefix, "/wb");
    /// assert_eq!(catalog.by_hostname("my-portal.bitrix24.ru").unwrap().prefix, "/b24");
    /// assert_eq!(catalog.by_hostname("api-seller.ozon.ru").unwrap().prefix, "/ozon");
    /// assert!(catalog.by_hostname("localhost").is_none());
    /// assert!(catalog.by_hostname("example.com").is_none());
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn by_hostname(&self, name: &str) -> Option<&Service> {
        self.hostname_index(name).and_then(|i| self.services.get(i))
    }

    /// The position in [`services`](Self::services) of the service whose hostnames match
    /// `name` (see [`by_hostname`](Self::by_hostname)).
    pub fn hostname_index(&self, name: &str) -> Option<usize> {
        self.hostnames.find(name)
    }

    /// All services.
    pub fn services(&self) -> &[Service] {
        &self.services
    }

    /// The id of the service named `id`.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// assert_eq!(catalog.service_id("ozon")?, apistend_catalog::ServiceId::OZON);
    /// assert!(catalog.service_id("nope").is_err());
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    ///
    /// # Errors
    /// [`CatalogError::UnknownService`], listing the ids there are.
    pub fn service_id(&self, id: &str) -> Result<ServiceId, CatalogError> {
        self.services
            .iter()
            .find(|s| s.id.as_str() == id)
            .map(|s| s.id)
            .ok_or_else(|| CatalogError::UnknownService {
                id: id.to_owned(),
                known: self
                    .services
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
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
        let (i, rest) = self.route_index(path)?;
        Some((self.services.get(i)?, rest))
    }

    /// As [`route`](Self::route), the service's position in [`services`](Self::services).
    pub fn route_index<'p>(&self, path: &'p str) -> Option<(usize, &'p str)> {
        self.services.iter().enumerate().find_map(|(i, s)| {
            let rest = path.strip_prefix(s.prefix)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((i, rest))
        })
    }

    fn index(&self, id: ServiceId) -> Option<usize> {
        self.services.iter().position(|s| s.id == id)
    }

    /// One service, if the catalog has it.
    pub fn service(&self, id: ServiceId) -> Option<&Service> {
        self.index(id).and_then(|i| self.services.get(i))
    }

    /// The operation `method path` of `service`, and the groups it draws from. `host` picks among
    /// operations that exist on several hosts (WB `/ping`); otherwise it may be `None`.
    /// `None` for a service the catalog does not have.
    pub fn resolve(
        &self,
        service: ServiceId,
        method: Method,
        path: &str,
        host: Option<&str>,
    ) -> Option<Resolved<'_>> {
        self.resolve_at(self.index(service)?, method, path, host)
    }

    /// As [`resolve`](Self::resolve), for the service at `index` in [`services`](Self::services).
    pub fn resolve_at(
        &self,
        index: usize,
        method: Method,
        path: &str,
        host: Option<&str>,
    ) -> Option<Resolved<'_>> {
        let svc = self.services.get(index)?;
        let at = self
            .resolvers
            .get(index)
            .and_then(|r| r.resolve(method, path, host))
            .filter(|i| *i < svc.operations.len());
        let op = at.and_then(|i| svc.operations.get(i));
        Some(Resolved {
            service: svc,
            index,
            operation: op,
            operation_index: at,
            groups: op.map_or(&svc.fallback_groups, |o| &o.groups),
        })
    }

    /// Applies user overrides.
    ///
    /// # Errors
    /// [`CatalogError`] naming the unknown service, group or plan, or the invalid numbers.
    pub fn with_overrides(mut self, overrides: &Overrides) -> Result<Self, CatalogError> {
        for (sid, o) in &overrides.services {
            let id = self.service_id(sid)?;
            let svc = self.service_mut(id)?;
            if let Some(ms) = o.latency_ms {
                svc.latency.base_ms = ms;
            }
            if let Some(name) = &o.plan {
                let plan = svc
                    .plans
                    .iter()
                    .find(|p| &p.name == name)
                    .cloned()
                    .ok_or_else(|| {
                        let known: Vec<&str> = svc.plans.iter().map(|p| p.name.as_str()).collect();
                        CatalogError::Overrides(if known.is_empty() {
                            format!("{sid}: plan {name:?} — {sid} has no plans")
                        } else {
                            format!(
                                "{sid}: plan {name:?} — {sid} has plans {}",
                                known.join(", ")
                            )
                        })
                    })?;
                for g in &mut svc.groups {
                    if let Some(q) = plan.quotas.get(&g.id) {
                        g.quota = *q;
                    }
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
    ///
    /// # Errors
    /// [`CatalogError::UnknownService`] for a service the catalog does not have.
    pub fn with_algorithm(
        mut self,
        service: ServiceId,
        algorithm: apistend_limiter::Algorithm,
    ) -> Result<Self, CatalogError> {
        for g in &mut self.service_mut(service)?.groups {
            g.quota = g.quota.with_algorithm(algorithm);
        }
        Ok(self)
    }

    fn service_mut(&mut self, id: ServiceId) -> Result<&mut Service, CatalogError> {
        let i = self.index(id);
        match i.and_then(|i| Arc::make_mut(&mut self.services).get_mut(i)) {
            Some(s) => Ok(s),
            None => Err(CatalogError::UnknownService {
                id: id.to_string(),
                known: String::new(),
            }),
        }
    }
}
