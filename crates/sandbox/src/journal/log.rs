//! One sandbox's requests in this instance's memory: their facts in one queue and their bytes
//! copied, one request after the other, into chunks of [`CHUNK`] bytes.
//!
//! Why chunks rather than a buffer a request: a busy sandbox's journal is a ring of a thousand
//! requests, mostly out of the processor's caches by the time the ring comes round. Written in
//! order into a few large blocks, its lines are streamed (the prefetcher sees the pattern); the
//! request itself is filled in one slot the thread reuses, still in the cache. And the memory a
//! sandbox holds is whole blocks, counted exactly, where a buffer a request is rounded up by the
//! allocator and scattered.

use std::collections::VecDeque;

use super::entry::{Entry, Facts, Pieces};

/// The bytes of a chunk: a request larger than this has a chunk of its own.
pub(super) const CHUNK: usize = 4096;

/// One sandbox's requests, oldest first.
#[derive(Debug, Default)]
pub(super) struct Log {
    /// A ring: `len` requests from `start` on (wrapping round), oldest first. A slot outside
    /// them is a request let go of, which the next one overwrites in place.
    slots: Vec<Held>,
    start: usize,
    len: usize,
    chunks: VecDeque<Chunk>,
    /// The number of the chunk at the front of `chunks` (chunks are numbered as they begin).
    first: u64,
    /// The bytes of its chunks' buffers.
    chunk_bytes: usize,
    /// The bytes of answer bodies it shares with the sandbox.
    shared: usize,
    /// The bytes of `slots` and `chunks` as allocated (counted again when they grow).
    tables: usize,
}

#[derive(Debug)]
struct Held {
    seq: u64,
    facts: Facts,
    pieces: Pieces,
    /// Where its bytes are: the chunk's number, the offset in it, their length.
    chunk: u64,
    at: u32,
    len: u32,
}

#[derive(Debug)]
struct Chunk {
    bytes: Vec<u8>,
    /// The requests whose bytes are in it.
    live: u32,
}

/// Buffers of chunks let go of, for the next chunks to begin in (any sandbox's).
#[derive(Debug, Default)]
pub(super) struct Spares(Vec<Vec<u8>>);

/// Spare chunk buffers kept at most.
const SPARES: usize = 16;

impl Spares {
    /// Their bytes.
    pub(super) fn bytes(&self) -> usize {
        self.0.len() * CHUNK
    }

    /// Lets them go (the byte budget needs the memory).
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    fn take(&mut self, len: usize) -> Vec<u8> {
        if len <= CHUNK
            && let Some(b) = self.0.pop()
        {
            return b;
        }
        Vec::with_capacity(len.max(CHUNK))
    }

    fn give(&mut self, mut b: Vec<u8>) {
        if b.capacity() == CHUNK && self.0.len() < SPARES {
            b.clear();
            self.0.push(b);
        }
    }
}

impl Log {
    /// Requests held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The slot `i` places after `from` (both within the ring: no division on the request path).
    fn next(&self, from: usize, i: usize) -> usize {
        let j = from + i;
        if j >= self.slots.len() {
            j - self.slots.len()
        } else {
            j
        }
    }

    fn at(&self, i: usize) -> Option<&Held> {
        self.slots.get(self.next(self.start, i))
    }

    /// The number of its oldest request.
    pub(super) fn front(&self) -> Option<u64> {
        (self.len > 0).then(|| self.at(0)).flatten().map(|h| h.seq)
    }

    /// The number of its newest request.
    pub(super) fn back(&self) -> Option<u64> {
        self.len
            .checked_sub(1)
            .and_then(|i| self.at(i))
            .map(|h| h.seq)
    }

    /// The memory it holds, in bytes: its tables as allocated, its chunks, the answer bodies
    /// it shares (counted as its own: they live as long as it holds them).
    pub(super) fn weight(&self) -> usize {
        self.tables + self.chunk_bytes + self.shared
    }

    fn count_tables(&mut self) {
        self.tables = allocated(self.slots.capacity() * std::mem::size_of::<Held>())
            + allocated(self.chunks.capacity() * std::mem::size_of::<Chunk>());
    }

    /// Keeps `entry` as request number `seq`, in place of its oldest request when it holds
    /// `bound` of them already (then it says so). Its facts are copied into the slot field by
    /// field (a shared answer body taken from it), its bytes at the end of the last chunk (or
    /// at the start of a new one).
    pub(super) fn push(
        &mut self,
        seq: u64,
        entry: &mut Entry,
        bound: usize,
        spares: &mut Spares,
    ) -> bool {
        let (facts, bytes, pieces) = entry.parts();
        let full = self.len > 0 && self.len >= bound;
        // Its oldest goes first, so that its chunk may take this one's bytes.
        if full && self.release(self.start) {
            self.drop_dead_chunks(spares);
        }
        let (chunk, at, len) = self.write(bytes, spares);
        self.shared += facts.shared_bytes();
        let i = if full {
            let i = self.start;
            self.start = self.next(i, 1);
            i
        } else if self.len < self.slots.len() {
            self.len += 1;
            self.next(self.start, self.len - 1)
        } else {
            // Growing: the ring is made straight first, so the new slot comes last.
            self.slots.rotate_left(self.start);
            self.start = 0;
            let mut held = Facts::default();
            held.take(facts);
            self.slots.push(Held {
                seq,
                facts: held,
                pieces,
                chunk,
                at,
                len,
            });
            self.len += 1;
            self.count_tables();
            return false;
        };
        if let Some(h) = self.slots.get_mut(i) {
            h.seq = seq;
            h.facts.take(facts);
            h.pieces = pieces;
            (h.chunk, h.at, h.len) = (chunk, at, len);
        }
        full
    }

    /// Copies `bytes` at the end of the last chunk, or of a new one; gives where.
    fn write(&mut self, bytes: &[u8], spares: &mut Spares) -> (u64, u32, u32) {
        let fits = |c: &Chunk| c.bytes.capacity() - c.bytes.len() >= bytes.len();
        if !self.chunks.back().is_some_and(fits) {
            let b = spares.take(bytes.len());
            self.chunk_bytes += allocated(b.capacity());
            let grows = self.chunks.len() == self.chunks.capacity();
            self.chunks.push_back(Chunk { bytes: b, live: 0 });
            if grows {
                self.count_tables();
            }
        }
        let number = self.first + self.chunks.len() as u64 - 1;
        let Some(chunk) = self.chunks.back_mut() else {
            return (number, 0, 0);
        };
        #[allow(clippy::cast_possible_truncation)] // a chunk holds far less than 4 GiB
        let (at, len) = (chunk.bytes.len() as u32, bytes.len() as u32);
        chunk.bytes.extend_from_slice(bytes);
        chunk.live += 1;
        (number, at, len)
    }

    /// Lets go of the request in slot `i`: its chunk holds one request fewer, a body it
    /// shares goes. Says whether the chunk holds none now.
    fn release(&mut self, i: usize) -> bool {
        let Some(h) = self.slots.get_mut(i) else {
            return false;
        };
        self.shared -= h.facts.shared_bytes();
        h.facts.let_go_of_body();
        if let Some(c) = usize::try_from(h.chunk - self.first)
            .ok()
            .and_then(|c| self.chunks.get_mut(c))
        {
            c.live -= 1;
            return c.live == 0;
        }
        false
    }

    /// The chunks at the front no request is in go to `spares`, but the last one, which the
    /// next request fills (unless none is held).
    fn drop_dead_chunks(&mut self, spares: &mut Spares) {
        let keep = usize::from(self.len > 0);
        while self.chunks.len() > keep && self.chunks.front().is_some_and(|c| c.live == 0) {
            if let Some(c) = self.chunks.pop_front() {
                self.first += 1;
                self.chunk_bytes -= allocated(c.bytes.capacity());
                spares.give(c.bytes);
            }
        }
    }

    /// Lets its oldest request go (the byte budget's choice).
    pub(super) fn pop(&mut self, spares: &mut Spares) {
        if self.len == 0 {
            return;
        }
        let i = self.start;
        self.release(i);
        self.start = self.next(i, 1);
        self.len -= 1;
        self.drop_dead_chunks(spares);
        // A ring the budget emptied by three quarters gives the memory back.
        if self.slots.len() > 64 && self.len < self.slots.len() / 4 {
            self.slots.rotate_left(self.start);
            self.start = 0;
            self.slots.truncate(self.len);
            self.slots.shrink_to(self.len * 2);
            self.count_tables();
        }
    }

    /// Lets every request go, its chunks to `spares`.
    pub(super) fn clear(&mut self, spares: &mut Spares) {
        for c in self.chunks.drain(..) {
            spares.give(c.bytes);
        }
        *self = Self::default();
    }

    /// What `f` makes of each of its requests, oldest first, given with its number: each
    /// loaded in turn into `e` (a reader holds one request's copy at a time, not the journal's:
    /// a scrape of the metrics goes through every sandbox's). Only the requests numbered after
    /// `after`, and at most `max` of them (a reader takes the lock for a batch at a time).
    pub(super) fn map<T>(
        &self,
        e: &mut Entry,
        after: Option<u64>,
        max: usize,
        out: &mut Vec<T>,
        mut f: impl FnMut(u64, &Entry) -> T,
    ) {
        // The ring is in the order of the numbers: where the batch starts, by halves.
        let (mut lo, mut hi) = (0, self.len);
        while let Some(after) = after
            && lo < hi
        {
            let mid = lo + (hi - lo) / 2;
            if self.at(mid).is_some_and(|h| h.seq <= after) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for h in (lo..self.len).take(max).filter_map(|i| self.at(i)) {
            let bytes = usize::try_from(h.chunk - self.first)
                .ok()
                .and_then(|i| self.chunks.get(i))
                .and_then(|c| c.bytes.get(h.at as usize..(h.at + h.len) as usize))
                .unwrap_or_default();
            e.load(&h.facts, bytes, h.pieces);
            out.push(f(h.seq, e));
        }
    }
}

/// The memory an allocation of `n` bytes takes: the allocator's size classes are about an
/// eighth of a power of two apart (mimalloc's: four to eight a doubling), so a request is rounded
/// up to the next eighth.
pub(super) fn allocated(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    // A power of two: rounded up by a mask (a division costs tens of cycles, on every request).
    let step = (n.next_power_of_two() / 8).max(16);
    (n + step - 1) & !(step - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize, body: usize) -> Entry {
        let mut e = *Entry::empty();
        e.sandbox = "a".into();
        e.conn = n as u64;
        e.request(
            |b| b.extend_from_slice(format!("GET /{n}").as_bytes()),
            &vec![b'x'; body],
            body,
        );
        e
    }

    fn all<T>(log: &Log, f: impl FnMut(u64, &Entry) -> T) -> Vec<T> {
        let mut out = Vec::new();
        log.map(&mut Entry::empty(), None, usize::MAX, &mut out, f);
        out
    }

    #[test]
    fn a_reader_goes_through_in_batches_from_the_number_it_reached() {
        let (mut log, mut spares) = (Log::default(), Spares::default());
        for n in 0..20 {
            log.push(2 * n as u64, &mut entry(n, 10), 12, &mut spares);
        }
        // Held: numbers 16, 18, …, 38.
        let mut out = Vec::new();
        let e = &mut Entry::empty();
        log.map(e, None, 5, &mut out, |s, _| s);
        assert_eq!(out, [16, 18, 20, 22, 24]);
        log.map(e, Some(24), 5, &mut out, |s, _| s);
        log.map(e, Some(33), 100, &mut out, |s, _| s);
        assert_eq!(out, [16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 34, 36, 38]);
        out.clear();
        log.map(e, Some(38), 100, &mut out, |s, _| s);
        assert!(out.is_empty());
    }

    #[test]
    fn requests_read_back_as_they_were_kept_across_chunks_and_round_the_ring() {
        let (mut log, mut spares) = (Log::default(), Spares::default());
        for n in 0..40 {
            let full = log.push(n as u64, &mut entry(n, 300), 30, &mut spares);
            assert_eq!(full, n >= 30);
        }
        assert!(log.chunks.len() > 1, "{} chunks", log.chunks.len());
        let read = all(&log, |seq, e| {
            (seq, e.head().to_vec(), e.body().len(), e.conn)
        });
        assert_eq!(read.len(), 30);
        for (n, (seq, head, body, conn)) in (10..).zip(&read) {
            assert_eq!(*seq, n as u64);
            assert_eq!(head, format!("GET /{n}").as_bytes());
            assert_eq!((*body, *conn), (300, n as u64));
        }
        assert_eq!((log.front(), log.back()), (Some(10), Some(39)));
    }

    #[test]
    fn a_chunk_goes_when_its_last_request_does_and_a_large_request_has_its_own() {
        let (mut log, mut spares) = (Log::default(), Spares::default());
        let mut big = entry(0, 3 * CHUNK);
        log.push(0, &mut big, 100, &mut spares);
        assert_eq!(log.chunk_bytes, allocated(big.parts().1.len()));
        for n in 1..=20 {
            log.push(n as u64, &mut entry(n, 1000), 100, &mut spares);
        }
        let before = log.weight();
        log.pop(&mut spares);
        assert_eq!(log.front(), Some(1));
        assert!(log.weight() < before - 3 * CHUNK, "the large chunk went");
        assert_eq!(spares.bytes(), 0, "a chunk of its own is not a spare");
        // Four 1 KB requests fill a chunk: the fourth one let go of frees the first chunk.
        for _ in 0..3 {
            log.pop(&mut spares);
        }
        assert_eq!(spares.bytes(), 0);
        log.pop(&mut spares);
        assert_eq!(spares.bytes(), CHUNK);
        while log.len() > 0 {
            log.pop(&mut spares);
        }
        assert_eq!((log.chunk_bytes, log.chunks.len()), (0, 0));
        // Let go of and pushed again: the ring takes its slots back in order.
        for n in 30..35 {
            log.push(n as u64, &mut entry(n, 10), 100, &mut spares);
        }
        let seqs: Vec<u64> = all(&log, |s, _| s);
        assert_eq!(seqs, [30, 31, 32, 33, 34]);
    }

    #[test]
    fn an_allocation_is_counted_as_its_size_class() {
        assert_eq!(allocated(0), 0);
        assert_eq!(allocated(1), 16);
        assert_eq!(allocated(300), 320);
        assert_eq!(allocated(918), 1024);
        assert_eq!(allocated(1024), 1024);
        assert_eq!(allocated(1025), 1280);
    }
}
