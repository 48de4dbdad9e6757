//! Wildberries: with `--wb-openapi DIR`, every operation answers with its spec's example and its
//! required parameters are checked (a missing one is WB's own 400); without specs, a minimal valid
//! answer.

use std::collections::HashMap;
use std::path::Path;

use apistend_catalog::{Method, Operation};
use serde_json::{Value, json};

use super::{Refusal, Success};
use crate::call::Call;
use crate::error::SandboxError;

#[derive(Debug, Clone)]
struct SpecOp {
    status: u16,
    example: Value,
    required_query: Vec<String>,
    body_required: bool,
}

/// The examples and parameter rules of WB's specs.
#[derive(Debug, Clone, Default)]
pub struct WbSpecs {
    ops: HashMap<(Method, String), SpecOp>,
}

impl WbSpecs {
    /// Loads every `*.yaml` of `dir`.
    ///
    /// # Errors
    /// [`SandboxError::Config`] naming the file that cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Self, SandboxError> {
        let bad = |p: &Path, e: String| {
            SandboxError::Config(format!("--wb-openapi {}: {e}", p.display()))
        };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| bad(dir, e.to_string()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(bad(dir, "no *.yaml files".into()));
        }
        let mut specs = WbSpecs::default();
        for path in &files {
            let text = std::fs::read_to_string(path).map_err(|e| bad(path, e.to_string()))?;
            let yaml: yaml_serde::Value =
                yaml_serde::from_str(&text).map_err(|e| bad(path, e.to_string()))?;
            let doc = serde_json::to_value(&yaml).map_err(|e| bad(path, e.to_string()))?;
            specs.add(&doc);
        }
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
        for (path, item) in paths {
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
                let (status, example) = example(doc, op);
                self.ops.insert(
                    (method, path.clone()),
                    SpecOp {
                        status,
                        example,
                        required_query,
                        body_required,
                    },
                );
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

/// The first 2xx response and its example (an explicit example, the first of `examples`, or the
/// schema's example).
fn example(doc: &Value, op: &Value) -> (u16, Value) {
    let Some(responses) = op.get("responses").and_then(Value::as_object) else {
        return (200, json!({}));
    };
    let mut codes: Vec<(&String, &Value)> = responses
        .iter()
        .filter(|(c, _)| c.starts_with('2'))
        .collect();
    codes.sort_by_key(|(c, _)| (*c).clone());
    let Some((code, resp)) = codes.first() else {
        return (200, json!({}));
    };
    let status = code.parse().unwrap_or(200);
    let resp = deref(doc, resp);
    let media = resp
        .get("content")
        .and_then(Value::as_object)
        .and_then(|c| c.get("application/json").or_else(|| c.values().next()));
    let Some(media) = media else {
        return (status, Value::Null);
    };
    if let Some(ex) = media.get("example") {
        return (status, ex.clone());
    }
    if let Some(first) = media
        .get("examples")
        .and_then(Value::as_object)
        .and_then(|e| e.values().next())
    {
        return (
            status,
            deref(doc, first)
                .get("value")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    let schema = media.get("schema").map(|s| deref(doc, s));
    (
        status,
        schema
            .and_then(|s| s.get("example"))
            .cloned()
            .unwrap_or_else(|| json!({})),
    )
}

/// The answer of `op` for `call`: from the specs when loaded, else minimal.
pub(crate) fn answer(
    specs: Option<&WbSpecs>,
    op: &Operation,
    call: &Call,
) -> Result<Success, Refusal> {
    if let Some(spec) = specs.and_then(|s| s.ops.get(&(op.method, op.path.clone()))) {
        for name in &spec.required_query {
            if !call.query.iter().any(|(k, _)| k == name) {
                return Err(Refusal::BadRequest(format!(
                    "parameter \"{name}\" is required"
                )));
            }
        }
        if spec.body_required && call.body.is_none() {
            return Err(Refusal::BadRequest(
                "request body is required and must be valid JSON".into(),
            ));
        }
        return Ok(Success {
            status: spec.status,
            body: spec.example.clone(),
        });
    }
    if op.path == "/ping" {
        return Ok(Success::ok(
            json!({"TS": crate::clock::rfc3339(crate::clock::unix_now()), "Status": "OK"}),
        ));
    }
    Ok(Success::ok(json!({})))
}
