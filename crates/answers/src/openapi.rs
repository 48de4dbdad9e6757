//! The operations of an OpenAPI document as the importers walk them: method, path (under the
//! first server's path) and the parameters the path item and the operation declare. One walk for
//! the answers ([`crate::spec_answers`]) and the request rules ([`crate::requests`]).

use apistend_catalog::Method;
use serde_json::Value;

use crate::schema_values::deref;

/// One operation of a document.
#[derive(Debug)]
pub(crate) struct DocOp<'d> {
    /// Its method.
    pub(crate) method: Method,
    /// Its path template, under the first server's path (MoySklad's `/api/remap/1.2/…`).
    pub(crate) path: String,
    /// The operation object.
    pub(crate) op: &'d Value,
    /// Its parameters, dereferenced: the path item's, then the operation's (an operation's
    /// parameter replaces the path item's of the same name and place, as OpenAPI says).
    pub(crate) params: Vec<&'d Value>,
}

/// Every operation of `doc`, in the document's order.
pub(crate) fn operations(doc: &Value) -> Vec<DocOp<'_>> {
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Vec::new();
    };
    // Paths are relative to the first server's path (MoySklad's `/api/remap/1.2`).
    let base = doc
        .get("servers")
        .and_then(|s| s.get(0))
        .and_then(|s| s.get("url"))
        .and_then(Value::as_str)
        .map(apistend_catalog::server_path)
        .unwrap_or_default();
    let mut out = Vec::new();
    for (path, item) in paths {
        let item = deref(doc, item);
        let shared = list(doc, item.get("parameters"));
        for (m, op) in item.as_object().into_iter().flatten() {
            let Some(method) = Method::parse(m).filter(|_| op.is_object()) else {
                continue;
            };
            let own = list(doc, op.get("parameters"));
            let mut params: Vec<&Value> = shared
                .iter()
                .filter(|s| !own.iter().any(|o| same_place(o, s)))
                .copied()
                .collect();
            params.extend(own);
            out.push(DocOp {
                method,
                path: format!("{base}{path}"),
                op,
                params,
            });
        }
    }
    out
}

/// A parameters list, each dereferenced.
fn list<'d>(doc: &'d Value, params: Option<&'d Value>) -> Vec<&'d Value> {
    params
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| deref(doc, p))
        .collect()
}

/// Whether two parameters are the same one (name and location).
fn same_place(a: &Value, b: &Value) -> bool {
    a.get("name") == b.get("name") && a.get("in") == b.get("in")
}
