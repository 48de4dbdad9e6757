//! One request as the pipeline saw it, kept as it came (cheap to make on the request path:
//! shared bytes, no rendering); masked and rendered only when it is read ([`super::record`]).

use std::sync::Arc;

use apistend_catalog::ServiceId;
use axum::body::Bytes;
use serde::{Deserialize, Serialize};

use crate::heads::Fields;

/// Why the sandbox refused a request rather than answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Refused {
    /// Over the limit of a bucket: the service's rate-limit answer.
    Limit,
    /// The request is not one the service's description allows (or a control header is not
    /// one the sandbox reads).
    Validation,
    /// The key is locked out after repeated rejections (the definition's `lockout`).
    Lockout,
    /// Too many of the key's requests at once (the definition's `in_flight`).
    InFlight,
    /// The called method's operating-time budget is spent (Bitrix24's `OPERATION_TIME_LIMIT`).
    Operating,
    /// A scenario answered instead (`X-Mock-Scenario`, or the sandbox's default scenario).
    Scenario,
}

impl Refused {
    /// Its name in the journal and its filters.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refused::Limit => "limit",
            Refused::Validation => "validation",
            Refused::Lockout => "lockout",
            Refused::InFlight => "in_flight",
            Refused::Operating => "operating",
            Refused::Scenario => "scenario",
        }
    }
}

/// A request and its answer, as they went. Its buffer is reused: the journal hands out the
/// slot of a sandbox's oldest request when the sandbox is at its bound (or a spare one), so a
/// busy sandbox journals without allocating.
///
/// The request's head and body and the answer's head (and a short body made for it alone) are
/// written one after the other into one buffer, `bytes`: a ring of a thousand slots is mostly
/// out of the processor's caches when a slot comes round again, and a few lines written in a
/// row cost less than the partly filled lines of a buffer each.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The sandbox whose key made it.
    pub(crate) sandbox: Arc<str>,
    /// The key, or `app:ID` for a Bitrix24 local application.
    pub(crate) key: Arc<str>,
    /// The credential as presented, when it is not the key itself (a Bitrix24 application's
    /// token): masked wherever it shows, as the key is.
    pub(crate) credential: Option<Arc<str>>,
    pub(crate) service: ServiceId,
    /// The operation, as an index into the service's operations.
    pub(crate) operation: Option<usize>,
    /// The operation's own limit group (an index into the service's groups).
    pub(crate) group: Option<usize>,
    /// The number of the connection it came on (0: not known).
    pub(crate) conn: u64,
    /// When it arrived, in microseconds since the Unix epoch.
    pub(crate) at_us: u64,
    /// From its arrival to its answer's head.
    pub(crate) latency_us: u64,
    /// The pieces below, one after the other.
    bytes: Vec<u8>,
    /// Its method, target and headers ([`super::head::request`]).
    head: Piece,
    /// The start of its body (up to the journal's bound, copied: a slice would keep the
    /// connection's read buffer alive).
    body: Piece,
    /// Its body's whole length.
    pub(crate) body_len: usize,
    pub(crate) status: u16,
    /// The answer's headers ([`super::head::answer`]).
    answer_head: Piece,
    /// The start of the answer's body: shared when the sandbox shares it already, else copied
    /// (`answer_copy`); and its whole length.
    answer_body: Bytes,
    answer_copy: Piece,
    pub(crate) answer_len: usize,
    /// The bucket's tokens left and capacity after the request, when it reached the limit.
    pub(crate) fill: Option<(u32, u32)>,
    pub(crate) refused: Option<Refused>,
}

/// Where a piece is in an entry's bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Piece {
    start: u32,
    end: u32,
}

/// The longest answer body a slot copies rather than shares.
const COPIED: usize = 1024;

/// What a slot's buffer holds besides the request's body, mostly: its head, the answer's head
/// and a short answer.
const ROOM: usize = 768;

impl Entry {
    /// An empty slot.
    pub(crate) fn empty() -> Box<Self> {
        Box::new(Entry {
            sandbox: Arc::from(""),
            key: Arc::from(""),
            credential: None,
            // No service yet: the pipeline names it when it fills the slot.
            service: Default::default(),
            operation: None,
            group: None,
            conn: 0,
            at_us: 0,
            latency_us: 0,
            bytes: Vec::new(),
            head: Piece::default(),
            body: Piece::default(),
            body_len: 0,
            status: 0,
            answer_head: Piece::default(),
            answer_body: Bytes::new(),
            answer_copy: Piece::default(),
            answer_len: 0,
            fill: None,
            refused: None,
        })
    }

    /// Writes a piece at the end of the bytes.
    fn append(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Piece {
        #[allow(clippy::cast_possible_truncation)] // a slot holds far less than 4 GiB
        let at = |b: &Vec<u8>| b.len() as u32;
        let start = at(&self.bytes);
        write(&mut self.bytes);
        Piece {
            start,
            end: at(&self.bytes),
        }
    }

    fn piece(&self, p: Piece) -> &[u8] {
        self.bytes
            .get(p.start as usize..p.end as usize)
            .unwrap_or_default()
    }

    /// Starts the slot again with a request: its head (written by `head`) and at most `max`
    /// bytes of its `body`.
    pub(crate) fn request(&mut self, head: impl FnOnce(&mut Vec<u8>), body: &[u8], max: usize) {
        self.bytes.clear();
        // Room for the body and, mostly, both heads and a short answer: a buffer grown by
        // doubling once they come would hold up to twice what it keeps.
        self.bytes.reserve(body.len().min(max) + ROOM);
        self.answer_head = Piece::default();
        self.answer_copy = Piece::default();
        self.head = self.append(head);
        let kept = body.get(..max.min(body.len())).unwrap_or_default();
        self.body = self.append(|b| b.extend_from_slice(kept));
        self.body_len = body.len();
    }

    /// The answer's head, written by `head`.
    pub(crate) fn answer_head(&mut self, head: impl FnOnce(&mut Vec<u8>)) {
        self.answer_head = self.append(head);
    }

    /// Keeps at most `max` bytes of the answer's `body`. A body made for this answer alone
    /// and short is copied: sharing it would first move it to a counted buffer (an
    /// allocation), then hold that memory, cold, until the slot is reused, where a copy lets
    /// the allocator give the same hot memory to the next answer. A body shared already (an
    /// example, a file) is shared.
    pub(crate) fn keep_answer_body(&mut self, body: &Bytes, max: usize) {
        self.answer_len = body.len();
        self.answer_copy = Piece::default();
        if body.len() <= COPIED.min(max) && body.is_unique() {
            self.answer_copy = self.append(|b| b.extend_from_slice(body));
            if !self.answer_body.is_empty() {
                self.answer_body = Bytes::new();
            }
        } else if body.len() <= max {
            self.answer_body = body.clone();
        } else {
            self.answer_body = Bytes::copy_from_slice(body.get(..max).unwrap_or_default());
        }
    }

    /// The request's head ([`super::head::request`]).
    pub(crate) fn head(&self) -> &[u8] {
        self.piece(self.head)
    }

    /// The start of the request's body.
    pub(crate) fn body(&self) -> &[u8] {
        self.piece(self.body)
    }

    /// The answer's head ([`super::head::answer`]).
    pub(crate) fn answer_lines(&self) -> &[u8] {
        self.piece(self.answer_head)
    }

    /// The start of the answer's body, as kept.
    pub(crate) fn answer_bytes(&self) -> &[u8] {
        if self.answer_copy.end > self.answer_copy.start {
            self.piece(self.answer_copy)
        } else {
            &self.answer_body
        }
    }

    /// What it holds, in bytes: what the journal's byte budget counts. The slot (with its
    /// counts) and its buffer as the allocator holds them, its places in the journal's two
    /// queues (grown by doubling: up to twice their 24 bytes each), a shared body's start.
    pub(crate) fn weight(&self) -> usize {
        allocated(std::mem::size_of::<Self>() + 16)
            + allocated(self.bytes.capacity())
            + 96
            + self.answer_body.len()
    }

    /// When its answer was sent, in milliseconds since the Unix epoch.
    pub(crate) fn answered_ms(&self) -> u64 {
        (self.at_us + self.latency_us) / 1000
    }
}

/// The memory an allocation of `n` bytes takes: the allocator's size classes are about an
/// eighth of a power of two apart (mimalloc's: four to eight a doubling), so a request is rounded
/// up to the next eighth.
fn allocated(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    n.next_multiple_of((n.next_power_of_two() / 8).max(16))
}

/// An entry filled by an answer as it is made: its headers and the start of its body, read
/// where the sandbox has them rather than back from the response.
pub(crate) struct Filling<'a> {
    entry: &'a mut Entry,
    max: usize,
}

impl<'a> Filling<'a> {
    /// Fills `entry`, keeping at most `max` bytes of a body.
    pub(crate) fn new(entry: &'a mut Entry, max: usize) -> Self {
        Self { entry, max }
    }

    /// The answer's headers.
    pub(crate) fn head(&mut self, fields: &Fields) {
        self.entry
            .answer_head(|b| super::head::fields(b, fields.items()));
    }

    /// The answer's body, sent whole from memory (a streamed one is kept as none).
    pub(crate) fn body(&mut self, body: &Bytes) {
        self.entry.keep_answer_body(body, self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_reads_back_each_piece_whatever_order_they_came_in_and_when_reused() {
        let mut e = Entry::empty();
        for round in 0..2 {
            let body = format!("{{\"round\":{round}}}");
            e.request(|b| b.extend_from_slice(b"POST /x"), body.as_bytes(), 5);
            // The answer's body comes before its head, as an answer is made.
            e.keep_answer_body(&Bytes::from(b"made".to_vec()), 100);
            e.answer_head(|b| b.extend_from_slice(b"\ncontent-type: a/b"));
            assert_eq!(e.head(), b"POST /x");
            assert_eq!((e.body(), e.body_len), (&b"{\"rou"[..], body.len()));
            assert_eq!(e.answer_lines(), b"\ncontent-type: a/b");
            assert_eq!((e.answer_bytes(), e.answer_len), (&b"made"[..], 4));
        }
        // A body shared already is shared; one over the bound is cut.
        let shared = Bytes::from_static(b"example");
        e.request(|b| b.extend_from_slice(b"GET /y"), b"", 5);
        e.keep_answer_body(&shared, 100);
        assert_eq!(e.answer_bytes(), b"example");
        assert!(e.answer_lines().is_empty());
        e.keep_answer_body(&Bytes::from(vec![b'z'; 10]), 3);
        assert_eq!((e.answer_bytes(), e.answer_len), (&b"zzz"[..], 10));
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
