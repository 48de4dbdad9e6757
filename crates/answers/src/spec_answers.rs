//! The answers of an OpenAPI description: each operation's first 2xx status and example (repaired
//! against its schema, or built from it — [`crate::schema_values`]), its media type, and its
//! required query parameters and body. Imported from the official descriptions, committed as
//! answers archives (`data/*-answers.pack`, [`crate::examples`], [`crate::pack`]) and read in
//! place: an operation's example is inflated on its first call.

use foldhash::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use apistend_catalog::Method;
use serde_json::{Value, json};

use crate::answer::{Refusal, Success};
use crate::error::AnswersError;
use crate::openapi::{DocOp, operations};
use crate::pack::{Entry, Indexed, Pack};
use crate::schema_values::{complete, deref, from_schema};

/// What the answer of one operation is made of.
#[derive(Debug, Clone)]
struct SpecOp {
    meta: OpMeta,
    /// The example as sent (empty for an answer without content): every answer is a
    /// reference-counted copy, not a clone and a serialisation of the example. Read from an
    /// answers archive, it is inflated on the operation's first call ([`crate::pack`]).
    example: Entry,
}

/// An operation's record in the answers archive's index: all but its example.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct OpMeta {
    method: String,
    path: String,
    status: u16,
    /// The answer's media type when it is not JSON (`application/pdf`, `text/plain`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    media: Option<String>,
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

/// The answers of an OpenAPI description: each operation's first 2xx status and example (or one
/// built from its schema), and its required query parameters and body. WB's come from its 14
/// specs, Apify's from its official document.
#[derive(Debug, Clone, Default)]
pub struct SpecAnswers {
    ops: Arc<Indexed<Ops>>,
}

/// Path template → its operations by method: looked up by `&str`, with no key to build per
/// request.
type Ops = HashMap<String, Vec<(Method, SpecOp)>>;

impl SpecAnswers {
    /// The embedded examples set `name` (a definition's `examples`): the committed import of a
    /// service's official description. Only the archive's header is read here; its index on the
    /// first answer, each example on its operation's first call.
    ///
    /// ```
    /// let specs = apistend_answers::SpecAnswers::embedded("wb")?;
    /// assert!(specs.len() > 290);
    /// # Ok::<(), apistend_answers::AnswersError>(())
    /// ```
    ///
    /// # Errors
    /// [`AnswersError`] for a name no set has, or a corrupt header (a build problem).
    pub fn embedded(name: &str) -> Result<Self, AnswersError> {
        let (_, bytes) = EMBEDDED.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let known: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
            AnswersError::UnknownSet {
                name: name.to_owned(),
                known: known.join(", "),
            }
        })?;
        let pack = Pack::open(WHAT, &Bytes::from_static(bytes))?;
        Ok(Self {
            ops: Arc::new(Indexed::packed(pack)),
        })
    }

    /// Reads an answers archive as [`to_file_bytes`](Self::to_file_bytes) writes it, whole: its
    /// index and every example.
    ///
    /// # Errors
    /// [`AnswersError`] for bytes that are not such a file.
    pub fn from_file_bytes(bytes: impl Into<Bytes>) -> Result<Self, AnswersError> {
        let pack = Pack::open(WHAT, &bytes.into())?;
        let ops = Self::read(&pack)?;
        for (_, op) in ops.values().flatten() {
            op.example
                .try_bytes()
                .map_err(|e| AnswersError::corrupt(WHAT, format!("{}: {e}", op.meta.path)))?;
        }
        Ok(Self::of(ops))
    }

    /// Every operation of `pack`'s index.
    fn read(pack: &Pack) -> Result<Ops, AnswersError> {
        let mut ops = Ops::default();
        for (meta, example) in pack.index::<OpMeta>(WHAT)? {
            let bad = || AnswersError::corrupt(WHAT, format!("method {:?}", meta.method));
            let method = Method::parse(&meta.method).ok_or_else(bad)?;
            insert(&mut ops, method, SpecOp { meta, example });
        }
        Ok(ops)
    }

    /// Answers of operations built in this process.
    fn of(ops: Ops) -> Self {
        Self {
            ops: Arc::new(Indexed::built(ops)),
        }
    }

    /// The operations, read from the archive's index on first use.
    fn ops(&self) -> &Ops {
        self.ops.get(Self::read)
    }

    /// Reads the whole set now: its index and every example.
    ///
    /// # Errors
    /// [`AnswersError`] naming what does not read.
    pub fn check(&self) -> Result<(), AnswersError> {
        self.ops.read_now(Self::read)?;
        for (_, op) in self.ops().values().flatten() {
            op.example
                .try_bytes()
                .map_err(|e| AnswersError::corrupt(WHAT, format!("{}: {e}", op.meta.path)))?;
        }
        Ok(())
    }

    /// The answers archive of these specs: operations in path and method order (the same specs
    /// always give the same bytes).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut ops: Vec<&SpecOp> = self.ops().values().flatten().map(|(_, op)| op).collect();
        ops.sort_by(|a, b| (&a.meta.path, &a.meta.method).cmp(&(&b.meta.path, &b.meta.method)));
        Pack::write(
            ops.into_iter()
                .map(|op| (&op.meta, op.example.bytes().as_ref()))
                .collect(),
        )
    }

    /// Loads every `*.yaml` of `dir` (one OpenAPI document per file).
    ///
    /// # Errors
    /// [`AnswersError`] naming the file that cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt(format!("OpenAPI {}", dir.display()), e);
        let mut ops = Ops::default();
        for (name, yaml) in
            apistend_catalog::import::wb::read_specs(dir).map_err(|e| bad(e.to_string()))?
        {
            let doc = serde_json::to_value(&yaml).map_err(|e| bad(format!("{name}: {e}")))?;
            add(&mut ops, &doc);
        }
        Ok(Self::of(ops))
    }

    /// Loads one OpenAPI document (YAML, or JSON).
    ///
    /// # Errors
    /// [`AnswersError`] naming the file that cannot be read or parsed.
    pub fn load_file(path: &Path) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt(format!("OpenAPI {}", path.display()), e);
        let yaml = apistend_catalog::import::wb::read_spec(path).map_err(|e| bad(e.to_string()))?;
        let doc = serde_json::to_value(&yaml).map_err(|e| bad(e.to_string()))?;
        let mut ops = Ops::default();
        add(&mut ops, &doc);
        Ok(Self::of(ops))
    }

    /// Number of operations (an archive's from its header: nothing else is read).
    pub fn len(&self) -> usize {
        self.ops.len(|ops| ops.values().map(Vec::len).sum())
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What an answers archive is called in errors.
const WHAT: &str = "answers file";

/// Adds (or replaces) the answer of `method path`.
fn insert(ops: &mut Ops, method: Method, op: SpecOp) {
    let list = ops.entry(op.meta.path.clone()).or_default();
    match list.iter_mut().find(|(m, _)| *m == method) {
        Some((_, old)) => *old = op,
        None => list.push((method, op)),
    }
}

/// The operations of the OpenAPI document `doc`, added to `ops`.
fn add(ops: &mut Ops, doc: &Value) {
    for DocOp {
        method, path, op, ..
    } in operations(doc)
    {
        let refusal = DocumentedRefusal::of(doc, op);
        let (status, media, example) = example(doc, op);
        let example = if example.is_null() {
            Bytes::new()
        } else {
            Bytes::from(example.to_string())
        };
        let meta = OpMeta {
            method: method.as_str().to_owned(),
            path,
            status,
            media,
            refusal,
        };
        insert(
            ops,
            method,
            SpecOp {
                meta,
                example: Entry::ready(example),
            },
        );
    }
}

/// Name → the committed answers file.
const EMBEDDED: [(&str, &[u8]); 5] = [
    ("wb", include_bytes!("../data/wb-answers.pack")),
    ("apify", include_bytes!("../data/apify-answers.pack")),
    ("ozon", include_bytes!("../data/ozon-answers.pack")),
    ("ymarket", include_bytes!("../data/ymarket-answers.pack")),
    ("moysklad", include_bytes!("../data/moysklad-answers.pack")),
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
    /// The operation `method path` (a path template of the description), if it has it.
    fn op(&self, method: Method, path: &str) -> Option<&SpecOp> {
        self.ops()
            .get(path)?
            .iter()
            .find_map(|(m, op)| (*m == method).then_some(op))
    }

    /// The answer of `method path` (an operation's path template): its example; `None` for an
    /// operation the description does not have. Whether the request is one the operation
    /// takes is the request rules' to say ([`crate::RequestRules`]), before this.
    pub fn answer(&self, method: Method, path: &str) -> Option<Success> {
        let spec = self.op(method, path)?;
        let meta = &spec.meta;
        let rendered = spec.example.bytes();
        let mut answer = Success::new(meta.status, Value::Null);
        answer.media = meta.media.clone();
        if meta.media.is_some() {
            // A file's text (a log) comes from the example itself.
            answer.body = serde_json::from_slice(rendered).unwrap_or(Value::Null);
        }
        answer.rendered = Some(rendered.clone());
        Some(answer)
    }

    /// The 400 the description of `method path` documents for a request it does not take,
    /// saying `why`, when that is not the service's usual JSON (WB's
    /// `application/problem+json` and `text/plain` refusals); `None`: the service's own 400.
    pub fn documented_refusal(&self, method: Method, path: &str, why: String) -> Option<Refusal> {
        let documented = self.op(method, path)?.meta.refusal.as_ref()?;
        Some(documented.saying(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every embedded set reads whole (its index and every example), and writes back the very
    /// bytes it was read from; its header's count is its index's.
    #[test]
    fn every_embedded_set_reads_back_whole() {
        for (name, bytes) in EMBEDDED {
            let set = SpecAnswers::embedded(name).unwrap();
            let counted = set.len();
            set.check().unwrap();
            assert_eq!(set.len(), counted, "{name}");
            assert!(set.to_file_bytes() == bytes, "{name}");
            assert!(SpecAnswers::from_file_bytes(Bytes::from_static(bytes)).is_ok());
        }
    }

    /// An embedded set is read on first use: its examples one operation at a time.
    #[test]
    fn an_example_is_inflated_on_its_first_call_only() {
        let set = SpecAnswers::embedded("moysklad").unwrap();
        assert!(!set.ops.is_decoded(), "nothing read at start");
        let (path, ops) = set.ops().iter().next().unwrap();
        let method = ops[0].0;
        let _ = set.answer(method, path);
        let inflated = set
            .ops()
            .values()
            .flatten()
            .filter(|(_, op)| op.example.is_inflated())
            .count();
        assert!(inflated <= 1, "{inflated} inflated");
    }
}
