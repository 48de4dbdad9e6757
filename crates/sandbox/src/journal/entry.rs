//! One request as the pipeline saw it, kept as it came (cheap to make on the request path:
//! shared bytes, no rendering); masked and rendered only when it is read ([`super::record`]).

use std::borrow::Cow;
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

/// A request and its answer, as they went: its [`Facts`] and its bytes. The pipeline fills one
/// per request, in a slot the journal lends again and again (the thread's own, mostly: its lines
/// in the processor's cache), and the journal copies it into the sandbox's log ([`super::log`]).
///
/// The request's head and body and the answer's head (and a short body made for it alone) are
/// written one after the other into one buffer, `bytes`, so that the journal keeps them with
/// one copy.
#[derive(Debug)]
pub(crate) struct Entry {
    facts: Facts,
    /// The pieces below, one after the other.
    bytes: Vec<u8>,
    pieces: Pieces,
}

/// What an entry says besides its bytes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
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
    /// Its body's whole length.
    pub(crate) body_len: usize,
    pub(crate) status: u16,
    /// The start of the answer's body when the sandbox shares it already (else copied into the
    /// bytes); and the body's whole length.
    answer_body: Bytes,
    pub(crate) answer_len: usize,
    /// The bucket's tokens left and capacity after the request, when it reached the limit.
    pub(crate) fill: Option<(u32, u32)>,
    pub(crate) refused: Option<Refused>,
}

impl Facts {
    /// The bytes of a body shared with the sandbox (an example, a file) it holds.
    pub(crate) fn shared_bytes(&self) -> usize {
        self.answer_body.len()
    }

    /// Becomes `from`, field by field: a shared value it already points at (the same
    /// sandbox's, the same key's) is left as it is, no count changed.
    pub(crate) fn assign(&mut self, from: &Facts) {
        self.assign_but_body(from);
        self.let_go_of_body();
        if !from.answer_body.is_empty() {
            self.answer_body = from.answer_body.clone();
        }
    }

    /// Becomes `from`, taking its answer body (moved: no count changed).
    pub(crate) fn take(&mut self, from: &mut Facts) {
        self.assign_but_body(from);
        self.answer_body = std::mem::take(&mut from.answer_body);
    }

    fn assign_but_body(&mut self, from: &Facts) {
        share(&mut self.sandbox, &from.sandbox);
        share(&mut self.key, &from.key);
        match (&mut self.credential, &from.credential) {
            (Some(mine), Some(theirs)) => share(mine, theirs),
            (mine, theirs) => mine.clone_from(theirs),
        }
        self.service = from.service;
        self.operation = from.operation;
        self.group = from.group;
        self.conn = from.conn;
        self.at_us = from.at_us;
        self.latency_us = from.latency_us;
        self.body_len = from.body_len;
        self.status = from.status;
        self.answer_len = from.answer_len;
        self.fill = from.fill;
        self.refused = from.refused;
    }

    /// Lets go of an answer body it shares.
    pub(crate) fn let_go_of_body(&mut self) {
        if !self.answer_body.is_empty() {
            self.answer_body = Bytes::new();
        }
    }
}

/// Points `mine` at `theirs`, unless it already does (no count of either changed then).
pub(crate) fn share(mine: &mut Arc<str>, theirs: &Arc<str>) {
    if !Arc::ptr_eq(mine, theirs) {
        mine.clone_from(theirs);
    }
}

impl std::ops::Deref for Entry {
    type Target = Facts;
    fn deref(&self) -> &Facts {
        &self.facts
    }
}

impl std::ops::DerefMut for Entry {
    fn deref_mut(&mut self) -> &mut Facts {
        &mut self.facts
    }
}

/// Where each piece of an entry is in its bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pieces {
    /// Its method, target and headers ([`super::head::request`]).
    head: Piece,
    /// The start of its body (up to the journal's bound, copied: a slice would keep the
    /// connection's read buffer alive).
    body: Piece,
    /// The answer's headers: their lines ([`super::head::answer`]), or their values alone when
    /// their names are those of `shape` ([`super::head::values`]).
    answer_head: Piece,
    shape: Option<u8>,
    /// The start of the answer's body, when copied.
    answer_copy: Piece,
}

/// Where a piece is in an entry's bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Piece {
    start: u32,
    end: u32,
}

/// What a slot's buffer holds besides the request's body, mostly: its head, the answer's head
/// and a short answer.
const ROOM: usize = 768;

impl Entry {
    /// An empty slot.
    pub(crate) fn empty() -> Box<Self> {
        // No service yet: the pipeline names it when it fills the slot.
        Box::new(Entry {
            facts: Facts::default(),
            bytes: Vec::new(),
            pieces: Pieces::default(),
        })
    }

    /// Becomes a kept request again, in its own buffer (reused: a reader going through a
    /// journal copies nothing else).
    pub(crate) fn load(&mut self, facts: &Facts, bytes: &[u8], pieces: Pieces) {
        self.facts.assign(facts);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.pieces = pieces;
    }

    /// Its facts, its bytes and where each piece is in them: what a journal keeps (the facts
    /// to take from: [`Facts::take`]).
    pub(crate) fn parts(&mut self) -> (&mut Facts, &[u8], Pieces) {
        (&mut self.facts, &self.bytes, self.pieces)
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
        self.pieces = Pieces::default();
        self.facts.let_go_of_body();
        self.answer_len = 0;
        self.pieces.head = self.append(head);
        let kept = body.get(..max.min(body.len())).unwrap_or_default();
        self.pieces.body = self.append(|b| b.extend_from_slice(kept));
        self.body_len = body.len();
    }

    /// The answer's head, written by `head`.
    pub(crate) fn answer_head(&mut self, head: impl FnOnce(&mut Vec<u8>)) {
        self.pieces.answer_head = self.append(head);
        self.pieces.shape = None;
    }

    /// The answer's headers, `fields`: their values alone when their names are those of the
    /// known shape `shape`, else their lines.
    fn answer_fields(&mut self, shape: Option<u8>, fields: &Fields) {
        let items = fields.items();
        self.pieces.answer_head = match shape {
            Some(_) => self.append(|b| super::head::values(b, items)),
            None => self.append(|b| super::head::fields(b, items)),
        };
        self.pieces.shape = shape;
    }

    /// Keeps at most `max` bytes of the answer's `body`. A body made for this answer alone is
    /// copied: sharing it would first move it to a counted buffer (an allocation), then hold
    /// all of that buffer (its room to grow too, which the journal cannot see) until the slot
    /// is reused, where a copy keeps what is counted. A body shared already (an example, a
    /// file) is shared, unless only its start is kept.
    pub(crate) fn keep_answer_body(&mut self, body: &Bytes, max: usize) {
        self.answer_len = body.len();
        self.pieces.answer_copy = Piece::default();
        if body.is_unique() || body.len() > max {
            let kept = body.get(..max.min(body.len())).unwrap_or_default();
            self.pieces.answer_copy = self.append(|b| b.extend_from_slice(kept));
            self.facts.let_go_of_body();
        } else {
            self.facts.answer_body = body.clone();
        }
    }

    /// The request's head ([`super::head::request`]).
    pub(crate) fn head(&self) -> &[u8] {
        self.piece(self.pieces.head)
    }

    /// The start of the request's body.
    pub(crate) fn body(&self) -> &[u8] {
        self.piece(self.pieces.body)
    }

    /// The answer's head as it was sent, a `\nname: value` line a header.
    pub(crate) fn answer_head_lines(&self) -> Cow<'_, str> {
        let kept = self.piece(self.pieces.answer_head);
        match self.pieces.shape.and_then(crate::heads::names) {
            Some(names) => Cow::Owned(super::head::named(names, kept)),
            None => String::from_utf8_lossy(kept),
        }
    }

    /// The start of the answer's body, as kept.
    pub(crate) fn answer_bytes(&self) -> &[u8] {
        let copy = self.pieces.answer_copy;
        if copy.end > copy.start {
            self.piece(copy)
        } else {
            &self.facts.answer_body
        }
    }

    /// When its answer was sent, in milliseconds since the Unix epoch.
    pub(crate) fn answered_ms(&self) -> u64 {
        (self.at_us + self.latency_us) / 1000
    }
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

    /// The answer's headers, `fields`, of the known shape `shape` if it is one.
    pub(crate) fn head(&mut self, shape: Option<u8>, fields: &Fields) {
        self.entry.answer_fields(shape, fields);
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
            assert_eq!(e.answer_head_lines(), "\ncontent-type: a/b");
            assert_eq!((e.answer_bytes(), e.answer_len), (&b"made"[..], 4));
        }
        // A body shared already is shared; one over the bound is cut.
        let shared = Bytes::from_static(b"example");
        e.request(|b| b.extend_from_slice(b"GET /y"), b"", 5);
        e.keep_answer_body(&shared, 100);
        assert_eq!(e.answer_bytes(), b"example");
        assert!(e.answer_head_lines().is_empty());
        e.keep_answer_body(&Bytes::from(vec![b'z'; 10]), 3);
        assert_eq!((e.answer_bytes(), e.answer_len), (&b"zzz"[..], 10));
    }

    #[test]
    fn an_answer_of_a_known_shape_keeps_its_values_and_reads_back_its_lines() {
        let make = |retry: &'static str| {
            let mut f = Fields::new();
            f.push("content-type", http::HeaderValue::from_static("a/b"));
            f.push("x-entry-test-retry", http::HeaderValue::from_static(retry));
            f
        };
        let mut e = Entry::empty();
        let mut shapes = Vec::new();
        for (retry, shape) in [("57", None), ("58", None), ("59", Some(()))] {
            e.request(|b| b.extend_from_slice(b"GET /"), b"", 0);
            crate::heads::map(make(retry), |n, fields| {
                // The last one as if no shape were known: kept as lines.
                let n = if shape.is_some() { None } else { n };
                shapes.push(n);
                Filling::new(&mut e, 10).head(n, fields);
            });
            let lines = format!("\ncontent-type: a/b\nx-entry-test-retry: {retry}");
            assert_eq!(e.answer_head_lines(), lines);
        }
        assert!(shapes[1].is_some(), "the second answer finds the shape");
        let as_lines = e.piece(e.pieces.answer_head).len();
        e.request(|b| b.extend_from_slice(b"GET /"), b"", 0);
        crate::heads::map(make("60"), |n, f| Filling::new(&mut e, 10).head(n, f));
        assert!(
            e.piece(e.pieces.answer_head).len() < as_lines,
            "values alone are shorter"
        );
    }
}
