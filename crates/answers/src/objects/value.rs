//! A collection of values (its definition's `value`: Apify's key-value records): each object
//! holds one value as it was sent — JSON as JSON, any other media type as its bytes (text as
//! text, the rest in base64) with that type beside it — and a `stored` read answers it as it
//! came, with its media type.

use apistend_catalog::Resource;
use base64::Engine as _;
use serde_json::{Map, Value};

use crate::answer::Success;
use crate::call::Call;

/// The member of a stored value that holds its media type, when it is not JSON; never shown.
const MEDIA: &str = "__media";
/// The member that says the value is base64 of its bytes (not UTF-8 text); never shown.
const BASE64: &str = "__base64";

/// The object `call`'s body makes in a collection whose values are held under `field`: JSON
/// (or no body: an empty string) as it is, anything else as its bytes with its media type; and
/// its size in bytes where the resource keeps one.
pub(super) fn kept(resource: &Resource, field: &str, call: &Call) -> Map<String, Value> {
    let mut o = Map::new();
    let media = call.content_type.as_deref();
    let json = call.json_media().then(|| call.body.clone()).flatten();
    let value = match (json, call.has_body) {
        (Some(v), _) => v,
        (None, false) => Value::String(String::new()),
        (None, true) => {
            let bytes: &[u8] = &call.raw;
            o.insert(
                MEDIA.to_owned(),
                Value::String(media.unwrap_or("application/octet-stream").to_owned()),
            );
            match std::str::from_utf8(bytes) {
                Ok(t) => Value::String(t.to_owned()),
                Err(_) => {
                    o.insert(BASE64.to_owned(), Value::Bool(true));
                    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
                }
            }
        }
    };
    if let Some(size) = &resource.size {
        // The bytes as sent where they were kept; a JSON value (not kept) counts its compact
        // text, and a call made without them (a test's) what is kept.
        let n = match &value {
            _ if !call.raw.is_empty() || !call.has_body => call.raw.len(),
            Value::String(s) if o.contains_key(MEDIA) => s.len(),
            v => v.to_string().len(),
        };
        o.insert(size.clone(), Value::from(n));
    }
    o.insert(field.to_owned(), value);
    o
}

/// The answer of a `stored` read of `stored` (a value under `field`): JSON as JSON, anything
/// else as its bytes with its media type.
pub(super) fn answer(mut answer: Success, field: &str, stored: &Value) -> Success {
    let value = stored.get(field).cloned().unwrap_or(Value::Null);
    let Some(media) = stored.get(MEDIA).and_then(Value::as_str) else {
        answer.body = value;
        answer.rendered = None;
        return answer;
    };
    let text = value.as_str().unwrap_or("");
    let bytes = if stored.get(BASE64).and_then(Value::as_bool) == Some(true) {
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap_or_default()
    } else {
        text.as_bytes().to_vec()
    };
    answer.body = Value::Null;
    answer.media = Some(media.to_owned());
    answer.rendered = None;
    answer.bytes = Some(bytes.into());
    answer
}
