//! The Redis store: one Lua script, standalone or Cluster, with a local fallback when Redis cannot
//! answer. A request's decision is one script call whatever the number of its buckets, and
//! concurrent requests share calls (`batch`; per slot on a Cluster).

mod batch;
mod config;
mod conn;
mod learned;
mod slots;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use redis::{AsyncCommands, Script};

use crate::algo::Op;
use crate::clock::micros;
use crate::clock::{Clock, SystemClock};
use crate::decision::Decision;
use crate::draw::check_capacity;
use crate::draw::{self, Draw, Drawn};
use crate::error::LimiterError;
use crate::memory::MemoryStore;
use crate::metrics::{
    Outcome, Store as MetricStore, record_decision, record_fallback, record_store_error,
};
use crate::quota::Quota;
use batch::{Batcher, Caller, Item, Reply};

use batch::one_slot;
pub use config::{FailurePolicy, RedisConfig, TimeSource};
use conn::{Conn, Connection, STORE, error_kind, store_error, timeout_error};

struct Inner {
    config: RedisConfig,
    /// Shared calls: concurrent decisions for one slot go out together.
    batcher: Batcher,
    slots: Script,
    /// The learned-quota records (`learned.lua`).
    learned: Script,
    connection: Connection,
    degraded: AtomicBool,
    fallback_decisions: AtomicU64,
    fallback: MemoryStore<Arc<dyn Clock>>,
}

/// Buckets in Redis, shared by every process that uses the same Redis.
///
/// Each decision is one `EVALSHA` of one script (loaded again after a `SCRIPT FLUSH` or a restart),
/// whatever the number of buckets a request draws from ([`acquire_all`](Self::acquire_all)); a
/// Cluster routes it to the buckets' slot (one tenant's buckets share it, see
/// [`bucket_key`](crate::key::bucket_key)). The decisions of concurrent callers go out together while
/// earlier calls are in flight: up to 64 in one call, one call per slot on a Cluster. Connections
/// are multiplexed and come back by themselves after Redis restarts; meanwhile the
/// [`FailurePolicy`] decides.
///
/// Clones share the connection.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use apistend_limiter::{Quota, RedisConfig, RedisStore, bucket_key};
/// let store = RedisStore::new(RedisConfig::from_url("redis://127.0.0.1:6379")?)?;
/// let quota = Quota::per_period(3, Duration::from_secs(30))?;
/// let decision = store.acquire(&bucket_key("wb", "seller-1", &["ping"]), &quota, 1).await?;
/// println!("allowed: {}, retry in {} s", decision.allowed, decision.retry_after_secs());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("nodes", &self.inner.config.nodes)
            .field("cluster", &self.inner.config.cluster)
            .field("degraded", &self.is_degraded())
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A store for `config`. Connects lazily: a Redis that is down now is not an error here, the
    /// failure policy applies to the decisions instead. Must be called within a Tokio runtime.
    ///
    /// # Errors
    /// [`LimiterError::Config`] when the URLs cannot be parsed.
    pub fn new(config: RedisConfig) -> Result<Self, LimiterError> {
        let connection = Connection::new(&config)?;
        let fallback_clock: Arc<dyn Clock> = match &config.time {
            TimeSource::Client(clock) => Arc::clone(clock),
            TimeSource::Server => Arc::new(SystemClock::new()),
        };
        let script = Arc::new(Script::new(include_str!("limiter.lua")));
        let slack_ms: Arc<str> = config.ttl_slack.as_millis().to_string().into();
        let batcher = Batcher::new(Caller {
            script: Arc::clone(&script),
            now: match &config.time {
                TimeSource::Server => None,
                TimeSource::Client(clock) => Some(Arc::clone(clock)),
            },
            slack_ms: Arc::clone(&slack_ms),
        });
        Ok(Self {
            inner: Arc::new(Inner {
                batcher,
                slots: Script::new(include_str!("slots.lua")),
                learned: Script::new(include_str!("learned.lua")),
                connection,
                degraded: AtomicBool::new(false),
                fallback_decisions: AtomicU64::new(0),
                fallback: MemoryStore::with_clock(fallback_clock),
                config,
            }),
        })
    }

    /// Takes `n` tokens from `key`'s bucket if they are there.
    ///
    /// # Errors
    /// [`LimiterError::InsufficientCapacity`] when `n` exceeds the burst;
    /// [`LimiterError::Store`] when Redis cannot answer and the policy is fail-closed.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes may or may not have taken the tokens (the script
    /// may already run in Redis); it never takes them twice.
    pub async fn acquire(
        &self,
        key: &str,
        quota: &Quota,
        n: u32,
    ) -> Result<Decision, LimiterError> {
        self.take(key, quota, n, Op::Acquire(n)).await
    }

    /// Takes each draw's tokens from its bucket if every bucket has them, else nothing (see
    /// [`MemoryStore::acquire_all`]): one script call decides it all, atomically. On a Cluster the
    /// buckets must share a slot to go in one call (one tenant's do); buckets of several tenants
    /// are drawn one call each, a later refusal giving back what the earlier ones took.
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire), and [`LimiterError::NothingToDraw`] for no draws.
    ///
    /// # Cancel safety
    /// As [`acquire`](Self::acquire).
    pub async fn acquire_all(&self, draws: &[Draw<'_>]) -> Result<Drawn, LimiterError> {
        draw::check(draws)?;
        let Some(first) = draws.first() else {
            return Err(LimiterError::NothingToDraw);
        };
        let full: Vec<String> = draws.iter().map(|d| self.full_key(d.key)).collect();
        let drawn = if self.inner.config.cluster && !one_slot(&full) {
            self.acquire_each(draws).await?
        } else {
            // One op for the item: settled if any draw has a margin (with none it is an acquire).
            let op = draws
                .iter()
                .map(Draw::op)
                .find(|o| matches!(o, Op::Settled(..)))
                .unwrap_or_else(|| first.op());
            let item = Item::new(
                op,
                full.iter()
                    .zip(draws)
                    .map(|(k, d)| (k.clone(), d.quota, d.op())),
            );
            match self.decide(item).await {
                Ok((i, reply)) => {
                    self.answered();
                    let decision = decision(&draws.get(i).unwrap_or(first).quota, reply);
                    if decision.allowed {
                        Drawn::taken(decision)
                    } else {
                        Drawn::refused(i, decision)
                    }
                }
                Err(err) => {
                    let local: Vec<Draw<'_>> = full
                        .iter()
                        .zip(draws)
                        .map(|(k, d)| Draw { key: k, ..*d })
                        .collect();
                    self.fail(err, || self.inner.fallback.acquire_all(&local))??
                }
            }
        };
        record_decision(MetricStore::Redis, Outcome::of(drawn.refused.is_none()));
        Ok(drawn)
    }

    /// Buckets on different Cluster slots, one call each; a later refusal gives back what the
    /// earlier ones took.
    async fn acquire_each(&self, draws: &[Draw<'_>]) -> Result<Drawn, LimiterError> {
        let mut first = None;
        for (i, d) in draws.iter().enumerate() {
            let decision = self.run(d.key, &d.quota, d.op()).await?;
            if !decision.allowed {
                for back in draws.iter().take(i) {
                    self.refund(back.key, &back.quota, back.tokens).await?;
                }
                return Ok(Drawn::refused(i, decision));
            }
            first.get_or_insert(decision);
        }
        first.map(Drawn::taken).ok_or(LimiterError::NothingToDraw)
    }

    /// `op` on `key`'s bucket (see [`MemoryStore::apply`]).
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire).
    ///
    /// # Cancel safety
    /// As [`acquire`](Self::acquire).
    pub async fn apply(&self, key: &str, quota: &Quota, op: Op) -> Result<Decision, LimiterError> {
        match op.taking() {
            Some(n) => self.take(key, quota, n, op).await,
            None => self.run(key, quota, op).await,
        }
    }

    /// `op` on each bucket, in one script call when they share a slot (see
    /// [`MemoryStore::apply_all`]).
    ///
    /// # Errors
    /// As [`acquire_all`](Self::acquire_all).
    ///
    /// # Cancel safety
    /// As [`acquire`](Self::acquire).
    pub async fn apply_all(
        &self,
        buckets: &[(&str, Quota)],
        op: Op,
    ) -> Result<Drawn, LimiterError> {
        if op.taking().is_some() {
            let draws: Vec<Draw<'_>> = buckets.iter().map(|(k, q)| Draw::of(k, *q, op)).collect();
            return self.acquire_all(&draws).await;
        }
        let Some((_, first)) = buckets.first() else {
            return Err(LimiterError::NothingToDraw);
        };
        let full: Vec<String> = buckets.iter().map(|(k, _)| self.full_key(k)).collect();
        if self.inner.config.cluster && !one_slot(&full) {
            let mut reported = None;
            for (key, quota) in buckets {
                let d = self.run(key, quota, op).await?;
                reported.get_or_insert(d);
            }
            return reported
                .map(Drawn::taken)
                .ok_or(LimiterError::NothingToDraw);
        }
        let item = Item::new(
            op,
            full.iter()
                .zip(buckets)
                .map(|(k, (_, q))| (k.clone(), *q, op)),
        );
        match self.decide(item).await {
            Ok((_, reply)) => {
                self.answered();
                Ok(Drawn::taken(decision(first, reply)))
            }
            Err(err) => {
                let local: Vec<(&str, Quota)> = full
                    .iter()
                    .zip(buckets)
                    .map(|(k, (_, q))| (k.as_str(), *q))
                    .collect();
                self.fail(err, || self.inner.fallback.apply_all(&local, op))?
            }
        }
    }

    /// `acquire` and `acquire_settled`: checked, run, counted.
    async fn take(
        &self,
        key: &str,
        quota: &Quota,
        n: u32,
        op: Op,
    ) -> Result<Decision, LimiterError> {
        check_capacity(quota, n)?;
        let decision = self.run(key, quota, op).await?;
        record_decision(MetricStore::Redis, Outcome::of(decision.allowed));
        Ok(decision)
    }

    /// Takes `n` tokens if they have been there for at least `margin`; see
    /// [`MemoryStore::acquire_settled`].
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire).
    ///
    /// # Cancel safety
    /// As [`acquire`](Self::acquire).
    pub async fn acquire_settled(
        &self,
        key: &str,
        quota: &Quota,
        n: u32,
        margin: Duration,
    ) -> Result<Decision, LimiterError> {
        self.take(key, quota, n, Op::Settled(n, micros(margin)))
            .await
    }

    /// The bucket as it is, without taking anything.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer and the policy is fail-closed.
    pub async fn peek(&self, key: &str, quota: &Quota) -> Result<Decision, LimiterError> {
        self.run(key, quota, Op::Peek).await
    }

    /// Allows nothing on `key` for `d`, then the nominal rate without a burst.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer and the policy is fail-closed.
    pub async fn penalize(
        &self,
        key: &str,
        quota: &Quota,
        d: Duration,
    ) -> Result<Decision, LimiterError> {
        self.run(key, quota, Op::Penalize(micros(d))).await
    }

    /// Gives back `n` tokens of a request that was never sent.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer and the policy is fail-closed.
    pub async fn refund(&self, key: &str, quota: &Quota, n: u32) -> Result<Decision, LimiterError> {
        self.run(key, quota, Op::Refund(n)).await
    }

    /// Holds no more than the `remaining` tokens the remote service reports (see
    /// [`MemoryStore::align`](crate::memory::MemoryStore::align)).
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer and the policy is fail-closed.
    pub async fn align(
        &self,
        key: &str,
        quota: &Quota,
        remaining: u32,
    ) -> Result<Decision, LimiterError> {
        self.run(key, quota, Op::Align(remaining)).await
    }

    /// Forgets `key` in Redis and in the local fallback.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer, whatever the policy: a reset that did not
    /// happen must not look as if it had.
    pub async fn reset(&self, key: &str) -> Result<(), LimiterError> {
        let full = self.full_key(key);
        self.inner.fallback.reset(&full);
        let mut conn = self.inner.connection.get().await?;
        let fut = async {
            match &mut conn {
                Conn::Single(c) => c.del::<_, ()>(&full).await,
                Conn::Cluster(c) => c.del::<_, ()>(&full).await,
            }
        };
        match tokio::time::timeout(self.inner.config.timeout, fut).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(store_error(e)),
            Err(_) => Err(store_error(timeout_error())),
        }
    }

    /// Whether the last decision had to be taken locally because Redis could not answer.
    pub fn is_degraded(&self) -> bool {
        self.inner.degraded.load(Ordering::Relaxed)
    }

    /// How many decisions the local fallback store made since start (Redis could not answer).
    pub fn fallback_decisions(&self) -> u64 {
        self.inner.fallback_decisions.load(Ordering::Relaxed)
    }

    /// Keys held by the local fallback store.
    pub fn fallback_len(&self) -> usize {
        self.inner.fallback.len()
    }

    /// Sends `PING`; `Ok` when Redis answers within the timeout (for readiness probes). An
    /// answer also ends the degraded state.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when it does not.
    pub async fn ping(&self) -> Result<(), LimiterError> {
        let mut conn = self.inner.connection.get().await?;
        let fut = async {
            match &mut conn {
                Conn::Single(c) => redis::cmd("PING").query_async::<String>(c).await,
                Conn::Cluster(c) => redis::cmd("PING").query_async::<String>(c).await,
            }
        };
        match tokio::time::timeout(self.inner.config.timeout, fut).await {
            Ok(Ok(_)) => {
                self.answered();
                Ok(())
            }
            Ok(Err(e)) => Err(store_error(e)),
            Err(_) => Err(store_error(timeout_error())),
        }
    }

    /// Redis answered: decisions are shared again.
    fn answered(&self) {
        if self.inner.degraded.swap(false, Ordering::Relaxed) {
            tracing::info!(nodes = ?self.inner.config.nodes, "Redis answers again; rate-limit decisions are shared again");
        }
    }

    fn full_key(&self, key: &str) -> String {
        let prefix = &self.inner.config.key_prefix;
        let mut full = String::with_capacity(prefix.len() + key.len());
        full.push_str(prefix);
        full.push_str(key);
        full
    }

    async fn run(&self, key: &str, quota: &Quota, op: Op) -> Result<Decision, LimiterError> {
        let full = self.full_key(key);
        match self.eval(&full, quota, op).await {
            Ok(decision) => {
                self.answered();
                Ok(decision)
            }
            Err(err) => self.fail(err, || self.inner.fallback.step(&full, quota, op)),
        }
    }

    /// Redis could not decide: the error when the policy is fail-closed, else `local`'s decision.
    fn fail<T>(&self, err: LimiterError, local: impl FnOnce() -> T) -> Result<T, LimiterError> {
        record_store_error(STORE, error_kind(&err));
        match self.inner.config.failure {
            FailurePolicy::FailClosed => Err(err),
            FailurePolicy::FailOpen => {
                if !self.inner.degraded.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %err, "Redis cannot answer; deciding with the local fallback store until it is back");
                }
                record_fallback(STORE);
                self.inner
                    .fallback_decisions
                    .fetch_add(1, Ordering::Relaxed);
                Ok(local())
            }
        }
    }

    async fn eval(&self, key: &str, quota: &Quota, op: Op) -> Result<Decision, LimiterError> {
        let item = Item::new(op, [(key.to_owned(), *quota, op)]);
        let (_, reply) = self.decide(item).await?;
        Ok(decision(quota, reply))
    }

    /// One item decided by Redis in the next shared call for its slot, within the timeout.
    async fn decide(&self, item: Item) -> Result<Reply, LimiterError> {
        let fut = async {
            let conn = self.inner.connection.get().await?;
            self.inner
                .batcher
                .decide(item, conn)
                .await
                .map_err(store_error)
        };
        match tokio::time::timeout(self.inner.config.timeout, fut).await {
            Ok(result) => result,
            Err(_) => Err(store_error(timeout_error())),
        }
    }

    /// The script's `now`: empty for Redis `TIME`, else the caller's clock.
    fn now_arg(&self) -> String {
        match &self.inner.config.time {
            TimeSource::Server => String::new(),
            TimeSource::Client(clock) => clock.now().to_string(),
        }
    }
}

/// The decision the script reported for a bucket of `quota`.
fn decision(quota: &Quota, [allowed, remaining, retry, reset]: [i64; 4]) -> Decision {
    let u = |v: i64| u64::try_from(v).unwrap_or(0);
    Decision::from_micros(
        allowed == 1,
        quota.burst(),
        u(remaining),
        u(retry),
        u(reset),
    )
}
