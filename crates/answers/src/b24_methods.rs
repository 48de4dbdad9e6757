//! Bitrix24's documented methods and the example each one's page shows (imported from
//! `../shared/specs/b24/methods.json`, embedded as the archive `data/b24-methods.pack`): every
//! documented method answers its example `result`, list methods with their `total` (and `next`
//! where the page shows one). The archive's index is read on the first call of a documented
//! method, each method's example on its own first call.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use foldhash::HashMap;
use serde_json::{Value, json};

use crate::error::AnswersError;
use crate::pack::{Entry, Indexed, Pack};

/// The committed examples, an answers archive ([`crate::pack`]).
const EMBEDDED: &[u8] = include_bytes!("../data/b24-methods.pack");

/// What the archive and errors call it.
const WHAT: &str = "Bitrix24 methods file";

/// Lower-cased method name → its answer body (without the `time` block).
#[derive(Debug, Clone, Default)]
pub struct B24Methods {
    methods: Arc<Indexed<HashMap<String, Documented>>>,
}

/// One method's example: its JSON text, and its value once an answer has needed it.
#[derive(Debug)]
struct Documented {
    text: Entry,
    value: OnceLock<Value>,
}

/// A method's record in the archive's index.
#[derive(serde::Serialize, serde::Deserialize)]
struct Name {
    method: String,
}

impl B24Methods {
    /// The embedded examples.
    ///
    /// # Errors
    /// [`AnswersError`] if the embedded file is corrupt (a build problem).
    pub fn embedded() -> Result<Self, AnswersError> {
        let pack = Pack::open(WHAT, &Bytes::from_static(EMBEDDED))?;
        Ok(Self::with(Indexed::packed(pack)))
    }

    fn with(methods: Indexed<HashMap<String, Documented>>) -> Self {
        Self {
            methods: Arc::new(methods),
        }
    }

    /// The methods of `pack`'s index.
    fn read(pack: &Pack) -> Result<HashMap<String, Documented>, AnswersError> {
        Ok(pack
            .index::<Name>(WHAT)?
            .into_iter()
            .map(|(n, text)| {
                let value = OnceLock::new();
                (n.method, Documented { text, value })
            })
            .collect())
    }

    /// The methods, read from the archive's index on first use.
    fn methods(&self) -> &HashMap<String, Documented> {
        self.methods.get(Self::read)
    }

    /// Reads the classic (`/rest/`) methods of methods.json.
    ///
    /// # Errors
    /// [`AnswersError`] for text that is not methods.json.
    pub fn from_methods_json(text: &str) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt("methods.json", e);
        let doc: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let list = doc
            .get("methods")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no methods".into()))?;
        let mut methods = HashMap::default();
        for m in list {
            if m.get("rest_version").and_then(Value::as_u64) != Some(2) {
                continue;
            }
            let Some(name) = m.get("method").and_then(Value::as_str) else {
                continue;
            };
            let is_list = m.get("is_list").and_then(Value::as_bool) == Some(true);
            // A page whose example the extraction could not parse (prose in it: "еще 48 лидов
            // с аналогичной структурой") is read leniently; failing that, a list method
            // answers a list, never `true`.
            let lenient = m
                .get("example")
                .and_then(|e| e.get("raw"))
                .and_then(Value::as_str)
                .and_then(lenient_json);
            let example = m
                .get("example")
                .filter(|e| e.get("raw").is_none())
                .or(lenient.as_ref());
            let result = example
                .and_then(|e| e.get("result").or_else(|| e.get("result_inferred")))
                .cloned()
                .unwrap_or(if is_list {
                    json!([])
                } else {
                    Value::Bool(true)
                });
            let mut body = serde_json::Map::new();
            body.insert("result".into(), result.clone());
            for key in ["total", "next"] {
                if let Some(v) = example.and_then(|e| e.get(key)) {
                    body.insert(key.into(), v.clone());
                }
            }
            if is_list && !body.contains_key("total") {
                let n = result.as_array().map_or(0, Vec::len);
                body.insert("total".into(), json!(n));
            }
            let body = Value::Object(body);
            let text = Entry::ready(Bytes::from(body.to_string()));
            let value = OnceLock::from(body);
            methods.insert(name.to_ascii_lowercase(), Documented { text, value });
        }
        Ok(Self::with(Indexed::built(methods)))
    }

    /// Reads an archive [`to_file_bytes`](Self::to_file_bytes) wrote, whole.
    ///
    /// # Errors
    /// [`AnswersError`] for bytes that are not such a file.
    pub fn from_file_bytes(bytes: impl Into<Bytes>) -> Result<Self, AnswersError> {
        let methods = Self::read(&Pack::open(WHAT, &bytes.into())?)?;
        for (name, m) in &methods {
            m.text
                .try_bytes()
                .map_err(|e| AnswersError::corrupt(WHAT, format!("{name}: {e}")))?;
        }
        Ok(Self::with(Indexed::built(methods)))
    }

    /// The archive: methods in name order (the same input gives the same bytes).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut sorted: Vec<(&String, &Documented)> = self.methods().iter().collect();
        sorted.sort_by_key(|(name, _)| *name);
        Pack::write(
            sorted
                .into_iter()
                .map(|(name, m)| {
                    let method = name.clone();
                    (Name { method }, m.text.bytes().as_ref())
                })
                .collect(),
        )
    }

    /// Number of methods.
    pub fn len(&self) -> usize {
        self.methods.len(HashMap::len)
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The documented answer of `method` (lower case), parsed on its first call.
    pub(crate) fn answer(&self, method: &str) -> Option<&Value> {
        let m = self.methods().get(method)?;
        Some(
            m.value
                .get_or_init(|| serde_json::from_slice(m.text.bytes()).unwrap_or(Value::Null)),
        )
    }
}

/// An example as a documentation page prints it, read leniently: lines of prose between the
/// JSON lines dropped, trailing commas removed. `None` when it is still no JSON.
fn lenient_json(raw: &str) -> Option<Value> {
    let json_line = |l: &&str| {
        let t = l.trim_start();
        t.is_empty()
            || t.starts_with(['{', '}', '[', ']', '"', '-'])
            || t.starts_with(|c: char| c.is_ascii_digit())
            || ["true", "false", "null"].iter().any(|w| t.starts_with(w))
    };
    let kept: Vec<&str> = raw.lines().filter(json_line).collect();
    let text = kept.join("\n");
    // Trailing commas, outside strings.
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars.iter().skip(i + 1).find(|n| !n.is_whitespace());
            if matches!(next, Some(']' | '}')) {
                continue;
            }
        }
        out.push(c);
    }
    serde_json::from_str(&out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_with_prose_in_it_is_read_leniently() {
        let raw = "{\n  \"result\": [\n    {\"ID\": \"5\", \"T\": \"a, ]\\\"\"},\n    \n      еще 48 лидов\n  ],\n  \"total\": 654\n}";
        let v = lenient_json(raw).unwrap();
        assert_eq!(v["result"][0]["T"], "a, ]\"");
        assert_eq!(v["total"], 654);
        assert!(lenient_json("not json at all").is_none());
    }

    /// The embedded archive reads whole and writes back the very bytes it was read from; it is
    /// read on first use, a method's example on its first call.
    #[test]
    fn the_embedded_methods_read_back_whole_and_lazily() {
        let methods = B24Methods::embedded().unwrap();
        assert!(!methods.methods.is_decoded(), "nothing read at start");
        assert!(methods.len() > 1000);
        assert!(methods.answer("crm.deal.list").is_some());
        let parsed = methods
            .methods()
            .values()
            .filter(|m| m.value.get().is_some());
        assert_eq!(parsed.count(), 1);
        assert!(methods.to_file_bytes() == EMBEDDED);
        assert!(B24Methods::from_file_bytes(Bytes::from_static(EMBEDDED)).is_ok());
    }
}
