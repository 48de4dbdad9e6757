//! [`Client`]: the handle a caller holds (clones share one [`Core`]). Its constructors and the
//! calls it makes are in `builder` and `request`, its tower pieces in [`crate::layer`].

use std::sync::Arc;

use apistend_catalog::Method;
use apistend_limiter::Quota;

use super::budget::operation_path;
use super::core::Core;
use crate::learn::LearnedQuota;
use crate::metrics::Stats;

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
    pub(crate) inner: Arc<Core>,
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

    /// Forgets every learned quota: the catalog's hold again until the server's answers teach
    /// otherwise (an operator who raised a stricter account's limit, a test starting over).
    /// Gives those it forgot.
    ///
    /// ```no_run
    /// # fn demo(client: &apistend_client::Client) {
    /// let forgot = client.forget_learned();
    /// assert!(client.learned().is_empty());
    /// # let _ = forgot;
    /// # }
    /// ```
    pub fn forget_learned(&self) -> Vec<LearnedQuota> {
        let forgot = self.inner.learner.forget(std::time::Instant::now());
        for l in &forgot {
            self.inner.handles.learned(&l.group, &l.catalog);
        }
        forgot
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
