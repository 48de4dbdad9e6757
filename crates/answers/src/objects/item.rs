//! The shape of one item of an answer: the operation's own item (its example) as the template
//! of each object shown there, and what a definition asks beyond the object's own fields
//! (`item_at`, `fields`), for `render.rs`.

use apistend_catalog::{Action, IdKind, Render, Resource};
use serde_json::{Map, Value};

use super::place::Place;
use super::pointer;

/// The template of the items of one answer.
pub(super) struct Shape<'a> {
    action: &'a Action,
    /// The object's own template: the answer's item, or its part at `item_at`, with the
    /// collection's typical object under it for a whole object.
    template: Value,
    /// The whole item, when the object is only a part of it (`item_at`).
    whole: Option<Value>,
}

impl<'a> Shape<'a> {
    /// The shape of the items at `slot` (the answer's value at the action's `at`: a list's
    /// first item, or the one item); `typical` is the object the collection starts with.
    pub(super) fn new(action: &'a Action, slot: Option<&Value>, typical: Option<&Value>) -> Self {
        let item = match slot {
            Some(Value::Array(l)) => l.first().cloned(),
            Some(v) => Some(v.clone()),
            None => None,
        }
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(Map::new()));
        let (template, whole) = match &action.item_at {
            Some(p) => (
                item.pointer(p)
                    .filter(|v| v.is_object())
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
                Some(item),
            ),
            None => (item, None),
        };
        let template = match (action.render, typical) {
            (Render::Object, Some(t)) => merged(template, t),
            _ => template,
        };
        Self {
            action,
            template,
            whole,
        }
    }

    /// What the answer's item holds, by which a field's kind and type are judged.
    fn item(&self) -> &Value {
        self.whole.as_ref().unwrap_or(&self.template)
    }

    /// The stored object `o` of `resource` as an item of the answer.
    pub(super) fn show(&self, resource: &Resource, o: &Value, place: &Place<'_>) -> Value {
        let action = self.action;
        let mut out = object(resource, action.render, &self.template, o, place);
        super::job::hide(o, &mut out);
        if let (Some(p), Some(whole)) = (&action.item_at, &self.whole) {
            let mut wrapped = whole.clone();
            pointer::set(&mut wrapped, p, out);
            out = wrapped;
        }
        for (to, from) in &action.fields {
            // The object's field, or a pointer into it (Yandex Market's stock count is a
            // written `/items/0/count`).
            let value = if from.starts_with('/') {
                o.pointer(from)
            } else {
                o.get(from)
            };
            match (value, &mut out) {
                // A pointer: a field inside the item (Ozon's `/stocks/0/present`), of the type
                // the answer documents there (Ozon's prices are sent as strings and answered as
                // numbers).
                (Some(v), out) if to.starts_with('/') => {
                    pointer::set(out, to, typed_as(self.item().pointer(to), v));
                }
                (Some(v), Value::Object(m)) => {
                    m.insert(to.clone(), v.clone());
                }
                _ => {}
            }
        }
        out
    }
}

/// `v` as the type of `like` (the template's value) where it is a number and `v` the text of
/// one; else `v`.
fn typed_as(like: Option<&Value>, v: &Value) -> Value {
    match (like, v) {
        (Some(Value::Number(_)), Value::String(s)) => s
            .trim()
            .parse::<serde_json::Number>()
            .map_or_else(|_| v.clone(), Value::Number),
        _ => v.clone(),
    }
}

/// One stored object as `render` writes it over `template`, with the resource's links.
fn object(
    resource: &Resource,
    render: Render,
    template: &Value,
    stored: &Value,
    place: &Place<'_>,
) -> Value {
    let id_field = resource.id.field.as_str();
    let mut out = match render {
        // A sequential id is answered as the number it is (Bitrix24's `crm.deal.add` answers
        // `"result": 42` although its objects write `"ID": "42"`).
        Render::Id => {
            return match (resource.id.kind, stored.get(id_field)) {
                (IdKind::Sequential, Some(Value::String(s))) => s
                    .parse::<u64>()
                    .map_or_else(|_| Value::String(s.clone()), Value::from),
                (_, v) => v.cloned().unwrap_or(Value::Null),
            };
        }
        Render::Shown => {
            let mut out = template.clone();
            if let (Value::Object(o), Value::Object(s)) = (&mut out, stored) {
                for (k, v) in o.iter_mut() {
                    if let Some(sv) = s.get(k).filter(|sv| fits(v, sv)) {
                        *v = sv.clone();
                    }
                }
            }
            out
        }
        // A value is answered as it was written, nothing added.
        Render::Stored => match &resource.value {
            Some(field) => return stored.get(field).cloned().unwrap_or(Value::Null),
            None => stored.clone(),
        },
        _ => merged(template.clone(), stored),
    };
    let id = resource.id.key(stored).unwrap_or_default();
    if let (true, Value::Object(o)) = (resource.id.hidden, &mut out) {
        o.remove(id_field);
    }
    for (at, link) in &resource.links {
        let first = at.split('/').nth(1).unwrap_or("");
        if render == Render::Shown && out.get(first).is_none() {
            continue;
        }
        // `{parent}`: the request's path without its last segment (a store's keys listed at
        // `…/stores/S/keys` link to `…/stores/S/records/{id}`).
        let parent = place.path.rsplit_once('/').map_or("", |(p, _)| p);
        let href = link
            .replace("{base}", place.base)
            .replace("{parent}", parent)
            .replace("{id}", &id);
        pointer::set(&mut out, at, Value::String(href));
    }
    out
}

/// `over` written over `under`: objects member by member, anything else replaced.
pub(super) fn merged(under: Value, over: &Value) -> Value {
    match (under, over) {
        (Value::Object(mut u), Value::Object(o)) => {
            for (k, v) in o {
                match u.get_mut(k) {
                    Some(slot) => *slot = merged(std::mem::take(slot), v),
                    None => {
                        u.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(u)
        }
        (under, over) if !fits(&under, over) => under,
        (_, over) => over.clone(),
    }
}

/// Whether a stored value takes the place of the answer's `documented` one: anything but a
/// scalar where the answer documents an object or a list (Ozon's stored `price`, a string, is
/// shown at `/price/price` by `fields`, not in place of the answer's `price` object).
fn fits(documented: &Value, stored: &Value) -> bool {
    let nested = |v: &Value| v.is_object() || v.is_array();
    !nested(documented) || nested(stored) || stored.is_null()
}
