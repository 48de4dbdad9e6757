//! Bitrix24's methods as request contracts, from its documentation's `methods.json`: each
//! method's parameters by name, whether required, and the type of those whose type can be
//! checked (an integer, a number). Bitrix24 reads a parameter from the query or the body, in
//! any case, and casts the rest as PHP does: a string, an object or a list is only required.

use serde_json::{Map, Value, json};

use super::contract::{Contract, Param, Place, Scalar};

/// The contracts of the methods of `methods_json` (`{"methods": [{method, params: [{name,
/// type, required}]}]}`), by their path as the sandbox sees it (`/rest/crm.deal.get`, in lower
/// case: Bitrix24's method names are case-insensitive).
///
/// # Errors
/// The parser's words, for a file that is not such JSON.
pub(crate) fn contracts(methods_json: &str) -> Result<Vec<(String, Contract)>, String> {
    let doc: Value = serde_json::from_str(methods_json).map_err(|e| e.to_string())?;
    let methods = doc
        .get("methods")
        .and_then(Value::as_array)
        .ok_or("no \"methods\" list")?;
    let mut out: Vec<(String, Contract)> = Vec::new();
    for m in methods {
        let Some(name) = m.get("method").and_then(Value::as_str) else {
            continue;
        };
        let mut params = Vec::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in m
            .get("params")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(pname) = p.get("name").and_then(Value::as_str) else {
                continue;
            };
            // Documented names that are not parameters (`fields.TITLE`, `#id`) are left out.
            if pname.is_empty() || !pname.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let (scalar, schema) = match p.get("type").and_then(Value::as_str) {
                Some("integer") => (Scalar::Integer, json!({"type": "integer"})),
                Some("double") => (Scalar::Number, json!({"type": "number"})),
                _ => (Scalar::Text, Value::Bool(true)),
            };
            if p.get("required").and_then(Value::as_bool) == Some(true) {
                required.push(Value::from(pname));
            }
            properties.insert(pname.to_owned(), schema);
            params.push(Param {
                name: pname.to_owned(),
                place: Place::Param,
                scalar,
                list: false,
            });
        }
        let schema = json!({"type": "object", "properties": {"params": {
            "type": "object", "properties": properties, "required": required
        }}});
        let path = format!("/rest/{}", name.to_ascii_lowercase());
        let contract = Contract {
            schema,
            params,
            body: None,
            relaxed: Vec::new(),
        };
        match out.iter_mut().find(|(p, _)| *p == path) {
            Some((_, earlier)) => merge(earlier, contract),
            None => out.push((path, contract)),
        }
    }
    Ok(out)
}

/// A method documented twice (its REST 2 and REST 3 pages: `tasks.task.get` by `taskId` or by
/// `id`) takes what either takes: every parameter of both, required only where both require it.
fn merge(into: &mut Contract, other: Contract) {
    const REQUIRED: &str = "/properties/params/required";
    const PROPERTIES: &str = "/properties/params/properties";
    let required = |c: &Contract| -> Vec<Value> {
        c.schema
            .pointer(REQUIRED)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let theirs = required(&other);
    let both: Vec<Value> = required(into)
        .into_iter()
        .filter(|r| theirs.contains(r))
        .collect();
    let props = other
        .schema
        .pointer(PROPERTIES)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(mine) = into
        .schema
        .pointer_mut(PROPERTIES)
        .and_then(Value::as_object_mut)
    {
        for (k, v) in props {
            mine.entry(k).or_insert(v);
        }
    }
    if let Some(r) = into.schema.pointer_mut(REQUIRED) {
        *r = Value::Array(both);
    }
    for p in other.params {
        if !into.params.iter().any(|q| q.name == p.name) {
            into.params.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_requires_its_documented_parameters() {
        let text = r#"{"methods": [{"method": "crm.deal.Get", "params": [
            {"name": "id", "type": "integer", "required": true},
            {"name": "fields.TITLE", "type": "string", "required": true},
            {"name": "select", "type": "string[]", "required": false}
        ]}]}"#;
        let all = contracts(text).unwrap();
        let (path, c) = &all[0];
        assert_eq!(path, "/rest/crm.deal.get");
        assert_eq!(c.params.len(), 2, "the dotted name is no parameter");
        assert_eq!(c.schema["properties"]["params"]["required"], json!(["id"]));
        assert_eq!(c.params[0].scalar, Scalar::Integer);
    }

    #[test]
    fn a_method_documented_twice_takes_either_form() {
        let text = r#"{"methods": [
            {"method": "tasks.task.get", "params": [{"name": "taskId", "type": "integer", "required": false}]},
            {"method": "tasks.task.get", "params": [{"name": "id", "type": "integer", "required": true}]}
        ]}"#;
        let all = contracts(text).unwrap();
        assert_eq!(all.len(), 1);
        let c = &all[0].1;
        assert_eq!(c.params.len(), 2);
        assert_eq!(c.schema["properties"]["params"]["required"], json!([]));
    }
}
