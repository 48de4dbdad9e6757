//! A list's selection by what a value of the request means (Ozon's product list by
//! `visibility`: `ALL` is every product but the archived ones, `ARCHIVED` only those).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which objects a list shows, by the meaning of one request value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct View {
    /// Where the value is in the request's parameters (a JSON pointer: `/filter/visibility`).
    pub at: String,
    /// The value taken when the request sends none, or one `values` does not name.
    pub default: String,
    /// What each value means: the fields an object must hold to be shown (an absent field
    /// holds `false`).
    pub values: BTreeMap<String, BTreeMap<String, Value>>,
    /// Whether a list by ids (its `filter` or `filter_by`) shows them whatever the view (Ozon:
    /// "Вернутся все товары с указанными идентификаторами, независимо от видимости").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_by_ids: bool,
}

impl View {
    /// The fields an object must hold for the request value `asked` (none: the default).
    pub fn fields(&self, asked: Option<&str>) -> Option<&BTreeMap<String, Value>> {
        asked
            .and_then(|a| self.values.get(a))
            .or_else(|| self.values.get(&self.default))
    }

    /// Whether `object` holds each of `fields` (an absent field, or `null`, holds `false`).
    pub fn holds(object: &Value, fields: &BTreeMap<String, Value>) -> bool {
        fields.iter().all(|(k, want)| {
            let have = object.get(k).filter(|v| !v.is_null());
            match have {
                Some(v) => v == want,
                None => *want == Value::Bool(false),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_names_its_fields_and_an_absent_field_is_false() {
        let view: View = serde_json::from_value(json!({
            "at": "/filter/visibility", "default": "ALL",
            "values": {"ALL": {"is_archived": false}, "ARCHIVED": {"is_archived": true}}
        }))
        .unwrap();
        let all = view.fields(None).unwrap();
        assert_eq!(
            view.fields(Some("VISIBLE")),
            Some(all),
            "unknown: the default"
        );
        let archived = view.fields(Some("ARCHIVED")).unwrap();
        assert!(View::holds(&json!({"id": 1}), all));
        assert!(!View::holds(&json!({"id": 1}), archived));
        assert!(View::holds(&json!({"is_archived": true}), archived));
        assert!(!View::holds(&json!({"is_archived": true}), all));
    }
}
