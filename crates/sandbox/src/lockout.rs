//! A definition's lockout: after `after` rejections within `within_secs`, every request of that
//! owner gets the service's `locked` answer for `for_secs` (amoCRM's 403 for an integration
//! that keeps violating). Kept per instance, in memory. The management API lists a lockout
//! with its bucket (`locked_for_ms`) and a bucket reset clears it, as it clears the buckets.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use apistend_catalog::{Lockout, ServiceId};

/// Owners tracked at most; beyond it, owners neither locked nor recently rejected are dropped.
const MAX_OWNERS: usize = 100_000;

#[derive(Debug, Default)]
struct Entry {
    /// Times of the recent rejections, in seconds.
    rejections: VecDeque<f64>,
    /// Locked until then.
    until: f64,
}

/// The lockouts of every service that defines one.
#[derive(Debug, Default)]
pub(crate) struct Lockouts {
    /// Service → owner → entry (nested so that a lookup by `&str` allocates nothing).
    owners: Mutex<HashMap<ServiceId, HashMap<String, Entry>>>,
}

impl Lockouts {
    /// Whether `owner` of `service` is locked out at `now`.
    pub(crate) fn locked(&self, service: ServiceId, owner: &str, now: f64) -> bool {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners
            .get(&service)
            .and_then(|o| o.get(owner))
            .is_some_and(|e| e.until > now)
    }

    /// How long `owner` of `service` stays locked out after `now`, in seconds, if it is.
    pub(crate) fn locked_for(&self, service: ServiceId, owner: &str, now: f64) -> Option<f64> {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        let until = owners.get(&service)?.get(owner)?.until;
        (until > now).then_some(until - now)
    }

    /// Forgets `owner`'s lockout of `service` and the rejections counted towards one.
    pub(crate) fn clear(&self, service: ServiceId, owner: &str) {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(o) = owners.get_mut(&service) {
            o.remove(owner);
        }
    }

    /// Counts a rejection of `owner` at `now`; locks it out when `rule` says so, and then says
    /// so (`true`).
    pub(crate) fn rejected(
        &self,
        service: ServiceId,
        owner: &str,
        rule: &Lockout,
        now: f64,
    ) -> bool {
        let mut services = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        let owners = services.entry(service).or_default();
        if owners.len() >= MAX_OWNERS {
            let window = f64::from(rule.within_secs);
            owners.retain(|_, e| {
                e.until > now || e.rejections.back().is_some_and(|t| now - t < window)
            });
        }
        let e = owners.entry(owner.to_owned()).or_default();
        let since = now - f64::from(rule.within_secs);
        while e.rejections.front().is_some_and(|t| *t <= since) {
            e.rejections.pop_front();
        }
        e.rejections.push_back(now);
        if e.rejections.len() >= usize::try_from(rule.after).unwrap_or(usize::MAX) {
            e.until = now + f64::from(rule.for_secs);
            e.rejections.clear();
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_rejections_within_the_window_lock_for_the_duration() {
        let l = Lockouts::default();
        let rule = Lockout::new(3, 10, 60);
        let id = apistend_catalog::Catalog::builtin()
            .unwrap()
            .service_id("amocrm")
            .unwrap();
        l.rejected(id, "k", &rule, 0.0);
        l.rejected(id, "k", &rule, 5.0);
        // The first has left the window: two in it, no lock.
        l.rejected(id, "k", &rule, 10.5);
        assert!(!l.locked(id, "k", 10.6));
        l.rejected(id, "k", &rule, 11.0);
        assert!(l.locked(id, "k", 11.1));
        assert!(!l.locked(id, "other", 11.1), "per owner");
        assert!(l.locked(id, "k", 70.9));
        assert!(!l.locked(id, "k", 71.1), "for 60 s");
        assert!(!l.rejected(id, "k", &rule, 80.0));
        assert!(!l.rejected(id, "k", &rule, 80.5));
        assert!(l.rejected(id, "k", &rule, 81.0), "this one locks");
        assert_eq!(l.locked_for(id, "k", 91.0), Some(50.0));
        l.clear(id, "k");
        assert!(!l.locked(id, "k", 91.0), "cleared");
        assert_eq!(l.locked_for(id, "k", 91.0), None);
    }
}
