//! One type for "the configured store", memory or Redis, for code that chooses at run time.

use std::time::Duration;

use crate::algo::Op;
use crate::decision::Decision;
use crate::draw::{Draw, Drawn};
use crate::error::LimiterError;
use crate::learned::LearnedRecord;
use crate::memory::MemoryStore;
use crate::quota::Quota;
#[cfg(feature = "redis")]
use crate::redis::RedisStore;
use crate::slots::{Lease, Slots};

/// The store a deployment chose: buckets in this process or in Redis.
///
/// The Redis futures are boxed: a Redis round trip dwarfs an allocation, while an inline Redis
/// future would make every memory-store decision's future (and its callers') kilobytes large.
///
/// ```
/// # tokio_test_block(async {
/// use std::time::Duration;
/// use apistend_limiter::{MemoryStore, Quota, Store};
/// let store = Store::from(MemoryStore::new());
/// let q = Quota::per_period(1, Duration::from_secs(1))?;
/// assert!(store.acquire("k", &q, 1).await?.allowed);
/// assert!(!store.acquire("k", &q, 1).await?.allowed);
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// # fn tokio_test_block<F: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>>(f: F) {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f).unwrap()
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Store {
    /// Buckets in this process.
    Memory(MemoryStore),
    /// Buckets in Redis.
    #[cfg(feature = "redis")]
    Redis(RedisStore),
}

impl From<MemoryStore> for Store {
    fn from(s: MemoryStore) -> Self {
        Store::Memory(s)
    }
}

#[cfg(feature = "redis")]
impl From<RedisStore> for Store {
    fn from(s: RedisStore) -> Self {
        Store::Redis(s)
    }
}

impl Store {
    /// The store a URL names: `memory` (buckets in this process), or `redis://…`, `rediss://…`,
    /// `unix://…` and `redis+cluster://host:port,host:port` (buckets in Redis, with
    /// [`crate::redis::RedisConfig::from_url`]'s defaults). The one parser of a store URL, for the
    /// sandbox, the client, the proxy and the CLI alike.
    ///
    /// ```
    /// use apistend_limiter::{LimiterError, Store, StoreUrlError};
    /// assert_eq!(Store::from_url("memory")?.name(), "memory");
    /// assert!(matches!(
    ///     Store::from_url("mongodb://x"),
    ///     Err(LimiterError::StoreUrl { kind: StoreUrlError::Unknown, .. })
    /// ));
    /// # Ok::<(), LimiterError>(())
    /// ```
    ///
    /// # Errors
    /// [`LimiterError::StoreUrl`] for a URL that names no store this build has;
    /// [`LimiterError::Config`] for a Redis URL its client cannot parse.
    pub fn from_url(url: &str) -> Result<Self, LimiterError> {
        let url = url.trim();
        if url == "memory" {
            return Ok(Store::Memory(MemoryStore::new()));
        }
        #[cfg(feature = "redis")]
        {
            let config = crate::redis::RedisConfig::from_url(url)?;
            Ok(Store::Redis(RedisStore::new(config)?))
        }
        #[cfg(not(feature = "redis"))]
        {
            let redis = ["redis://", "rediss://", "unix://", "redis+cluster://"]
                .iter()
                .any(|p| url.starts_with(p));
            Err(LimiterError::StoreUrl {
                url: url.to_owned(),
                kind: if redis {
                    crate::error::StoreUrlError::NoRedisSupport
                } else {
                    crate::error::StoreUrlError::Unknown
                },
            })
        }
    }

    /// The store's name in metrics and logs (`memory`, `redis`).
    pub fn name(&self) -> &'static str {
        match self {
            Store::Memory(_) => "memory",
            #[cfg(feature = "redis")]
            Store::Redis(_) => "redis",
        }
    }

    /// A slot of `key` under `limit`, if one is free: see [`MemoryStore::lease`] and
    /// [`RedisStore::lease`].
    ///
    /// # Errors
    /// [`LimiterError::Store`] when a fail-closed Redis store cannot answer.
    pub async fn lease(&self, key: &str, limit: &Slots) -> Result<Option<Lease>, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.lease(key, limit)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.lease(key, limit)).await,
        }
    }

    /// Extends `lease`; `false` when it had run out.
    ///
    /// # Errors
    /// As [`Store::lease`].
    pub async fn renew(&self, lease: &Lease, limit: &Slots) -> Result<bool, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.renew(lease, limit)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.renew(lease, limit)).await,
        }
    }

    /// The learned record of `key`'s bucket, if a process wrote one that has not run out.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer.
    pub async fn learned(&self, key: &str) -> Result<Option<LearnedRecord>, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.learned(key)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.learned(key)).await,
        }
    }

    /// Merges `record` into `key`'s learned record (the strictest bounds, the newer quota: see
    /// [`LearnedRecord::merge`]), to run out `ttl` after now; the merged record.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use apistend_limiter::{LearnedRecord, MemoryStore, Store};
    /// let store = Store::from(MemoryStore::new());
    /// let mine = LearnedRecord { burst: 5, interval_us: 400_000, upper: Some(3.5), lower: None, decided_ms: 1, from_headers: false };
    /// let theirs = LearnedRecord { upper: Some(2.9), decided_ms: 0, ..mine };
    /// store.merge_learned("k", &mine, Duration::from_secs(600)).await?;
    /// let merged = store.merge_learned("k", &theirs, Duration::from_secs(600)).await?;
    /// assert_eq!((merged.upper, merged.decided_ms), (Some(2.9), 1));
    /// assert_eq!(store.learned("k").await?, Some(merged));
    /// # Ok::<(), apistend_limiter::LimiterError>(()) }).unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`Store::learned`].
    pub async fn merge_learned(
        &self,
        key: &str,
        record: &LearnedRecord,
        ttl: Duration,
    ) -> Result<LearnedRecord, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.merge_learned(key, record, ttl)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.merge_learned(key, record, ttl)).await,
        }
    }

    /// Gives `lease`'s slot back.
    ///
    /// # Errors
    /// As [`Store::lease`].
    pub async fn release(&self, lease: &Lease, limit: &Slots) -> Result<(), LimiterError> {
        match self {
            Store::Memory(s) => {
                // The memory table knows each lease; the limit matters to Redis only.
                let _ = limit;
                s.release(lease);
                Ok(())
            }
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.release(lease, limit)).await,
        }
    }

    /// `op` on `key`'s bucket: see [`MemoryStore::apply`] and [`RedisStore::apply`].
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire).
    pub async fn apply(&self, key: &str, quota: &Quota, op: Op) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => s.apply(key, quota, op),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.apply(key, quota, op)).await,
        }
    }

    /// `op` on each bucket, a taking op all or nothing: see [`MemoryStore::apply_all`] and
    /// [`RedisStore::apply_all`].
    ///
    /// # Errors
    /// As [`acquire_all`](Self::acquire_all).
    pub async fn apply_all(
        &self,
        buckets: &[(&str, Quota)],
        op: Op,
    ) -> Result<Drawn, LimiterError> {
        match self {
            Store::Memory(s) => s.apply_all(buckets, op),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.apply_all(buckets, op)).await,
        }
    }

    /// See [`MemoryStore::acquire`] and [`RedisStore::acquire`].
    ///
    /// # Errors
    /// [`LimiterError::InsufficientCapacity`] when `n` exceeds the burst; [`LimiterError::Store`]
    /// when a fail-closed Redis store cannot answer.
    pub async fn acquire(
        &self,
        key: &str,
        quota: &Quota,
        n: u32,
    ) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => s.acquire(key, quota, n),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.acquire(key, quota, n)).await,
        }
    }

    /// Every draw's tokens or none: see [`MemoryStore::acquire_all`] and
    /// [`RedisStore::acquire_all`].
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire), and [`LimiterError::NothingToDraw`] for no draws.
    pub async fn acquire_all(&self, draws: &[Draw<'_>]) -> Result<Drawn, LimiterError> {
        match self {
            Store::Memory(s) => s.acquire_all(draws),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.acquire_all(draws)).await,
        }
    }

    /// See [`MemoryStore::acquire_settled`] and [`RedisStore::acquire_settled`].
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire).
    pub async fn acquire_settled(
        &self,
        key: &str,
        quota: &Quota,
        n: u32,
        margin: Duration,
    ) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => s.acquire_settled(key, quota, n, margin),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.acquire_settled(key, quota, n, margin)).await,
        }
    }

    /// The bucket without taking anything.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when a fail-closed Redis store cannot answer.
    pub async fn peek(&self, key: &str, quota: &Quota) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.peek(key, quota)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.peek(key, quota)).await,
        }
    }

    /// Allows nothing for `d`, then the nominal rate without a burst.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when a fail-closed Redis store cannot answer.
    pub async fn penalize(
        &self,
        key: &str,
        quota: &Quota,
        d: Duration,
    ) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.penalize(key, quota, d)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.penalize(key, quota, d)).await,
        }
    }

    /// Gives back `n` tokens of a request that was never sent.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when a fail-closed Redis store cannot answer.
    pub async fn refund(&self, key: &str, quota: &Quota, n: u32) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.refund(key, quota, n)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.refund(key, quota, n)).await,
        }
    }

    /// Holds no more than the `remaining` tokens the remote service reports (see
    /// [`MemoryStore::align`]).
    ///
    /// # Errors
    /// [`LimiterError::Store`] when a fail-closed Redis store cannot answer.
    pub async fn align(
        &self,
        key: &str,
        quota: &Quota,
        remaining: u32,
    ) -> Result<Decision, LimiterError> {
        match self {
            Store::Memory(s) => Ok(s.align(key, quota, remaining)),
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.align(key, quota, remaining)).await,
        }
    }

    /// Forgets `key`.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer.
    pub async fn reset(&self, key: &str) -> Result<(), LimiterError> {
        match self {
            Store::Memory(s) => {
                s.reset(key);
                Ok(())
            }
            #[cfg(feature = "redis")]
            Store::Redis(s) => Box::pin(s.reset(key)).await,
        }
    }
}
