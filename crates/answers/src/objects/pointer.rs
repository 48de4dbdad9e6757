//! JSON pointers (RFC 6901) that write: `serde_json` reads them, but does not create the
//! objects on the way or remove a member.

use serde_json::{Map, Value};

fn tokens(p: &str) -> impl Iterator<Item = String> + '_ {
    p.split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
}

/// Sets `p` in `doc` to `v`, making objects on the way (a list's index must exist).
pub fn set(doc: &mut Value, p: &str, v: Value) {
    let mut at = doc;
    for t in tokens(p) {
        if !at.is_object() && !at.is_array() {
            *at = Value::Object(Map::new());
        }
        at = match at {
            Value::Array(list) => match t.parse::<usize>().ok().and_then(|i| list.get_mut(i)) {
                Some(item) => item,
                None => return,
            },
            Value::Object(m) => m.entry(t).or_insert(Value::Null),
            _ => return,
        };
    }
    *at = v;
}

/// Sets `p` in the object `m` to `v`, as [`set`] does in a document.
pub(crate) fn set_in(m: &mut Map<String, Value>, p: &str, v: Value) {
    let mut doc = Value::Object(std::mem::take(m));
    set(&mut doc, p, v);
    if let Value::Object(o) = doc {
        *m = o;
    }
}

/// The values `p` names in `doc`, where a `*` step is each item of the list there.
pub(crate) fn each<'v>(doc: &'v Value, p: &str) -> Vec<&'v Value> {
    match p.split_once("/*") {
        None => doc.pointer(p).into_iter().collect(),
        Some((list, rest)) => match doc.pointer(list) {
            Some(Value::Array(items)) => items.iter().flat_map(|i| each(i, rest)).collect(),
            _ => Vec::new(),
        },
    }
}

/// Removes the member `p` names, if it is there, and each object that this leaves empty on the
/// way up (`/_links/next/href` removes `next` too: amoCRM's last page has no `next` at all).
pub(crate) fn remove(doc: &mut Value, p: &str) {
    let Some((parent, last)) = p.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    let Some(Value::Object(m)) = doc.pointer_mut(parent) else {
        return;
    };
    if m.remove(&last).is_some() && m.is_empty() && !parent.is_empty() {
        remove(doc, parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sets_and_removes() {
        let mut d = json!({"a": [{"b": 1}]});
        set(&mut d, "/a/0/b", json!(2));
        set(&mut d, "/x/y", json!("z"));
        set(&mut d, "/a/5/b", json!(3));
        assert_eq!(d, json!({"a": [{"b": 2}], "x": {"y": "z"}}));
        remove(&mut d, "/x/y");
        remove(&mut d, "/nothing/here");
        assert_eq!(d, json!({"a": [{"b": 2}]}), "x, left empty, goes too");
        let mut links = json!({"_links": {"self": {"href": "s"}, "next": {"href": "n"}}, "e": {}});
        remove(&mut links, "/_links/next/href");
        assert_eq!(links, json!({"_links": {"self": {"href": "s"}}, "e": {}}));
        set(&mut d, "", json!(1));
        assert_eq!(d, json!(1));
        let m = json!({"l": [{"o": {"id": 1}}, {"x": 2}, {"o": {"id": 3}}]});
        assert_eq!(each(&m, "/l/*/o/id"), [&json!(1), &json!(3)]);
        assert_eq!(each(&m, "/l/1"), [&json!({"x": 2})]);
        assert!(each(&m, "/nothing/*/o").is_empty());
    }
}
