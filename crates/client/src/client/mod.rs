//! The client: acquire before every attempt, send, classify, and retry by the policy of the
//! answer — a rate limit penalizes the shared bucket, a 5xx or network error backs off.
//!
//! - this file: [`Client`] and the state its clones share;
//! - `builder`: [`ClientBuilder`];
//! - `budget`: what a call draws from (plan, acquire, penalize, margin, ceiling, backoff);
//! - `judge`: what an answer means for the call (the one place answers are classified);
//! - `request`: [`RequestBuilder`]: one call, sent through the layer and the retry policy;
//! - `response`: [`Response`].

mod budget;
mod builder;
mod judge;
mod request;
mod response;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use apistend_catalog::{Catalog, Method, ServiceId};
use apistend_limiter::{Quota, Store};

use crate::config::ClientConfig;
use crate::learn::{LearnedQuota, Learner};
use crate::metrics::{Counters, Handles, Stats};

pub(crate) use budget::backoff;
use budget::operation_path;
pub use builder::ClientBuilder;
pub(crate) use judge::{Answer, Judged};
pub use request::RequestBuilder;
pub use response::Response;

pub(crate) struct Inner {
    service: ServiceId,
    account: String,
    store: Store,
    base: String,
    /// The path of the base URL (`/wb` in `http://127.0.0.1:8080/wb`).
    base_path: String,
    /// What of `base_path` is the start of the operations' own paths (MoySklad's
    /// `/api/remap/1.2`: `Service::mount`).
    mount: String,
    query: Vec<(String, String)>,
    catalog: Catalog,
    /// The service's definition, as `catalog` has it (checked at build).
    definition: apistend_catalog::Service,
    config: ClientConfig,
    http: reqwest::Client,
    counters: Counters,
    /// The quotas learned from the server's answers (see [`crate::learn`]).
    learner: Learner,
    /// The metric handles of this account's groups.
    handles: Handles,
    /// Services with an operating budget (Bitrix24): when each operation's budget frees up, by
    /// its catalog path (from the `time` blocks of its answers).
    operating_reset: Mutex<HashMap<String, f64>>,
    /// A decaying maximum of recent request latencies (send to response head), in µs: no request
    /// reaches the server later than its answer comes back, so this bounds how late a previous
    /// request may have arrived (see [`margin`]).
    latency_ceiling_us: AtomicU64,
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

    /// The quota of the operation's own (most specific) limit group, as the client's catalog
    /// has it.
    pub fn quota_of(&self, method: Method, path: &str) -> Option<Quota> {
        self.group_of(method, path).map(|g| g.quota)
    }

    /// The operation's own (most specific) limit group, as the client's catalog has it.
    pub fn group_of(&self, method: Method, path: &str) -> Option<&apistend_catalog::LimitGroup> {
        let c = &self.inner;
        let r = c.catalog.resolve(
            c.service,
            method,
            &operation_path(c.definition(), &c.mount, path),
            None,
        );
        r?.groups.first().and_then(|&i| c.definition.groups.get(i))
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

    /// The quotas this client learned from the server's answers and enforces instead of the
    /// catalog's, on the buckets where they hold now (empty when the catalog is right).
    ///
    /// ```no_run
    /// # fn demo(client: &apistend_client::Client) {
    /// for l in client.learned() {
    ///     println!("{}: {:?} instead of {:?}", l.group, l.quota, l.catalog);
    /// }
    /// # }
    /// ```
    pub fn learned(&self) -> Vec<LearnedQuota> {
        self.inner.learner.snapshot(std::time::Instant::now())
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
