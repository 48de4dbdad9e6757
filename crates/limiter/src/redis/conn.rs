//! The store's connection to Redis (standalone or Cluster), and what its errors are.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;

use super::config::RedisConfig;
use crate::clock::{Clock, SystemClock, micros};
use crate::error::LimiterError;

/// The store's name in metrics and errors.
pub(super) const STORE: &str = "redis";

/// A multiplexed connection (clones share it).
#[derive(Clone)]
pub(super) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

enum Topology {
    Single,
    Cluster(Box<redis::cluster::ClusterClient>),
}

/// The connection, and when the next attempt may be made.
pub(super) struct Connection {
    target: Topology,
    conn: RwLock<Option<Conn>>,
    connecting: tokio::sync::Mutex<()>,
    next_attempt: AtomicU64,
    wall: SystemClock,
    timeout: Duration,
    reconnect_after: Duration,
}

impl Connection {
    /// The connection of `config`; lazy: nothing is dialled yet.
    ///
    /// # Errors
    /// [`LimiterError::Config`] when the URLs cannot be parsed.
    pub(super) fn new(config: &RedisConfig) -> Result<Self, LimiterError> {
        let bad = |e: redis::RedisError| LimiterError::Config(format!("Redis URL: {e}"));
        let (target, conn) = if config.cluster {
            let client = redis::cluster::ClusterClientBuilder::new(config.nodes.clone())
                .connection_timeout(config.timeout)
                .response_timeout(config.timeout)
                .retries(1)
                .build()
                .map_err(bad)?;
            (Topology::Cluster(Box::new(client)), None)
        } else {
            let url = config
                .nodes
                .first()
                .ok_or_else(|| LimiterError::Config("no Redis URL".into()))?;
            let client = redis::Client::open(url.as_str()).map_err(bad)?;
            let cm_config = redis::aio::ConnectionManagerConfig::new()
                .set_connection_timeout(Some(config.timeout))
                .set_response_timeout(Some(config.timeout))
                .set_number_of_retries(1)
                .set_max_delay(Duration::from_millis(200));
            let manager =
                ConnectionManager::new_lazy_with_config(client, cm_config).map_err(bad)?;
            (Topology::Single, Some(Conn::Single(manager)))
        };
        Ok(Self {
            target,
            conn: RwLock::new(conn),
            connecting: tokio::sync::Mutex::new(()),
            next_attempt: AtomicU64::new(0),
            wall: SystemClock::new(),
            timeout: config.timeout,
            reconnect_after: config.reconnect_after,
        })
    }

    /// The connection made, if there is one.
    fn current(&self) -> Option<Conn> {
        self.conn
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A connection: the standalone one (which reconnects by itself), or the Cluster's, made
    /// on first use and again after a failure, at most once per `reconnect_after`.
    ///
    /// # Errors
    /// [`LimiterError::Store`] while no connection can be had.
    pub(super) async fn get(&self) -> Result<Conn, LimiterError> {
        if let Some(conn) = self.current() {
            return Ok(conn);
        }
        let Topology::Cluster(client) = &self.target else {
            return Err(store_error(not_connected()));
        };
        let now = self.wall.now();
        if now < self.next_attempt.load(Ordering::Relaxed) {
            return Err(store_error(not_connected()));
        }
        // One connection attempt at a time; the others decide by the policy meanwhile.
        let Ok(_guard) = self.connecting.try_lock() else {
            return Err(store_error(not_connected()));
        };
        if let Some(conn) = self.current() {
            return Ok(conn);
        }
        match tokio::time::timeout(self.timeout * 4, client.get_async_connection()).await {
            Ok(Ok(conn)) => {
                let conn = Conn::Cluster(conn);
                *self.conn.write().unwrap_or_else(PoisonError::into_inner) = Some(conn.clone());
                Ok(conn)
            }
            other => {
                self.next_attempt
                    .store(now + micros(self.reconnect_after), Ordering::Relaxed);
                Err(store_error(match other {
                    Ok(Err(e)) => e,
                    _ => timeout_error(),
                }))
            }
        }
    }
}

pub(super) fn store_error(e: redis::RedisError) -> LimiterError {
    LimiterError::Store {
        store: STORE,
        source: Box::new(e),
    }
}

pub(super) fn timeout_error() -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "Redis did not answer in time",
    ))
}

fn not_connected() -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "not connected to Redis (retrying)",
    ))
}

pub(super) fn error_kind(err: &LimiterError) -> &'static str {
    match err {
        LimiterError::Store { source, .. } => match source.downcast_ref::<redis::RedisError>() {
            Some(e) if e.is_timeout() => "timeout",
            Some(e) if e.is_io_error() || e.is_connection_dropped() => "connection",
            Some(_) => "response",
            None => "other",
        },
        _ => "other",
    }
}
