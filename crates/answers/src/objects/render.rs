//! What the store did, written into the operation's own answer: its example is the template,
//! whose fields fill what was never written.

use apistend_catalog::{Action, ActionKind, Render, Resource};
use serde_json::{Map, Value};

use super::item::merged;
use super::outcome::Outcome;
use super::place::Place;
use super::plan::Plan;
use super::pointer;
use crate::answer::{Refusal, Success};

/// The answer of `action` after the store turned `plan` into `outcome`, over `answer` (what
/// the operation answers without state: its example) and, under it, `typical` (an object
/// the collection starts with: its list's first example item, the fullest example of an
/// object). Links to the real service's hosts point at the sandbox.
///
/// # Errors
/// A [`Refusal`] for an id the collection does not hold: the resource's `missing` answer
/// (when it has a body), else the service's 404.
pub fn render(
    resource: &Resource,
    action: &Action,
    answer: Success,
    plan: &Plan,
    outcome: Outcome,
    place: &Place<'_>,
    typical: Option<&Value>,
) -> Result<Success, Refusal> {
    let mut answer = answer;
    // The template is the answer's own body, moved out of it (a `Keep` answer gets it back).
    let mut doc = answer.take_json();
    let created = matches!(outcome, Outcome::Created(_));
    let (items, listed) = match outcome {
        Outcome::Missing(id) => return missing(resource, &id),
        Outcome::Created(items)
        | Outcome::Updated(items)
        | Outcome::Written(items)
        | Outcome::Removed(items) => (items, None),
        Outcome::Found(item) | Outcome::Deleted(item) => (vec![item], None),
        Outcome::Listed { items, total } => (items, Some(total)),
    };
    for p in &action.drop {
        pointer::remove(&mut doc, p);
    }
    if action.render == Render::Keep {
        answer.body = doc;
        return Ok(answer);
    }
    // A value read alone: as it was sent, with its media type.
    if let (Render::Stored, ActionKind::Read, Some(field), [one]) = (
        action.render,
        action.action,
        &resource.value,
        items.as_slice(),
    ) {
        return Ok(super::value::answer(answer, field, one));
    }
    let at = action.at.as_str();
    let slot = doc.pointer(at);
    let list =
        action.action == ActionKind::List || items.len() > 1 || slot.is_some_and(Value::is_array);
    let shape = super::item::Shape::new(action, slot, typical);
    let shown: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut out = shape.show(resource, o, place);
            if let (true, Some(at)) = (created, &action.index) {
                pointer::set(&mut out, at, Value::String(i.to_string()));
            }
            out
        })
        .collect();
    let shown = per_value(action, plan, &items, shown, slot);
    let count = shown.len();
    let written = if list {
        Value::Array(shown)
    } else {
        shown.into_iter().next().unwrap_or(Value::Null)
    };
    pointer::set(&mut doc, at, written);
    if let (Some(total), Plan::List(window), Some(paging)) = (listed, plan, &action.page) {
        for (name, v) in super::page::headers(paging, window, count, total) {
            let sent = answer.headers.iter_mut();
            if let Some(h) = sent.into_iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                h.1 = v.to_string();
            }
        }
        let page = super::page::Page {
            window,
            shown: count,
            total,
            last: items.last(),
            id_field: &resource.id.field,
        };
        if let Some(status) = super::page::write(paging, &mut doc, &page, place) {
            return Ok(Success::new(status, Value::Null));
        }
    }
    rebase(&mut doc, place);
    answer.body = doc;
    answer.rendered = None;
    Ok(answer)
}

/// For a delete by other fields than the id with an `unmatched` answer: an item for each value
/// asked, in the request's order — the object it removed (`removed`, shown as `shown`), or the
/// slot's first item (`slot`: the example) with the value in its field and the `unmatched`
/// fields over it. Any other answer's items are `shown` as they are.
fn per_value(
    action: &Action,
    plan: &Plan,
    removed: &[Value],
    shown: Vec<Value>,
    slot: Option<&Value>,
) -> Vec<Value> {
    let Plan::RemoveWhere(w) = plan else {
        return shown;
    };
    if action.unmatched.is_empty() {
        return shown;
    }
    let template = match slot {
        Some(Value::Array(list)) => list.first().cloned(),
        other => other.cloned(),
    }
    .filter(Value::is_object)
    .unwrap_or_else(|| Value::Object(Map::new()));
    let mut out = Vec::new();
    for (field, values) in &w.by {
        for v in values {
            let hit = removed
                .iter()
                .position(|o| o.get(field).and_then(super::plan::text).as_deref() == Some(v));
            if let Some(item) = hit.and_then(|i| shown.get(i)) {
                out.push(item.clone());
                continue;
            }
            let mut item = template.clone();
            if let Value::Object(m) = &mut item {
                m.insert(field.clone(), Value::String(v.clone()));
                m.extend(action.unmatched.clone());
            }
            out.push(item);
        }
    }
    out
}

/// Every link in `doc` to one of the real service's hosts, made a link to the sandbox.
fn rebase(doc: &mut Value, place: &Place<'_>) {
    match doc {
        Value::String(s) => {
            let Some(rest) = s
                .strip_prefix("https://")
                .or_else(|| s.strip_prefix("http://"))
            else {
                return;
            };
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            if place.service.names_host(host) {
                *s = format!("{}{path}", place.base);
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| rebase(v, place)),
        Value::Object(m) => m.values_mut().for_each(|v| rebase(v, place)),
        _ => {}
    }
}

/// New objects of a create that starts from its answer (`from_answer`): each the answer's
/// object at the action's `at` (of `answer`, the operation's stateless answer's body), its own
/// fields over it.
pub fn from_answer(action: &Action, answer: &Value, new: &mut [Map<String, Value>]) {
    let Some(Value::Object(base)) = answer.pointer(&action.at) else {
        return;
    };
    for o in new {
        let own = Value::Object(std::mem::take(o));
        if let Value::Object(m) = merged(Value::Object(base.clone()), &own) {
            *o = m;
        }
    }
}

/// The objects a sandbox's collection starts with: the items of its list's example.
pub fn seed(action: &Action, mut list_answer: Success) -> Vec<Value> {
    match list_answer
        .take_json()
        .pointer_mut(&action.at)
        .map(Value::take)
    {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|i| match &action.item_at {
                Some(p) => i.pointer(p).cloned(),
                None => Some(i),
            })
            .filter(Value::is_object)
            .collect(),
        _ => Vec::new(),
    }
}

fn missing(resource: &Resource, id: &str) -> Result<Success, Refusal> {
    let Some(m) = &resource.missing else {
        return Err(Refusal::NotFound);
    };
    let Some(body) = &m.body else {
        return Ok(Success::new(m.status, Value::Null));
    };
    let text = body.replace("{id}", &id.replace('"', ""));
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    if m.status < 400 {
        return Ok(Success::new(m.status, body));
    }
    Err(Refusal::Body {
        status: m.status,
        body,
        media: None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::item::merged;
    use serde_json::json;

    #[test]
    fn merges_objects_member_by_member() {
        let t = json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2]});
        let s = json!({"b": {"c": 9}, "l": [7], "n": "x"});
        assert_eq!(
            merged(t, &s),
            json!({"a": 1, "b": {"c": 9, "d": 3}, "l": [7], "n": "x"})
        );
    }
}
