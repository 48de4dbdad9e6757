//! Sandboxes, keys, limits and the admin token's hash shared by every instance on one Redis
//! (standalone or Cluster: every key carries the `{tenants}` hash tag, so they live in one slot).
//! Buckets are shared by the Redis store itself; this is the rest.
//!
//! Each record (a sandbox, a deleted sandbox's tombstone, the admin token's hash) is one field
//! of a Redis hash with its own revision; a script writes a field only with a later revision
//! and bumps a sequence number. Instances poll the sequence (every 250 ms) and an epoch (a
//! random id made by whoever creates the sequence): when either moved, they read the hash and
//! merge it record by record, then publish what they hold that the hash lacks or has older. A
//! Redis that restarts empty has a new epoch, so every instance publishes its whole state again;
//! no instance drops a sandbox unless a tombstone says so. Two changes to one sandbox on two
//! instances within a poll interval keep the later one.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, RedisResult};

use crate::tenants::{Shared, Tenants, Touched};

const RECORDS_KEY: &str = "apistend:{tenants}:records";
const REVS_KEY: &str = "apistend:{tenants}:revs";
const SEQ_KEY: &str = "apistend:{tenants}:seq";
/// The instances' epoch: a new one for a Redis that came back empty.
pub(crate) const EPOCH_KEY: &str = "apistend:{tenants}:epoch";

/// KEYS: records, revs, seq, epoch. ARGV: a new epoch, then (field, rev, json) triples. Writes
/// each field whose revision is later than the stored one; returns {epoch, seq}.
const PUBLISH: &str = r"
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[4], ARGV[1])
  redis.call('SET', KEYS[3], 0)
end
local n = 0
for i = 2, #ARGV, 3 do
  local cur = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '-1')
  if tonumber(ARGV[i + 1]) > cur then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    n = n + 1
  end
end
local seq = redis.call('GET', KEYS[3])
if n > 0 then seq = redis.call('INCR', KEYS[3]) end
return {redis.call('GET', KEYS[4]), tostring(seq)}
";

/// A connection to the instances' Redis, standalone or Cluster, every call bounded to 2 s.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Conn {
    async fn timed<T>(fut: impl Future<Output = RedisResult<T>>) -> RedisResult<T> {
        tokio::time::timeout(Duration::from_secs(2), fut)
            .await
            .unwrap_or_else(|_| {
                Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "Redis did not answer within 2 s",
                )))
            })
    }

    pub(crate) async fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> RedisResult<T> {
        Self::timed(async {
            match self {
                Conn::Single(c) => cmd.query_async(c).await,
                Conn::Cluster(c) => cmd.query_async(c).await,
            }
        })
        .await
    }

    pub(crate) async fn pipeline<T: FromRedisValue>(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> RedisResult<T> {
        Self::timed(async {
            match self {
                Conn::Single(c) => pipe.query_async(c).await,
                Conn::Cluster(c) => pipe.query_async(c).await,
            }
        })
        .await
    }

    pub(crate) async fn invoke<T: FromRedisValue>(
        &mut self,
        inv: &redis::ScriptInvocation<'_>,
    ) -> RedisResult<T> {
        Self::timed(async {
            match self {
                Conn::Single(c) => inv.invoke_async(c).await,
                Conn::Cluster(c) => inv.invoke_async(c).await,
            }
        })
        .await
    }
}

/// The sequence position last read: the epoch and the sequence number.
type Seen = Option<(String, String)>;

pub(crate) struct TenantSync {
    conn: Conn,
    script: redis::Script,
    seen: Mutex<Seen>,
    /// One pull or publish at a time: a merge and a publish must not interleave.
    turn: tokio::sync::Mutex<()>,
}

impl TenantSync {
    /// Connects to the Redis of `config` (the bucket store's); `None` (with a warning) for a
    /// Redis that does not answer, in which case each instance keeps its own sandboxes.
    pub(crate) async fn connect(config: &apistend_limiter::RedisConfig) -> Option<Arc<Self>> {
        let connecting = async {
            if config.cluster {
                let client = redis::cluster::ClusterClientBuilder::new(config.nodes.clone())
                    .connection_timeout(Duration::from_secs(2))
                    .response_timeout(Duration::from_secs(2))
                    .build()?;
                client.get_async_connection().await.map(Conn::Cluster)
            } else {
                let node = config.nodes.first().map_or("", String::as_str);
                let client = redis::Client::open(node)?;
                let options = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_secs(2)))
                    .set_response_timeout(Some(Duration::from_secs(2)));
                ConnectionManager::new_with_config(client, options)
                    .await
                    .map(Conn::Single)
            }
        };
        match tokio::time::timeout(Duration::from_secs(3), connecting).await {
            Ok(Ok(conn)) => Some(Arc::new(Self {
                conn,
                script: redis::Script::new(PUBLISH),
                seen: Mutex::new(None),
                turn: tokio::sync::Mutex::new(()),
            })),
            _ => {
                tracing::warn!(
                    "Redis does not answer: this instance keeps its own sandboxes until restarted with Redis up"
                );
                None
            }
        }
    }

    /// The connection, for other state shared through the same Redis (the lockouts).
    pub(crate) fn connection(&self) -> Conn {
        self.conn.clone()
    }

    fn seen(&self) -> Seen {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set_seen(&self, s: Seen) {
        *self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = s;
    }

    /// Merges the shared records into `tenants` when they moved, and publishes what this
    /// instance holds that they lack (everything, for a Redis that came back empty) or that
    /// changed here.
    pub(crate) async fn pull(&self, tenants: &Tenants) {
        let _turn = self.turn.lock().await;
        let mut conn = self.conn.clone();
        let now: RedisResult<(Option<String>, Option<String>)> = conn
            .query(redis::cmd("MGET").arg(EPOCH_KEY).arg(SEQ_KEY))
            .await;
        let Ok((epoch, seq)) = now else {
            return; // Redis away: keep what we have, try again at the next tick.
        };
        let mut publish = tenants.take_dirty();
        let position = epoch.zip(seq);
        if position.is_none() {
            // A Redis that is new or came back empty: it gets everything we hold.
            publish = tenants.everything();
        } else if position != self.seen() {
            let records: RedisResult<Vec<(String, String)>> =
                conn.query(redis::cmd("HGETALL").arg(RECORDS_KEY)).await;
            let Ok(records) = records else {
                tenants.unshared(publish);
                return;
            };
            let remote: Vec<Shared> = records
                .into_iter()
                .filter_map(|(field, json)| match serde_json::from_str(&json) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        tracing::warn!(field, error = %e, "ignoring a shared record this instance cannot read (written by a newer version?)");
                        None
                    }
                })
                .collect();
            match tenants.merge(remote) {
                Ok(ours) => publish.extend(ours),
                Err(e) => {
                    tracing::warn!(error = %e, "could not keep the shared sandboxes; trying again");
                    tenants.unshared(publish);
                    return;
                }
            }
            self.set_seen(position.clone());
        }
        if !publish.is_empty() {
            self.write(tenants, publish, position).await;
        }
    }

    /// Publishes what changed here.
    pub(crate) async fn publish(&self, tenants: &Tenants) {
        let _turn = self.turn.lock().await;
        let dirty = tenants.take_dirty();
        if !dirty.is_empty() {
            let before = self.seen();
            self.write(tenants, dirty, before).await;
        }
    }

    async fn write(&self, tenants: &Tenants, mut touched: Vec<Touched>, before: Seen) {
        touched.sort_by_key(Touched::field);
        touched.dedup();
        let mut inv = self.script.key(RECORDS_KEY);
        inv.key(REVS_KEY).key(SEQ_KEY).key(EPOCH_KEY);
        inv.arg(crate::secret::token("epoch").unwrap_or_else(|_| "epoch".to_owned()));
        for t in &touched {
            let Some(record) = tenants.shared(t) else {
                continue;
            };
            let Ok(json) = serde_json::to_string(&record) else {
                continue;
            };
            inv.arg(t.field()).arg(record.rev()).arg(json);
        }
        let mut conn = self.conn.clone();
        match conn.invoke::<(String, String)>(&inv).await {
            Ok((epoch, seq)) => {
                // Only our own write moved the sequence: nothing new to read.
                let ours = before.as_ref().is_some_and(|(e, s)| {
                    *e == epoch && s.parse::<u64>().ok().map(|n| n + 1) == seq.parse().ok()
                });
                if ours || before.as_ref() == Some(&(epoch.clone(), seq.clone())) {
                    self.set_seen(Some((epoch, seq)));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not share the sandboxes through Redis; trying again");
                tenants.unshared(touched);
            }
        }
    }

    /// Follows the shared state while `tenants` is in use.
    pub(crate) fn follow(self: &Arc<Self>, tenants: Tenants) {
        let me = Arc::clone(self);
        let alive = tenants.alive();
        drop(tenants);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let Some(tenants) = Tenants::upgrade(&alive) else {
                    break;
                };
                me.pull(&tenants).await;
            }
        });
    }
}
