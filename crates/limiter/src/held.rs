//! Slots held by one call, for as long as it runs: taken all or none, renewed every third of
//! their lease while held (an answer may take longer than a lease), given back when dropped.
//! The sandbox holds them for a request it serves, the client for one it sends.

use std::time::Duration;

use crate::error::LimiterError;
use crate::slots::{Lease, Slots};
use crate::store::Store;

/// The slots of one call. Dropping it gives them back: the memory store's at once (so the
/// next call finds the slot free however soon it comes), a Redis store's by a task of its own
/// (should that fail, the leases run out by themselves).
#[derive(Debug)]
pub struct HeldSlots {
    store: Store,
    leases: Vec<(Lease, Slots)>,
    renewer: Option<tokio::task::JoinHandle<()>>,
}

impl HeldSlots {
    /// How many slots it holds.
    pub fn len(&self) -> usize {
        self.leases.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }
}

impl Store {
    /// One slot of each limit of `wanted` (a key and its slots), all or none: `Err(i)` when the
    /// `i`-th is full (the slots taken before it are given back), so a refusal can name it.
    /// Within a Tokio runtime, held slots are renewed every third of their shortest lease.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use apistend_limiter::{MemoryStore, Slots, Store};
    /// let store = Store::from(MemoryStore::new());
    /// let user = Slots::new(1, Duration::from_secs(10))?;
    /// let held = store.lease_all(&[("user-1", user)]).await?.expect("a free slot");
    /// assert_eq!(store.lease_all(&[("user-1", user)]).await?.err(), Some(0));
    /// drop(held);
    /// assert!(store.lease_all(&[("user-1", user)]).await?.is_ok());
    /// # Ok::<(), apistend_limiter::LimiterError>(()) }).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`LimiterError::Store`] when a fail-closed Redis store cannot answer (the slots taken so
    /// far are given back).
    pub async fn lease_all<K: AsRef<str>>(
        &self,
        wanted: &[(K, Slots)],
    ) -> Result<Result<HeldSlots, usize>, LimiterError> {
        let mut held = HeldSlots {
            store: self.clone(),
            leases: Vec::new(),
            renewer: None,
        };
        for (i, (key, slots)) in wanted.iter().enumerate() {
            // On an error or a full limit, dropping `held` gives back what it has.
            match self.lease(key.as_ref(), slots).await? {
                Some(lease) => held.leases.push((lease, *slots)),
                None => return Ok(Err(i)),
            }
        }
        let every = held.leases.iter().map(|(_, s)| s.ttl() / 3).min();
        if let (Some(every), Ok(rt)) = (every, tokio::runtime::Handle::try_current()) {
            held.renewer = Some(rt.spawn(renew(self.clone(), held.leases.clone(), every)));
        }
        Ok(Ok(held))
    }
}

async fn renew(store: Store, leases: Vec<(Lease, Slots)>, every: Duration) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
    tick.tick().await;
    loop {
        tick.tick().await;
        for (lease, slots) in &leases {
            if let Err(e) = store.renew(lease, slots).await {
                tracing::warn!(error = %e, key = lease.key(), "could not renew a concurrency slot");
            }
        }
    }
}

impl Drop for HeldSlots {
    fn drop(&mut self) {
        if let Some(r) = self.renewer.take() {
            r.abort();
        }
        let leases = std::mem::take(&mut self.leases);
        match &self.store {
            Store::Memory(m) => leases.iter().for_each(|(lease, _)| m.release(lease)),
            #[cfg(feature = "redis")]
            Store::Redis(_) if leases.is_empty() => {}
            #[cfg(feature = "redis")]
            Store::Redis(_) => {
                // Drop cannot wait: the release is a task of its own.
                let store = self.store.clone();
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move {
                        for (lease, slots) in &leases {
                            if let Err(e) = store.release(lease, slots).await {
                                tracing::warn!(error = %e, key = lease.key(), "could not release a concurrency slot");
                            }
                        }
                    });
                }
            }
        }
    }
}
