//! Lockouts counted across instances through Redis. A rejection of an owner of a service with a
//! lockout runs one script: it adds the rejection to the owner's window (a sorted set), drops
//! those older than the window, and when the window holds `after` of them sets the lock — a
//! member of one sorted set of every lock, scored by when it ends. Every instance reads that set
//! every 250 ms into its memory, so a request asks Redis nothing. A bucket reset removes the
//! owner's lock and window. Every key carries the `{lockouts}` hash tag: one slot on a Cluster.

use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::{Catalog, Lockout, ServiceId};
use redis::RedisResult;

use super::local::{Lockouts, Remote};
use crate::sync::Conn;

/// Every lock: member `service owner` (a newline between), score its end in Unix seconds.
const ACTIVE_KEY: &str = "apistend:{lockouts}:active";

/// KEYS: the owner's window, the locks. ARGV: now, within_secs, after, for_secs, member, a
/// unique id of this rejection. Returns {end, 1} when this rejection sets the lock, {end, 0}
/// when one is set already, else nil.
const REJECT: &str = r"
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local held = redis.call('ZSCORE', KEYS[2], ARGV[5])
if held then return {held, 0} end
redis.call('ZADD', KEYS[1], now, ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 1000))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local ends = now + tonumber(ARGV[4])
  redis.call('ZADD', KEYS[2], ends, ARGV[5])
  redis.call('DEL', KEYS[1])
  return {tostring(ends), 1}
end
return false
";

/// The shared count of rejections and the shared locks.
pub(crate) struct SharedLockouts {
    conn: Conn,
    reject: redis::Script,
}

impl std::fmt::Debug for SharedLockouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLockouts").finish_non_exhaustive()
    }
}

fn member(service: ServiceId, owner: &str) -> String {
    format!("{service}\n{owner}")
}

fn window_key(member: &str) -> String {
    format!("apistend:{{lockouts}}:window:{member}")
}

impl SharedLockouts {
    pub(crate) fn new(conn: Conn) -> Self {
        Self {
            conn,
            reject: redis::Script::new(REJECT),
        }
    }

    /// Counts a rejection of `owner` at `now`; the end of its lock when one is in force, and
    /// whether this rejection set it.
    ///
    /// # Errors
    /// Redis' (the caller counts locally instead).
    pub(crate) async fn rejected(
        &self,
        service: ServiceId,
        owner: &str,
        rule: &Lockout,
        now: f64,
    ) -> RedisResult<Option<(f64, bool)>> {
        let m = member(service, owner);
        let mut inv = self.reject.key(window_key(&m));
        inv.key(ACTIVE_KEY)
            .arg(now)
            .arg(rule.within_secs)
            .arg(rule.after)
            .arg(rule.for_secs)
            .arg(&m)
            .arg(crate::secret::token("r").unwrap_or_else(|_| now.to_string()));
        let ends: Option<(String, u8)> = self.conn.clone().invoke(&inv).await?;
        Ok(ends.and_then(|(e, set)| Some((e.parse().ok()?, set == 1))))
    }

    /// Removes `owner`'s lock of `service` and its window.
    ///
    /// # Errors
    /// Redis'.
    pub(crate) async fn clear(&self, service: ServiceId, owner: &str) -> RedisResult<()> {
        let m = member(service, owner);
        let mut pipe = redis::pipe();
        pipe.cmd("ZREM").arg(ACTIVE_KEY).arg(&m).ignore();
        pipe.cmd("DEL").arg(window_key(&m)).ignore();
        self.conn.clone().pipeline::<()>(&pipe).await
    }

    /// The locks in force at `now`, by service and owner.
    async fn active(&self, catalog: &Catalog, now: f64) -> RedisResult<Remote> {
        let rows: Vec<(String, f64)> = self
            .conn
            .clone()
            .query(
                redis::cmd("ZRANGEBYSCORE")
                    .arg(ACTIVE_KEY)
                    .arg(format!("({now}"))
                    .arg("+inf")
                    .arg("WITHSCORES"),
            )
            .await?;
        let mut out = Remote::default();
        for (m, until) in rows {
            let Some((service, owner)) = m.split_once('\n') else {
                continue;
            };
            let Ok(id) = catalog.service_id(service) else {
                continue;
            };
            out.entry(id).or_default().insert(owner.to_owned(), until);
        }
        Ok(out)
    }

    /// Follows the shared locks into `lockouts` every 250 ms while `lockouts` is in use.
    pub(crate) fn follow(self: &Arc<Self>, lockouts: &Arc<Lockouts>, catalog: Arc<Catalog>) {
        let me = Arc::clone(self);
        let held = Arc::downgrade(lockouts);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let Some(lockouts) = held.upgrade() else {
                    break;
                };
                match me
                    .active(&catalog, apistend_answers::clock::unix_now())
                    .await
                {
                    Ok(locks) => lockouts.follow(locks),
                    // Redis away: keep the last locks; they end when they end.
                    Err(e) => tracing::debug!(error = %e, "could not read the shared lockouts"),
                }
            }
        });
    }
}
