//! Sandboxes, keys and limits shared by every instance on one Redis: a writer publishes the whole
//! state and bumps a version; every instance polls the version (every 250 ms) and adopts a newer
//! state. Buckets are shared by the Redis store itself; this is the rest.
//!
//! Last writer wins: two instances changing sandboxes in the same instant may lose one change.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::ConnectionManager;

use crate::tenants::Tenants;

const DATA_KEY: &str = "apistend:{tenants}:data";
const VERSION_KEY: &str = "apistend:{tenants}:version";

pub(crate) struct TenantSync {
    conn: ConnectionManager,
    seen: AtomicI64,
}

impl TenantSync {
    /// Connects to a standalone Redis; `None` (with a warning) for a Cluster URL or a Redis that
    /// does not answer, in which case each instance keeps its own sandboxes.
    pub(crate) async fn connect(url: &str) -> Option<Arc<Self>> {
        if url.starts_with("redis+cluster://") {
            tracing::warn!(
                "sandboxes and keys are shared through a standalone Redis only; on a Cluster each instance keeps its own (buckets are shared)"
            );
            return None;
        }
        let client = redis::Client::open(url).ok()?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)));
        match tokio::time::timeout(
            Duration::from_secs(3),
            ConnectionManager::new_with_config(client, config),
        )
        .await
        {
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
        let Ok(Some(version)) = conn.get::<_, Option<i64>>(VERSION_KEY).await else {
            return false;
        };
        if version <= self.seen.load(Ordering::Relaxed) {
            return true;
        }
        let Ok(Some(text)) = conn.get::<_, Option<String>>(DATA_KEY).await else {
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
            conn.set::<_, _, ()>(DATA_KEY, text).await?;
            conn.incr(VERSION_KEY, 1).await
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
