//! Sandboxes, keys and limits shared by every instance on one Redis (standalone or Cluster: both
//! keys carry the `{tenants}` hash tag, so they live in one slot): a writer publishes the whole
//! state and bumps a version; every instance polls the version (every 250 ms) and adopts a newer
//! state. Buckets are shared by the Redis store itself; this is the rest.
//!
//! A writer first adopts the latest shared state, then changes it; two instances changing
//! sandboxes within the same poll interval may still lose one change (last writer wins).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, RedisResult};

use crate::tenants::Tenants;

const DATA_KEY: &str = "apistend:{tenants}:data";
const VERSION_KEY: &str = "apistend:{tenants}:version";

#[derive(Clone)]
enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Conn {
    async fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> RedisResult<T> {
        let fut = async {
            match self {
                Conn::Single(c) => cmd.query_async(c).await,
                Conn::Cluster(c) => cmd.query_async(c).await,
            }
        };
        tokio::time::timeout(Duration::from_secs(2), fut)
            .await
            .unwrap_or_else(|_| {
                Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "Redis did not answer within 2 s",
                )))
            })
    }
}

pub(crate) struct TenantSync {
    conn: Conn,
    seen: AtomicI64,
}

impl TenantSync {
    /// Connects to the Redis of `url`; `None` (with a warning) for a Redis that does not answer,
    /// in which case each instance keeps its own sandboxes.
    pub(crate) async fn connect(url: &str) -> Option<Arc<Self>> {
        let config = apistend_limiter::RedisConfig::from_url(url).ok()?;
        let connecting = async {
            if config.cluster {
                let client = redis::cluster::ClusterClientBuilder::new(config.nodes.clone())
                    .connection_timeout(Duration::from_secs(2))
                    .response_timeout(Duration::from_secs(2))
                    .build()?;
                client.get_async_connection().await.map(Conn::Cluster)
            } else {
                let client = redis::Client::open(url)?;
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
                seen: AtomicI64::new(0),
            })),
            _ => {
                tracing::warn!(
                    "Redis does not answer: this instance keeps its own sandboxes until restarted with Redis up"
                );
                None
            }
        }
    }

    /// Adopts the shared state if there is one; returns whether there was.
    pub(crate) async fn pull(&self, tenants: &Tenants) -> bool {
        let mut conn = self.conn.clone();
        let Ok(Some(version)) = conn
            .query::<Option<i64>>(redis::cmd("GET").arg(VERSION_KEY))
            .await
        else {
            return false;
        };
        if version <= self.seen.load(Ordering::Relaxed) {
            return true;
        }
        let Ok(Some(text)) = conn
            .query::<Option<String>>(redis::cmd("GET").arg(DATA_KEY))
            .await
        else {
            return false;
        };
        match tenants.replace_from_json(&text) {
            Ok(()) => {
                self.seen.store(version, Ordering::Relaxed);
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "ignoring a shared state this instance cannot read");
                false
            }
        }
    }

    /// Publishes this instance's state as the shared one.
    pub(crate) async fn publish(&self, tenants: &Tenants) {
        let Ok(text) = tenants.to_json() else { return };
        let mut conn = self.conn.clone();
        let result: redis::RedisResult<i64> = async {
            conn.query::<()>(redis::cmd("SET").arg(DATA_KEY).arg(text))
                .await?;
            conn.query(redis::cmd("INCR").arg(VERSION_KEY)).await
        }
        .await;
        match result {
            Ok(v) => self.seen.store(v, Ordering::Relaxed),
            Err(e) => {
                tracing::warn!(error = %e, "could not share the sandboxes through Redis; other instances will not see this change yet");
            }
        }
    }

    /// Follows the shared state until the runtime stops.
    pub(crate) fn follow(self: &Arc<Self>, tenants: Tenants) {
        let me = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                me.pull(&tenants).await;
            }
        });
    }
}
