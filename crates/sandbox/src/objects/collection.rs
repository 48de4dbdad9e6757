//! What every store does the same way: ids as text and as written, new ids, merging.

use apistend_catalog::{IdKind, IdStyle};
use serde_json::{Map, Value};

/// An object's id as the store keys it ([`IdStyle::key`]).
pub(super) fn key_of(id: &IdStyle, object: &Value) -> Option<String> {
    id.key(object)
}

/// The first sequential id after the objects a collection starts with.
pub(super) fn first_after(id: &IdStyle, seed: &[Value]) -> u64 {
    seed.iter()
        .filter_map(|o| key_of(id, o)?.parse::<u64>().ok())
        .map(|n| n.saturating_add(1))
        .fold(id.first, u64::max)
}

/// The id `n` of the sequence, or a new random one, as the object writes it.
pub(super) fn written(id: &IdStyle, n: u64) -> Value {
    match id.kind {
        IdKind::Uuid => Value::String(uuid()),
        IdKind::Random => Value::String(random()),
        _ if id.text => Value::String(n.to_string()),
        _ => Value::from(n),
    }
}

/// 17 random letters and digits, as Apify's ids (2^101 of them: none given twice in practice).
fn random() -> String {
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut b = [0u8; 17];
    if getrandom::fill(&mut b).is_err() {
        fastrand::fill(&mut b);
    }
    b.iter()
        .filter_map(|x| ALNUM.get(usize::from(*x) % ALNUM.len()))
        .map(|c| char::from(*c))
        .collect()
}

/// A random (version 4) UUID.
fn uuid() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        b = fastrand::u128(..).to_le_bytes();
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = crate::secret::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// `object` with `id` set.
pub(super) fn with_id(id: &IdStyle, mut object: Map<String, Value>, value: Value) -> Value {
    object.insert(id.field.clone(), value);
    Value::Object(object)
}

/// `stored` with each member of `patch` written over it.
pub(super) fn patched(stored: &Value, patch: &Map<String, Value>) -> Value {
    let mut out = stored.clone();
    if let Value::Object(o) = &mut out {
        for (k, v) in patch {
            o.insert(k.clone(), v.clone());
        }
    }
    out
}

/// Bytes `v` takes as JSON.
pub(super) fn size(v: &Value) -> u64 {
    serde_json::to_vec(v).map_or(0, |b| b.len() as u64)
}

/// The objects of `listed` (those of a window's ids, in order) that a delete by `w`'s other
/// fields removes (within its `only`), whose ids `id` reads.
pub(super) fn removable(
    listed: Vec<Value>,
    w: &apistend_answers::objects::Window,
    id: &IdStyle,
) -> Vec<Value> {
    // A delete by fields that names no value removes nothing (not everything).
    if w.by.is_empty() {
        return Vec::new();
    }
    let whole = apistend_answers::objects::Window {
        offset: 0,
        limit: u64::MAX,
        after: None,
        ..w.clone()
    };
    match apistend_answers::objects::narrow(listed, &whole, id) {
        apistend_answers::objects::Outcome::Listed { items, .. } => items,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn style(kind: IdKind, text: bool) -> IdStyle {
        serde_json::from_value(json!({"kind": kind, "first": 100, "field": "ID", "text": text}))
            .unwrap()
    }

    #[test]
    fn ids_follow_the_style() {
        let s = style(IdKind::Sequential, true);
        assert_eq!(written(&s, 7), json!("7"));
        assert_eq!(first_after(&s, &[json!({"ID": "3"})]), 100);
        assert_eq!(
            first_after(&s, &[json!({"ID": "300"}), json!({"ID": 5})]),
            301
        );
        let r = written(&style(IdKind::Random, false), 0);
        assert_eq!(r.as_str().map(str::len), Some(17));
        assert!(
            r.as_str()
                .unwrap()
                .chars()
                .all(|c| c.is_ascii_alphanumeric())
        );
        let u = written(&style(IdKind::Uuid, false), 0);
        let u = u.as_str().unwrap();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}
