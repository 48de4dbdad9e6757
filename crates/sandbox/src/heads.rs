//! The header maps of answers, made once per shape and cloned.
//!
//! hyper takes an answer's headers as a `HeaderMap`, and every insert into one hashes the name
//! (byte by byte, for the services' own names such as `x-ratelimit-remaining`) and probes its
//! table: a WB rejection's six headers cost about 1 700 instructions that way, more than the
//! rest of building the answer (callgrind, BENCHMARKS.md). But an answer's header *names* depend
//! only on its shape — the service's rate headers for an allowed or a refused request, a
//! content type or none, a scenario echoed or not — and a sandbox answers with a handful of
//! shapes. So the first answer of each shape leaves a map of those names behind, and later ones
//! clone it (two allocations and a copy, no hashing) and write their values in place, in order.

use std::sync::OnceLock;

use http::{HeaderMap, HeaderName, HeaderValue};

/// `X-APIStend-Invalid`: why a request is not one its operation takes (a hint of ours, never a
/// header the real service sends); the validation stage writes it, the journal reads it.
pub(crate) const X_APISTEND_INVALID: &str = "x-apistend-invalid";

/// How many shapes are kept: a few per service are seen in practice; past this, answers of new
/// shapes build their map header by header.
const SHAPES: usize = 64;

/// A header as an answer is made: its name (lower-case, static) and value.
pub(crate) type Field = (&'static str, HeaderValue);

/// An answer's headers, names and values, in the order they go on the wire.
///
/// A `Vec` with room for the usual eight (a content type, six rate headers and the scenario's
/// echo): one allocation, and a move of the list is three words (an inline array of eight
/// header values measured slower, initialising, moving and dropping its empty slots).
pub(crate) struct Fields {
    items: Vec<Field>,
}

impl Fields {
    /// No headers yet.
    pub(crate) fn new() -> Self {
        Self {
            items: Vec::with_capacity(8),
        }
    }

    /// The headers, in order.
    pub(crate) fn items(&self) -> &[Field] {
        &self.items
    }

    /// Adds header `name` (lower-case, as definitions and constants give them) with `value`.
    pub(crate) fn push(&mut self, name: &'static str, value: HeaderValue) {
        self.items.push((name, value));
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.items.iter().map(|(n, _)| *n)
    }

    /// The map of these headers, header by header.
    fn build(self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.items.len());
        for (name, value) in self.items {
            // Names come from definitions (checked as tokens and lower-cased at load) and from
            // constants; one that is not a header name is left out rather than panicking.
            if let Ok(name) = HeaderName::from_bytes(name.as_bytes()) {
                map.append(name, value);
            }
        }
        map
    }
}

/// One shape: its names in order, and a map of them with empty values.
#[derive(Debug)]
struct Shape {
    names: Box<[&'static str]>,
    map: HeaderMap,
}

impl Shape {
    /// The shape of `fields`, if it can be one: names that are header names, each once (a
    /// name twice would put the second value outside the map's entries, where the values are
    /// written in place).
    fn of(fields: &Fields) -> Option<Self> {
        let mut map = HeaderMap::with_capacity(fields.items.len());
        for name in fields.names() {
            let parsed = HeaderName::from_bytes(name.as_bytes()).ok()?;
            // A name that is already in canonical form is kept as the static string it is, so a
            // clone of the map copies a pointer instead of counting a reference to its bytes.
            let name = if parsed.as_str() == name {
                HeaderName::from_static(name)
            } else {
                parsed
            };
            if map.insert(name, HeaderValue::from_static("")).is_some() {
                return None;
            }
        }
        Some(Self {
            names: fields.names().collect(),
            map,
        })
    }

    fn fits(&self, fields: &Fields) -> bool {
        self.names.len() == fields.items.len() && self.names.iter().copied().eq(fields.names())
    }

    /// A copy of the map with `fields`' values, which have this shape.
    fn fill(&self, fields: Fields) -> HeaderMap {
        let mut map = self.map.clone();
        for (slot, (_, value)) in map.values_mut().zip(fields.items) {
            *slot = value;
        }
        map
    }
}

/// The header map of `fields`: a known shape's map filled in, or one built header by header
/// (which teaches its shape for the next answer). The shapes are the process's: they are lists of
/// header names, the same whichever sandbox answers. `seen` is shown the fields before they go
/// into the map, with the number of their shape when it is a known one ([`names`] gives its
/// names then): the journal keeps an answer's values and that number, not its names again.
pub(crate) fn map(fields: Fields, seen: impl FnOnce(Option<u8>, &Fields)) -> HeaderMap {
    HEADS.map(fields, seen)
}

/// The names of shape `n` ([`map`]), in order.
pub(crate) fn names(n: u8) -> Option<&'static [&'static str]> {
    let shape = HEADS.shapes.get(usize::from(n))?.get()?;
    Some(&shape.names)
}

static HEADS: std::sync::LazyLock<Heads> = std::sync::LazyLock::new(Heads::default);

/// The shapes seen so far. Readers only load each slot once it is set; a new shape takes the
/// first free slot (two threads that learn shapes at once may each take one; a duplicate costs a
/// slot, nothing else).
struct Heads {
    shapes: Box<[OnceLock<Shape>]>,
}

impl std::fmt::Debug for Heads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known = self.shapes.iter().filter(|s| s.get().is_some()).count();
        f.debug_struct("Heads").field("shapes", &known).finish()
    }
}

impl Default for Heads {
    fn default() -> Self {
        Self {
            shapes: (0..SHAPES).map(|_| OnceLock::new()).collect(),
        }
    }
}

impl Heads {
    fn map(&self, fields: Fields, seen: impl FnOnce(Option<u8>, &Fields)) -> HeaderMap {
        // `SHAPES` slots: each one's number fits a byte.
        let number = |i: usize| u8::try_from(i).ok();
        for (i, slot) in self.shapes.iter().enumerate() {
            match slot.get() {
                Some(shape) if shape.fits(&fields) => {
                    seen(number(i), &fields);
                    return shape.fill(fields);
                }
                Some(_) => {}
                None => {
                    // Another thread may have taken the slot meanwhile: then the shape is not
                    // known by this number.
                    let set = Shape::of(&fields).is_some_and(|s| slot.set(s).is_ok());
                    seen(number(i).filter(|_| set), &fields);
                    return fields.build();
                }
            }
        }
        seen(None, &fields);
        fields.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(list: &[(&'static str, &'static str)]) -> Fields {
        let mut f = Fields::new();
        for (n, v) in list {
            f.push(n, HeaderValue::from_static(v));
        }
        f
    }

    fn wire(map: &HeaderMap) -> Vec<(String, String)> {
        map.iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_owned()))
            .collect()
    }

    #[test]
    fn a_learned_shape_gives_the_same_map_as_one_built_header_by_header() {
        let heads = Heads::default();
        let first = [
            ("content-type", "application/json"),
            ("x-ratelimit-retry", "57"),
            ("x-ratelimit-limit", "10"),
            ("x-apistend-scenario", "rate_limit"),
        ];
        let second = [
            ("content-type", "text/plain"),
            ("x-ratelimit-retry", "1"),
            ("x-ratelimit-limit", "20"),
            ("x-apistend-scenario", "rate_limit"),
        ];
        assert_eq!(
            wire(&heads.map(fields(&first), |_, _| {})),
            wire(&fields(&first).build())
        );
        assert_eq!(heads.shapes.iter().filter(|s| s.get().is_some()).count(), 1);
        // The second answer of the shape is filled in from the template, in order.
        let filled = heads.map(fields(&second), |_, _| {});
        let expected: Vec<_> = second
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(wire(&filled), expected);
        assert_eq!(heads.shapes.iter().filter(|s| s.get().is_some()).count(), 1);
    }

    #[test]
    fn an_answer_of_a_known_shape_is_shown_its_number_and_the_number_names_it() {
        let a = [("content-type", "application/json"), ("x-shape-test", "1")];
        let mut got = Vec::new();
        for _ in 0..2 {
            map(fields(&a), |n, f| got.push((n, f.items().len())));
        }
        // The first answer teaches the shape (and knows its number, unless a test beside this
        // one took the slot at once), the second finds it.
        let n = got[1].0.expect("a known shape");
        assert!(matches!(got[0], (None | Some(_), 2)) && got[0].0.is_none_or(|f| f == n));
        assert_eq!(names(n), Some(&["content-type", "x-shape-test"][..]));
        assert_eq!(names(u8::MAX), None);
        let twice = [("x-a", "1"), ("x-a", "2")];
        map(fields(&twice), |n, _| assert_eq!(n, None, "no shape"));
    }

    #[test]
    fn other_shapes_and_repeated_names_are_kept_apart() {
        let heads = Heads::default();
        let a = [("content-type", "application/json"), ("x-a", "1")];
        let b = [("content-type", "application/json"), ("x-b", "2")];
        let twice = [("x-a", "1"), ("x-a", "2")];
        heads.map(fields(&a), |_, _| {});
        assert_eq!(
            wire(&heads.map(fields(&b), |_, _| {})),
            wire(&fields(&b).build())
        );
        // A repeated name is no shape: both values are sent, header by header, every time.
        for _ in 0..2 {
            let map = heads.map(fields(&twice), |_, _| {});
            assert_eq!(map.get_all("x-a").iter().count(), 2);
        }
        assert_eq!(heads.shapes.iter().filter(|s| s.get().is_some()).count(), 2);
    }

    #[test]
    fn more_headers_than_usual_are_all_sent_in_order() {
        let heads = Heads::default();
        let names = [
            "x-0", "x-1", "x-2", "x-3", "x-4", "x-5", "x-6", "x-7", "x-8", "x-9",
        ];
        let mut f = Fields::new();
        for n in names {
            f.push(n, HeaderValue::from_static("v"));
        }
        let map = heads.map(f, |_, _| {});
        let got: Vec<_> = map.keys().map(HeaderName::as_str).collect();
        assert_eq!(got, names);
    }

    #[test]
    fn an_invalid_name_is_left_out_not_a_panic() {
        let heads = Heads::default();
        let map = heads.map(fields(&[("bad name", "1"), ("x-ok", "2")]), |_, _| {});
        assert_eq!(wire(&map), vec![("x-ok".to_owned(), "2".to_owned())]);
    }
}
