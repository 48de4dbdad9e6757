//! An archive read in place: what an import writes once and the binary embeds, read without
//! being decoded whole. Start reads only its header; the index (which entry is where, and what
//! each entry is) is decoded the first time the archive is asked for anything; an entry is
//! inflated the first time it is read, and kept. A process that answers three MoySklad
//! operations holds those three examples, not MoySklad's 10 MB.
//!
//! Layout: [`MAGIC`], the entry count and the index's length (u32 little-endian each), the index
//! (zlib-compressed JSON: one record per entry, its metadata and its [`Span`]), then the entries,
//! each its own zlib stream. Hand-written over miniz_oxide (already a dependency) because what is
//! needed is small — a header, a serde index, one inflate per entry on first read, views into a
//! `&'static [u8]` — and an archive crate (zip) would add a second metadata format and copy each
//! entry out of its reader.

use std::sync::OnceLock;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::AnswersError;

/// The first bytes of an archive: its name and its format's version.
const MAGIC: &[u8; 8] = b"APSPACK\x01";

/// The largest entry or index inflated (a corrupt length cannot ask for more).
const MAX_INFLATED: usize = 64 << 20;

/// Where an entry is: its offset from the first entry, and its compressed length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Span(u32, u32);

/// One index record: the entry's metadata and where it is.
#[derive(Serialize, Deserialize)]
struct Record<M> {
    #[serde(flatten)]
    meta: M,
    at: Span,
}

/// An archive: its bytes (embedded, or read from a file), its header read.
#[derive(Debug, Clone)]
pub(crate) struct Pack {
    count: usize,
    index: Bytes,
    entries: Bytes,
}

impl Pack {
    /// Writes an archive of `entries`, each a metadata record and its bytes, in this order (the
    /// same entries always give the same bytes).
    pub(crate) fn write<M: Serialize>(entries: Vec<(M, &[u8])>) -> Vec<u8> {
        let mut blob = Vec::new();
        let mut records = Vec::with_capacity(entries.len());
        for (meta, bytes) in entries {
            let z = miniz_oxide::deflate::compress_to_vec_zlib(bytes, 9);
            let at = Span(len32(blob.len()), len32(z.len()));
            blob.extend_from_slice(&z);
            records.push(Record { meta, at });
        }
        let index = serde_json::to_vec(&records).unwrap_or_default();
        let index = miniz_oxide::deflate::compress_to_vec_zlib(&index, 9);
        let mut out = Vec::with_capacity(16 + index.len() + blob.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&len32(records.len()).to_le_bytes());
        out.extend_from_slice(&len32(index.len()).to_le_bytes());
        out.extend_from_slice(&index);
        out.extend_from_slice(&blob);
        out
    }

    /// Reads the header of `bytes` (an embedded archive: `Bytes::from_static`, nothing copied).
    ///
    /// # Errors
    /// [`AnswersError::Corrupt`] when `bytes` are not an archive of this format.
    pub(crate) fn open(what: &str, bytes: &Bytes) -> Result<Self, AnswersError> {
        let bad = |why: &str| AnswersError::corrupt(what, why);
        if bytes.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
            return Err(bad("not an answers archive of this version"));
        }
        let word = |at: usize| -> Result<usize, AnswersError> {
            let b: [u8; 4] = bytes
                .get(at..at + 4)
                .and_then(|s| s.try_into().ok())
                .ok_or_else(|| bad("a header cut short"))?;
            Ok(u32::from_le_bytes(b) as usize)
        };
        let (count, index_len) = (word(8)?, word(12)?);
        let entries_at = 16 + index_len;
        if bytes.len() < entries_at {
            return Err(bad("an index cut short"));
        }
        Ok(Self {
            count,
            index: bytes.slice(16..entries_at),
            entries: bytes.slice(entries_at..),
        })
    }

    /// The number of entries, from the header.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Decodes the index: each entry's metadata, and a cell that inflates it on first read.
    ///
    /// # Errors
    /// [`AnswersError::Corrupt`] for an index that does not inflate, parse, or count right.
    pub(crate) fn index<M: DeserializeOwned>(
        &self,
        what: &str,
    ) -> Result<Vec<(M, Entry)>, AnswersError> {
        let bad = |why: String| AnswersError::corrupt(what, why);
        let json = inflate(&self.index).map_err(|e| bad(format!("its index: {e}")))?;
        let records: Vec<Record<M>> =
            serde_json::from_slice(&json).map_err(|e| bad(format!("its index: {e}")))?;
        if records.len() != self.count {
            return Err(bad(format!(
                "{} entries in the index, {} in the header",
                records.len(),
                self.count
            )));
        }
        records
            .into_iter()
            .map(|r| {
                let Span(at, len) = r.at;
                let (at, len) = (at as usize, len as usize);
                let bytes = at
                    .checked_add(len)
                    .and_then(|end| self.entries.get(at..end))
                    .map(|s| self.entries.slice_ref(s))
                    .ok_or_else(|| bad(format!("an entry at {at}+{len} beyond its end")))?;
                Ok((r.meta, Entry::packed(bytes)))
            })
            .collect()
    }
}

/// What an archive's index decodes to (`T`), decoded on first use; or a `T` built in this process.
/// Shared by the answer sets and Bitrix24's methods: their laziness lives here, once.
#[derive(Debug, Default)]
pub(crate) struct Indexed<T> {
    pack: Option<Pack>,
    index: OnceLock<T>,
}

impl<T: Default> Indexed<T> {
    /// `pack`, to be decoded by the first [`get`](Self::get).
    pub(crate) fn packed(pack: Pack) -> Self {
        Self {
            pack: Some(pack),
            index: OnceLock::new(),
        }
    }

    /// A `T` at hand.
    pub(crate) fn built(index: T) -> Self {
        Self {
            pack: None,
            index: OnceLock::from(index),
        }
    }

    /// The index, decoded by `read` on first use (an archive that does not decode leaves an
    /// empty one: [`read_now`](Self::read_now) says why, and the tests read every embedded one).
    pub(crate) fn get(&self, read: impl FnOnce(&Pack) -> Result<T, AnswersError>) -> &T {
        self.index.get_or_init(|| {
            self.pack
                .as_ref()
                .and_then(|p| read(p).ok())
                .unwrap_or_default()
        })
    }

    /// Decodes the archive now, if there is one, for its error.
    ///
    /// # Errors
    /// What `read` says.
    pub(crate) fn read_now(
        &self,
        read: impl FnOnce(&Pack) -> Result<T, AnswersError>,
    ) -> Result<(), AnswersError> {
        self.pack.as_ref().map_or(Ok(()), |p| read(p).map(drop))
    }

    /// The number of entries: the archive header's while the index is not decoded, else
    /// `count` of the index.
    pub(crate) fn len(&self, count: impl FnOnce(&T) -> usize) -> usize {
        match (&self.pack, self.index.get()) {
            (Some(pack), None) => pack.len(),
            (_, Some(index)) => count(index),
            (None, None) => 0,
        }
    }

    /// Whether the index has been decoded (or was built).
    #[cfg(test)]
    pub(crate) fn is_decoded(&self) -> bool {
        self.index.get().is_some()
    }
}

/// One entry's bytes: ready (made in this process), or compressed until first read.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    compressed: Bytes,
    inflated: OnceLock<Bytes>,
}

impl Entry {
    /// An entry whose bytes are already at hand.
    pub(crate) fn ready(bytes: Bytes) -> Self {
        Self {
            compressed: Bytes::new(),
            inflated: OnceLock::from(bytes),
        }
    }

    fn packed(compressed: Bytes) -> Self {
        Self {
            compressed,
            inflated: OnceLock::new(),
        }
    }

    /// Its bytes, inflated on the first read and kept (empty when they do not inflate: the
    /// tests read every embedded entry, so only a hand-damaged file gets there).
    pub(crate) fn bytes(&self) -> &Bytes {
        self.inflated.get_or_init(|| {
            inflate(&self.compressed)
                .map(Bytes::from)
                .unwrap_or_default()
        })
    }

    /// Whether its bytes are at hand (ready, or inflated by a read).
    #[cfg(test)]
    pub(crate) fn is_inflated(&self) -> bool {
        self.inflated.get().is_some()
    }

    /// Its bytes, or why they do not inflate.
    ///
    /// # Errors
    /// A corrupt entry.
    pub(crate) fn try_bytes(&self) -> Result<&Bytes, String> {
        if let Some(b) = self.inflated.get() {
            return Ok(b);
        }
        let b = inflate(&self.compressed)?;
        Ok(self.inflated.get_or_init(|| Bytes::from(b)))
    }
}

fn inflate(z: &[u8]) -> Result<Vec<u8>, String> {
    miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(z, MAX_INFLATED)
        .map_err(|e| format!("does not inflate: {:?}", e.status))
}

/// A length as the header and spans hold it (answers files are far below 4 GiB).
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Name {
        name: String,
    }

    fn two() -> Vec<(Name, &'static [u8])> {
        let name = |n: &str| Name { name: n.to_owned() };
        vec![(name("a"), b"first".as_slice()), (name("b"), b"")]
    }

    #[test]
    fn entries_read_back_one_by_one() {
        let file = Pack::write(two());
        let pack = Pack::open("t", &Bytes::from(file.clone())).unwrap();
        assert_eq!(pack.len(), 2);
        let index: Vec<(Name, Entry)> = pack.index("t").unwrap();
        assert_eq!(index[0].0.name, "a");
        assert_eq!(index[0].1.bytes().as_ref(), b"first");
        assert!(index[1].1.try_bytes().unwrap().is_empty());
        assert_eq!(file, Pack::write(two()), "the same entries, the same bytes");
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let file = Pack::write(two());
        for cut in 0..file.len() {
            let Ok(pack) = Pack::open("t", &Bytes::copy_from_slice(&file[..cut])) else {
                continue;
            };
            if let Ok(index) = pack.index::<Name>("t") {
                assert!(index[0].1.try_bytes().is_err(), "cut at {cut}");
            }
        }
        let mut flipped = file.clone();
        if let Some(last) = flipped.last_mut() {
            *last ^= 1;
        }
        let pack = Pack::open("t", &Bytes::from(flipped)).unwrap();
        let index = pack.index::<Name>("t").unwrap();
        assert!(
            index[1].1.try_bytes().is_err(),
            "a checksum that does not match"
        );
        let mut wrong = file;
        wrong[0] = b'X';
        assert!(Pack::open("t", &Bytes::from(wrong)).is_err());
    }
}
