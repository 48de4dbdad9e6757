//! What single keywords become in a request schema: the vendors' values made well formed,
//! OpenAPI 3.0's forms made JSON Schema's, a grpc-gateway's reading of numbers and nulls, and
//! the patterns the validator can read.

use serde_json::{Map, Value};

/// How a service reads the JSON of a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialect {
    /// As JSON: a number is a number.
    #[default]
    Json,
    /// As protobuf's JSON mapping does (a grpc-gateway: Ozon's Seller API): an integer or a
    /// number may also be sent as a decimal string (`"123"`), as protobuf writes 64-bit ones,
    /// and any field may be `null` (its default).
    ProtobufJson,
    /// As Go's `encoding/json` does (WB's servers): any field may be `null`, which leaves it
    /// as it was (the official wildberries-sdk sends `"updatedAt": null`).
    GoJson,
}

impl From<apistend_catalog::JsonReading> for Dialect {
    fn from(j: apistend_catalog::JsonReading) -> Self {
        match j {
            apistend_catalog::JsonReading::Strict => Dialect::Json,
            apistend_catalog::JsonReading::Go => Dialect::GoJson,
            apistend_catalog::JsonReading::Protobuf => Dialect::ProtobufJson,
        }
    }
}

/// An integer or number that may be written as decimal text (protobuf's JSON mapping): its
/// bounds hold for the number, the pattern for the text.
pub(crate) fn numbers_as_text(out: &mut Map<String, Value>) {
    let pattern = match out.get("type").and_then(Value::as_str) {
        Some("integer") => "^-?[0-9]+$",
        Some("number") => "^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$",
        _ => return,
    };
    if out.contains_key("pattern") {
        return;
    }
    let ty = out.remove("type").unwrap_or(Value::Null);
    out.insert("type".into(), serde_json::json!([ty, "string"]));
    out.insert("pattern".into(), Value::from(pattern));
}

/// `p` without its look-ahead and look-behind groups (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`),
/// nested parentheses and escapes followed.
pub(crate) fn without_lookarounds(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut rest = p;
    while let Some(at) = ["(?=", "(?!", "(?<=", "(?<!"]
        .iter()
        .filter_map(|o| rest.find(o))
        .min()
    {
        out.push_str(rest.get(..at).unwrap_or(""));
        let mut depth = 0usize;
        let mut end = rest.len();
        let mut escaped = false;
        for (i, ch) in rest.char_indices().skip_while(|(i, _)| *i < at) {
            match ch {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = rest.get(end..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// Whether `v` is a value JSON Schema's `key` takes (the vendors write `enum: null` and a
/// boolean `required` on a property).
pub(crate) fn well_formed(key: &str, v: &Value) -> bool {
    match key {
        "enum" | "required" => v.is_array(),
        "type" => v.is_string() || v.is_array(),
        "pattern" => v.is_string(),
        "uniqueItems" => v.is_boolean(),
        "const" => true,
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            v.is_u64()
        }
        "multipleOf" => v.as_f64().is_some_and(|m| m > 0.0),
        _ => v.is_number(),
    }
}

/// OpenAPI 3.0's boolean `exclusiveMinimum: true` beside `minimum: n` is 2020-12's
/// `exclusiveMinimum: n`; a number is kept as it is (3.1).
pub(crate) fn exclusive(
    obj: &Map<String, Value>,
    out: &mut Map<String, Value>,
    key: &str,
    bound: &str,
) {
    match obj.get(key) {
        Some(Value::Bool(true)) => {
            if let Some(n) = out.remove(bound) {
                out.insert(key.to_owned(), n);
            }
        }
        Some(n @ Value::Number(_)) => {
            out.insert(key.to_owned(), n.clone());
        }
        _ => {}
    }
}

/// `nullable: true`: `null` is one more value the schema takes.
pub(crate) fn nullable(out: &mut Map<String, Value>) {
    match out.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            out.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(a)) if !a.iter().any(|t| t == "null") => a.push(Value::from("null")),
        _ => {}
    }
    if let Some(Value::Array(e)) = out.get_mut("enum")
        && !e.contains(&Value::Null)
    {
        e.push(Value::Null);
    }
    // A `$ref` or a composition beside `nullable`: the null goes around it.
    for key in ["allOf", "anyOf"] {
        if out.contains_key(key) && !out.contains_key("type") {
            let inner = Value::Object(std::mem::take(out));
            *out = serde_json::json!({ "anyOf": [{ "type": "null" }, inner] })
                .as_object()
                .cloned()
                .unwrap_or_default();
            return;
        }
    }
}
