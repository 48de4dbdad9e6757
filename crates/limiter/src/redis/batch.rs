//! The decisions of concurrent callers in one script call: every item that arrives while earlier
//! calls are in flight goes into the next call for its slot. The per-call cost in Redis (parsing,
//! the script's set-up, `TIME`, the reply) is then paid once per batch, not per request, which is
//! what lets a Redis that shares the sandbox's core keep up with it.
//!
//! On a Cluster the keys of one call must share a slot, so queued items are grouped by their hash
//! tag (one tenant's buckets share it), a call per group.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use redis::{RedisError, RedisResult, Script};
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::algo::Op;
use crate::quota::Algorithm;
use crate::quota::Quota;

use super::conn::Conn;

/// Items in one call at most (a bound on the call's size and the script's running time, during
/// which Redis serves nothing else).
const MAX_ITEMS: usize = 64;
/// Calls in flight at once at most. The next call goes out when none is in flight, or sooner
/// when a full call's worth of items waits: one call at a time makes each as large as the load
/// is deep (at 32 connections about 26 items with [`gather`], where two at a time made about
/// 10), and what a call costs Redis and both kernels (parsing, the script's set-up, a wake-up
/// each side, the reply) is paid once for all of them.
const IN_FLIGHT: u32 = 4;
/// Items waiting for a call: callers beyond it wait to enqueue (their own timeout still runs).
const QUEUE: usize = 4096;

/// One bucket of an item, in the script's terms.
#[derive(Debug, Clone)]
pub(super) struct Bucket {
    /// The full key (prefix included).
    pub(super) key: String,
    algo: &'static str,
    burst: u32,
    interval: u64,
    arg: u64,
    margin: u64,
}

/// One operation on one or more buckets (all or nothing when it takes).
#[derive(Debug, Clone)]
pub(super) struct Item {
    op: &'static str,
    pub(super) buckets: Vec<Bucket>,
}

impl Item {
    /// `op` on each of `buckets` (full keys with their quotas). A taking op applies to all of
    /// them or none; its arguments (tokens, margin) are per bucket.
    pub(super) fn new(op: Op, buckets: impl IntoIterator<Item = (String, Quota, Op)>) -> Self {
        let code = match op {
            Op::Acquire(0) | Op::Charge(0) | Op::Peek => "p",
            Op::Acquire(_) => "a",
            Op::Settled(..) => "s",
            Op::Penalize(_) => "x",
            Op::Refund(_) => "r",
            Op::Align(_) => "l",
            Op::Charge(_) => "c",
        };
        let buckets = buckets
            .into_iter()
            .map(|(key, quota, op)| {
                let (arg, margin) = match op {
                    Op::Acquire(n) | Op::Refund(n) | Op::Align(n) | Op::Charge(n) => {
                        (u64::from(n), 0)
                    }
                    Op::Settled(n, m) => (u64::from(n), m),
                    Op::Penalize(d) => (d, 0),
                    Op::Peek => (0, 0),
                };
                Bucket {
                    key,
                    algo: match quota.algorithm() {
                        Algorithm::Gcra => "g",
                        Algorithm::FixedWindow => "f",
                    },
                    burst: quota.burst(),
                    interval: quota.interval_micros(),
                    arg,
                    margin,
                }
            })
            .collect();
        Self { op: code, buckets }
    }
}

/// The script's answer to one item: which bucket (0-based) and its
/// `[allowed, remaining, retry_us, reset_us]`.
pub(super) type Reply = (usize, [i64; 4]);

/// One script call for `items`, `now` being the caller's clock (`""`: Redis `TIME`).
pub(super) async fn call(
    conn: &mut impl redis::aio::ConnectionLike,
    script: &Script,
    items: &[&Item],
    now: &str,
    slack_ms: &str,
) -> RedisResult<Vec<Reply>> {
    let mut invocation = script.prepare_invoke();
    invocation.arg(now).arg(slack_ms);
    for item in items {
        invocation.arg(item.op).arg(item.buckets.len());
        for b in &item.buckets {
            invocation
                .key(&b.key)
                .arg(b.algo)
                .arg(b.burst)
                .arg(b.interval)
                .arg(b.arg)
                .arg(b.margin);
        }
    }
    let flat: Vec<i64> = invocation.invoke_async(conn).await?;
    if flat.len() != items.len() * 5 {
        return Err(RedisError::from((
            redis::ErrorKind::Client,
            "unexpected reply from the rate-limit script",
            format!("{} values for {} items", flat.len(), items.len()),
        )));
    }
    Ok(flat
        .chunks_exact(5)
        .map(|c| match *c {
            [which, allowed, remaining, retry, reset] => (
                usize::try_from(which - 1).unwrap_or(0),
                [allowed, remaining, retry, reset],
            ),
            // chunks_exact(5) yields nothing else.
            _ => (0, [0; 4]),
        })
        .collect())
}

/// The hash tag of `key` (the part between the first `{` and the next `}`, when not empty), or
/// the key: keys with the same one are on the same Cluster slot.
pub(super) fn hash_tag(key: &str) -> &str {
    key.find('{')
        .and_then(|open| {
            let rest = key.get(open + 1..)?;
            let close = rest.find('}')?;
            rest.get(..close).filter(|t| !t.is_empty())
        })
        .unwrap_or(key)
}

/// An item, the connection to send it on (a Cluster's is made lazily, by the store) and where
/// its answer goes.
type Job = (Item, Conn, oneshot::Sender<RedisResult<Reply>>);

/// What a batch call needs besides its items.
#[derive(Clone)]
pub(super) struct Caller {
    pub(super) script: Arc<Script>,
    /// The caller's clock as the script's `now`, or `None` for Redis `TIME`.
    pub(super) now: Option<Arc<dyn crate::clock::Clock>>,
    pub(super) slack_ms: Arc<str>,
}

/// The queue of items for the next calls, and the task that makes them. The task holds no
/// reference to the store: it ends when the store (the last sender) is dropped, or with the
/// runtime it was spawned on — then the next item spawns it again on the caller's runtime.
pub(super) struct Batcher {
    caller: Caller,
    queue: Mutex<Option<mpsc::Sender<Job>>>,
}

impl Batcher {
    pub(super) fn new(caller: Caller) -> Self {
        Self {
            caller,
            queue: Mutex::new(None),
        }
    }

    /// Decides `item` in the next call for its slot, sent on `conn`.
    pub(super) async fn decide(&self, item: Item, conn: Conn) -> RedisResult<Reply> {
        let (tx, rx) = oneshot::channel();
        let queue = self.queue();
        queue
            .send((item, conn, tx))
            .await
            .map_err(|_| gone("the batching task has stopped"))?;
        rx.await
            .map_err(|_| gone("the batching task dropped the decision"))?
    }

    fn queue(&self) -> mpsc::Sender<Job> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        match queue.as_ref() {
            Some(q) if !q.is_closed() => q.clone(),
            _ => {
                let (tx, rx) = mpsc::channel(QUEUE);
                tokio::spawn(drive(rx, self.caller.clone()));
                *queue = Some(tx.clone());
                tx
            }
        }
    }
}

/// Sends what is queued, up to [`MAX_ITEMS`] a call, whenever no call is in flight (or a full
/// call's worth waits and fewer than [`IN_FLIGHT`] are out); a Cluster's items go in one call
/// per slot.
async fn drive(mut rx: mpsc::Receiver<Job>, caller: Caller) {
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT as usize));
    while let Some(first) = rx.recv().await {
        // Never more than MAX_ITEMS: the queue is read only while there is room.
        let mut jobs = vec![first];
        take_queued(&mut rx, &mut jobs);
        let mut open = true;
        let permit = loop {
            if jobs.len() >= MAX_ITEMS || !open {
                match Arc::clone(&in_flight).acquire_owned().await {
                    Ok(p) => break p,
                    Err(_) => return,
                }
            }
            tokio::select! {
                idle = Arc::clone(&in_flight).acquire_many_owned(IN_FLIGHT) => {
                    // Nothing is in flight: this call goes out with one of the permits, the
                    // others go back. (Dropping them all and taking one again could lose the
                    // race to a Cluster slot's call waiting for one, and drop the queue.)
                    let Ok(mut idle) = idle else { return };
                    match idle.split(1) {
                        Some(p) => break p,
                        None => return,
                    }
                }
                job = rx.recv() => match job {
                    Some(job) => {
                        jobs.push(job);
                        take_queued(&mut rx, &mut jobs);
                    }
                    // The store is gone: what is queued still goes, then the loop ends.
                    None => open = false,
                },
            }
        };
        gather(&mut rx, &mut jobs).await;
        let cluster = jobs
            .iter()
            .any(|(_, conn, _)| matches!(conn, Conn::Cluster(_)));
        if !cluster {
            tokio::spawn(send(jobs, caller.clone(), permit));
            continue;
        }
        let mut by_slot: HashMap<String, Vec<Job>> = HashMap::new();
        for job in jobs {
            let tag = job.0.buckets.first().map_or("", |b| hash_tag(&b.key));
            by_slot.entry(tag.to_owned()).or_default().push(job);
        }
        // The permit covers the first group; the others wait for theirs in their own tasks.
        let mut permit = Some(permit);
        for (_, group) in by_slot {
            let caller = caller.clone();
            let semaphore = Arc::clone(&in_flight);
            let held = permit.take();
            tokio::spawn(async move {
                let permit = match held {
                    Some(p) => p,
                    None => match semaphore.acquire_owned().await {
                        Ok(p) => p,
                        Err(_) => return,
                    },
                };
                send(group, caller, permit).await;
            });
        }
    }
}

/// Lets the tasks that are ready to run enqueue their items before a call goes out: a yield
/// lets every ready task run and the runtime look for I/O (requests that have arrived), and
/// another follows while the last one brought more. A call that goes out with a few items when
/// more were about to come costs Redis and both kernels a round trip each; under light load
/// the first yield brings nothing and the call goes at once.
async fn gather(rx: &mut mpsc::Receiver<Job>, jobs: &mut Vec<Job>) {
    while jobs.len() < MAX_ITEMS {
        let before = jobs.len();
        tokio::task::yield_now().await;
        take_queued(rx, jobs);
        if jobs.len() == before {
            break;
        }
    }
}

/// Moves what is queued into `jobs`, up to [`MAX_ITEMS`].
fn take_queued(rx: &mut mpsc::Receiver<Job>, jobs: &mut Vec<Job>) {
    while jobs.len() < MAX_ITEMS {
        match rx.try_recv() {
            Ok(job) => jobs.push(job),
            Err(_) => break,
        }
    }
}

/// One call for `jobs` (on the first one's connection), its answers handed out.
async fn send(jobs: Vec<Job>, caller: Caller, permit: tokio::sync::OwnedSemaphorePermit) {
    let now = caller
        .now
        .as_ref()
        .map_or_else(String::new, |c| c.now().to_string());
    let items: Vec<&Item> = jobs.iter().map(|(item, _, _)| item).collect();
    let result = match jobs.first().map(|(_, conn, _)| conn.clone()) {
        Some(Conn::Single(mut c)) => {
            call(&mut c, &caller.script, &items, &now, &caller.slack_ms).await
        }
        Some(Conn::Cluster(mut c)) => {
            call(&mut c, &caller.script, &items, &now, &caller.slack_ms).await
        }
        None => Ok(Vec::new()),
    };
    drop(permit);
    match result {
        Ok(replies) => {
            for ((_, _, tx), reply) in jobs.into_iter().zip(replies) {
                // A caller that gave up (its timeout) no longer listens.
                let _ = tx.send(Ok(reply));
            }
        }
        Err(e) => {
            for (_, _, tx) in jobs {
                let _ = tx.send(Err(e.clone()));
            }
        }
    }
}

fn gone(what: &'static str) -> RedisError {
    RedisError::from(std::io::Error::new(std::io::ErrorKind::BrokenPipe, what))
}

/// Whether every key hashes to one Cluster slot (has the same hash tag).
pub(super) fn one_slot(keys: &[String]) -> bool {
    let mut tags = keys.iter().map(|k| hash_tag(k));
    let first = tags.next();
    tags.all(|t| Some(t) == first)
}
