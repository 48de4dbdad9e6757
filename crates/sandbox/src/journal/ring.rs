//! The journal in this instance's memory: each sandbox's requests in arrival order, at most
//! [`Bounds::requests`] of them, and all sandboxes' together within [`Bounds::bytes`], the
//! oldest request of any sandbox dropped first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::HashMap;

use super::entry::Entry;
use crate::config::JournalBounds as Bounds;

/// The journal of every sandbox in memory.
#[derive(Debug)]
pub(crate) struct Ring {
    bounds: Bounds,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_sandbox: HashMap<Arc<str>, VecDeque<Held>>,
    /// Every request kept, oldest first, as (sandbox, number): what the byte budget drops
    /// first. A request dropped otherwise (its sandbox's bound, a clear) stays here until
    /// passed over or compacted away.
    order: VecDeque<(Arc<str>, u64)>,
    bytes: usize,
    count: usize,
    next: u64,
    /// Slots of requests the byte budget dropped, for the next requests to reuse.
    spares: Vec<Arc<Entry>>,
}

/// Spare slots kept at most (besides one per thread).
const SPARES: usize = 64;

thread_local! {
    /// The slot of the last request a sandbox's bound let go of on this thread: the next
    /// request here writes into it, without taking the lock for a slot.
    static SPARE: std::cell::RefCell<Option<Arc<Entry>>> = const { std::cell::RefCell::new(None) };
}

#[derive(Debug)]
struct Held {
    seq: u64,
    weight: usize,
    entry: Arc<Entry>,
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

    /// A slot for a request: this thread's spare (the slot of a request a sandbox's bound let
    /// go of on this thread: no lock), else a spare of the byte budget's, else a new one. A busy
    /// sandbox at its bound so journals without allocating.
    pub(crate) fn slot(&self) -> Arc<Entry> {
        if let Some(e) = SPARE.with_borrow_mut(Option::take) {
            return e;
        }
        let spare = self.lock().spares.pop();
        if let Some(mut e) = spare
            && Arc::get_mut(&mut e).is_some()
        {
            return e;
        }
        Arc::from(Entry::empty())
    }

    /// Keeps `entry`; gives its number in this instance.
    pub(crate) fn push(&self, entry: Arc<Entry>) -> u64 {
        let weight = entry.weight();
        let sandbox = Arc::clone(&entry.sandbox);
        let mut g = self.lock();
        let inner = &mut *g;
        let seq = inner.next;
        inner.next += 1;
        let q = inner.by_sandbox.entry(Arc::clone(&sandbox)).or_default();
        q.push_back(Held { seq, weight, entry });
        inner.bytes += weight;
        inner.count += 1;
        while q.len() > self.bounds.requests {
            if let Some(h) = q.pop_front() {
                inner.bytes -= h.weight;
                inner.count -= 1;
                // The next request on this thread writes into it (unless a reader holds it).
                if Arc::strong_count(&h.entry) == 1 {
                    SPARE.with_borrow_mut(|s| *s = Some(h.entry));
                }
            }
        }
        let oldest = q.front().map(|h| h.seq);
        // What this sandbox's bound dropped leaves the front of `order` at once (one busy
        // sandbox: no compaction, no lookup; another view of the same sandbox is left to the
        // compaction).
        while let Some((sb, s)) = inner.order.front() {
            if !Arc::ptr_eq(sb, &sandbox) || oldest.is_some_and(|o| *s >= o) {
                break;
            }
            inner.order.pop_front();
        }
        inner.order.push_back((sandbox, seq));
        while inner.bytes > self.bounds.bytes {
            let Some((sb, seq)) = inner.order.pop_front() else {
                break;
            };
            inner.drop_front(&sb, seq);
        }
        if inner.order.len() > 2 * inner.count + 64 {
            inner.compact();
        }
        seq
    }

    /// The requests `sandbox` has, oldest first, with their numbers.
    pub(crate) fn of(&self, sandbox: &str) -> Vec<(u64, Arc<Entry>)> {
        self.lock()
            .by_sandbox
            .get(sandbox)
            .map_or_else(Vec::new, |q| {
                q.iter().map(|h| (h.seq, Arc::clone(&h.entry))).collect()
            })
    }

    /// The sandboxes that have requests here.
    pub(crate) fn sandboxes(&self) -> Vec<Arc<str>> {
        self.lock()
            .by_sandbox
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(s, _)| Arc::clone(s))
            .collect()
    }

    /// Forgets `sandbox`'s requests.
    pub(crate) fn clear(&self, sandbox: &str) {
        let mut g = self.lock();
        if let Some(q) = g.by_sandbox.remove(sandbox) {
            g.bytes -= q.iter().map(|h| h.weight).sum::<usize>();
            g.count -= q.len();
        }
    }

    /// Requests kept in all, and their bytes.
    pub(crate) fn size(&self) -> (usize, usize) {
        let g = self.lock();
        (g.count, g.bytes)
    }
}

impl Inner {
    /// Drops `sandbox`'s oldest request if it is still number `seq`.
    fn drop_front(&mut self, sandbox: &str, seq: u64) {
        let Some(q) = self.by_sandbox.get_mut(sandbox) else {
            return;
        };
        if q.front().is_some_and(|h| h.seq == seq)
            && let Some(h) = q.pop_front()
        {
            self.bytes -= h.weight;
            self.count -= 1;
            if self.spares.len() < SPARES && Arc::strong_count(&h.entry) == 1 {
                self.spares.push(h.entry);
            }
        }
        if q.is_empty() {
            self.by_sandbox.remove(sandbox);
        }
    }

    /// Removes from `order` what is no longer kept.
    fn compact(&mut self) {
        let by = &self.by_sandbox;
        self.order.retain(|(sb, seq)| {
            by.get(sb)
                .and_then(VecDeque::front)
                .is_some_and(|f| f.seq <= *seq)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sandbox: &str, body: usize) -> Arc<Entry> {
        let mut e = Entry::empty();
        e.sandbox = sandbox.into();
        e.request(|b| b.extend_from_slice(b"GET /x"), &vec![b'x'; body], body);
        Arc::from(e)
    }

    #[test]
    fn each_sandbox_keeps_its_last_requests() {
        let r = Ring::new(Bounds {
            requests: 3,
            bytes: usize::MAX,
            body_bytes: 100,
        });
        for _ in 0..5 {
            r.push(entry("a", 1));
        }
        r.push(entry("b", 1));
        let seqs: Vec<u64> = r.of("a").iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, [2, 3, 4]);
        assert_eq!(r.of("b").len(), 1);
        assert_eq!(r.size().0, 4);
        r.clear("a");
        assert!(r.of("a").is_empty());
        assert_eq!(r.size().0, 1);
    }

    #[test]
    fn the_byte_budget_drops_the_oldest_of_any_sandbox_first() {
        let one = entry("a", 1000).weight();
        let r = Ring::new(Bounds {
            requests: 1000,
            bytes: one * 3,
            body_bytes: 2000,
        });
        r.push(entry("a", 1000));
        r.push(entry("b", 1000));
        r.push(entry("a", 1000));
        r.push(entry("b", 1000));
        assert_eq!(r.of("a").iter().map(|(s, _)| *s).collect::<Vec<_>>(), [2]);
        assert_eq!(
            r.of("b").iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            [1, 3]
        );
        assert!(r.size().1 <= one * 3);
    }

    #[test]
    fn a_request_past_a_sandboxs_bound_leaves_its_slot_to_the_next_unless_a_reader_holds_it() {
        let r = Ring::new(Bounds {
            requests: 2,
            bytes: usize::MAX,
            body_bytes: 100,
        });
        SPARE.with_borrow_mut(|s| *s = None);
        r.push(entry("a", 1));
        r.push(entry("a", 2));
        assert!(
            r.slot().head().is_empty(),
            "nothing let go of yet: a new slot"
        );
        r.push(entry("a", 3));
        assert_eq!(r.slot().body(), b"x", "the slot a's bound let go of");
        assert!(r.slot().head().is_empty(), "taken: a new slot again");
        let read = r.of("a");
        r.push(entry("a", 4));
        assert!(
            r.slot().head().is_empty(),
            "the slot let go of is being read"
        );
        drop(read);
        assert_eq!(r.of("a").len(), 2);
    }

    #[test]
    fn the_order_of_requests_dropped_by_their_sandbox_bound_stays_small() {
        let r = Ring::new(Bounds {
            requests: 2,
            bytes: usize::MAX,
            body_bytes: 1,
        });
        for _ in 0..10_000 {
            r.push(entry("a", 1));
        }
        let g = r.lock();
        assert!(g.order.len() <= 2 * g.count + 64, "{}", g.order.len());
    }
}
