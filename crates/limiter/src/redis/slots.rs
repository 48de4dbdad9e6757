//! Concurrency slots in Redis: a lease per request in flight, renewed while it runs and
//! released after (`slots.lua`).

use std::sync::atomic::Ordering;

use super::RedisStore;
use super::config::FailurePolicy;
use super::conn::{Conn, STORE, error_kind, store_error, timeout_error};
use crate::error::LimiterError;
use crate::metrics::{record_fallback, record_store_error};
use crate::slots::{Lease, Slots};

impl RedisStore {
    /// A slot of `key` under `limit`, if one is free (see [`MemoryStore::lease`](crate::memory::MemoryStore::lease)). Shared by
    /// every process on this Redis; when Redis cannot answer and the policy is fail-open, the
    /// local fallback decides.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer and the policy is fail-closed.
    pub async fn lease(&self, key: &str, limit: &Slots) -> Result<Option<Lease>, LimiterError> {
        let lease = Lease::new(&self.full_key(key));
        let taken = self
            .slot_op(&lease, limit, 'a', |f| f.inner.fallback.hold(&lease, limit))
            .await?;
        Ok(taken.then_some(lease))
    }

    /// Extends `lease` by `limit.ttl()`; `false` when it had already run out.
    ///
    /// # Errors
    /// As [`lease`](Self::lease).
    pub async fn renew(&self, lease: &Lease, limit: &Slots) -> Result<bool, LimiterError> {
        self.slot_op(lease, limit, 'n', |f| f.inner.fallback.renew(lease, limit))
            .await
    }

    /// Gives `lease`'s slot back.
    ///
    /// # Errors
    /// As [`lease`](Self::lease).
    pub async fn release(&self, lease: &Lease, limit: &Slots) -> Result<(), LimiterError> {
        self.slot_op(lease, limit, 'r', |f| {
            f.inner.fallback.release(lease);
            true
        })
        .await
        .map(drop)
    }

    /// One call of the slots script; `local` decides instead when Redis cannot answer and the
    /// policy allows it (a lease taken there lives in the fallback).
    async fn slot_op(
        &self,
        lease: &Lease,
        limit: &Slots,
        op: char,
        local: impl FnOnce(&Self) -> bool,
    ) -> Result<bool, LimiterError> {
        let now = self.now_arg();
        let result = async {
            let mut conn = self.inner.connection.get().await?;
            let mut invocation = self.inner.slots.key(&lease.key);
            invocation
                .arg(op.to_string())
                .arg(lease.id.to_string())
                .arg(limit.max())
                .arg(limit.ttl_us())
                .arg(now);
            let fut = async {
                match &mut conn {
                    Conn::Single(c) => invocation.invoke_async::<i64>(c).await,
                    Conn::Cluster(c) => invocation.invoke_async::<i64>(c).await,
                }
            };
            match tokio::time::timeout(self.inner.config.timeout, fut).await {
                Ok(Ok(v)) => Ok(v == 1),
                Ok(Err(e)) => Err(store_error(e)),
                Err(_) => Err(store_error(timeout_error())),
            }
        }
        .await;
        match result {
            Ok(v) => {
                self.answered();
                Ok(v)
            }
            Err(err) => {
                record_store_error(STORE, error_kind(&err));
                match self.inner.config.failure {
                    FailurePolicy::FailClosed => Err(err),
                    FailurePolicy::FailOpen => {
                        self.inner.degraded.store(true, Ordering::Relaxed);
                        record_fallback(STORE);
                        Ok(local(self))
                    }
                }
            }
        }
    }
}
