//! The client's limiter and retry rules as tower middleware, for an HTTP stack of your own.
//!
//! [`RateLimitLayer`] takes a token from every limit group of a request before passing it on, and
//! judges the answer by the service's definition (a rate limit penalizes the shared bucket);
//! [`RetryPolicy`] retries by that judgement. [`Client::send`](crate::client::RequestBuilder::send) is
//! this very stack over [`reqwest_transport`](crate::transport::reqwest_transport): one decision path for
//! the client, the layer and `apistend proxy`. Stack the retry outside the limiter, so that every
//! attempt takes its own token. Answers reach the layer whole (a body that is `AsRef<[u8]>`):
//! where a status alone is ambiguous (Bitrix24's 503), the body's error code decides.
//!
//! ```no_run
//! # async fn demo() -> Result<(), apistend_client::BoxError> {
//! use apistend_catalog::ServiceId;
//! use apistend_client::Client;
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! let wb = Client::builder()
//!     .service(ServiceId::WB)
//!     .account("seller-42")
//!     .base_url("http://127.0.0.1:8080/wb")
//!     .build()?;
//! // Any `Service<http::Request<B>, Response = http::Response<_>>` with a clonable body.
//! let transport = tower::service_fn(|_req: http::Request<Vec<u8>>| async {
//!     Ok::<_, apistend_client::BoxError>(http::Response::new(Vec::<u8>::new()))
//! });
//! let mut stack = ServiceBuilder::new()
//!     .retry(wb.retry_policy())
//!     .layer(wb.layer())
//!     .service(transport);
//! let req = http::Request::get("http://127.0.0.1:8080/wb/api/v3/warehouses").body(Vec::new())?;
//! let answer = stack.ready().await?.call(req).await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use apistend_catalog::Method;
use tower::{Layer, Service};

use crate::client::budget::backoff;
use crate::client::core::Core;
use crate::client::handle::Client;
use crate::client::judge::{Answer, Judged};
use crate::error::BoxError;
use crate::error::ClientError;
use crate::metrics::RetryCause;
use crate::transport::AttemptTimeout;
use crate::transport::Deadline;

/// The time a call waited locally for tokens, over all its attempts, as a request extension: put
/// one in, and [`RateLimit`] adds each attempt's wait to it ([`RetryPolicy`] carries it to the
/// next attempt). `apistend proxy` answers it as `X-APIStend-Waited-Ms`.
#[derive(Debug, Clone, Default)]
pub struct Waited(Arc<std::sync::atomic::AtomicU64>);

impl Waited {
    fn add(&self, d: Duration) {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.0.fetch_add(micros, Ordering::Relaxed);
    }

    /// The wait so far.
    #[must_use]
    pub fn get(&self) -> Duration {
        Duration::from_micros(self.0.load(Ordering::Relaxed))
    }
}

/// The tries a call made so far, as a request extension: [`RateLimit`] counts each one (its
/// number sets the backoff of a penalty), [`RetryPolicy`] carries it to the next — or, in a
/// stack whose requests came without one, starts it. `send` puts one in and reads it after the
/// call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attempts(Arc<AtomicU32>);

impl Attempts {
    /// A count of `made` tries.
    fn made(made: u32) -> Self {
        Self(Arc::new(AtomicU32::new(made)))
    }

    /// Counts one more try; returns its number (1 for the first).
    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed).saturating_add(1)
    }

    /// The tries so far.
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Puts a [`Client`](crate::client::Client)'s limiter in front of an HTTP service; made by
/// [`Client::layer`](crate::client::Client::layer).
///
/// The operation is resolved from the request's method and path (less the path of the client's
/// base URL), exactly as the client resolves its own calls, and the same shared buckets are used:
/// requests through the layer and through the client count against one budget.
#[derive(Clone)]
pub struct RateLimitLayer {
    client: Arc<Core>,
}

impl std::fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitLayer").finish_non_exhaustive()
    }
}

impl RateLimitLayer {
    pub(crate) fn new(client: Arc<Core>) -> Self {
        Self { client }
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;

    fn layer(&self, inner: S) -> RateLimit<S> {
        RateLimit {
            client: Arc::clone(&self.client),
            inner,
        }
    }
}

/// The service of [`RateLimitLayer`].
#[derive(Clone)]
pub struct RateLimit<S> {
    client: Arc<Core>,
    inner: S,
}

impl<S> std::fmt::Debug for RateLimit<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit").finish_non_exhaustive()
    }
}

impl<S, B, RB> Service<http::Request<B>> for RateLimit<S>
where
    S: Service<http::Request<B>, Response = http::Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: AsRef<[u8]> + Send + 'static,
    RB: AsRef<[u8]> + Send + 'static,
{
    type Response = http::Response<RB>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    /// # Cancel safety
    /// Dropping the future while it waits for a token takes nothing; once the request is passed
    /// on, its token is spent.
    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        // The service made ready by `poll_ready` serves this call; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let client = Arc::clone(&self.client);
        Box::pin(async move {
            let method = Method::parse(req.method().as_str()).unwrap_or(Method::Get);
            let path = client.relative_path(req.uri().path());
            let plan = client.plan(method, path, req.body().as_ref());
            let deadline = req.extensions().get::<Deadline>().map(|d| d.0);
            // Held until the answer is judged (its report read), like the slots below.
            let scouted = Instant::now();
            let _scout = client.first_contact(&plan, deadline).await?;
            let waited = scouted.elapsed() + client.acquire(&plan, deadline).await?;
            // Held until the answer is read (dropped with this future, if it is dropped).
            let slots_from = Instant::now();
            let _slots = client.hold_slots(&plan, deadline).await?;
            if let Some(w) = req.extensions().get::<Waited>() {
                w.add(waited + slots_from.elapsed());
            }
            let attempt = req.extensions().get::<Attempts>().map_or(1, Attempts::next);
            client.counters().attempts.fetch_add(1, Ordering::Relaxed);
            let sending = Instant::now();
            let mut resp = inner.call(req).await.map_err(Into::into)?;
            client.record_latency(sending.elapsed());
            let answer = Answer {
                status: resp.status().as_u16(),
                headers: resp.headers(),
                body: resp.body().as_ref(),
            };
            if let Some(judged) = client.judge(&plan, &answer, attempt).await? {
                resp.extensions_mut().insert(judged);
            }
            Ok(resp)
        })
    }
}

/// The client's retry rules for `tower::retry`; made by
/// [`Client::retry_policy`](crate::client::Client::retry_policy). `Client::send` is this policy over
/// [`RateLimitLayer`] over [`reqwest_transport`](crate::transport::reqwest_transport).
///
/// Up to the configured attempts in all, as [`RateLimit`] judged each answer: a rate-limit
/// answer is retried at once (the next attempt's token waits out the penalty it wrote; the
/// service did not apply the request); a method whose operating time is spent after its budget
/// frees up, unless that is past the call's ceiling; a 5xx or a transport error after
/// `base·2^(attempt−1) + jitter` — but only for a request the catalog calls repeatable
/// ([`apistend_catalog::repeatable`]: reads and idempotent methods), or, for a transport error,
/// one that surely never left (no connection was made). A write that may have reached the
/// service is never sent twice (RFC 9110 §9.2.2): its 5xx or error is the call's answer. Never
/// a wait past the request's [`Deadline`]. Other answers, and the limiter's own refusals, are
/// final. Requests are cloned for a retry, so their body type must be `Clone`.
#[derive(Clone)]
pub struct RetryPolicy {
    client: Arc<Core>,
    attempt: u32,
}

impl std::fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}

impl RetryPolicy {
    pub(crate) fn new(client: Arc<Core>) -> Self {
        Self { client, attempt: 1 }
    }
}

impl<B: Clone, RB> tower::retry::Policy<http::Request<B>, http::Response<RB>, BoxError>
    for RetryPolicy
{
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        req: &mut http::Request<B>,
        result: &mut Result<http::Response<RB>, BoxError>,
    ) -> Option<Self::Future> {
        let c = &self.client;
        if self.attempt >= c.config().attempts.max(1) {
            return None;
        }
        // Whether this request may go again when the service may have applied it: a read or an
        // idempotent method (RFC 9110 §9.2.2), as the catalog says; asked only on a failure.
        let repeatable = || {
            let method = Method::parse(req.method().as_str()).unwrap_or(Method::Post);
            c.repeatable(method, c.relative_path(req.uri().path()))
        };
        let (wait, cause) = match result {
            Ok(r) => match r.extensions().get::<Judged>() {
                // A rate-limit answer: the service refused the request without applying it.
                Some(Judged::RateLimited { .. }) => (Duration::ZERO, Some(RetryCause::RateLimit)),
                Some(Judged::OperatingTimeSpent {
                    past_ceiling: true, ..
                }) => return None,
                // Not counted as a retry of the bucket: only this method waits.
                Some(Judged::OperatingTimeSpent { wait, .. }) => (*wait, None),
                // Refused unapplied, for want of a slot: any method may go again.
                Some(Judged::TooManyInFlight { wait }) => (*wait, Some(RetryCause::InFlight)),
                None if r.status().is_server_error() && repeatable() => (
                    backoff(c.config().retry_base, self.attempt),
                    Some(RetryCause::Server),
                ),
                None => return None,
            },
            // The limiter's own verdicts (a refusal past the ceiling, a store that is down) are
            // not the network's: retrying cannot help.
            Err(e) if e.downcast_ref::<ClientError>().is_some() => return None,
            // A request that surely never left may go again whatever it is; one that may have
            // reached the service (a timeout after sending, a reset mid-answer) only when it
            // may be repeated.
            Err(e) if never_sent(e.as_ref()) || repeatable() => (
                backoff(c.config().retry_base, self.attempt),
                Some(RetryCause::Network),
            ),
            Err(_) => return None,
        };
        if req
            .extensions()
            .get::<Deadline>()
            .is_some_and(|d| Instant::now() + wait > d.0)
        {
            return None;
        }
        if let Some(cause) = cause {
            c.count_retry(cause);
        }
        self.attempt += 1;
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, req: &http::Request<B>) -> Option<http::Request<B>> {
        let mut copy = http::Request::new(req.body().clone());
        *copy.method_mut() = req.method().clone();
        *copy.uri_mut() = req.uri().clone();
        *copy.version_mut() = req.version();
        *copy.headers_mut() = req.headers().clone();
        // The call's deadline and its wait so far hold for every attempt.
        if let Some(d) = req.extensions().get::<Deadline>() {
            copy.extensions_mut().insert(*d);
        }
        if let Some(w) = req.extensions().get::<Waited>() {
            copy.extensions_mut().insert(w.clone());
        }
        // The request cloned here is about to be sent as try `self.attempt`: one that carries no
        // count (a stack of the caller's own) has not been counted by the layer, so the copy's
        // count starts from it.
        let tries = req
            .extensions()
            .get::<Attempts>()
            .cloned()
            .unwrap_or_else(|| Attempts::made(self.attempt));
        copy.extensions_mut().insert(tries);
        if let Some(t) = req.extensions().get::<AttemptTimeout>() {
            copy.extensions_mut().insert(*t);
        }
        Some(copy)
    }
}

/// Whether a transport error says the request surely never reached the service: no connection
/// was made (refused, unreachable, a connect timeout, a failed TLS handshake). Anything else — a
/// timeout after sending, a connection reset or closed mid-answer — may follow a request the
/// service received and applied.
fn never_sent(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<reqwest::Error>()
            && r.is_connect()
        {
            return true;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        cur = err.source();
    }
    false
}

impl Client {
    /// This client's limiter as a tower layer, for an HTTP stack of your own: see
    /// [`RateLimitLayer`](RateLimitLayer).
    pub fn layer(&self) -> RateLimitLayer {
        RateLimitLayer::new(Arc::clone(&self.inner))
    }

    /// This client's retry rules as a `tower::retry::Policy`: see
    /// [`RetryPolicy`](RetryPolicy).
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy::new(Arc::clone(&self.inner))
    }
}

#[cfg(test)]
mod tests {
    use apistend_catalog::ServiceId;
    use tower::retry::Policy;

    use super::*;

    /// In a stack of the caller's own, whose requests carry no count of tries, the retry's copy
    /// starts one: the layer numbers the retry 2 (the backoff of its penalty follows).
    #[test]
    fn a_retry_in_any_stack_knows_its_number() {
        let c = crate::client::Client::builder()
            .service(ServiceId::WB)
            .account("a")
            .base_url("http://127.0.0.1:9/wb")
            .config(crate::config::ClientConfig::default())
            .build()
            .unwrap();
        let mut policy = c.retry_policy();
        let clone = |p: &mut RetryPolicy, r: &http::Request<Vec<u8>>| {
            <RetryPolicy as Policy<_, http::Response<Vec<u8>>, BoxError>>::clone_request(p, r)
                .unwrap()
        };
        let first = http::Request::new(Vec::new());
        let second = clone(&mut policy, &first);
        let tries = second.extensions().get::<Attempts>().unwrap();
        assert_eq!(tries.next(), 2);
        // Later copies share that count.
        let third = clone(&mut policy, &second);
        assert_eq!(third.extensions().get::<Attempts>().unwrap().next(), 3);
    }
}
