//! What one operation accepts, as the importer writes it into a request-rules archive: one JSON
//! Schema over the request (`{"path": …, "query": …, "body": …}`), how the text of each path
//! and query parameter is read, the body's media types, and what was relaxed and why.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one operation accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Contract {
    /// A JSON Schema 2020-12 over `{"path": {…}, "query": {…}, "body": …}`, with its `$defs`.
    pub(crate) schema: Value,
    /// The path and query parameters the description declares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) params: Vec<Param>,
    /// The request body, when the description declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<Body>,
    /// What is not checked and why (a vendor's type no JSON Schema has, a keyword its own
    /// example breaks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) relaxed: Vec<String>,
}

/// Where a parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Place {
    /// A path segment (`{id}`).
    Path,
    /// The query string.
    Query,
    /// Either the query or the body, by a name in any case, PHP's `name[…]` keys included
    /// (Bitrix24's methods take their parameters either way).
    Param,
}

/// A parameter: its name, place, and how its text is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Param {
    /// Its name.
    pub(crate) name: String,
    /// Where it is.
    #[serde(rename = "in")]
    pub(crate) place: Place,
    /// The type of its value (of each item, for a list): its text is read as that.
    #[serde(default, skip_serializing_if = "Scalar::is_text")]
    pub(crate) scalar: Scalar,
    /// A list: repeated (`id=1&id=2`, `id[]=1`) or comma-separated (`id=1,2`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) list: bool,
}

/// How a parameter's text is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scalar {
    /// As it is.
    #[default]
    Text,
    /// An integer (kept as text when it is none, for the schema to say so).
    Integer,
    /// A number.
    Number,
    /// `true` or `false`.
    Boolean,
}

impl Scalar {
    fn is_text(&self) -> bool {
        *self == Self::Text
    }

    /// The scalar a schema's `type` names.
    pub(crate) fn of(schema: &Value) -> Self {
        let ty = match schema.get("type") {
            Some(Value::Array(a)) => a.iter().find(|t| *t != "null"),
            t => t,
        };
        match ty.and_then(Value::as_str) {
            Some("integer") => Self::Integer,
            Some("number") => Self::Number,
            Some("boolean") => Self::Boolean,
            _ => Self::Text,
        }
    }

    /// `text` read as this scalar: a value that does not read stays text, which the schema
    /// then refuses with the type it wants.
    pub(crate) fn read(self, text: &str) -> Value {
        match self {
            Self::Text => Value::from(text),
            Self::Integer => text
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| text.parse::<u64>().map(Value::from))
                .unwrap_or_else(|_| Value::from(text)),
            Self::Number => text
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Value::from(text), Value::Number),
            // As the services' parsers read a flag (Go's `strconv.ParseBool`, Java's
            // `Boolean.parseBoolean` and Python clients' `True`).
            Self::Boolean => match text.to_ascii_lowercase().as_str() {
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => Value::from(text),
            },
        }
    }
}

/// The request body an operation declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Body {
    /// Whether it must be there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) required: bool,
    /// Its media types (`application/json`, `multipart/form-data`…; `*/*` takes any).
    pub(crate) media: Vec<String>,
}

impl Body {
    /// Whether a body of `content_type` is one the operation takes.
    pub(crate) fn accepts(&self, content_type: &str) -> bool {
        let sent = essence(content_type);
        self.media.iter().any(|m| {
            let m = essence(m);
            m == "*/*"
                || m == sent
                || m.strip_suffix("/*")
                    .is_some_and(|top| sent.split('/').next() == Some(top))
                // The old name of JSON; `…+json` types are other types and stay refused.
                || (m == "application/json" && sent == "text/json")
        })
    }

    /// Whether its schema is checked: a JSON media type is declared.
    pub(crate) fn is_json(&self) -> bool {
        self.media.iter().any(|m| is_json(m))
    }
}

pub(crate) use crate::media::{essence, is_json};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_parameter_text_by_type() {
        assert_eq!(Scalar::Integer.read("42"), Value::from(42));
        assert_eq!(Scalar::Integer.read("4x"), Value::from("4x"));
        assert_eq!(Scalar::Number.read("1.5"), Value::from(1.5));
        assert_eq!(Scalar::Number.read("NaN"), Value::from("NaN"));
        assert_eq!(Scalar::Boolean.read("true"), Value::Bool(true));
        assert_eq!(Scalar::Boolean.read("True"), Value::Bool(true));
        assert_eq!(Scalar::Boolean.read("0"), Value::Bool(false));
        assert_eq!(Scalar::Boolean.read("yes"), Value::from("yes"));
    }

    #[test]
    fn a_body_takes_its_media_types() {
        let b = Body {
            required: true,
            media: vec!["application/json".into(), "image/*".into()],
        };
        assert!(b.accepts("application/json; charset=utf-8"));
        assert!(b.accepts("Application/JSON"));
        assert!(b.accepts("image/png"));
        assert!(!b.accepts("text/plain"));
        assert!(!b.accepts(""));
        assert!(b.is_json());
    }
}
