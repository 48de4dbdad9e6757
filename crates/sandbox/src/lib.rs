//! The APIStend sandbox: a multi-tenant gateway that emulates Wildberries, Bitrix24, Apify and Ozon
//! with their real limits — the same buckets, status codes, error bodies and headers as production.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use apistend_sandbox::{Sandbox, SandboxConfig};
//! let sandbox = Sandbox::new(SandboxConfig::new("./data").with_demo_key("demo-key")).await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! sandbox.serve(listener, std::future::pending()).await?;
//! # Ok(()) }
//! ```

mod admin;
mod buckets;
mod call;
mod clock;
mod controls;
mod drain;
mod error;
mod heads;
mod in_flight;
mod intercept;
mod lockout;
mod metrics;
mod operating;
mod pieces;
mod pipeline;
mod scenario;
mod secret;
mod server;
mod services;
mod sync;
mod tenants;
pub mod tls;
pub mod transport;
mod ui;
mod watch;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::definition::Definitions;
use apistend_catalog::{Catalog, Overrides, ServiceId};
use apistend_limiter::{MemoryStore, RedisConfig, RedisStore, Store};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use http::{Request, Response, StatusCode};

pub use error::SandboxError;
pub use metrics::SharedRecorder;
pub use services::b24_methods::B24Methods;
pub use services::spec_answers::SpecAnswers;
pub use tenants::{
    AppRecord, ChaosRecord, DATA_FILE, LimitRecord, SandboxRecord, ScopeChoice, SettingsRecord,
    Tenants, new_key,
};

/// Entry points for the fuzz targets (`fuzz/`), built only by `cargo fuzz` (`--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// A data file's or a shared record's bytes, read and checked as the sandbox reads them.
    pub fn tenant_state(bytes: &[u8]) {
        crate::tenants::fuzz_read(bytes);
    }
}

/// The longest `X-Mock-Delay` accepted by default, in milliseconds.
pub(crate) const DEFAULT_MAX_DELAY_MS: u64 = 60_000;

/// How the sandbox runs. Parsed and validated once, then passed by value.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// Where the embedded data file lives.
    pub data_dir: PathBuf,
    /// Make sure a demo sandbox with this key exists.
    pub demo_key: Option<String>,
    /// Newer official descriptions than the embedded ones: an examples set's name (a
    /// definition's `examples`) and the directory of its OpenAPI documents (`--wb-openapi DIR`
    /// is `("wb", DIR)`).
    pub newer_examples: Vec<(String, PathBuf)>,
    /// The service definitions (the built-in ones unless a user adds files).
    pub definitions: Definitions,
    /// Redis URL for shared buckets (`redis://…` or `redis+cluster://…`); memory when absent.
    pub redis: Option<String>,
    /// Catalog overrides.
    pub overrides: Overrides,
    /// Largest `X-Mock-Delay` accepted, in milliseconds.
    pub max_delay_ms: u64,
    /// How long the `timeout` scenario holds a request at most, in milliseconds.
    pub max_timeout_ms: u64,
    /// Largest request body accepted (413 beyond).
    pub max_body_bytes: usize,
    /// The management API's token (at least 16 printable characters); when absent, one is
    /// generated on first start and shown once. Only its SHA-256 is kept.
    pub admin_token: Option<String>,
    /// The management API's own rate: requests per second (20), with a burst of 50 or this,
    /// whichever is more.
    pub admin_per_second: u32,
    /// How long a client may take to send its request head once it has started, and its body
    /// (408 beyond).
    pub read_timeout: Duration,
    /// How long an idle keep-alive connection stays open (nginx's `keepalive_timeout`).
    pub idle_timeout: Duration,
    /// Largest request head (request line and headers) accepted (431 beyond).
    pub max_header_bytes: usize,
    /// The local certificate authority's directory (the data directory when absent); several
    /// instances given one directory share one authority.
    pub ca_dir: Option<PathBuf>,
    /// Whether a `CONNECT` to a host no definition claims is tunnelled to it (bytes only)
    /// rather than refused with a 502. Only to public addresses, unless `passthrough_allow`
    /// names the range; a tunnel closes after `idle_timeout` without a byte either way.
    pub passthrough: bool,
    /// Internal address ranges (loopback, private, link-local…) a passthrough tunnel may reach
    /// all the same; the sandbox's own listeners never.
    pub passthrough_allow: Vec<ipnet::IpNet>,
}

impl SandboxConfig {
    /// Defaults: memory buckets, delays up to 60 s, `timeout` held up to 30 s, bodies up to 1 MiB.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            demo_key: None,
            newer_examples: Vec::new(),
            definitions: Definitions::builtin(),
            redis: None,
            overrides: Overrides::default(),
            max_delay_ms: DEFAULT_MAX_DELAY_MS,
            max_timeout_ms: 30_000,
            max_body_bytes: 1 << 20,
            admin_token: None,
            admin_per_second: admin::ADMIN_PER_SECOND,
            read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(75),
            max_header_bytes: 16 * 1024,
            ca_dir: None,
            passthrough: false,
            passthrough_allow: Vec::new(),
        }
    }

    /// Sets the read timeout for slow clients.
    #[must_use]
    pub fn with_read_timeout(mut self, d: Duration) -> Self {
        self.read_timeout = d;
        self
    }

    /// Sets how long an idle keep-alive connection stays open.
    #[must_use]
    pub fn with_idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = d;
        self
    }

    /// Sets the management API's token.
    #[must_use]
    pub fn with_admin_token(mut self, token: impl Into<String>) -> Self {
        self.admin_token = Some(token.into());
        self
    }

    /// Sets the demo key.
    #[must_use]
    pub fn with_demo_key(mut self, key: impl Into<String>) -> Self {
        self.demo_key = Some(key.into());
        self
    }

    /// Answers the services whose definition names the examples set `name` from the OpenAPI
    /// documents of `dir` instead of the embedded ones.
    #[must_use]
    pub fn with_newer_examples(mut self, name: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.newer_examples.push((name.into(), dir.into()));
        self
    }

    /// Sets the service definitions.
    #[must_use]
    pub fn with_definitions(mut self, definitions: Definitions) -> Self {
        self.definitions = definitions;
        self
    }

    /// Sets catalog overrides.
    #[must_use]
    pub fn with_overrides(mut self, overrides: Overrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Sets the Redis URL.
    #[must_use]
    pub fn with_redis(mut self, url: impl Into<String>) -> Self {
        self.redis = Some(url.into());
        self
    }

    /// Sets the longest `timeout` scenario.
    #[must_use]
    pub fn with_max_timeout(mut self, d: Duration) -> Self {
        self.max_timeout_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self
    }
}

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
    /// Each service's answer source, as its definition names it.
    pub(crate) answers: Vec<(ServiceId, Box<dyn services::source::Answers>)>,
    /// Each service's OpenAPI examples (its definition's `examples`), for what its source does
    /// not answer.
    pub(crate) examples: Vec<(ServiceId, SpecAnswers)>,
    /// The operating-time budget of each service whose definition has one (Bitrix24's).
    pub(crate) operating: Vec<(ServiceId, operating::Operating)>,
    /// Owners locked out after repeated rejections, for services whose definition says so.
    pub(crate) lockouts: Arc<lockout::Lockouts>,
    /// With Redis: lockouts counted across instances.
    pub(crate) shared_lockouts: Option<Arc<lockout::shared::SharedLockouts>>,
    /// The dashboard's live feeds.
    pub(crate) watch: watch::Watch,
    pub(crate) limits: Limits,
    pub(crate) admin_limiter: MemoryStore,
    pub(crate) admin_quota: apistend_limiter::Quota,
    /// The management API's OpenAPI document, made at start.
    pub(crate) openapi: axum::body::Bytes,
    pub(crate) metrics: metrics::Metrics,
    pub(crate) sync: Option<Arc<sync::TenantSync>>,
    /// Certificates for the hostnames of the definitions.
    pub(crate) tls: tls::Tls,
    /// `CONNECT`s to other hosts are tunnelled, not refused.
    pub(crate) passthrough: bool,
    /// Internal ranges a tunnel may reach all the same.
    pub(crate) passthrough_allow: Vec<ipnet::IpNet>,
}

impl AppState {
    /// The OpenAPI examples of service `id`, if its definition names some.
    pub(crate) fn examples_of(&self, id: ServiceId) -> Option<&SpecAnswers> {
        self.examples
            .iter()
            .find_map(|(s, e)| (*s == id).then_some(e))
    }

    /// The answer source of service `id`.
    pub(crate) fn answers_of(&self, id: ServiceId) -> Option<&dyn services::source::Answers> {
        self.answers
            .iter()
            .find_map(|(s, a)| (*s == id).then_some(a.as_ref()))
    }

    /// The operating-time budget of service `id`, if its definition has one.
    pub(crate) fn operating(&self, id: ServiceId) -> Option<&operating::Operating> {
        self.operating
            .iter()
            .find_map(|(s, o)| (*s == id).then_some(o))
    }

    pub(crate) fn latency_ms(&self, id: ServiceId) -> u32 {
        self.catalog.service(id).map_or(0, |s| s.latency.base_ms)
    }
}

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
        let tenants = Tenants::open_with(&config.data_dir, config.max_delay_ms)?;
        // With Redis, this instance's records and the shared ones are merged, record by record.
        let sync = match &redis {
            Some(c) => sync::TenantSync::connect(c).await,
            None => None,
        };
        if let Some(s) = &sync {
            s.pull(&tenants).await;
        }
        let key = match &config.demo_key {
            Some(k) => k.clone(),
            None => match tenants
                .list()
                .into_iter()
                .find(|s| s.name == "demo")
                .and_then(|s| s.keys.first().cloned())
            {
                Some(k) => k,
                None => new_key()?,
            },
        };
        let record = tenants.ensure_key("demo", &key)?;
        let generated_token = tenants.admin_token(config.admin_token.as_deref())?;
        if let Some(s) = &sync {
            s.publish(&tenants).await;
            s.follow(tenants.clone());
        }
        let (lockouts, shared_lockouts) = lockout::start(sync.as_deref(), &catalog);
        let app_token = record
            .b24_apps
            .first()
            .map(|a| a.token.clone())
            .unwrap_or_default();
        let operating = catalog
            .services()
            .iter()
            .filter_map(|s| Some((s.id, operating::Operating::new(s.operating_budget?))))
            .collect();
        let metrics = metrics::Metrics::new(&catalog);
        metrics.keep_up();
        let answers = catalog
            .services()
            .iter()
            .map(|s| Ok((s.id, services::source::of(s.answers)?)))
            .collect::<Result<_, SandboxError>>()?;
        let examples = services::examples::of_catalog(&catalog, &newer)?;
        let ca = tls::LocalCa::open(config.ca_dir.as_deref().unwrap_or(&config.data_dir))?;
        let names = Arc::clone(&catalog);
        let tls = tls::Tls::new(tls::Certificates::new(
            ca,
            Box::new(move |name| names.by_hostname(name).is_some()),
        )?)?;
        let openapi = admin::document_for(&catalog, config.max_delay_ms).into();
        let state = AppState {
            examples,
            tls,
            passthrough: config.passthrough,
            passthrough_allow: config.passthrough_allow.clone(),
            catalog,
            store,
            tenants,
            answers,
            operating,
            lockouts,
            shared_lockouts,
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
            sync,
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
            .examples
            .iter()
            .map(|(id, set)| (*id, set.len()))
            .collect()
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
            .fallback(dispatch)
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

/// The router's fallback: everything but the management routes.
async fn dispatch(State(state): State<Arc<AppState>>, req: Request<Body>) -> Response<Body> {
    let target = intercept::target(&state.catalog, req.uri(), req.headers(), None);
    answer(state, req, target, server::Surface::Sandbox).await
}

/// A request that is not for the management API, once its target is known.
pub(crate) async fn answer(
    state: Arc<AppState>,
    req: Request<Body>,
    target: intercept::Target,
    surface: server::Surface,
) -> Response<Body> {
    let path = req.uri().path();
    match target {
        intercept::Target::Service { id, host } => {
            return pipeline::handle(state, pipeline::Route::by_host(id, host), req).await;
        }
        intercept::Target::Elsewhere(host) => {
            return intercept::connect::refusal(
                StatusCode::BAD_GATEWAY,
                &intercept::connect::unknown_host(&state, &host),
            );
        }
        intercept::Target::Prefix => {}
    }
    if surface == server::Surface::Emulation
        && (path.starts_with("/api/") || path == "/metrics" || path == "/readyz")
    {
        return admin::problem(
            StatusCode::NOT_FOUND,
            "Not Found",
            "the management API and metrics are on the plain HTTP listener",
        );
    }
    if path == "/healthz" {
        return Response::new(Body::from("ok"));
    }
    if path == "/metrics" {
        // While degraded, ask Redis itself: the gauge must not wait for the next decision.
        if let Store::Redis(r) = &state.store
            && r.is_degraded()
        {
            let _ = r.ping().await;
        }
        let mut r = Response::new(Body::from(state.metrics.render(&state.store)));
        r.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        return r;
    }
    if path == "/readyz" {
        let ready = match &state.store {
            Store::Redis(r) => r.ping().await.is_ok(),
            _ => true,
        };
        let mut r = Response::new(Body::from(if ready {
            "ready"
        } else {
            "not ready: the Redis store does not answer"
        }));
        if !ready {
            *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        }
        return r;
    }
    if path == "/api/v1" || path.starts_with("/api/v1/") {
        return admin::login(&state, &req).unwrap_or_else(|| {
            admin::problem(
                StatusCode::NOT_FOUND,
                "Not Found",
                &format!(
                    "no management route {} {path}; see /api/v1/openapi.json",
                    req.method()
                ),
            )
        });
    }
    let routed = state
        .catalog
        .route(path)
        .map(|(service, rest)| (service.id, path.len() - rest.len()));
    match routed {
        Some((id, prefix)) => {
            pipeline::handle(state, pipeline::Route::by_prefix(id, prefix), req).await
        }
        None => {
            let prefixes: Vec<&str> = state.catalog.services().iter().map(|s| s.prefix).collect();
            let body = serde_json::json!({
                "error": "not_found",
                "message": format!("{path} is not an emulated service; use {}", prefixes.join(", ")),
            });
            let mut resp = Response::new(Body::from(body.to_string()));
            *resp.status_mut() = StatusCode::NOT_FOUND;
            resp.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            resp
        }
    }
}
