//! A definition's lockout: after `after` rejections within `within_secs`, every request of that
//! owner gets the service's `locked` answer for `for_secs` (amoCRM's 403 for an integration
//! that keeps violating). The management API lists a lockout with its bucket
//! (`locked_for_ms`) and a bucket reset clears it, as it clears the buckets.
//!
//! Each instance decides from memory (a request asks no one). With `--redis`, rejections are
//! counted in Redis across instances and the locks they set are followed every 250 ms
//! ([`shared`]): a client behind several instances meets one lockout, as it would in
//! production. Without Redis, or while it is away, each instance counts its own.

mod local;
pub(crate) mod shared;

use std::sync::Arc;

use apistend_catalog::{Lockout, ServiceId};

use local::Lockouts;
use shared::SharedLockouts;

/// The lockouts of this instance, and with Redis their shared count.
pub(crate) struct LockoutBook {
    local: Arc<Lockouts>,
    shared: Option<Arc<SharedLockouts>>,
}

impl LockoutBook {
    /// The lockouts of a starting sandbox, and with Redis (`sync`'s connection) their shared
    /// count, followed from now on.
    pub(crate) fn start(
        sync: Option<&crate::sync::TenantSync>,
        catalog: &Arc<apistend_catalog::Catalog>,
    ) -> Self {
        let local = Arc::new(Lockouts::default());
        let shared = sync.map(|s| {
            let shared = Arc::new(SharedLockouts::new(s.connection()));
            shared.follow(&local, Arc::clone(catalog));
            shared
        });
        Self { local, shared }
    }

    /// Whether `owner` of `service` is locked out at `now`.
    pub(crate) fn locked(&self, service: ServiceId, owner: &str, now: f64) -> bool {
        self.local.locked(service, owner, now)
    }

    /// For how long `owner` of `service` stays locked out after `now` (seconds), if it is.
    pub(crate) fn locked_for(&self, service: ServiceId, owner: &str, now: f64) -> Option<f64> {
        self.local.locked_for(service, owner, now)
    }

    /// Counts a rejection of `owner` of `service` at `now`, across instances when they share a
    /// Redis (locally while it is away); whether it locked the owner out.
    pub(crate) async fn count_rejection(
        &self,
        service: ServiceId,
        owner: &str,
        rule: &Lockout,
        now: f64,
    ) -> bool {
        if let Some(shared) = &self.shared {
            match shared.rejected(service, owner, rule, now).await {
                Ok(Some((until, set_now))) => {
                    self.local.adopt(service, owner, until);
                    return set_now;
                }
                Ok(None) => return false,
                Err(e) => {
                    tracing::debug!(error = %e, "counting the rejection here: Redis did not answer");
                }
            }
        }
        self.local.rejected(service, owner, rule, now)
    }

    /// Clears `owner`'s lockout of `service` here and, with Redis, for every instance.
    pub(crate) async fn clear(&self, service: ServiceId, owner: &str) {
        self.local.clear(service, owner);
        if let Some(shared) = &self.shared
            && let Err(e) = shared.clear(service, owner).await
        {
            tracing::warn!(error = %e, "could not clear the shared lockout; it ends when it ends");
        }
    }
}
