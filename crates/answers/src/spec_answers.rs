//! The answers of an OpenAPI description: each operation's first 2xx status and example (repaired
//! against its schema, or built from it — [`crate::schema_values`]), its media type, and its
//! required query parameters and body. Imported from the official descriptions, committed as
//! zlib JSON (`data/*-answers.json.zlib`, [`crate::examples`]) and read back at start.

use foldhash::HashMap;
use std::path::Path;

use apistend_catalog::Method;
use serde_json::{Value, json};

use crate::answer::{Refusal, Success};
use crate::call::Call;
use crate::error::AnswersError;
use crate::schema_values::{complete, deref, from_schema};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct SpecOp {
    status: u16,
    example: Value,
    /// The answer's media type when it is not JSON (`application/pdf`, `text/plain`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    media: Option<String>,
    /// The example as sent: every answer is a reference-counted copy, not a clone and a
    /// serialisation of the example. Read from an answers file, it is a view into the file's
    /// JSON, held once, and `example` is kept as a value only where an answer needs it (a
    /// file's text); the rest is never built into a tree (MoySklad's 10 MB of examples).
    #[serde(skip)]
    rendered: bytes::Bytes,
    required_query: Vec<String>,
    body_required: bool,
    /// The 400 its description documents, when that is not the service's usual JSON (WB's
    /// `application/problem+json` and `text/plain` refusals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refusal: Option<DocumentedRefusal>,
}

/// A documented 400: its media type and example.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct DocumentedRefusal {
    media: String,
    example: Value,
}

impl DocumentedRefusal {
    /// The 400 of `op` in `doc`, when its media type is not plain `application/json`.
    fn of(doc: &Value, op: &Value) -> Option<Self> {
        let resp = deref(doc, op.get("responses")?.get("400")?);
        let (media, content) = resp.get("content")?.as_object()?.iter().next()?;
        if media.split(';').next().unwrap_or("").trim() == "application/json" {
            return None;
        }
        let example = content
            .get("example")
            .cloned()
            .or_else(|| {
                let first = content.get("examples")?.as_object()?.values().next()?;
                deref(doc, first).get("value").cloned()
            })
            .unwrap_or(Value::Null);
        Some(Self {
            media: media.clone(),
            example,
        })
    }

    /// This refusal saying `why`: a problem document's `detail` (and a text's whole body) is
    /// the reason; the rest is the description's example (WB's `origin`, `title`).
    fn saying(&self, why: String) -> Refusal {
        let body = match &self.example {
            Value::Object(o) => {
                let mut o = o.clone();
                o.insert("detail".into(), Value::String(why));
                Value::Object(o)
            }
            _ if self.media.contains("json") => {
                json!({"title": "Bad Request", "status": 400, "detail": why})
            }
            _ => Value::String(why),
        };
        Refusal::Body {
            status: 400,
            body,
            media: Some(self.media.clone()),
        }
    }
}

impl SpecOp {
    /// Renders the example as its answer's body (none for an answer without content).
    fn render(&mut self) {
        self.rendered = if self.example.is_null() {
            bytes::Bytes::new()
        } else {
            bytes::Bytes::from(self.example.to_string())
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

/// One operation in the answers file, as read: its example left as the file's own text.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecord<'a> {
    method: String,
    path: String,
    status: u16,
    #[serde(borrow)]
    example: &'a serde_json::value::RawValue,
    #[serde(default)]
    media: Option<String>,
    required_query: Vec<String>,
    body_required: bool,
    #[serde(default)]
    refusal: Option<DocumentedRefusal>,
}

/// The answers file, as read.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile<'a> {
    format: u32,
    #[serde(borrow)]
    operations: Vec<RawRecord<'a>>,
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
    /// Path template → its operations by method: looked up by `&str`, with no key to build per
    /// request.
    ops: HashMap<String, Vec<(Method, SpecOp)>>,
}

impl SpecAnswers {
    /// The embedded examples set `name` (a definition's `examples`): the committed import of a
    /// service's official description.
    ///
    /// ```
    /// let specs = apistend_answers::SpecAnswers::embedded("wb")?;
    /// assert!(specs.len() > 290);
    /// # Ok::<(), apistend_answers::AnswersError>(())
    /// ```
    ///
    /// # Errors
    /// [`AnswersError`] for a name no set has, or a corrupt file (a build problem).
    pub fn embedded(name: &str) -> Result<Self, AnswersError> {
        let (_, bytes) = EMBEDDED.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let known: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
            AnswersError::UnknownSet {
                name: name.to_owned(),
                known: known.join(", "),
            }
        })?;
        Self::from_file_bytes(bytes)
    }

    /// Reads an answers file as [`to_file_bytes`](Self::to_file_bytes) writes it.
    ///
    /// # Errors
    /// [`AnswersError`] for bytes that are not such a file.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt("answers file", e);
        let json = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(bytes, 64 << 20)
            .map_err(|e| bad(format!("not zlib data: {e:?}")))?;
        // One buffer, held for as long as the answers: each example is a view into it.
        let all = bytes::Bytes::from(json);
        let file: RawFile<'_> = serde_json::from_slice(&all).map_err(|e| bad(e.to_string()))?;
        if file.format != 1 {
            return Err(bad(format!("format {} (this build reads 1)", file.format)));
        }
        let mut specs = SpecAnswers::default();
        for r in file.operations {
            let method =
                Method::parse(&r.method).ok_or_else(|| bad(format!("method {:?}", r.method)))?;
            let text = r.example.get();
            let rendered = if text == "null" {
                bytes::Bytes::new()
            } else {
                all.slice_ref(text.as_bytes())
            };
            // A file's text (a log) is answered from the value itself.
            let example = if r.media.is_some() {
                serde_json::from_str(text).map_err(|e| bad(e.to_string()))?
            } else {
                Value::Null
            };
            let op = SpecOp {
                status: r.status,
                example,
                media: r.media,
                rendered,
                required_query: r.required_query,
                body_required: r.body_required,
                refusal: r.refusal,
            };
            specs.insert(method, r.path, op);
        }
        Ok(specs)
    }

    /// The answers file of these specs: JSON in path and method order, zlib-compressed (the
    /// same specs always give the same bytes).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut operations: Vec<SpecRecord> = self
            .ops
            .iter()
            .flat_map(|(path, ops)| {
                ops.iter().map(move |(m, op)| {
                    let mut op = op.clone();
                    // An example read from a file is kept as its text.
                    if op.example.is_null() && !op.rendered.is_empty() {
                        op.example = serde_json::from_slice(&op.rendered).unwrap_or(Value::Null);
                    }
                    SpecRecord {
                        method: m.as_str().to_owned(),
                        path: path.clone(),
                        op,
                    }
                })
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
    /// [`AnswersError`] naming the file that cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt(format!("OpenAPI {}", dir.display()), e);
        let mut specs = SpecAnswers::default();
        for (name, yaml) in
            apistend_catalog::import::wb::read_specs(dir).map_err(|e| bad(e.to_string()))?
        {
            let doc = serde_json::to_value(&yaml).map_err(|e| bad(format!("{name}: {e}")))?;
            specs.add(&doc);
        }
        Ok(specs)
    }

    /// Loads one OpenAPI document (YAML, or JSON).
    ///
    /// # Errors
    /// [`AnswersError`] naming the file that cannot be read or parsed.
    pub fn load_file(path: &Path) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt(format!("OpenAPI {}", path.display()), e);
        let yaml = apistend_catalog::import::wb::read_spec(path).map_err(|e| bad(e.to_string()))?;
        let doc = serde_json::to_value(&yaml).map_err(|e| bad(e.to_string()))?;
        let mut specs = SpecAnswers::default();
        specs.add(&doc);
        Ok(specs)
    }

    /// Adds (or replaces) the answer of `method path`.
    fn insert(&mut self, method: Method, path: String, op: SpecOp) {
        let ops = self.ops.entry(path).or_default();
        match ops.iter_mut().find(|(m, _)| *m == method) {
            Some((_, old)) => *old = op,
            None => ops.push((method, op)),
        }
    }

    /// Number of operations loaded.
    pub fn len(&self) -> usize {
        self.ops.values().map(Vec::len).sum()
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
            .map(apistend_catalog::server_path)
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
                let refusal = DocumentedRefusal::of(doc, op);
                let (status, media, example) = example(doc, op);
                self.insert(method, path.clone(), {
                    let mut op = SpecOp {
                        status,
                        example,
                        media,
                        required_query,
                        body_required,
                        refusal,
                        rendered: bytes::Bytes::new(),
                    };
                    op.render();
                    op
                });
            }
        }
    }
}

/// Name → the committed answers file.
const EMBEDDED: [(&str, &[u8]); 5] = [
    ("wb", include_bytes!("../data/wb-answers.json.zlib")),
    ("apify", include_bytes!("../data/apify-answers.json.zlib")),
    ("ozon", include_bytes!("../data/ozon-answers.json.zlib")),
    (
        "ymarket",
        include_bytes!("../data/ymarket-answers.json.zlib"),
    ),
    (
        "moysklad",
        include_bytes!("../data/moysklad-answers.json.zlib"),
    ),
];

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

impl SpecAnswers {
    /// The answer of `method path` (an operation's path template) for `call`: its required
    /// query parameters and body checked (a missing one is the service's 400; no body is an
    /// empty object when `empty_body_ok`), then its example; `None` for an operation the
    /// description does not have.
    pub fn answer(
        &self,
        method: Method,
        path: &str,
        call: &Call,
        empty_body_ok: bool,
    ) -> Option<Result<Success, Refusal>> {
        let spec = self
            .ops
            .get(path)?
            .iter()
            .find_map(|(m, op)| (*m == method).then_some(op))?;
        // The service's 400, or the one the description documents for this operation.
        let refuse = |why: String| match &spec.refusal {
            Some(documented) => documented.saying(why),
            None => Refusal::BadRequest(why),
        };
        for name in &spec.required_query {
            if !call.query.iter().any(|(k, _)| k == name) {
                return Some(Err(refuse(format!("parameter \"{name}\" is required"))));
            }
        }
        // Any body will do: some operations take multipart uploads or octet streams.
        if spec.body_required && !call.has_body && !empty_body_ok {
            return Some(Err(refuse("request body is required".into())));
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
