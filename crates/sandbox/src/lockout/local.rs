//! The lockouts one instance knows: rejections counted in memory, and the locks they set (or
//! that the shared count set, [`super::shared`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Service → owner → until (Unix seconds): the locks every instance set, as Redis last had them.
pub(super) type Remote = HashMap<ServiceId, HashMap<String, f64>>;

/// The lockouts of every service that defines one.
#[derive(Debug, Default)]
pub(crate) struct Lockouts {
    /// Service → owner → entry (nested so that a lookup by `&str` allocates nothing).
    owners: Mutex<HashMap<ServiceId, HashMap<String, Entry>>>,
    /// The shared locks, replaced whole by each poll of Redis.
    remote: Mutex<Remote>,
    /// Whether there are shared locks to look at (an instance with Redis): without, a request
    /// takes one lock, not two.
    sharing: AtomicBool,
}

impl Lockouts {
    /// Whether `owner` of `service` is locked out at `now`.
    pub(crate) fn locked(&self, service: ServiceId, owner: &str, now: f64) -> bool {
        self.until(service, owner).is_some_and(|u| u > now)
    }

    /// When `owner`'s lock of `service` ends, here or as shared (the later).
    fn until(&self, service: ServiceId, owner: &str) -> Option<f64> {
        let local = {
            let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
            owners
                .get(&service)
                .and_then(|o| o.get(owner))
                .map(|e| e.until)
        };
        let remote = self.sharing.load(Ordering::Relaxed).then(|| {
            let remote = self.remote.lock().unwrap_or_else(PoisonError::into_inner);
            remote.get(&service).and_then(|o| o.get(owner)).copied()
        });
        let remote = remote.flatten();
        match (local, remote) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// How long `owner` of `service` stays locked out after `now`, in seconds, if it is.
    pub(crate) fn locked_for(&self, service: ServiceId, owner: &str, now: f64) -> Option<f64> {
        let until = self.until(service, owner)?;
        (until > now).then_some(until - now)
    }

    /// Forgets `owner`'s lockout of `service` and the rejections counted towards one.
    pub(crate) fn clear(&self, service: ServiceId, owner: &str) {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(o) = owners.get_mut(&service) {
            o.remove(owner);
        }
        drop(owners);
        let mut remote = self.remote.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(o) = remote.get_mut(&service) {
            o.remove(owner);
        }
    }

    /// Takes the locks Redis holds now in place of the last ones.
    pub(crate) fn follow(&self, shared: Remote) {
        *self.remote.lock().unwrap_or_else(PoisonError::into_inner) = shared;
        self.sharing.store(true, Ordering::Relaxed);
    }

    /// Notes a lock the shared count set, until the next poll brings it.
    pub(crate) fn adopt(&self, service: ServiceId, owner: &str, until: f64) {
        let mut remote = self.remote.lock().unwrap_or_else(PoisonError::into_inner);
        remote
            .entry(service)
            .or_default()
            .insert(owner.to_owned(), until);
        self.sharing.store(true, Ordering::Relaxed);
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
    use apistend_catalog::Lockout;

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
