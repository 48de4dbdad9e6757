//! A request's parameters as one JSON document.

use serde_json::{Map, Value};

use crate::call::Call;

/// The query's pairs and a form body's fields, read as PHP reads `a[b][]=c` (Bitrix24's
/// `fields[TITLE]=…`, amoCRM's `filter[id][]=1`), then a JSON object body's members over them.
/// A JSON body that is not an object (amoCRM's array of leads) is the document itself.
pub fn params(call: &Call) -> Value {
    if let Some(body) = call.body.as_ref().filter(|b| !b.is_object()) {
        return body.clone();
    }
    let mut doc = Value::Object(Map::new());
    for (k, v) in &call.query {
        insert(&mut doc, k, Value::String(v.clone()));
    }
    if let Some(Value::Object(m)) = &call.body {
        for (k, v) in m {
            insert(&mut doc, k, v.clone());
        }
    }
    doc
}

/// Puts `v` at `key` (`a[b][]`) in `doc`: `[]` appends to a list, any other bracket is a member.
fn insert(doc: &mut Value, key: &str, v: Value) {
    let (head, rest) = key.split_once('[').unwrap_or((key, ""));
    let mut path = vec![head];
    let mut rest = rest;
    while let Some((name, after)) = rest.split_once(']') {
        path.push(name);
        rest = after.strip_prefix('[').unwrap_or("");
        if rest.is_empty() {
            break;
        }
    }
    let mut at = doc;
    for (i, name) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        if name.is_empty() && i > 0 {
            if !at.is_array() {
                *at = Value::Array(Vec::new());
            }
            let Value::Array(list) = at else { return };
            list.push(if last {
                v.clone()
            } else {
                Value::Object(Map::new())
            });
            let Some(item) = list.last_mut() else { return };
            at = item;
            continue;
        }
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(m) = at else { return };
        if last {
            m.insert((*name).to_owned(), v);
            return;
        }
        at = m.entry((*name).to_owned()).or_insert(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(pairs: &[(&str, &str)]) -> Value {
        let mut d = Value::Object(Map::new());
        for (k, v) in pairs {
            insert(&mut d, k, json!(v));
        }
        d
    }

    #[test]
    fn reads_keys_as_php_does() {
        assert_eq!(
            doc(&[
                ("fields[TITLE]", "A"),
                ("fields[OPPORTUNITY]", "5"),
                ("id", "3")
            ]),
            json!({"fields": {"TITLE": "A", "OPPORTUNITY": "5"}, "id": "3"})
        );
        assert_eq!(
            doc(&[("filter[id][]", "1"), ("filter[id][]", "2"), ("page", "2")]),
            json!({"filter": {"id": ["1", "2"]}, "page": "2"})
        );
        assert_eq!(
            doc(&[("filter[=ID][0]", "7")]),
            json!({"filter": {"=ID": {"0": "7"}}})
        );
        assert_eq!(
            doc(&[("a[", "1")]),
            json!({"a": "1"}),
            "an unclosed bracket: the name"
        );
    }
}
