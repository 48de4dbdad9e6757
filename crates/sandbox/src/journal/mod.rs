//! The request journal: every request a sandbox's keys make, with its answer and the
//! sandbox's decision, for a test to ask afterwards what arrived (the management API's
//! `…/requests`) and how its client behaved (`…/conduct`).
//!
//! - [`entry`]: a request as the pipeline saw it (made on the request path, cheaply: its heads
//!   as text, [`head`], and the start of its body and a short answer's, in one buffer);
//! - [`record`]: as it is shown (secrets masked by [`mask`], operation and group named);
//! - [`ring`]: this instance's memory, within both bounds, a [`log`] a sandbox; [`shared`]:
//!   the Redis every instance shares (with `--redis`), written in batches off the request path;
//! - [`filter`]: which requests a question is about; [`conduct`]: the report on each key;
//!   [`touches`]: the levels requests left their buckets at (the dashboard's order and history);
//!   [`tally`]: the conduct of every sandbox's keys, summed for the metrics.

pub(crate) mod conduct;
pub(crate) mod entry;
mod error;
pub(crate) mod filter;
pub(crate) mod head;
mod log;
mod mask;
pub(crate) mod record;
mod ring;
mod shared;
pub(crate) mod tally;
mod touches;

use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::Catalog;
use tokio::sync::Notify;

pub(crate) use crate::config::JournalBounds as Bounds;
pub(crate) use entry::{Entry, Filling, Refused};
pub(crate) use error::JournalError;

pub(crate) use filter::Filter;
pub(crate) use record::Record;
pub(crate) use tally::Tally;
pub(crate) use touches::Touch;

/// Where the journal lives.
enum Store {
    /// Boxed: the store of every sandbox's journal in this process, one of it.
    Memory(Box<ring::Ring>),
    Redis(shared::Shared),
}

/// The request journal of every sandbox.
pub(crate) struct Journal {
    bounds: Bounds,
    store: Store,
    /// Names this instance's records: `INSTANCE-N`.
    instance: String,
    catalog: Arc<Catalog>,
    /// Woken on every request kept while a wait is on (the waits of this instance's memory
    /// journal).
    arrived: Notify,
    /// Waits on: with none, a request kept wakes nobody (and costs no lock for it).
    waiting: std::sync::atomic::AtomicUsize,
    /// The conduct tallied for the metrics, by sandbox.
    tallied: tally::Cache,
}

/// How often a wait reads a journal kept in Redis again.
const POLL: Duration = Duration::from_millis(25);

/// The shortest time between two reads of a wait's journal.
const READ_EVERY: Duration = Duration::from_millis(5);

impl Journal {
    /// A journal in this instance's memory.
    pub(crate) fn memory(bounds: Bounds, catalog: Arc<Catalog>) -> Self {
        Self {
            bounds,
            store: Store::Memory(Box::new(ring::Ring::new(bounds))),
            instance: instance(),
            catalog,
            arrived: Notify::new(),
            waiting: std::sync::atomic::AtomicUsize::new(0),
            tallied: tally::Cache::default(),
        }
    }

    /// A journal in the Redis of `conn`, shared by every instance.
    pub(crate) fn redis(bounds: Bounds, catalog: Arc<Catalog>, conn: crate::sync::Conn) -> Self {
        let instance = instance();
        let shared = shared::Shared::new(conn, bounds, Arc::clone(&catalog), instance.clone());
        Self {
            bounds,
            store: Store::Redis(shared),
            instance,
            catalog,
            arrived: Notify::new(),
            waiting: std::sync::atomic::AtomicUsize::new(0),
            tallied: tally::Cache::default(),
        }
    }

    /// Whether any request is kept (a bound of 0 requests keeps none).
    pub(crate) fn on(&self) -> bool {
        self.bounds.requests > 0
    }

    /// The most bytes of a body kept.
    pub(crate) fn body_bytes(&self) -> usize {
        self.bounds.body_bytes
    }

    /// A slot for a request, to fill and [`push`](Self::push): in memory, mostly the slot of a
    /// request a busy sandbox's bound let go of (no allocation).
    pub(crate) fn slot(&self) -> Box<Entry> {
        match &self.store {
            Store::Memory(r) => r.slot(),
            Store::Redis(_) => Entry::empty(),
        }
    }

    /// Keeps `entry`.
    pub(crate) fn push(&self, entry: Box<Entry>) {
        match &self.store {
            Store::Memory(r) => {
                r.push(entry);
                // Sequentially consistent with the wait's count: a wait that started after this
                // load reads the request kept above.
                if self.waiting.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                    self.arrived.notify_waiters();
                }
            }
            Store::Redis(s) => s.push(entry),
        }
    }

    /// `sandbox`'s requests, oldest first.
    ///
    /// # Errors
    /// A shared journal whose Redis does not answer.
    pub(crate) async fn records(&self, sandbox: &str) -> Result<Vec<Record>, JournalError> {
        match &self.store {
            Store::Memory(r) => Ok(r.map(sandbox, |seq, e| {
                Record::of(e, format!("{}-{seq}", self.instance), &self.catalog)
            })),
            Store::Redis(s) => s.of(sandbox).await,
        }
    }

    /// The conduct of every sandbox's keys, tallied for the metrics ([`tally`]): a sandbox's
    /// report is made again only when its requests changed. `sandboxes` lists them for a
    /// journal in Redis (one in memory knows its own).
    ///
    /// # Errors
    /// A shared journal whose Redis does not answer.
    pub(crate) async fn tally(
        &self,
        sandboxes: impl FnOnce() -> Vec<String>,
    ) -> Result<Tally, JournalError> {
        let mut all = Tally::default();
        match &self.store {
            Store::Memory(r) => {
                let held = r.sandboxes();
                for s in &held {
                    let version = r.version(s);
                    let t = self.tallied.get(s, version).unwrap_or_else(|| {
                        let brief = r.map(s, |_, e| Record::brief(e, &self.catalog));
                        let t = Tally::of(&conduct::report(&brief));
                        self.tallied.put(Arc::clone(s), version, t.clone());
                        t
                    });
                    all.add(&t);
                }
                self.tallied.retain(&held);
            }
            Store::Redis(shared) => {
                if let Some(t) = self.tallied.shared() {
                    return Ok(t);
                }
                for s in sandboxes() {
                    all.add(&Tally::of(&conduct::report(&shared.of(&s).await?)));
                }
                self.tallied.put_shared(all.clone());
            }
        }
        Ok(all)
    }

    /// `sandbox`'s requests since `since_ms` that reached a bucket, oldest first, as the marks
    /// they left.
    ///
    /// # Errors
    /// A shared journal whose Redis does not answer.
    pub(crate) async fn touches(
        &self,
        sandbox: &str,
        since_ms: u64,
    ) -> Result<Vec<Touch>, JournalError> {
        Ok(match &self.store {
            Store::Memory(r) => r
                .map(sandbox, |_, e| touches::of_entry(e, since_ms))
                .into_iter()
                .flatten()
                .collect(),
            Store::Redis(s) => touches::of_records(&s.of(sandbox).await?, &self.catalog, since_ms),
        })
    }

    /// Forgets `sandbox`'s requests.
    ///
    /// # Errors
    /// A shared journal whose Redis does not answer.
    pub(crate) async fn clear(&self, sandbox: &str) -> Result<(), JournalError> {
        match &self.store {
            Store::Memory(r) => {
                r.clear(sandbox);
                Ok(())
            }
            Store::Redis(s) => s.clear(sandbox).await,
        }
    }

    /// Waits until `sandbox` has at least `count` requests `filter` matches, or `timeout`
    /// passed; gives how many it has then.
    ///
    /// # Errors
    /// A shared journal whose Redis does not answer.
    pub(crate) async fn wait(
        &self,
        sandbox: &str,
        filter: &Filter,
        count: usize,
        timeout: Duration,
    ) -> Result<usize, JournalError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let _on = Waiting::on(&self.waiting);
        loop {
            // Asked for before the count is read: a request kept in between wakes it.
            let arrived = self.arrived.notified();
            let n = self.count(sandbox, filter).await?;
            if n >= count || tokio::time::Instant::now() >= deadline {
                return Ok(n);
            }
            let read = tokio::time::Instant::now();
            let next = match self.store {
                Store::Memory(_) => deadline,
                Store::Redis(_) => (read + POLL).min(deadline),
            };
            tokio::select! {
                () = arrived => {}
                () = tokio::time::sleep_until(next) => {}
            }
            // A count renders the sandbox's records: a busy sandbox wakes a wait on every
            // request, and is read again at most every `READ_EVERY`.
            tokio::time::sleep_until((read + READ_EVERY).min(deadline)).await;
        }
    }

    /// How many of `sandbox`'s requests `filter` matches.
    ///
    /// # Errors
    /// A shared journal whose Redis does not answer.
    pub(crate) async fn count(
        &self,
        sandbox: &str,
        filter: &Filter,
    ) -> Result<usize, JournalError> {
        Ok(self
            .records(sandbox)
            .await?
            .iter()
            .filter(|r| filter.matches(r))
            .count())
    }

    /// What the journal holds in this instance, for the metrics.
    pub(crate) fn size(&self) -> Size {
        match &self.store {
            Store::Memory(r) => {
                let (requests, bytes) = r.size();
                Size {
                    requests,
                    bytes,
                    lost: 0,
                }
            }
            Store::Redis(s) => Size {
                lost: s.lost(),
                ..Size::default()
            },
        }
    }
}

/// What the journal holds in this instance.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Size {
    /// Requests kept in memory.
    pub(crate) requests: usize,
    /// Their bytes.
    pub(crate) bytes: usize,
    /// Requests lost on the way to Redis (its queue full, or Redis refusing a batch).
    pub(crate) lost: u64,
}

/// A wait on, counted while it lasts.
struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Waiting<'a> {
    fn on(n: &'a std::sync::atomic::AtomicUsize) -> Self {
        n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(n)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A name for this instance's records: eight hex digits, new at every start.
fn instance() -> String {
    format!("{:08x}", fastrand::u32(..))
}
