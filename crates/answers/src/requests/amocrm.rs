//! amoCRM's endpoints as request contracts, from `endpoints.json` (amoCRM publishes no OpenAPI):
//! a JSON body where the documentation sends one — of the shape its example has (a list of
//! objects, or one object) and, for the example's own top-level fields and those of its list's
//! objects, of the example's scalar types (amoCRM answers a value of another type with its
//! `InvalidType`) — and integer ids in the path. Nothing is required: the examples show optional
//! fields too. Nested values (custom fields' `values`) are not typed: their type is the field's.

use serde_json::{Map, Value, json};

use super::contract::{Body, Contract, Param, Place, Scalar};

/// The contracts of `endpoints_json`'s endpoints, by (method, path).
///
/// # Errors
/// The parser's words, for a file that is not such JSON.
pub(crate) fn contracts(endpoints_json: &str) -> Result<Vec<(String, String, Contract)>, String> {
    let doc: Value = serde_json::from_str(endpoints_json).map_err(|e| e.to_string())?;
    let endpoints = doc
        .get("endpoints")
        .and_then(Value::as_array)
        .ok_or("no \"endpoints\" list")?;
    let mut out = Vec::new();
    for e in endpoints {
        let (Some(method), Some(path)) = (
            e.get("method").and_then(Value::as_str),
            e.get("path").and_then(Value::as_str),
        ) else {
            continue;
        };
        let mut params = Vec::new();
        let mut ids = Map::new();
        let mut required = Vec::new();
        for seg in path.split('/') {
            let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
                continue;
            };
            // `{entity_type}` is a word (`leads`); every other path parameter is an id.
            if name.ends_with("id") {
                ids.insert(name.to_owned(), json!({"type": "integer", "minimum": 1}));
                required.push(Value::from(name));
                params.push(Param {
                    name: name.to_owned(),
                    place: Place::Path,
                    scalar: Scalar::Integer,
                    list: false,
                });
            }
        }
        let mut properties = Map::new();
        if !ids.is_empty() {
            properties.insert(
                "path".into(),
                json!({"type": "object", "properties": ids, "required": required}),
            );
        }
        let example = e.get("example_request_body").filter(|b| !b.is_null());
        if let Some(ex) = example {
            properties.insert("body".into(), shape(ex));
        }
        let body = example.map(|_| Body {
            required: true,
            media: vec!["application/json".into()],
        });
        out.push((
            method.to_ascii_uppercase(),
            path.to_owned(),
            Contract {
                schema: json!({"type": "object", "properties": properties}),
                params,
                body,
                relaxed: Vec::new(),
            },
        ));
    }
    Ok(out)
}

/// The schema of a body like `example`: a list of objects like its first, or an object, with
/// its top-level fields' scalar types.
fn shape(example: &Value) -> Value {
    match example {
        Value::Array(items) => {
            let item = items.first().map_or(Value::Bool(true), object);
            json!({"type": "array", "items": item})
        }
        other => object(other),
    }
}

/// An object with the example's scalar fields typed (its nested ones are objects or lists).
fn object(example: &Value) -> Value {
    let Some(fields) = example.as_object() else {
        return Value::Bool(true);
    };
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| {
            let t = match v {
                Value::String(_) => "string",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Number(_) => "number",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
                Value::Null => return (k.clone(), Value::Bool(true)),
            };
            (k.clone(), json!({"type": [t, "null"]}))
        })
        .collect();
    json!({"type": "object", "properties": properties})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_objects_typed_as_its_example() {
        let text = r#"{"endpoints": [
            {"method": "POST", "path": "/api/v4/leads", "example_request_body": [{"name": "x", "price": 1, "_embedded": {"tags": []}}]},
            {"method": "GET", "path": "/api/v4/{entity_type}/{entity_id}/links"}
        ]}"#;
        let all = contracts(text).unwrap();
        let (_, _, leads) = &all[0];
        assert_eq!(leads.schema["properties"]["body"]["type"], "array");
        assert_eq!(
            leads.schema["properties"]["body"]["items"]["properties"]["price"],
            json!({"type": ["integer", "null"]})
        );
        let (_, _, links) = &all[1];
        assert_eq!(
            links.params.len(),
            1,
            "entity_type is a word, entity_id an id"
        );
        assert!(links.body.is_none());
    }
}
