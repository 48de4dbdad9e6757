//! A service's bound on every list a request sends (MoySklad's "не более 1000 элементов" in
//! one array, 413 above it), whatever the operation.

use std::fmt::Write as _;

use serde_json::Value;

/// Lists deeper than this are not looked into (the body parser's own depth bound is lower).
const MAX_DEPTH: usize = 128;

/// The first list of `body` (depth first, in document order) with more than `max` items: where
/// it is (`body.positions`, `body[0].items`) and how many it holds.
///
/// ```
/// let body = serde_json::json!({"name": "x", "positions": [1, 2, 3]});
/// let over = apistend_answers::requests::longer_than(&body, 2);
/// assert_eq!(over, Some(("body.positions".to_owned(), 3)));
/// assert_eq!(apistend_answers::requests::longer_than(&body, 3), None);
/// ```
#[must_use]
pub fn longer_than(body: &Value, max: usize) -> Option<(String, usize)> {
    let mut at = String::from("body");
    find(body, max, &mut at, 0).map(|n| (at, n))
}

fn find(v: &Value, max: usize, at: &mut String, depth: usize) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let len = at.len();
    match v {
        Value::Array(list) if list.len() > max => return Some(list.len()),
        Value::Array(list) => {
            for (i, item) in list.iter().enumerate() {
                let _ = write!(at, "[{i}]");
                if let Some(n) = find(item, max, at, depth + 1) {
                    return Some(n);
                }
                at.truncate(len);
            }
        }
        Value::Object(fields) => {
            for (name, item) in fields {
                at.push('.');
                at.push_str(name);
                if let Some(n) = find(item, max, at, depth + 1) {
                    return Some(n);
                }
                at.truncate(len);
            }
        }
        _ => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use super::longer_than;
    use serde_json::json;

    #[test]
    fn finds_the_first_list_over_the_bound_and_where() {
        let body = json!([{"a": [1]}, {"b": {"c": [1, 2, 3]}}]);
        assert_eq!(longer_than(&body, 2), Some(("body[1].b.c".into(), 3)));
        assert_eq!(longer_than(&body, 1), Some(("body".into(), 2)));
        assert_eq!(longer_than(&body, 0), Some(("body".into(), 2)));
        assert_eq!(longer_than(&json!({"a": 1}), 0), None);
    }
}
