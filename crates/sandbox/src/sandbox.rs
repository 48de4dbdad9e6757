//! [`Sandbox`]: the state built from a [`SandboxConfig`], and the listeners it serves.

use std::future::Future;
use std::sync::Arc;

use apistend_answers::requests::Dialect;
use apistend_answers::{RequestRules, SpecAnswers};
use apistend_catalog::{Catalog, ServiceId};
use apistend_limiter::{MemoryStore, RedisConfig, RedisStore, Store};
use axum::Router;

use crate::config::SandboxConfig;
use crate::journal::Journal;
use crate::state::{AppState, Emulated, Limits};
use crate::tenants::{Tenants, new_key};
use crate::{
    admin, error::SandboxError, lockout, metrics, metrics::SharedRecorder, server, sync, tls, ui,
    watch,
};

/// The demo sandbox made sure of at start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Demo {
    /// Its key.
    pub key: String,
    /// Its sandbox.
    pub sandbox_id: String,
    /// The token of its Bitrix24 local application (`auth=`).
    pub app_token: String,
}

/// A running sandbox's state; [`serve`](Sandbox::serve) puts it on a listener.
pub struct Sandbox {
    state: Arc<AppState>,
    demo: Demo,
    generated_token: Option<String>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("demo", &self.demo)
            .finish_non_exhaustive()
    }
}

impl Sandbox {
    /// Loads the catalog, the data file and (if asked) WB's specs, and makes sure of the demo
    /// sandbox: the given key, or the existing demo's, or a new one.
    ///
    /// # Errors
    /// [`SandboxError`] naming what cannot be loaded.
    pub async fn new(config: SandboxConfig) -> Result<Self, SandboxError> {
        let catalog =
            Arc::new(Catalog::load(&config.definitions, None)?.with_overrides(&config.overrides)?);
        // The catalog refuses a prefix of the sandbox's own routes (`RESERVED_PREFIXES`).
        // The one parse of the Redis URL: the buckets and the shared tenants use its result.
        let redis = config
            .redis
            .as_deref()
            .map(RedisConfig::from_url)
            .transpose()?;
        let store = match &redis {
            Some(c) => Store::from(RedisStore::new(c.clone())?),
            None => Store::from(MemoryStore::new()),
        };
        let newer: Vec<(&str, SpecAnswers)> = config
            .newer_examples
            .iter()
            .map(|(name, dir)| Ok((name.as_str(), SpecAnswers::load(dir)?)))
            .collect::<Result<_, SandboxError>>()?;
        let newer_rules = newer_rules(&config, &catalog)?;
        let tenants = Tenants::open_with(&config.data_dir, config.max_delay_ms)?;
        // With Redis, this instance's records and the shared ones are merged, record by record.
        let sync = match &redis {
            Some(c) => sync::TenantSync::connect(c).await,
            None => None,
        };
        if let Some(s) = &sync {
            s.pull(&tenants).await;
        }
        let key = demo_key(&tenants, config.demo_key.as_deref())?;
        let record = tenants.ensure_key("demo", &key)?;
        let generated_token = tenants.admin_token(config.admin_token.as_deref())?;
        if let Some(s) = &sync {
            s.publish(&tenants).await;
            s.follow(tenants.clone());
        }
        let lockouts = lockout::LockoutBook::start(sync.as_deref(), &catalog);
        let objects = objects_of(&config, sync.as_deref(), &catalog, &record.id).await?;
        objects.follow(tenants.alive());
        let app_token = record
            .b24_apps
            .first()
            .map(|a| a.token.clone())
            .unwrap_or_default();
        let metrics = metrics::Metrics::new(&catalog);
        metrics.keep_up();
        let examples = apistend_answers::examples_of_catalog(&catalog, &newer)?;
        let services = Emulated::of_catalog(&catalog, examples, &newer_rules)?;
        let tls = tls_for(&catalog, &config)?;
        let openapi = admin::document_for(&catalog, config.max_delay_ms).into();
        let journal = match &sync {
            Some(s) => Journal::redis(config.journal, Arc::clone(&catalog), s.connection()),
            None => Journal::memory(config.journal, Arc::clone(&catalog)),
        };
        let state = AppState {
            services,
            tls,
            passthrough: config.passthrough,
            passthrough_allow: config.passthrough_allow.clone(),
            catalog,
            store,
            tenants,
            lockouts,
            watch: watch::Watch::default(),
            limits: Limits {
                max_delay_ms: config.max_delay_ms,
                max_timeout_ms: config.max_timeout_ms,
                max_body_bytes: config.max_body_bytes,
                read_timeout: config.read_timeout,
                idle_timeout: config.idle_timeout,
                max_header_bytes: config.max_header_bytes.max(8192),
            },
            admin_limiter: MemoryStore::new(),
            openapi,
            admin_quota: admin::admin_quota(config.admin_per_second)
                .map_err(|e| SandboxError::Config(format!("the admin rate: {e}")))?,
            metrics,
            journal,
            sync,
            objects,
        };
        Ok(Self {
            state: Arc::new(state),
            demo: Demo {
                key,
                sandbox_id: record.id,
                app_token,
            },
            generated_token,
        })
    }

    /// The demo sandbox.
    pub fn demo(&self) -> &Demo {
        &self.demo
    }

    /// The management API's token (`Authorization: Bearer TOKEN` on `/api/v1/…`) when this
    /// start generated it (it is shown once); `None` when it was configured or generated by an
    /// earlier start (only its hash is kept).
    pub fn generated_admin_token(&self) -> Option<&str> {
        self.generated_token.as_deref()
    }

    /// How many operations of each service its official description's examples answer (the
    /// embedded sets, or the newer ones configured).
    pub fn described_operations(&self) -> Vec<(ServiceId, usize)> {
        self.state
            .services
            .iter()
            .zip(self.state.catalog.services())
            .filter_map(|(e, s)| Some((s.id, e.examples.as_ref()?.len())))
            .collect()
    }

    /// The catalog it emulates (after `--only`, `--services` and overrides).
    pub fn catalog(&self) -> &Catalog {
        &self.state.catalog
    }

    /// The Prometheus recorder `/metrics` renders. Installed as the process's global recorder
    /// ([`::metrics::set_global_recorder`], once, before the first request) it also collects the
    /// engine's and the clients' facade metrics, which `/metrics` then shows too.
    pub fn recorder(&self) -> SharedRecorder {
        self.state.metrics.recorder().clone()
    }

    /// The HTTP router.
    pub fn router(&self) -> Router {
        Router::new()
            .merge(admin::router(&self.state))
            .merge(ui::router())
            .fallback(crate::routes::dispatch)
            .with_state(Arc::clone(&self.state))
    }

    /// The local certificate authority whose certificates the TLS listener and `CONNECT`
    /// tunnels present.
    pub fn ca(&self) -> &tls::LocalCa {
        self.state.tls.certs.ca()
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight (for at most
    /// 30 s). An idle keep-alive connection stays open for `idle_timeout`; a request head, once
    /// started, must arrive within `read_timeout`, and be at most `max_header_bytes` (431
    /// beyond); TCP_NODELAY is on. The listener also takes `CONNECT` and absolute-form
    /// requests, as an HTTP proxy would.
    ///
    /// # Errors
    /// When the listener has no local address. A failed accept is logged and retried.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let admin = self.router();
        server::Server::run(self.state, admin, listener, None, shutdown).await
    }

    /// As [`serve`](Self::serve), and HTTPS on `tls` with certificates of the local authority
    /// for the hostnames of the definitions and the loopback names.
    ///
    /// # Errors
    /// When a listener has no local address.
    pub async fn serve_with_tls(
        self,
        listener: tokio::net::TcpListener,
        tls: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let admin = self.router();
        server::Server::run(self.state, admin, listener, Some(tls), shutdown).await
    }
}

/// The demo sandbox's key: the one configured, or the existing demo's, or a new one.
fn demo_key(tenants: &Tenants, configured: Option<&str>) -> Result<String, SandboxError> {
    if let Some(k) = configured {
        return Ok(k.to_owned());
    }
    let existing = tenants
        .list()
        .into_iter()
        .find(|s| s.name == "demo")
        .and_then(|s| s.keys.first().cloned());
    match existing {
        Some(k) => Ok(k),
        None => Ok(new_key()?),
    }
}

/// Certificates of the local authority for the hostnames of `catalog`'s definitions.
fn tls_for(catalog: &Arc<Catalog>, config: &SandboxConfig) -> Result<tls::Tls, SandboxError> {
    let ca = tls::LocalCa::open(config.ca_dir.as_deref().unwrap_or(&config.data_dir))?;
    let names = Arc::clone(catalog);
    Ok(tls::Tls::new(tls::Certificates::new(
        ca,
        Box::new(move |name| names.by_hostname(name).is_some()),
    )?)?)
}

/// The request rules of the newer descriptions given (`--wb-openapi`): a newer description
/// checks the requests too, not only answers them, read as its service reads JSON.
///
/// # Errors
/// A description that cannot be read.
fn newer_rules<'c>(
    config: &'c SandboxConfig,
    catalog: &Catalog,
) -> Result<Vec<(&'c str, RequestRules)>, SandboxError> {
    config
        .newer_examples
        .iter()
        .map(|(name, dir)| {
            let reading = catalog
                .service_id(name)
                .ok()
                .and_then(|id| catalog.service(id))
                .map(|s| s.json)
                .unwrap_or_default();
            Ok((
                name.as_str(),
                RequestRules::load(dir, Dialect::from(reading))?,
            ))
        })
        .collect()
}

/// Where the sandboxes' objects live (Redis when the tenants are shared, else memory), with
/// the configured seed loaded into the sandbox `demo`.
///
/// # Errors
/// A seed that does not check against `catalog` (naming the field), or one over the bounds.
async fn objects_of(
    config: &SandboxConfig,
    sync: Option<&sync::TenantSync>,
    catalog: &Catalog,
    demo: &str,
) -> Result<crate::objects::Objects, SandboxError> {
    let bounds = crate::objects::Bounds {
        objects: config.max_objects,
        bytes: config.max_object_bytes,
    };
    let objects = match sync {
        Some(s) => crate::objects::Objects::redis(s.connection(), bounds),
        None => crate::objects::Objects::memory(bounds),
    };
    if let Some(doc) = &config.seed {
        let data = crate::objects::seed::check(catalog, doc)
            .map_err(|why| SandboxError::Config(format!("the seed: {why}")))?;
        objects
            .replace(demo, &data, &|s, c| {
                crate::objects::seed::id_style(catalog, s, c)
            })
            .await
            .map_err(|e| SandboxError::Config(format!("the seed: {e}")))?;
    }
    Ok(objects)
}
