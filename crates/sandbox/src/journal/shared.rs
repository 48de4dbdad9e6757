//! The journal in the Redis every instance shares: each sandbox's requests in one list
//! (`apistend:{j:SANDBOX}`, trimmed to [`Bounds::requests`]), written off the request path by
//! one task per instance in batches (what arrived while the last batch was written), so that
//! every instance lists every instance's requests. A full queue (Redis slower than the requests)
//! drops what it cannot take and counts it, rather than hold the requests up.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use apistend_catalog::Catalog;
use tokio::sync::{mpsc, oneshot};

use super::entry::Entry;
use super::error::JournalError;
use super::record::Record;
use crate::config::JournalBounds as Bounds;
use crate::sync::Conn;

/// Requests waiting to be written, at most: beyond, dropped and counted.
const QUEUE: usize = 16_384;

/// Requests written in one batch at most.
const BATCH: usize = 512;

enum Msg {
    Entry(Box<Entry>),
    /// Answered once everything sent before it is written.
    Flush(oneshot::Sender<()>),
}

pub(crate) struct Shared {
    tx: mpsc::Sender<Msg>,
    conn: Conn,
    /// Requests dropped: the queue was full, or Redis refused the batch.
    lost: Arc<AtomicU64>,
}

fn key(sandbox: &str) -> String {
    format!("apistend:{{j:{sandbox}}}")
}

impl Shared {
    /// A journal in the Redis of `conn`; its records named `instance-N`.
    pub(crate) fn new(conn: Conn, bounds: Bounds, catalog: Arc<Catalog>, instance: String) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let lost = Arc::new(AtomicU64::new(0));
        let writer = Writer {
            conn: conn.clone(),
            bounds,
            catalog,
            instance,
            next: 0,
            lost: Arc::clone(&lost),
        };
        tokio::spawn(writer.run(rx));
        Self { tx, conn, lost }
    }

    /// Queues `entry` to be written.
    pub(crate) fn push(&self, entry: Box<Entry>) {
        if self.tx.try_send(Msg::Entry(entry)).is_err() {
            self.lost.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Returns once what this instance queued before is written (or given up).
    pub(crate) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// `sandbox`'s requests, every instance's, oldest first.
    pub(crate) async fn of(&self, sandbox: &str) -> Result<Vec<Record>, JournalError> {
        self.flush().await;
        let items: Vec<String> = self
            .conn
            .clone()
            .query(redis::cmd("LRANGE").arg(key(sandbox)).arg(0).arg(-1))
            .await
            .map_err(JournalError::unavailable)?;
        let mut out: Vec<Record> = items
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect();
        // Instances write in batches: their requests interleave by arrival.
        out.sort_by_key(|r| r.at_ms);
        Ok(out)
    }

    /// Forgets `sandbox`'s requests, every instance's.
    pub(crate) async fn clear(&self, sandbox: &str) -> Result<(), JournalError> {
        self.flush().await;
        self.conn
            .clone()
            .query::<()>(redis::cmd("DEL").arg(key(sandbox)))
            .await
            .map_err(JournalError::unavailable)
    }

    /// Requests this instance did not keep.
    pub(crate) fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }
}

/// The task that writes this instance's requests.
struct Writer {
    conn: Conn,
    bounds: Bounds,
    catalog: Arc<Catalog>,
    instance: String,
    next: u64,
    lost: Arc<AtomicU64>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Msg>) {
        let mut got = Vec::with_capacity(BATCH);
        while rx.recv_many(&mut got, BATCH).await > 0 {
            let mut by_sandbox: BTreeMap<Arc<str>, Vec<String>> = BTreeMap::new();
            let mut flushed = Vec::new();
            for m in got.drain(..) {
                match m {
                    Msg::Entry(e) => {
                        let id = format!("{}-{}", self.instance, self.next);
                        self.next += 1;
                        let r = Record::of(&e, id, &self.catalog);
                        if let Ok(t) = serde_json::to_string(&r) {
                            by_sandbox
                                .entry(Arc::clone(&e.sandbox))
                                .or_default()
                                .push(t);
                        }
                    }
                    Msg::Flush(done) => flushed.push(done),
                }
            }
            for (sandbox, items) in by_sandbox {
                self.write(&sandbox, &items).await;
            }
            for done in flushed {
                let _ = done.send(());
            }
        }
    }

    /// One sandbox's part of a batch: appended, the list trimmed to its bound (one key: one
    /// slot of a Cluster).
    async fn write(&mut self, sandbox: &str, items: &[String]) {
        let k = key(sandbox);
        let keep = i64::try_from(self.bounds.requests).unwrap_or(i64::MAX);
        let mut pipe = redis::pipe();
        pipe.cmd("RPUSH").arg(&k).arg(items).ignore();
        pipe.cmd("LTRIM").arg(&k).arg(-keep).arg(-1).ignore();
        if let Err(e) = self.conn.pipeline::<()>(&pipe).await {
            self.lost.fetch_add(items.len() as u64, Ordering::Relaxed);
            tracing::warn!(error = %e, sandbox, "the request journal could not be written to Redis");
        }
    }
}
