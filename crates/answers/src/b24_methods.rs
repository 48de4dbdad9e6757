//! Bitrix24's documented methods and the example each one's page shows (imported from
//! `../shared/specs/b24/methods.json`, embedded as `data/b24-methods.json.zlib`): every
//! documented method answers its example `result`, list methods with their `total` (and `next`
//! where the page shows one).

use std::collections::BTreeMap;

use foldhash::HashMap;

use serde_json::{Value, json};

use crate::error::AnswersError;

/// The committed examples, zlib-compressed JSON.
const EMBEDDED: &[u8] = include_bytes!("../data/b24-methods.json.zlib");

/// Lower-cased method name → its answer body (without the `time` block).
#[derive(Debug, Clone, Default)]
pub struct B24Methods {
    methods: HashMap<String, Value>,
}

impl B24Methods {
    /// The embedded examples.
    ///
    /// # Errors
    /// [`AnswersError`] if the embedded file is corrupt (a build problem).
    pub fn embedded() -> Result<Self, AnswersError> {
        Self::from_file_bytes(EMBEDDED)
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
            let example = m.get("example");
            let result = example
                .and_then(|e| e.get("result").or_else(|| e.get("result_inferred")))
                .cloned()
                .unwrap_or(Value::Bool(true));
            let mut body = serde_json::Map::new();
            body.insert("result".into(), result.clone());
            let is_list = m.get("is_list").and_then(Value::as_bool) == Some(true);
            for key in ["total", "next"] {
                if let Some(v) = example.and_then(|e| e.get(key)) {
                    body.insert(key.into(), v.clone());
                }
            }
            if is_list && !body.contains_key("total") {
                let n = result.as_array().map_or(0, Vec::len);
                body.insert("total".into(), json!(n));
            }
            methods.insert(name.to_ascii_lowercase(), Value::Object(body));
        }
        Ok(Self { methods })
    }

    /// Reads a file [`to_file_bytes`](Self::to_file_bytes) wrote.
    ///
    /// # Errors
    /// [`AnswersError`] for bytes that are not such a file.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt("Bitrix24 methods file", e);
        let json = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(bytes, 64 << 20)
            .map_err(|e| bad(format!("not zlib data: {e:?}")))?;
        let methods: HashMap<String, Value> =
            serde_json::from_slice(&json).map_err(|e| bad(e.to_string()))?;
        Ok(Self { methods })
    }

    /// The file: JSON in method order, zlib-compressed (the same input gives the same bytes).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let sorted: BTreeMap<&String, &Value> = self.methods.iter().collect();
        let json = serde_json::to_vec(&sorted).unwrap_or_default();
        miniz_oxide::deflate::compress_to_vec_zlib(&json, 9)
    }

    /// Number of methods.
    pub fn len(&self) -> usize {
        self.methods.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.methods.is_empty()
    }

    /// The documented answer of `method` (lower case).
    pub(crate) fn answer(&self, method: &str) -> Option<&Value> {
        self.methods.get(method)
    }
}
