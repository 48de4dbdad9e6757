//! An operation's [`Contract`] from its OpenAPI description, at import time: its path and query
//! parameters and its body as one JSON Schema, compiled once here to be sure it compiles, and
//! relaxed where the description's own request examples break it.

use serde_json::{Map, Value, json};

use super::compiled::Compiled;
use super::contract::{Body, Contract, Param, Place, Scalar, is_json};
use super::convert::{Converter, Dialect};
use crate::openapi::DocOp;
use crate::schema_values::{complete, deref, from_schema};

/// At most this many keywords are relaxed for one operation's examples: more would say the
/// schema and the examples are about different things.
const MAX_RELAXED: usize = 32;

/// The contract of `op`, an operation of `doc` (a service that reads JSON as `dialect`).
pub(crate) fn contract(doc: &Value, op: &DocOp<'_>, dialect: Dialect) -> Contract {
    let mut conv = Converter::new(doc, dialect);
    let (params, mut properties) = parameters(doc, op, &mut conv);
    let request_body = op.op.get("requestBody").map(|b| deref(doc, b));
    let content = request_body
        .and_then(|b| b.get("content"))
        .and_then(Value::as_object);
    let body = request_body.map(|b| Body {
        required: b.get("required").and_then(Value::as_bool) == Some(true),
        media: content
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default(),
    });
    let json_media = content.and_then(|c| c.iter().find(|(m, _)| is_json(m)).map(|(_, v)| v));
    // An operation that takes a body of any type (`*/*`) takes any JSON too: its JSON schema
    // describes the usual body, not a bound (Apify's record "contains the value to store",
    // typed `object`, where the service stores any value).
    let any = content.is_some_and(|c| c.contains_key("*/*"));
    if let Some(schema) = json_media.and_then(|m| m.get("schema")).filter(|_| !any) {
        properties.insert("body".into(), conv.schema(schema));
    }
    let (defs, mut relaxed) = conv.finish();
    let mut schema = json!({"type": "object", "properties": properties});
    if !defs.is_empty()
        && let Some(o) = schema.as_object_mut()
    {
        o.insert("$defs".into(), Value::Object(defs));
    }
    let examples = json_media
        .map(|m| body_examples(doc, m))
        .unwrap_or_default();
    relax(&mut schema, &examples, &mut relaxed, None);
    // A body built from the schema as a client builds one from the documentation (its
    // nested examples, then its types) leaves out what those examples leave out: a property
    // required beside a nested example that lacks it (Yandex Market's order items without
    // `price`) is the documentation contradicting itself, and is not required.
    let built: Vec<Value> = json_media
        .and_then(|m| m.get("schema"))
        .map(|s| {
            let mut v = from_schema(doc, s, 0);
            complete(doc, s, &mut v, 0);
            v
        })
        .into_iter()
        .collect();
    relax(&mut schema, &built, &mut relaxed, Some("required"));
    Contract {
        schema,
        params,
        body,
        relaxed,
    }
}

/// The path and query parameters of `op`: how each is read, and the `path` and `query`
/// properties of the request's schema.
fn parameters(
    doc: &Value,
    op: &DocOp<'_>,
    conv: &mut Converter<'_>,
) -> (Vec<Param>, Map<String, Value>) {
    let mut params = Vec::new();
    let mut places: [(Map<String, Value>, Vec<Value>); 2] = Default::default();
    for p in &op.params {
        let (Some(name), Some(place)) = (
            p.get("name").and_then(Value::as_str),
            match p.get("in").and_then(Value::as_str) {
                Some("path") => Some(Place::Path),
                Some("query") => Some(Place::Query),
                _ => None,
            },
        ) else {
            continue;
        };
        let declared = p
            .get("schema")
            .map_or(Value::Null, |s| deref(doc, s).clone());
        let list = declared.get("type").and_then(Value::as_str) == Some("array");
        let scalar = if list {
            declared
                .get("items")
                .map_or(Scalar::Text, |i| Scalar::of(deref(doc, i)))
        } else {
            Scalar::of(&declared)
        };
        let mut schema = p
            .get("schema")
            .map_or(Value::Bool(true), |s| conv.schema(s));
        // The parameter's own description may state its bounds ("максимум — 2000, минимум — 1").
        if let (Some(d), Some(o)) = (
            p.get("description").and_then(Value::as_str),
            schema.as_object_mut(),
        ) {
            super::prose::add_bounds(o, d);
        }
        let [in_path, in_query] = &mut places;
        let (props, required) = match place {
            Place::Path => in_path,
            // An OpenAPI parameter is in the path or the query (`Param` is Bitrix24's).
            Place::Query | Place::Param => in_query,
        };
        props.insert(name.to_owned(), schema);
        if place == Place::Path || p.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::from(name));
        }
        params.push(Param {
            name: name.to_owned(),
            place,
            scalar,
            list,
        });
    }
    let mut properties = Map::new();
    for (key, (props, required)) in ["path", "query"].into_iter().zip(places) {
        if !props.is_empty() {
            properties.insert(
                key.into(),
                json!({"type": "object", "properties": props, "required": required}),
            );
        }
    }
    (params, properties)
}

/// The request examples a JSON body's description gives: its `example`, each of its
/// `examples`, its schema's `example`.
pub(crate) fn body_examples(doc: &Value, media: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = media.get("example").into_iter().cloned().collect();
    for e in media
        .get("examples")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|e| e.values())
    {
        if let Some(v) = deref(doc, e).get("value") {
            out.push(v.clone());
        }
    }
    if let Some(e) = media
        .get("schema")
        .map(|s| deref(doc, s))
        .and_then(|s| s.get("example"))
    {
        out.push(e.clone());
    }
    out
}

/// Makes `schema` compile and take every one of `examples`: a keyword that refuses the
/// description's own example is the description being wrong, not the example (the real service
/// takes what its documentation sends), so it is removed and the removal noted.
/// With `only`, only that keyword is removed; an example that breaks another is left be.
fn relax(schema: &mut Value, examples: &[Value], notes: &mut Vec<String>, only: Option<&str>) {
    for _ in 0..MAX_RELAXED {
        let compiled = match Compiled::new(schema.clone()) {
            Ok(c) => c,
            Err(e) => {
                // Which keyword does not compile is in the message; unusable as a whole, the
                // schema gives way to one that checks only that the request is an object.
                notes.push(format!(
                    "schema does not compile, not checked: {}",
                    first_line(&e)
                ));
                *schema = json!({"type": "object"});
                return;
            }
        };
        let failure = examples
            .iter()
            .find_map(|ex| compiled.check(&json!({"body": ex})).err());
        let Some(v) = failure else { return };
        if let Some(k) = only
            && !v
                .keyword
                .as_deref()
                .is_some_and(|p| p.ends_with(&format!("/{k}")))
        {
            return;
        }
        let removed = v.keyword.as_deref().and_then(|k| remove(schema, k));
        match removed {
            Some(k) => notes.push(format!(
                "{k}: not checked, the description's example has {v}"
            )),
            None => {
                notes.push(format!(
                    "body not checked: the description's example has {v}"
                ));
                if let Some(p) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                    p.remove("body");
                }
                return;
            }
        }
    }
}

/// Removes the keyword at JSON pointer `pointer`; returns it, if it was there.
fn remove(schema: &mut Value, pointer: &str) -> Option<String> {
    let (parent, key) = pointer.rsplit_once('/')?;
    let key = key.replace("~1", "/").replace("~0", "~");
    schema
        .pointer_mut(parent)?
        .as_object_mut()?
        .remove(&key)
        .map(|_| pointer.to_owned())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::operations;

    fn doc() -> Value {
        json!({
            "openapi": "3.0.1",
            "paths": {"/v1/items/{id}": {"post": {
                "parameters": [
                    {"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}},
                    {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "integer"}}}
                ],
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Req"},
                    "example": {"limit": 5, "date": "01.02.2024"}
                }}}
            }}},
            "components": {"schemas": {"Req": {"type": "object", "required": ["limit"], "properties": {
                "limit": {"type": "integer", "maximum": 1000},
                "date": {"type": "string", "format": "date"}
            }}}}
        })
    }

    #[test]
    fn one_schema_over_path_query_and_body_relaxed_by_its_example() {
        let doc = doc();
        let ops = operations(&doc);
        let c = contract(&doc, &ops[0], Dialect::Json);
        assert_eq!(c.params.len(), 2);
        assert!(c.params[1].list && c.params[1].scalar == Scalar::Integer);
        assert!(c.body.as_ref().unwrap().required);
        // The example's date is not an RFC 3339 date: the format is relaxed, with the reason.
        assert_eq!(c.relaxed.len(), 1, "{:?}", c.relaxed);
        assert!(c.relaxed[0].contains("/format"), "{:?}", c.relaxed);
        let compiled = Compiled::new(c.schema).unwrap();
        assert!(
            compiled
                .check(&json!({"path": {"id": 1}, "body": {"limit": 5}}))
                .is_ok()
        );
        let v = compiled
            .check(&json!({"path": {"id": 1}, "body": {"limit": 5000}}))
            .unwrap_err();
        assert_eq!(v.at, "body.limit");
    }
}
