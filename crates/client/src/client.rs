//! The client: acquire before every attempt, send, classify, and retry by the policy of the
//! answer — a rate limit penalizes the shared bucket, a 5xx or network error backs off.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use apistend_catalog::{Catalog, LimitGroup, Method, Overrides, ServiceId};
use apistend_limiter::{Algorithm, MemoryStore, Quota, RedisConfig, RedisStore, Store, bucket_key};
use http::HeaderMap;
use serde_json::Value;

use crate::config::ClientConfig;
use crate::error::{ClientError, RefusedBy};
use crate::hint::server_hint;
use crate::metrics::{Counters, Handles, RetryCause, Stats, inc};

/// Builds a [`Client`].
#[derive(Debug, Default)]
pub struct ClientBuilder {
    service: Option<ServiceId>,
    account: Option<String>,
    store: Option<Store>,
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    query: Vec<(String, String)>,
    catalog: Option<Catalog>,
    overrides: Option<Overrides>,
    config: Option<ClientConfig>,
    algorithm: Option<Algorithm>,
}

impl ClientBuilder {
    /// Enforces every quota with `algorithm` (GCRA by default; the fixed window of the decision
    /// record's first design, for comparison).
    #[must_use]
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = Some(algorithm);
        self
    }

    /// The service (its limits come from the catalog).
    #[must_use]
    pub fn service(mut self, id: ServiceId) -> Self {
        self.service = Some(id);
        self
    }

    /// The account whose buckets the calls draw from (`_global` when unset).
    #[must_use]
    pub fn account(mut self, account: impl Into<String>) -> Self {
        self.account = Some(account.into());
        self
    }

    /// The bucket store: a [`MemoryStore`] shared by this process's clients, or a [`RedisStore`]
    /// shared by every process. Default: Redis when `APISTEND_CLIENT_REDIS` is set, else memory.
    #[must_use]
    pub fn store(mut self, store: impl Into<Store>) -> Self {
        self.store = Some(store.into());
        self
    }

    /// The service's base URL (`https://content-api.wildberries.ru`, or a sandbox's
    /// `http://127.0.0.1:8080/wb`).
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// A header sent with every request (`Authorization`, `Client-Id`, `Api-Key`…).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A query parameter sent with every request (Apify `token`, Bitrix24 `auth`).
    #[must_use]
    pub fn query_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// A catalog other than the built-in one.
    #[must_use]
    pub fn catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Quota overrides applied on top of the catalog.
    #[must_use]
    pub fn overrides(mut self, overrides: Overrides) -> Self {
        self.overrides = Some(overrides);
        self
    }

    /// Settings other than those of the environment.
    #[must_use]
    pub fn config(mut self, config: ClientConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// The client.
    ///
    /// # Errors
    /// [`ClientError::Config`] for a missing service or base URL, a bad header, an environment
    /// value out of range, or a catalog that does not load.
    pub fn build(self) -> Result<Client, ClientError> {
        let base = self
            .base_url
            .ok_or_else(|| ClientError::Config("no base URL: call .base_url(…)".into()))?;
        let base_path = reqwest::Url::parse(&base)
            .map_err(|e| {
                ClientError::Config(format!(
                    "base URL {base:?}: {e}; expected e.g. https://content-api.wildberries.ru"
                ))
            })?
            .path()
            .trim_end_matches('/')
            .to_owned();
        let config = match self.config {
            Some(c) => c,
            None => ClientConfig::from_env()?,
        };
        let mut catalog = match self.catalog {
            Some(c) => c,
            None => Catalog::builtin().map_err(|e| ClientError::Config(e.to_string()))?,
        };
        if let Some(o) = &self.overrides {
            catalog = catalog
                .with_overrides(o)
                .map_err(|e| ClientError::Config(e.to_string()))?;
        }
        // The service must be one of the catalog's; the error lists them.
        let service = self
            .service
            .filter(|id| catalog.service(*id).is_some())
            .ok_or_else(|| {
                let known: Vec<&str> = catalog.services().iter().map(|s| s.id.as_str()).collect();
                let asked = self
                    .service
                    .map_or_else(|| "no service".to_owned(), |id| format!("service {id:?}"));
                ClientError::Config(format!(
                    "{asked}: call .service(id) with the id of one of {}",
                    known.join(", ")
                ))
            })?;
        if let Some(a) = self.algorithm {
            catalog = catalog
                .with_algorithm(service, a)
                .map_err(|e| ClientError::Config(e.to_string()))?;
        }
        let definition = catalog
            .service(service)
            .cloned()
            .ok_or_else(|| ClientError::Config(format!("service {service} left the catalog")))?;
        let store = match (self.store, &config.redis) {
            (Some(s), _) => s,
            (None, Some(url)) => Store::from(RedisStore::new(RedisConfig::from_url(url)?)?),
            (None, None) => Store::from(MemoryStore::new()),
        };
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &self.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| ClientError::Config(format!("header {k:?}: {e}")))?;
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|e| ClientError::Config(format!("header {k:?}: {e}")))?;
            headers.append(name, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .map_err(|e| ClientError::Config(format!("HTTP client: {e}")))?;
        let account = self
            .account
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "_global".to_owned());
        Ok(Client {
            inner: Arc::new(Inner {
                service,
                handles: Handles::new(&definition, &account),
                account,
                store,
                base_path,
                base: base.trim_end_matches('/').to_owned(),
                query: self.query,
                catalog,
                definition,
                config,
                http,
                counters: Counters::default(),
                operating_reset: Mutex::new(HashMap::new()),
                latency_ceiling_us: AtomicU64::new(0),
            }),
        })
    }
}

pub(crate) struct Inner {
    service: ServiceId,
    account: String,
    store: Store,
    base: String,
    /// The path of the base URL (`/wb` in `http://127.0.0.1:8080/wb`).
    base_path: String,
    query: Vec<(String, String)>,
    catalog: Catalog,
    /// The service's definition, as `catalog` has it (checked at build).
    definition: apistend_catalog::Service,
    config: ClientConfig,
    http: reqwest::Client,
    counters: Counters,
    /// The metric handles of this account's groups.
    handles: Handles,
    /// Bitrix24: when each method's operating-time budget frees up (from the `time` blocks).
    operating_reset: Mutex<HashMap<String, f64>>,
    /// A decaying maximum of recent request latencies (send to response head), in µs: no request
    /// reaches the server later than its answer comes back, so this bounds how late a previous
    /// request may have arrived (see [`margin`]).
    latency_ceiling_us: AtomicU64,
}

impl Inner {
    /// Records one latency: the ceiling jumps up to it, and otherwise loses 1/8 per request.
    pub(crate) fn record_latency(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let _ = self
            .latency_ceiling_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some(us.max(old - old / 8))
            });
    }

    fn latency_ceiling(&self) -> Duration {
        Duration::from_micros(self.latency_ceiling_us.load(Ordering::Relaxed))
    }
}

impl Inner {
    /// `path` as the catalog sees it: without the path of the base URL (`/wb` in
    /// `http://127.0.0.1:8080/wb`), for a request that arrives with a whole URI (the tower layer).
    pub(crate) fn relative_path<'p>(&self, path: &'p str) -> &'p str {
        path.strip_prefix(self.base_path.as_str())
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
            .unwrap_or(path)
    }

    /// The service's definition in the client's catalog.
    pub(crate) fn definition(&self) -> &apistend_catalog::Service {
        &self.definition
    }

    pub(crate) fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// An answer's report of the tokens left (the header its definition names): when the server
    /// holds fewer than the local model did after this call's acquisition, the shared bucket of
    /// the first group drops to match — one atomic store operation, only then. The server's word
    /// only ever makes the model stricter.
    ///
    /// # Errors
    /// A fail-closed store that cannot answer.
    pub(crate) async fn observe(
        &self,
        plan: &Plan<'_>,
        headers: &HeaderMap,
    ) -> Result<(), ClientError> {
        let Some(reported) = self
            .definition()
            .reported_remaining(|name| headers.get(name)?.to_str().ok())
        else {
            return Ok(());
        };
        if reported >= plan.local_remaining.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let (Some(g), Some(k)) = (plan.groups.first(), plan.keys.first()) {
            self.store.align(k, &g.quota, reported).await?;
            self.handles.aligned(&g.id);
        }
        Ok(())
    }

    /// Counts a retry (the client's counters and metric), as `send` and the layer's policy do.
    pub(crate) fn count_retry(&self, cause: RetryCause) {
        self.handles.retry(&self.counters, cause);
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The limit groups of `method path`, their bucket keys, and the wait ceiling.
    pub(crate) fn plan(&self, method: Method, path: &str) -> Plan<'_> {
        let op_path = operation_path(self.definition(), path);
        let resolved = self.catalog.resolve(self.service, method, &op_path, None);
        let operation = resolved.and_then(|r| r.operation);
        let groups: Vec<&LimitGroup> = resolved
            .map(|r| r.groups)
            .unwrap_or_default()
            .iter()
            .filter_map(|&i| self.definition.groups.get(i))
            .collect();
        let sid = self.service.as_str();
        let keys = groups
            .iter()
            .map(|g| match g.split(operation, &op_path, None) {
                Some(part) => bucket_key("apistend:client", &self.account, &[sid, &g.id, &part]),
                None => bucket_key("apistend:client", &self.account, &[sid, &g.id]),
            })
            .collect();
        let ceiling = groups
            .iter()
            .map(|g| ceiling(&self.config, g))
            .max()
            .unwrap_or(self.config.max_wait);
        let first_interval = groups
            .first()
            .map_or(Duration::from_secs(1), |g| g.quota.interval());
        Plan {
            groups,
            keys,
            ceiling,
            first_interval,
            // The operation's weight as its definition gives it (MoySklad's 4): what the server
            // takes per request.
            weight: operation.map_or(1, |o| o.weight),
            local_remaining: std::sync::atomic::AtomicU32::new(u32::MAX),
        }
    }

    /// Takes a token from every group of `plan`, waiting up to its ceiling (and `deadline`) in
    /// all; returns the time waited.
    ///
    /// # Cancel safety
    /// Dropping the future while it waits takes nothing (tokens taken from the first groups are
    /// given back before each wait).
    pub(crate) async fn acquire(
        &self,
        plan: &Plan<'_>,
        deadline: Option<Instant>,
    ) -> Result<Duration, ClientError> {
        let c = self;
        let (groups, keys, ceiling) = (&plan.groups, &plan.keys, plan.ceiling);
        let start = Instant::now();
        loop {
            let mut wait = None;
            for (i, (g, k)) in groups.iter().zip(keys).enumerate() {
                // Only a token that has been there for the margin is taken: see `margin`.
                let margin = margin(&g.quota, c.latency_ceiling());
                let n = plan.weight.min(g.quota.burst());
                let d = c.store.acquire_settled(k, &g.quota, n, margin).await?;
                if i == 0 && d.allowed {
                    plan.local_remaining.store(d.remaining, Ordering::Relaxed);
                }
                if !d.allowed {
                    for (g, k) in groups.iter().zip(keys).take(i) {
                        c.store
                            .refund(k, &g.quota, plan.weight.min(g.quota.burst()))
                            .await?;
                    }
                    wait = Some((d.retry_after, *g));
                    break;
                }
            }
            let Some((wait, group)) = wait else {
                let waited = start.elapsed();
                inc(&c.counters.acquisitions);
                c.counters.waited_micros.fetch_add(
                    u64::try_from(waited.as_micros()).unwrap_or(u64::MAX),
                    std::sync::atomic::Ordering::Relaxed,
                );
                for h in groups.iter().filter_map(|g| c.handles.group(&g.id)) {
                    h.acquisitions.increment(1);
                    h.local_wait.record(waited.as_secs_f64());
                }
                return Ok(waited);
            };
            // Jitter, so that waiters woken together do not race in lockstep.
            let wait = wait + Duration::from_millis(fastrand::u64(0..3));
            let refuse = start.elapsed() + wait > ceiling
                || deadline.is_some_and(|d| Instant::now() + wait > d);
            if refuse {
                inc(&c.counters.local_refusals);
                if let Some(h) = c.handles.group(&group.id) {
                    h.local_refusals.increment(1);
                }
                return Err(ClientError::RateLimited {
                    retry_after: wait,
                    refused_by: RefusedBy::Local,
                });
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// A rate-limit answer to a call the limiter allowed: every group of `plan` pauses for
    /// `min(max(server hint, one refill, backoff), ceiling)`, shared by every process of the
    /// account. Returns the pause.
    pub(crate) async fn penalize(
        &self,
        plan: &Plan<'_>,
        status: u16,
        headers: &HeaderMap,
        attempt: u32,
    ) -> Result<Duration, ClientError> {
        let sid = self.service.as_str();
        inc(&self.counters.server_rate_limits);
        let hint = server_hint(headers, SystemTime::now()).unwrap_or_default();
        let pause = hint
            .max(plan.first_interval)
            .max(backoff(self.config.retry_base, attempt))
            .min(plan.ceiling);
        for (g, k) in plan.groups.iter().zip(&plan.keys) {
            let h = self.handles.group(&g.id);
            if let Some(h) = h {
                h.unexpected_429.increment(1);
            }
            self.store.penalize(k, &g.quota, pause).await?;
            inc(&self.counters.penalties);
            if let Some(h) = h {
                h.penalties.increment(1);
            }
        }
        tracing::warn!(service = sid, account = %self.account, status, ?pause, "rate-limited by the server although the local limiter allowed; penalized the shared bucket");
        Ok(pause)
    }
}

/// What a call draws from: its limit groups, their bucket keys, its wait ceiling, and the
/// tokens it takes from each.
pub(crate) struct Plan<'a> {
    pub(crate) groups: Vec<&'a LimitGroup>,
    pub(crate) keys: Vec<String>,
    pub(crate) ceiling: Duration,
    pub(crate) first_interval: Duration,
    pub(crate) weight: u32,
    /// Tokens the first group's bucket held after this call's last acquisition (`u32::MAX`
    /// before one): a server reporting fewer is believed ([`Inner::observe`]).
    pub(crate) local_remaining: std::sync::atomic::AtomicU32,
}

/// A rate-limited, retrying client of one service for one account.
///
/// Every attempt first takes a token from each limit group of the operation, waiting locally up
/// to the ceiling; a rate-limit answer penalizes the shared bucket so that every process of the
/// account pauses; 5xx and network errors back off; 401, 403 and 404 are never retried.
///
/// ```no_run
/// # async fn demo() -> Result<(), apistend_client::ClientError> {
/// use apistend_catalog::ServiceId;
/// use apistend_client::Client;
/// let wb = Client::builder()
///     .service(ServiceId::WB)
///     .account("seller-42")
///     .base_url("http://127.0.0.1:8080/wb")
///     .header("Authorization", "demo-key")
///     .build()?;
/// let warehouses = wb.get("/api/v3/warehouses").send().await?;
/// println!("{}", warehouses.status);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("service", &self.inner.service)
            .field("account", &self.inner.account)
            .field("base", &self.inner.base)
            .finish_non_exhaustive()
    }
}

/// An answer that ended the call: a success (2xx or 3xx).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Response {
    /// Status.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Vec<u8>,
    /// Time the call spent waiting locally for tokens, over all its attempts.
    pub waited: Duration,
}

impl Response {
    /// The body as JSON.
    ///
    /// # Errors
    /// The parser's error.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One request being built.
#[derive(Debug)]
pub struct RequestBuilder<'a> {
    client: &'a Client,
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    body: Option<(Vec<u8>, &'static str)>,
    headers: Vec<(String, String)>,
    deadline: Option<Instant>,
}

impl Client {
    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A request of `method` to `path` (relative to the base URL).
    pub fn request(&self, method: Method, path: impl Into<String>) -> RequestBuilder<'_> {
        RequestBuilder {
            client: self,
            method,
            path: path.into(),
            query: Vec::new(),
            body: None,
            headers: Vec::new(),
            deadline: None,
        }
    }

    /// `GET path`.
    pub fn get(&self, path: impl Into<String>) -> RequestBuilder<'_> {
        self.request(Method::Get, path)
    }

    /// `POST path`.
    pub fn post(&self, path: impl Into<String>) -> RequestBuilder<'_> {
        self.request(Method::Post, path)
    }

    /// The quota of the operation's own (most specific) limit group, as this client enforces it.
    pub fn quota_of(&self, method: Method, path: &str) -> Option<Quota> {
        let c = &self.inner;
        let r = c.catalog.resolve(
            c.service,
            method,
            &operation_path(c.definition(), path),
            None,
        );
        r?.groups
            .first()
            .and_then(|&i| c.definition.groups.get(i))
            .map(|g| g.quota)
    }

    /// This client's limiter as a tower layer, for an HTTP stack of your own: see
    /// [`RateLimitLayer`](crate::RateLimitLayer).
    pub fn layer(&self) -> crate::RateLimitLayer {
        crate::RateLimitLayer::new(Arc::clone(&self.inner))
    }

    /// This client's retry rules as a `tower::retry::Policy`: see
    /// [`RetryPolicy`](crate::RetryPolicy).
    pub fn retry_policy(&self) -> crate::RetryPolicy {
        crate::RetryPolicy::new(Arc::clone(&self.inner))
    }

    /// The client's counters.
    pub fn stats(&self) -> Stats {
        self.inner.counters.snapshot()
    }

    /// The account.
    pub fn account(&self) -> &str {
        &self.inner.account
    }
}

impl RequestBuilder<'_> {
    /// Adds query parameters.
    #[must_use]
    pub fn query(mut self, pairs: &[(&str, &str)]) -> Self {
        self.query.extend(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        self
    }

    /// A header of this request only (e.g. the sandbox's `X-Mock-Scenario`).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// A JSON body.
    #[must_use]
    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some((body.to_string().into_bytes(), "application/json"));
        self
    }

    /// Gives up (with a rate-limited error, without sending) when a wait would pass `deadline`.
    #[must_use]
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Sends with acquisition, retries and penalties.
    ///
    /// # Errors
    /// A [`ClientError`]: rate-limited (locally or by the server) with `retry_after`, a server or
    /// network error after the configured attempts, or the service's client error.
    ///
    /// # Cancel safety
    /// Dropping the future while it waits for a token takes nothing; dropping it after a token was
    /// taken spends that token, as the request may already be on the wire.
    pub async fn send(self) -> Result<Response, ClientError> {
        let c = &self.client.inner;
        let op_path = operation_path(c.definition(), &self.path);
        let plan = c.plan(self.method, &self.path);
        let ceiling = plan.ceiling;
        let url = format!("{}{}", c.base, self.path);
        let b24_method = c
            .definition()
            .has_webhook_paths()
            .then(|| op_path.trim_start_matches("/rest/").to_owned());
        let attempts = c.config.attempts.max(1);
        let mut waited = Duration::ZERO;
        for attempt in 1..=attempts {
            waited += c.acquire(&plan, self.deadline).await?;
            inc(&c.counters.attempts);
            let mut req = c
                .http
                .request(reqwest_method(self.method), &url)
                .query(&c.query)
                .query(&self.query);
            let mut timeout = c.config.request_timeout;
            if let Some(d) = self.deadline {
                timeout = timeout.min(
                    d.saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1)),
                );
            }
            req = req.timeout(timeout);
            for (k, v) in &self.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            if let Some((body, ct)) = &self.body {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, *ct)
                    .body(body.clone());
            }
            let sending = Instant::now();
            let sent = match req.send().await {
                Ok(r) => {
                    c.record_latency(sending.elapsed());
                    let status = r.status().as_u16();
                    let headers = r.headers().clone();
                    r.bytes().await.map(|b| (status, headers, b.to_vec()))
                }
                Err(e) => Err(e),
            };
            let (status, headers, body) = match sent {
                Ok(x) => x,
                Err(e) => {
                    if attempt == attempts || !self.backoff(attempt).await {
                        return Err(ClientError::Network {
                            attempts: attempt,
                            source: e,
                        });
                    }
                    c.count_retry(RetryCause::Network);
                    continue;
                }
            };
            // The server's report of the tokens left tightens the shared bucket.
            c.observe(&plan, &headers).await?;
            let json: Value = serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
            // The body's error code, where the service's errors carry one (Bitrix24's `error`).
            let error_code = json.get("error").and_then(Value::as_str).unwrap_or("");
            if (200..400).contains(&status) {
                if let (Some(m), Some(at)) = (
                    &b24_method,
                    json.pointer("/time/operating_reset_at")
                        .and_then(Value::as_f64),
                ) {
                    c.operating_reset
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(m.clone(), at);
                }
                return Ok(Response {
                    status,
                    headers,
                    body,
                    waited,
                });
            }
            if c.definition()
                .is_operating_time_spent(status, Some(error_code))
            {
                // This method's operating time is spent until its oldest minute leaves.
                let reset = b24_method.as_ref().and_then(|m| {
                    c.operating_reset
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(m)
                        .copied()
                });
                let wait = reset
                    .map(until_unix)
                    .or_else(|| server_hint(&headers, SystemTime::now()))
                    .unwrap_or(c.config.retry_base);
                if attempt == attempts || wait > ceiling || !self.sleep_within_deadline(wait).await
                {
                    return Err(ClientError::RateLimited {
                        retry_after: wait,
                        refused_by: RefusedBy::Server,
                    });
                }
                continue;
            }
            let rate_limited = c.definition().is_rate_limited(status, Some(error_code));
            if rate_limited {
                let pause = c.penalize(&plan, status, &headers, attempt).await?;
                if attempt == attempts {
                    return Err(ClientError::RateLimited {
                        retry_after: pause,
                        refused_by: RefusedBy::Server,
                    });
                }
                c.count_retry(RetryCause::RateLimit);
                // No sleep here: the next acquire waits out the penalty, as every process does.
                continue;
            }
            match status {
                401 => return Err(ClientError::Unauthorized { body: json }),
                403 => return Err(ClientError::Forbidden { body: json }),
                404 => return Err(ClientError::NotFound { body: json }),
                500.. => {
                    if attempt == attempts || !self.backoff(attempt).await {
                        return Err(ClientError::Server {
                            status,
                            attempts: attempt,
                            body: String::from_utf8_lossy(&body).into_owned(),
                        });
                    }
                    c.count_retry(RetryCause::Server);
                }
                _ => return Err(ClientError::Api { status, body: json }),
            }
        }
        Err(ClientError::Config("no attempt was made".into()))
    }

    /// Sleeps the backoff of `attempt`; false when the deadline does not leave room for it.
    async fn backoff(&self, attempt: u32) -> bool {
        self.sleep_within_deadline(backoff(self.client.inner.config.retry_base, attempt))
            .await
    }

    async fn sleep_within_deadline(&self, d: Duration) -> bool {
        if self.deadline.is_some_and(|dl| Instant::now() + d > dl) {
            return false;
        }
        tokio::time::sleep(d).await;
        true
    }
}

/// How long a token must have been available before it is taken: the recent latency ceiling,
/// and at least T/10 (2 to 100 ms); at most 1 s (the engine keeps a full bucket's schedule that
/// long).
///
/// The server's bucket runs the same arithmetic as ours but sees each request a little later, and
/// not equally later: a request delayed more than the next one shifts the server's schedule by the
/// difference. A request sent the instant its slot opens can then arrive before the server's slot
/// and draw a 429. No request arrives later than its answer returns, so the latency of recent
/// requests bounds that shift; T/10 covers other processes of the account, whose latencies this
/// one does not see. With a burst above one token the margin costs latency only (the bucket's
/// schedule advances by T per request, not from the moment the token is taken); a bucket of one
/// token restarts its schedule at each request, so there every interval is stretched by the
/// margin: the price of never arriving early where the server's schedule follows the arrivals.
pub(crate) fn margin(quota: &Quota, latency_ceiling: Duration) -> Duration {
    let floor = (quota.interval() / 10).clamp(Duration::from_millis(2), Duration::from_millis(100));
    floor.max(latency_ceiling).min(Duration::from_secs(1))
}

/// `base·2^(attempt−1) + jitter[0, base)`.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let jitter = Duration::from_micros(fastrand::u64(
        0..u64::try_from(base.as_micros()).unwrap_or(1).max(1),
    ));
    exp + jitter
}

/// The longest a call waits locally for a token: max(configured, one refill + 5 s); for limits
/// of one request per period, two periods + 5 s, so the loser of a race at the boundary lives to
/// the next slot.
pub(crate) fn ceiling(config: &ClientConfig, group: &LimitGroup) -> Duration {
    let t = group.quota.interval();
    let one_per_period = group
        .documented
        .map_or(group.quota.burst() == 1, |(_, limit)| limit == 1);
    let floor = if one_per_period { t * 2 } else { t } + Duration::from_secs(5);
    config.max_wait.max(floor)
}

fn until_unix(at: f64) -> Duration {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    Duration::from_secs_f64((at - now).clamp(0.0, 86_400.0))
}

/// The catalog path of a request path: a webhook path (Bitrix24's
/// `/rest/{user}/{code}/crm.deal.list.json`) is `/rest/crm.deal.list`; other paths are their own.
fn operation_path(service: &apistend_catalog::Service, path: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    if service.has_webhook_paths() {
        let method = path.rsplit('/').next().unwrap_or("");
        let method = method.trim_end_matches(".json").trim_end_matches(".xml");
        return format!("/rest/{method}");
    }
    path.to_owned()
}

fn reqwest_method(m: Method) -> reqwest::Method {
    match m {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
        Method::Head => reqwest::Method::HEAD,
        Method::Options => reqwest::Method::OPTIONS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_below_base() {
        let base = Duration::from_millis(500);
        for attempt in 1..=4 {
            let d = backoff(base, attempt);
            let exp = base * (1 << (attempt - 1));
            assert!(d >= exp && d < exp + base, "{attempt}: {d:?}");
        }
    }

    #[test]
    fn the_margin_covers_recent_latency_within_bounds() {
        let q = |ms| Quota::new(1, Duration::from_millis(ms)).unwrap();
        let ms = Duration::from_millis;
        assert_eq!(margin(&q(600), Duration::ZERO), ms(60));
        assert_eq!(margin(&q(5), Duration::ZERO), ms(2));
        assert_eq!(margin(&q(60_000), Duration::ZERO), ms(100));
        assert_eq!(margin(&q(600), ms(250)), ms(250));
        assert_eq!(
            margin(&q(600), Duration::from_secs(9)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn ceilings_follow_the_decision_record() {
        let c = Catalog::builtin().unwrap();
        let config = ClientConfig {
            max_wait: Duration::from_secs(30),
            ..ClientConfig::default()
        };
        let wb = c.service(c.service_id("wb").unwrap()).unwrap();
        // "1 минута | 1 запрос | 1 минута | 10 запросов": two periods + 5 s.
        let news = wb
            .group("common-api.get.api-communications-v2-news")
            .unwrap();
        assert_eq!(ceiling(&config, news), Duration::from_secs(125));
        // Content: 600 ms interval: the configured 30 s.
        assert_eq!(
            ceiling(&config, wb.group("content-api.kontent").unwrap()),
            Duration::from_secs(30)
        );
        assert_eq!(
            operation_path(
                c.service(c.service_id("b24").unwrap()).unwrap(),
                "/rest/1/abc/crm.deal.list.json"
            ),
            "/rest/crm.deal.list"
        );
    }
}

#[cfg(test)]
mod builder_tests {
    use super::*;

    /// The id the catalog gives the service named `name`.
    fn id(name: &str) -> ServiceId {
        Catalog::builtin().unwrap().service_id(name).unwrap()
    }

    #[test]
    fn a_base_url_that_does_not_parse_is_refused_at_build() {
        let built = Client::builder()
            .service(id("wb"))
            .base_url("content-api.wildberries.ru")
            .config(ClientConfig::default())
            .store(MemoryStore::new())
            .build();
        assert!(matches!(built, Err(ClientError::Config(m)) if m.contains("base URL")));
    }

    #[test]
    fn the_algorithm_applies_to_every_quota() {
        let c = Client::builder()
            .service(id("wb"))
            .base_url("http://127.0.0.1:9")
            .algorithm(Algorithm::FixedWindow)
            .config(ClientConfig::default())
            .store(MemoryStore::new())
            .build()
            .unwrap();
        let q = c.quota_of(Method::Get, "/content/v2/object/all").unwrap();
        assert_eq!(q.algorithm(), Algorithm::FixedWindow);
    }

    #[test]
    fn a_request_takes_the_weight_its_definition_gives() {
        let c = Client::builder()
            .service(id("moysklad"))
            .base_url("http://127.0.0.1:9/moysklad")
            .config(ClientConfig::default())
            .store(MemoryStore::new())
            .build()
            .unwrap();
        let weight = |path| c.inner.plan(Method::Get, path).weight;
        assert_eq!(weight("/api/remap/1.2/entity/product"), 4);
        assert_eq!(weight("/api/remap/1.2/report/stock/all"), 5);
    }
}
