//! The journal in this instance's memory: each sandbox's requests in arrival order, at most
//! [`Bounds::requests`] of them, and all sandboxes' together within [`Bounds::bytes`], the
//! oldest request of any sandbox dropped first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::HashMap;

use super::entry::Entry;
use super::log::{Log, Spares, allocated};
use crate::config::JournalBounds as Bounds;

/// The journal of every sandbox in memory.
#[derive(Debug)]
pub(crate) struct Ring {
    bounds: Bounds,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Each sandbox's place in `logs`.
    places: HashMap<Arc<str>, u32>,
    /// The logs, by place (a place let go of is taken again), and whose each is.
    logs: Vec<Log>,
    names: Vec<Arc<str>>,
    free: Vec<u32>,
    /// The sandbox that kept a request last, and its place: a busy sandbox's next request finds
    /// its log without hashing its name.
    last: Option<(Arc<str>, u32)>,
    /// The oldest request of each log, as (number, place), least first: the byte budget drops
    /// the least. An entry is a lower bound, not kept up on the request path: a log's oldest
    /// let go of otherwise (its sandbox's bound, a clear) is looked up when its entry comes
    /// first, and the entry put back with the log's oldest now (numbers are never reused, so
    /// a place taken again by another sandbox is not mistaken for it). A request costs it
    /// nothing unless its log was empty.
    oldest: BinaryHeap<Reverse<(u64, u32)>>,
    /// The bytes of the logs (kept up as they change).
    weight: usize,
    /// The bytes of the tables as allocated (counted again when one grows).
    tables: usize,
    count: usize,
    next: u64,
    spares: Spares,
}

/// The requests a reader reads under the lock at a time.
const BATCH: usize = 64;

/// What the allocator holds besides the blocks it hands out, as a part of them: pages partly
/// filled and memory freed but kept for reuse, as a journal that keeps dropping its oldest
/// requests leaves them (a sixth: resident memory measured 13 % over the blocks counted, with
/// 1 000 sandboxes' journals at their budget, BENCHMARKS.md).
const ALLOCATOR_SHARE: usize = 6;

thread_local! {
    /// The slot this thread's last request was filled in: the next request here is filled in
    /// it (its lines still in the cache), then copied into its sandbox's log.
    static SLOT: std::cell::RefCell<Option<Box<Entry>>> = const { std::cell::RefCell::new(None) };
}

impl Ring {
    pub(crate) fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // What it guards is whole after every step: a panic elsewhere leaves it usable.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a request: the one this thread filled last (no lock, no allocation), else a
    /// new one.
    pub(crate) fn slot(&self) -> Box<Entry> {
        SLOT.with_borrow_mut(Option::take)
            .unwrap_or_else(Entry::empty)
    }

    /// Keeps a copy of `entry`; gives its number in this instance. The slot goes back to this
    /// thread for its next request.
    pub(crate) fn push(&self, mut entry: Box<Entry>) -> u64 {
        let seq = self.keep(&mut entry);
        SLOT.with_borrow_mut(|s| *s = Some(entry));
        seq
    }

    fn keep(&self, entry: &mut Entry) -> u64 {
        let mut g = self.lock();
        let inner = &mut *g;
        let seq = inner.next;
        inner.next += 1;
        if self.bounds.requests == 0 {
            return seq;
        }
        let place = inner.place(&entry.sandbox);
        let Some(log) = inner.logs.get_mut(place as usize) else {
            return seq;
        };
        let before = log.weight();
        let began = log.len() == 0;
        // At its bound, its oldest request is overwritten in place.
        if !log.push(seq, entry, self.bounds.requests, &mut inner.spares) {
            inner.count += 1;
        }
        inner.weight = inner.weight + log.weight() - before;
        if began {
            inner.began(place, seq);
        }
        while inner.bytes() > self.bounds.bytes {
            if inner.spares.bytes() > 0 {
                inner.spares.clear();
                continue;
            }
            if !inner.drop_oldest() {
                break;
            }
        }
        seq
    }

    /// What `f` makes of each request `sandbox` has, oldest first, given with its number: read
    /// a batch at a time under the lock (rendering a journal takes milliseconds, which would
    /// hold up every request), each batch from where the last one stopped; a request let go of
    /// meanwhile is not read.
    pub(crate) fn map<T>(&self, sandbox: &str, mut f: impl FnMut(u64, &Entry) -> T) -> Vec<T> {
        let mut out = Vec::new();
        let mut e = Entry::empty();
        let mut after = None;
        loop {
            let before = out.len();
            let mut last = None;
            match self.lock().log(sandbox) {
                Some(log) => log.map(&mut e, after, BATCH, &mut out, |n, e| {
                    last = Some(n);
                    f(n, e)
                }),
                None => return out,
            }
            if out.len() - before < BATCH {
                return out;
            }
            after = last;
        }
    }

    /// What tells whether `sandbox`'s requests changed: the numbers of its oldest and newest,
    /// and how many.
    pub(crate) fn version(&self, sandbox: &str) -> (u64, u64, usize) {
        let g = self.lock();
        g.log(sandbox).map_or((0, 0, 0), |l| {
            (l.front().unwrap_or(0), l.back().unwrap_or(0), l.len())
        })
    }

    /// The sandboxes that have requests here.
    pub(crate) fn sandboxes(&self) -> Vec<Arc<str>> {
        let g = self.lock();
        g.places
            .iter()
            .filter(|(_, p)| g.logs.get(**p as usize).is_some_and(|l| l.len() > 0))
            .map(|(s, _)| Arc::clone(s))
            .collect()
    }

    /// Forgets `sandbox`'s requests.
    pub(crate) fn clear(&self, sandbox: &str) {
        let mut g = self.lock();
        if let Some(p) = g.places.get(sandbox).copied() {
            g.let_go(p);
        }
    }

    /// Requests kept in all, and their bytes.
    pub(crate) fn size(&self) -> (usize, usize) {
        let g = self.lock();
        (g.count, g.bytes())
    }
}

impl Inner {
    /// The memory the journal makes the process hold: its logs, its tables, its spare chunks,
    /// and the allocator's share of them.
    fn bytes(&self) -> usize {
        let own = self.weight + self.tables + self.spares.bytes();
        own + own / ALLOCATOR_SHARE
    }

    /// Counts the tables again (one of them may have grown).
    fn count_tables(&mut self) {
        self.tables = allocated(self.places.capacity() * std::mem::size_of::<(Arc<str>, u32)>())
            + allocated(self.logs.capacity() * std::mem::size_of::<Log>())
            + allocated(self.names.capacity() * std::mem::size_of::<Arc<str>>())
            + allocated(self.free.capacity() * std::mem::size_of::<u32>())
            + allocated(self.oldest.capacity() * std::mem::size_of::<Reverse<(u64, u32)>>());
    }

    /// The log at place `p` was empty and holds request `seq` now: its oldest.
    fn began(&mut self, p: u32, seq: u64) {
        // Entries of logs emptied and begun again pile up: made again from the logs.
        if self.oldest.len() > 2 * self.logs.len() + 64 {
            let logs = self.logs.iter().enumerate();
            #[allow(clippy::cast_possible_truncation)] // far fewer sandboxes than 4 billion
            let fronts = logs.filter_map(|(q, l)| Some(Reverse((l.front()?, q as u32))));
            self.oldest = fronts.collect();
        } else {
            self.oldest.push(Reverse((seq, p)));
        }
        self.count_tables();
    }

    /// Drops the oldest request of any log; says whether there was one.
    fn drop_oldest(&mut self) -> bool {
        while let Some(Reverse((seq, p))) = self.oldest.pop() {
            let Some(front) = self.logs.get(p as usize).and_then(Log::front) else {
                continue; // emptied
            };
            if front != seq {
                // Its oldest went otherwise: its entry, put right, comes up in its turn.
                self.oldest.push(Reverse((front, p)));
                continue;
            }
            self.drop_front(p);
            if let Some(next) = self.logs.get(p as usize).and_then(Log::front) {
                self.oldest.push(Reverse((next, p)));
            }
            return true;
        }
        false
    }

    fn log(&self, sandbox: &str) -> Option<&Log> {
        self.places
            .get(sandbox)
            .and_then(|p| self.logs.get(*p as usize))
    }

    /// The place of `sandbox`'s log, made when it has none.
    fn place(&mut self, sandbox: &Arc<str>) -> u32 {
        if let Some((s, p)) = &self.last
            && Arc::ptr_eq(s, sandbox)
        {
            return *p;
        }
        let p = match self.places.get(&**sandbox) {
            Some(p) => *p,
            None => {
                let p = self.free.pop().unwrap_or_else(|| {
                    self.logs.push(Log::default());
                    self.names.push(Arc::clone(sandbox));
                    #[allow(clippy::cast_possible_truncation)] // far fewer sandboxes than 4 billion
                    let p = (self.logs.len() - 1) as u32;
                    p
                });
                if let Some(name) = self.names.get_mut(p as usize) {
                    name.clone_from(sandbox);
                }
                self.places.insert(Arc::clone(sandbox), p);
                p
            }
        };
        self.last = Some((Arc::clone(sandbox), p));
        p
    }

    /// Forgets the log at place `p`: its chunks to the spares, its place free.
    fn let_go(&mut self, p: u32) {
        let Some(log) = self.logs.get_mut(p as usize) else {
            return;
        };
        self.weight -= log.weight();
        self.count -= log.len();
        log.clear(&mut self.spares);
        if let Some(name) = self.names.get(p as usize) {
            self.places.remove(&**name);
        }
        self.free.push(p);
        self.count_tables();
        if self.last.as_ref().is_some_and(|(_, q)| *q == p) {
            self.last = None;
        }
    }

    /// Drops the oldest request of the log at place `p`.
    fn drop_front(&mut self, p: u32) {
        let Some(log) = self.logs.get_mut(p as usize) else {
            return;
        };
        let before = log.weight();
        log.pop(&mut self.spares);
        self.weight = self.weight + log.weight() - before;
        self.count -= 1;
        if log.len() == 0 {
            self.let_go(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sandbox: &str, body: usize) -> Box<Entry> {
        let mut e = Entry::empty();
        e.sandbox = sandbox.into();
        e.request(|b| b.extend_from_slice(b"GET /x"), &vec![b'x'; body], body);
        e
    }

    /// A ring of `requests` a sandbox and bodies of `body_bytes`, with no byte budget.
    fn unbounded(requests: usize, body_bytes: usize) -> Ring {
        Ring::new(Bounds {
            requests,
            bytes: usize::MAX,
            body_bytes,
        })
    }

    #[test]
    fn each_sandbox_keeps_its_last_requests() {
        let r = unbounded(3, 100);
        for _ in 0..5 {
            r.push(entry("a", 1));
        }
        r.push(entry("b", 1));
        assert_eq!(r.map("a", |s, _| s), [2, 3, 4]);
        assert_eq!(r.map("b", |s, _| s).len(), 1);
        assert_eq!(r.version("a"), (2, 4, 3));
        assert_eq!(r.size().0, 4);
        r.clear("a");
        assert!(r.map("a", |s, _| s).is_empty());
        assert_eq!(r.size().0, 1);
    }

    #[test]
    fn the_byte_budget_drops_the_oldest_of_any_sandbox_first() {
        // Each request fills a chunk of its own: three of them weigh `three`.
        let body = CHUNK_FILLED;
        let all = unbounded(1000, body);
        for sb in ["a", "b", "a"] {
            all.push(entry(sb, body));
        }
        let three = all.size().1;
        let r = Ring::new(Bounds {
            requests: 1000,
            bytes: three,
            body_bytes: body,
        });
        for sb in ["a", "b", "a", "b"] {
            r.push(entry(sb, body));
        }
        assert_eq!(r.map("a", |s, _| s), [2]);
        assert_eq!(r.map("b", |s, _| s), [1, 3]);
        assert!(r.size().1 <= three, "{} > {three}", r.size().1);
    }

    /// A body that, with its head, fills most of a chunk.
    const CHUNK_FILLED: usize = super::super::log::CHUNK - 100;

    #[test]
    fn the_slot_goes_back_to_its_thread_and_what_was_kept_is_a_copy() {
        let r = unbounded(2, 100);
        SLOT.with_borrow_mut(|s| *s = None);
        let mut first = r.slot();
        let at: *const Entry = &*first;
        first.request(|b| b.extend_from_slice(b"GET /1"), b"", 0);
        r.push(first);
        let mut again = r.slot();
        assert_eq!(&*again as *const Entry, at, "the thread's slot again");
        again.request(|b| b.extend_from_slice(b"GET /2"), b"", 0);
        r.push(again);
        let kept: Vec<Vec<u8>> = r.map("", |_, e| e.head().to_vec());
        assert_eq!(kept, [b"GET /1".to_vec(), b"GET /2".to_vec()]);
    }

    #[test]
    fn a_place_let_go_of_is_taken_by_the_next_sandbox() {
        let r = unbounded(10, 10);
        r.push(entry("a", 1));
        r.push(entry("b", 1));
        r.clear("a");
        r.push(entry("c", 1));
        assert!(r.map("a", |s, _| s).is_empty());
        assert_eq!(
            (r.map("b", |s, _| s), r.map("c", |s, _| s)),
            (vec![1], vec![2])
        );
        assert_eq!(r.lock().logs.len(), 2, "c took a's place");
        r.push(entry("a", 1));
        assert_eq!(r.map("a", |s, _| s), [3]);
        assert_eq!(r.size().0, 3);
    }

    #[test]
    fn the_oldest_of_each_sandbox_stays_one_entry_a_sandbox() {
        let r = unbounded(2, 1);
        for _ in 0..10_000 {
            r.push(entry("a", 1));
        }
        assert_eq!(r.lock().oldest.len(), 1, "a busy sandbox: one entry");
        for _ in 0..1000 {
            r.push(entry("b", 1));
            r.clear("b");
        }
        let g = r.lock();
        assert!(
            g.oldest.len() <= 2 * g.logs.len() + 65,
            "{}",
            g.oldest.len()
        );
    }

    #[test]
    fn a_busy_sandbox_at_its_bound_holds_the_same_memory() {
        let r = unbounded(100, 500);
        for _ in 0..1000 {
            r.push(entry("a", 500));
        }
        let held = r.size().1;
        for _ in 0..1000 {
            r.push(entry("a", 500));
        }
        assert_eq!(r.size(), (100, held));
        // Read in batches: every one, in order.
        assert_eq!(r.map("a", |s, _| s), (1900..2000).collect::<Vec<u64>>());
        // A record and 500 bytes a request, whole chunks, the ring's room to grow, the
        // allocator's share: no more.
        assert!(held < 100 * 1200, "{held}");
    }
}
