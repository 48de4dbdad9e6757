//! Learned quotas in Redis, beside their buckets (`learned.lua`): read, and merged on write.

use std::time::Duration;

use super::RedisStore;
use super::conn::{Conn, store_error, timeout_error};
use crate::error::LimiterError;
use crate::learned::LearnedRecord;

/// A record as the script answers it: six fields, `None` for a missing one.
type Fields = Option<Vec<Option<String>>>;

impl RedisStore {
    /// The learned record of `key`'s bucket, if a process wrote one that has not run out.
    ///
    /// # Errors
    /// [`LimiterError::Store`] when Redis cannot answer (a learned quota is advice: no
    /// fallback decides instead).
    pub async fn learned(&self, key: &str) -> Result<Option<LearnedRecord>, LimiterError> {
        let fields = self.learned_call(key, &["r".to_owned()]).await?;
        Ok(fields.and_then(|f| parse(&f)))
    }

    /// Merges `record` into `key`'s learned record (the strictest bounds, the newer quota),
    /// which runs out `ttl` after; the merged record.
    ///
    /// # Errors
    /// As [`learned`](Self::learned).
    pub async fn merge_learned(
        &self,
        key: &str,
        record: &LearnedRecord,
        ttl: Duration,
    ) -> Result<LearnedRecord, LimiterError> {
        let opt = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
        let args = [
            "w".to_owned(),
            record.burst.to_string(),
            record.interval_us.to_string(),
            opt(record.upper),
            opt(record.lower),
            record.decided_ms.to_string(),
            u8::from(record.from_headers).to_string(),
            ttl.as_millis().max(1).to_string(),
        ];
        let fields = self.learned_call(key, &args).await?;
        Ok(fields.and_then(|f| parse(&f)).unwrap_or(*record))
    }

    async fn learned_call(&self, key: &str, args: &[String]) -> Result<Fields, LimiterError> {
        let mut conn = self.inner.connection.get().await?;
        let full = self.full_key(&format!("{key}:learned"));
        let mut invocation = self.inner.learned.key(full);
        for a in args {
            invocation.arg(a);
        }
        let fut = async {
            match &mut conn {
                Conn::Single(c) => invocation.invoke_async::<Fields>(c).await,
                Conn::Cluster(c) => invocation.invoke_async::<Fields>(c).await,
            }
        };
        match tokio::time::timeout(self.inner.config.timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(store_error(e)),
            Err(_) => Err(store_error(timeout_error())),
        }
    }
}

/// The record of the script's six fields; `None` when one it needs is missing or unreadable.
fn parse(f: &[Option<String>]) -> Option<LearnedRecord> {
    let field = |i: usize| f.get(i).cloned().flatten();
    let rate = |i: usize| field(i).and_then(|v| v.parse::<f64>().ok());
    Some(LearnedRecord {
        burst: field(0)?.parse().ok()?,
        interval_us: field(1)?.parse().ok()?,
        upper: rate(2),
        lower: rate(3),
        decided_ms: field(4)?.parse().ok()?,
        from_headers: field(5)? == "1",
    })
}
