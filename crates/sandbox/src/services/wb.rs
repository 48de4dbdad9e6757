//! Wildberries: every operation answers with its spec's example and its required parameters are
//! checked (a missing one is WB's own 400). The answers come from the committed import of WB's
//! specs (`data/wb-answers.json.zlib`, embedded; `apistend catalog import-wb-openapi DIR
//! --answers FILE` regenerates it), or from newer specs given with `--wb-openapi DIR`.

use std::collections::HashMap;
use std::path::Path;

use apistend_catalog::{Method, Operation};
use serde_json::{Value, json};

use super::{Refusal, Success};
use crate::call::Call;
use crate::error::SandboxError;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct SpecOp {
    status: u16,
    example: Value,
    /// The answer's media type when it is not JSON (`application/pdf`, `text/plain`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    media: Option<String>,
    /// The example as sent, rendered once at load: every answer is a reference-counted copy,
    /// not a clone and a serialisation of the example.
    #[serde(skip)]
    rendered: axum::body::Bytes,
    required_query: Vec<String>,
    body_required: bool,
}

impl SpecOp {
    /// Renders the example as its answer's body (none for an answer without content).
    fn render(&mut self) {
        self.rendered = if self.example.is_null() {
            axum::body::Bytes::new()
        } else {
            axum::body::Bytes::from(self.example.to_string())
        };
    }
}

/// One operation in the answers file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecRecord {
    method: String,
    path: String,
    #[serde(flatten)]
    op: SpecOp,
}

/// The answers file: what the import makes of the specs, in path order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    format: u32,
    operations: Vec<SpecRecord>,
}

/// The answers of an OpenAPI description: each operation's first 2xx status and example (or one
/// built from its schema), and its required query parameters and body. WB's come from its 14
/// specs, Apify's from its official document.
#[derive(Debug, Clone, Default)]
pub struct SpecAnswers {
    ops: HashMap<(Method, String), SpecOp>,
}

impl SpecAnswers {
    /// WB's answers embedded in the binary: the committed import of its official specs.
    ///
    /// ```
    /// let specs = apistend_sandbox::SpecAnswers::embedded()?;
    /// assert!(specs.len() > 290);
    /// # Ok::<(), apistend_sandbox::SandboxError>(())
    /// ```
    ///
    /// # Errors
    /// [`SandboxError::Config`] if the embedded file is corrupt (a build problem).
    pub fn embedded() -> Result<Self, SandboxError> {
        super::examples::embedded("wb")
    }

    /// Reads an answers file as [`to_file_bytes`](Self::to_file_bytes) writes it.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for bytes that are not such a file.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Self, SandboxError> {
        let bad = |e: String| SandboxError::Config(format!("answers file: {e}"));
        let json = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(bytes, 64 << 20)
            .map_err(|e| bad(format!("not zlib data: {e:?}")))?;
        let file: SpecFile = serde_json::from_slice(&json).map_err(|e| bad(e.to_string()))?;
        if file.format != 1 {
            return Err(bad(format!("format {} (this build reads 1)", file.format)));
        }
        let mut specs = SpecAnswers::default();
        for r in file.operations {
            let method =
                Method::parse(&r.method).ok_or_else(|| bad(format!("method {:?}", r.method)))?;
            let mut op = r.op;
            op.render();
            specs.ops.insert((method, r.path), op);
        }
        Ok(specs)
    }

    /// The answers file of these specs: JSON in path and method order, zlib-compressed (the
    /// same specs always give the same bytes).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut operations: Vec<SpecRecord> = self
            .ops
            .iter()
            .map(|((m, path), op)| SpecRecord {
                method: m.as_str().to_owned(),
                path: path.clone(),
                op: op.clone(),
            })
            .collect();
        operations.sort_by(|a, b| (&a.path, &a.method).cmp(&(&b.path, &b.method)));
        let file = SpecFile {
            format: 1,
            operations,
        };
        let json = serde_json::to_vec(&file).unwrap_or_default();
        miniz_oxide::deflate::compress_to_vec_zlib(&json, 9)
    }

    /// Loads every `*.yaml` of `dir` (one OpenAPI document per file).
    ///
    /// # Errors
    /// [`SandboxError::Config`] naming the file that cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Self, SandboxError> {
        let bad = |e: String| SandboxError::Config(format!("OpenAPI {}: {e}", dir.display()));
        let mut specs = SpecAnswers::default();
        for (name, yaml) in
            apistend_catalog::wb_import::read_specs(dir).map_err(|e| bad(e.to_string()))?
        {
            let doc = serde_json::to_value(&yaml).map_err(|e| bad(format!("{name}: {e}")))?;
            specs.add(&doc);
        }
        Ok(specs)
    }

    /// Loads one OpenAPI document (YAML, or JSON).
    ///
    /// # Errors
    /// [`SandboxError::Config`] naming the file that cannot be read or parsed.
    pub fn load_file(path: &Path) -> Result<Self, SandboxError> {
        let bad = |e: String| SandboxError::Config(format!("OpenAPI {}: {e}", path.display()));
        let yaml = apistend_catalog::wb_import::read_spec(path).map_err(|e| bad(e.to_string()))?;
        let doc = serde_json::to_value(&yaml).map_err(|e| bad(e.to_string()))?;
        let mut specs = SpecAnswers::default();
        specs.add(&doc);
        Ok(specs)
    }

    /// Number of operations loaded.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether none was loaded.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn add(&mut self, doc: &Value) {
        let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
            return;
        };
        // Paths are relative to the first server's path (MoySklad's `/api/remap/1.2`).
        let base = doc
            .get("servers")
            .and_then(|s| s.get(0))
            .and_then(|s| s.get("url"))
            .and_then(Value::as_str)
            .map(apistend_catalog::openapi_import::server_path)
            .unwrap_or_default()
            .to_owned();
        for (path, item) in paths {
            let path = &format!("{base}{path}");
            let shared: Vec<Value> = item
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (m, op) in item.as_object().into_iter().flatten() {
                let Some(method) = Method::parse(m).filter(|_| op.is_object()) else {
                    continue;
                };
                let mut required_query = Vec::new();
                let params = shared.iter().chain(
                    op.get("parameters")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten(),
                );
                for p in params.map(|p| deref(doc, p)) {
                    let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
                    if required
                        && p.get("in").and_then(Value::as_str) == Some("query")
                        && let Some(name) = p.get("name").and_then(Value::as_str)
                    {
                        required_query.push(name.to_owned());
                    }
                }
                let body_required = op
                    .get("requestBody")
                    .map(|b| deref(doc, b))
                    .and_then(|b| b.get("required"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let (status, media, example) = example(doc, op);
                self.ops.insert((method, path.clone()), {
                    let mut op = SpecOp {
                        status,
                        example,
                        media,
                        required_query,
                        body_required,
                        rendered: axum::body::Bytes::new(),
                    };
                    op.render();
                    op
                });
            }
        }
    }
}

fn deref<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(pointer) = r.strip_prefix('#') else {
            break;
        };
        match doc.pointer(pointer) {
            Some(next) => v = next,
            None => break,
        }
    }
    v
}

/// The first 2xx response and its example (an explicit example, the first of `examples`, or one
/// built from the schema: its own example, else its properties' examples, as Prism does).
fn example(doc: &Value, op: &Value) -> (u16, Option<String>, Value) {
    let Some(responses) = op.get("responses").and_then(Value::as_object) else {
        return (200, None, json!({}));
    };
    let mut codes: Vec<(&String, &Value)> = responses
        .iter()
        .filter(|(c, _)| c.starts_with('2'))
        .collect();
    codes.sort_by_key(|(c, _)| (*c).clone());
    let Some((code, resp)) = codes.first() else {
        return (200, None, json!({}));
    };
    let status = code.parse().unwrap_or(200);
    let resp = deref(doc, resp);
    let content = resp.get("content").and_then(Value::as_object);
    let json_media = content.and_then(|c| c.iter().find(|(t, _)| t.contains("json")));
    let (media_type, media) = match (json_media, content.and_then(|c| c.iter().next())) {
        (Some((_, m)), _) => (None, m),
        (None, Some((t, m))) => (Some(t.clone()), m),
        // No content: an empty answer.
        (None, None) => return (status, None, Value::Null),
    };
    let (status, example) = json_example(doc, status, media);
    (status, media_type, example)
}

/// The example of a JSON `media` (repaired against its schema), or one built from its schema.
fn json_example(doc: &Value, status: u16, media: &Value) -> (u16, Value) {
    let given = media.get("example").cloned().or_else(|| {
        media
            .get("examples")
            .and_then(Value::as_object)
            .and_then(|e| e.values().next())
            .map(|first| {
                deref(doc, first)
                    .get("value")
                    .cloned()
                    .unwrap_or(Value::Null)
            })
    });
    if let Some(mut ex) = given {
        // An example that leaves out properties its schema requires gets them from the schema.
        if let Some(schema) = media.get("schema") {
            complete(doc, schema, &mut ex, 0);
        }
        return (status, ex);
    }
    let built = media.get("schema").map_or_else(
        || json!({}),
        |s| {
            let mut v = from_schema(doc, s, 0);
            complete(doc, s, &mut v, 0);
            v
        },
    );
    (status, built)
}

/// Makes an example agree with its schema, as the walking test checks it: a value of the wrong
/// type, or outside its enum, is replaced by one built from the schema (the vendors' examples
/// contradict their own schemas in places — "ОСНО" where the enum says "OSNO"); properties the
/// schema requires that the example lacks are added. Recursive over objects and arrays.
fn complete(doc: &Value, schema: &Value, value: &mut Value, depth: u32) {
    let s = deref(doc, schema);
    if depth > 16 {
        return;
    }
    if let Some(parts) = s.get("allOf").and_then(Value::as_array) {
        for part in parts {
            complete(doc, part, value, depth + 1);
        }
    }
    let wrong_enum = s
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty() && !e.contains(value))
        || s.get("const").is_some_and(|c| c != value);
    let wrong_literal =
        literal_pattern(s).is_some_and(|p| value.as_str().is_some_and(|v| !v.contains(p)));
    let wrong_branch = discriminated(s).is_some_and(|(prop, _, _)| {
        let names = s
            .get("discriminator")
            .and_then(|d| d.get("mapping"))
            .and_then(Value::as_object);
        value
            .get(prop)
            .and_then(Value::as_str)
            .is_none_or(|v| names.is_none_or(|m| !m.contains_key(v)))
    });
    if wrong_enum || wrong_literal || wrong_branch || !type_fits(s, value) {
        *value = from_schema(doc, s, depth);
        return;
    }
    match value {
        Value::Object(obj) => {
            let props = s.get("properties").and_then(Value::as_object);
            for name in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !obj.contains_key(name) {
                    let sub = props
                        .and_then(|p| p.get(name))
                        .cloned()
                        .unwrap_or(json!({}));
                    obj.insert(name.to_owned(), from_schema(doc, &sub, depth + 1));
                }
            }
            if let Some(props) = props {
                for (name, sub) in props {
                    if let Some(v) = obj.get_mut(name) {
                        complete(doc, sub, v, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for v in items {
                    complete(doc, item_schema, v, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// A schema's discriminator: its property, and its first mapping's name and schema reference.
fn discriminated(schema: &Value) -> Option<(&str, &str, &str)> {
    let d = schema.get("discriminator")?;
    let prop = d.get("propertyName")?.as_str()?;
    let (name, target) = d.get("mapping")?.as_object()?.iter().next()?;
    Some((prop, name.as_str(), target.as_str()?))
}

/// A string schema's `pattern` when it has no regex syntax at all: a text to contain.
fn literal_pattern(schema: &Value) -> Option<&str> {
    schema.get("pattern").and_then(Value::as_str).filter(|p| {
        !p.is_empty()
            && !p.contains([
                '^', '$', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\',
            ])
    })
}

/// Whether `value`'s JSON type is one `schema` allows (any, when it names none).
fn type_fits(schema: &Value, value: &Value) -> bool {
    let nullable = schema.get("nullable").and_then(Value::as_bool) == Some(true);
    let fits = |t: &str| match t {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    };
    match schema.get("type") {
        Some(Value::String(t)) => fits(t) || (nullable && value.is_null()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(fits),
        _ => true,
    }
}

/// An instance of `schema`: examples and defaults where the spec gives them, the first of an
/// enum, otherwise the plainest value of the type. Bounded in depth, for recursive schemas.
fn from_schema(doc: &Value, schema: &Value, depth: u32) -> Value {
    let s = deref(doc, schema);
    if let Some(v) = s.get("const") {
        return v.clone();
    }
    // An example or default that breaks its own schema (a string default on an array, one
    // outside the enum — both in Ozon's document) is not used.
    let usable = |v: &Value| {
        type_fits(s, v)
            && s.get("enum")
                .and_then(Value::as_array)
                .is_none_or(|e| e.is_empty() || e.contains(v))
    };
    let given = s.get("example").or_else(|| s.get("default")).or_else(|| {
        s.get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
    });
    if let Some(v) = given.filter(|v| usable(v)) {
        return v.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    // Deep in a recursive schema: the plainest value of its type, never a null it forbids.
    let deep = depth > 12;
    if let Some(parts) = s.get("allOf").and_then(Value::as_array).filter(|_| !deep) {
        let mut merged = serde_json::Map::new();
        for part in parts {
            match from_schema(doc, part, depth + 1) {
                Value::Object(o) => merged.extend(o),
                other if parts.len() == 1 => return other,
                _ => {}
            }
        }
        return Value::Object(merged);
    }
    // A discriminated union: its first mapping's schema, with the discriminating property set
    // to that mapping's name (MoySklad's `type`), as a validator of the union requires.
    if let Some((prop, name, target)) = discriminated(s).filter(|_| !deep) {
        let mut v = from_schema(doc, &json!({"$ref": target}), depth + 1);
        if let Value::Object(obj) = &mut v {
            obj.insert(prop.to_owned(), json!(name));
        }
        return v;
    }
    if let Some(first) = ["oneOf", "anyOf"]
        .iter()
        .filter(|_| !deep)
        .find_map(|k| s.get(*k).and_then(Value::as_array).and_then(|a| a.first()))
    {
        return from_schema(doc, first, depth + 1);
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // OpenAPI 3.1 type lists: the first that is not "null".
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.get("properties").is_some() => "object",
        _ if s.get("items").is_some() => "array",
        _ => "",
    };
    match ty {
        "object" if deep => json!({}),
        "array" if deep => json!([]),
        "object" => {
            // Deep down only the required properties: recursive schemas end, answers stay small.
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            Value::Object(
                s.get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| depth < 6 || required.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), from_schema(doc, v, depth + 1)))
                    .collect(),
            )
        }
        // One item near the top; deeper lists stay empty unless the schema needs items.
        "array" => match s.get("items") {
            Some(items)
                if depth < 6 || s.get("minItems").and_then(Value::as_u64).unwrap_or(0) > 0 =>
            {
                json!([from_schema(doc, items, depth + 1)])
            }
            _ => json!([]),
        },
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("date-time") => json!("2026-01-01T00:00:00Z"),
            Some("date") => json!("2026-01-01"),
            Some("uuid") => json!("00000000-0000-0000-0000-000000000000"),
            // A pattern without any regex syntax is its own only match (Ozon's " YYYY-MM-DD").
            _ if literal_pattern(s).is_some() => json!(literal_pattern(s)),
            // A string the schema asks to be non-empty is one.
            _ if s.get("minLength").and_then(Value::as_u64).unwrap_or(0) > 0 => json!("string"),
            _ => json!(""),
        },
        // The smallest value the schema allows (0 unless its minimum says more; above an
        // exclusive minimum).
        "integer" | "number" => {
            let min = s
                .get("minimum")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .max(0.0);
            let exclusive = s.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true)
                || s.get("exclusiveMinimum").and_then(Value::as_f64).is_some();
            let min = s
                .get("exclusiveMinimum")
                .and_then(Value::as_f64)
                .unwrap_or(min)
                .max(min);
            let v = if exclusive {
                min.floor() + 1.0
            } else {
                min.ceil()
            };
            #[allow(clippy::cast_possible_truncation)] // a schema's small bound
            let v = v as i64;
            json!(v)
        }
        "boolean" => json!(false),
        "null" => Value::Null,
        _ if s.get("nullable").and_then(Value::as_bool) == Some(true) => Value::Null,
        _ => json!({}),
    }
}

impl SpecAnswers {
    /// The answer of `method path` (an operation's path template) for `call`: its required
    /// query parameters and body checked (a missing one is the service's 400; no body is an
    /// empty object when `empty_body_ok`), then its example; `None` for an operation the
    /// description does not have.
    pub(crate) fn answer(
        &self,
        method: Method,
        path: &str,
        call: &Call,
        empty_body_ok: bool,
    ) -> Option<Result<Success, Refusal>> {
        let spec = self.ops.get(&(method, path.to_owned()))?;
        for name in &spec.required_query {
            if !call.query.iter().any(|(k, _)| k == name) {
                return Some(Err(Refusal::BadRequest(format!(
                    "parameter \"{name}\" is required"
                ))));
            }
        }
        // Any body will do: some operations take multipart uploads or octet streams.
        if spec.body_required && !call.has_body && !empty_body_ok {
            return Some(Err(Refusal::BadRequest("request body is required".into())));
        }
        let mut answer = Success::new(spec.status, Value::Null);
        answer.rendered = Some(spec.rendered.clone());
        answer.media = spec.media.clone();
        if spec.media.is_some() {
            // A file's text (a log) comes from the example itself.
            answer.body = spec.example.clone();
        }
        Some(Ok(answer))
    }
}

/// WB's answers that depend on the request (`/ping`'s time); the examples answer the rest.
pub(crate) fn answer(op: &Operation) -> Option<Success> {
    (op.path == "/ping").then(|| {
        Success::ok(json!({"TS": crate::clock::rfc3339(crate::clock::unix_now()), "Status": "OK"}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_without_an_example_are_built_from_their_properties() {
        let doc = json!({"components": {"schemas": {"Count": {"type": "integer", "example": 24}}}});
        let schema = json!({
            "type": "object",
            "properties": {
                "data": {"type": "object", "properties": {"count": {"$ref": "#/components/schemas/Count"}}},
                "error": {"type": "boolean", "example": false},
                "errorText": {"type": "string"},
                "additionalErrors": {"nullable": true, "type": "array", "items": {"type": "string"}, "example": null},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "when": {"type": "string", "format": "date-time"},
                "list": {"type": "array", "items": {"allOf": [{"type": "object", "properties": {"id": {"type": "integer"}}}]}},
                "either": {"oneOf": [{"type": "number", "example": 1.5}, {"type": "string"}]}
            }
        });
        assert_eq!(
            from_schema(&doc, &schema, 0),
            json!({"data": {"count": 24}, "error": false, "errorText": "", "additionalErrors": null,
                   "kind": "a", "when": "2026-01-01T00:00:00Z", "list": [{"id": 0}], "either": 1.5})
        );
        // A schema that refers to itself ends in null, not in a stack overflow.
        let doc = json!({"components": {"schemas": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}}}}}});
        let v = from_schema(&doc, &json!({"$ref": "#/components/schemas/Node"}), 0);
        assert!(v.pointer("/next/next/next").is_some());
    }
}
