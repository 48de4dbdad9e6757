//! A request schema compiled by a maintained JSON Schema validator (boon: draft 2020-12, the
//! whole official test suite, and its errors name the instance's location and the keyword) and
//! what a failure says.

use serde_json::Value;

/// Where a compiled schema says it came from (nothing is fetched: every `$ref` is to its own
/// `$defs`).
const BASE: &str = "urn:apistend:request";

/// A compiled request schema.
pub(crate) struct Compiled {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

/// Why a request does not fit its schema: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The value's place in the request: `body.filter.offer_id[3]`, `query.limit`, `path.id`.
    pub at: String,
    /// What is wrong with it, as the validator says (`want string, but got number`).
    pub what: String,
    /// Its kind of wrong, for services that answer each kind with its own code.
    pub problem: apistend_catalog::Problem,
    /// The keyword that refused, as a JSON pointer into the schema (`/$defs/d3/properties/x/format`).
    pub(crate) keyword: Option<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.what)
    }
}

impl Compiled {
    /// Compiles `schema` (JSON Schema 2020-12, formats asserted).
    ///
    /// # Errors
    /// The validator's message, for a schema it cannot compile (a pattern that is no regular
    /// expression).
    pub(crate) fn new(schema: Value) -> Result<Self, String> {
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.enable_format_assertions();
        compiler
            .add_resource(BASE, schema)
            .map_err(|e| e.to_string())?;
        let mut schemas = boon::Schemas::new();
        let index = compiler
            .compile(BASE, &mut schemas)
            .map_err(|e| format!("{e:#}"))?;
        Ok(Self { schemas, index })
    }

    /// Checks `instance`.
    ///
    /// # Errors
    /// The most precise [`Violation`]: of the validator's errors, the one deepest in the value.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), Violation> {
        let Err(error) = self.schemas.validate(instance, self.index) else {
            return Ok(());
        };
        let mut leaf = &error;
        while let Some(deeper) = leaf
            .causes
            .iter()
            .max_by_key(|c| c.instance_location.tokens.len())
        {
            leaf = deeper;
        }
        let mut at = place(&leaf.instance_location.tokens);
        // A missing or unknown property is named in the place, as a field: `query.date: is
        // required`, `body.filter.colour: is not a property of this object`.
        let problem = problem_of(&leaf.kind);
        let what = match &leaf.kind {
            boon::ErrorKind::Required { want } => {
                at = within(&at, want.first().copied().unwrap_or(""));
                match want.as_slice() {
                    [_] => "is required".to_owned(),
                    more => format!(
                        "is required (and {})",
                        more.get(1..).unwrap_or(&[]).join(", ")
                    ),
                }
            }
            boon::ErrorKind::AdditionalProperties { got } => {
                at = within(&at, got.first().map_or("", |g| g.as_ref()));
                "is not a property this object takes".to_owned()
            }
            kind => kind.to_string(),
        };
        Err(Violation {
            at,
            what,
            problem,
            keyword: keyword(leaf),
        })
    }
}

/// The kind of wrong of a validator's error.
fn problem_of(kind: &boon::ErrorKind<'_, '_>) -> apistend_catalog::Problem {
    use apistend_catalog::Problem;
    match kind {
        boon::ErrorKind::Required { .. } | boon::ErrorKind::DependentRequired { .. } => {
            Problem::Missing
        }
        boon::ErrorKind::AdditionalProperties { .. } | boon::ErrorKind::FalseSchema => {
            Problem::Unknown
        }
        boon::ErrorKind::Type { .. } => Problem::Type,
        _ => Problem::Value,
    }
}

/// `at`'s property `name`: `body.filter` and `ids` → `body.filter.ids`.
fn within(at: &str, name: &str) -> String {
    if at == "request" {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}

/// `["body", "filter", 3]` → `body.filter[3]`.
fn place(tokens: &[boon::InstanceToken<'_>]) -> String {
    let mut out = String::new();
    for t in tokens {
        match t {
            boon::InstanceToken::Prop(p) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(p);
            }
            boon::InstanceToken::Item(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    if out.is_empty() {
        out.push_str("request");
    }
    out
}

/// The refusing keyword's JSON pointer in the schema.
fn keyword(e: &boon::ValidationError<'_, '_>) -> Option<String> {
    let path = e.kind.keyword_path()?;
    let fragment = e.schema_url.split_once('#').map_or("", |(_, f)| f);
    let keyword = match path.keyword {
        "additionalProperty" => "additionalProperties",
        k => k,
    };
    // A pointer's property names may hold any character: the fragment escapes them.
    let pointer = percent_encoding::percent_decode_str(fragment).decode_utf8_lossy();
    Some(format!("{pointer}/{keyword}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_deepest_place_and_the_keyword() {
        let c = Compiled::new(json!({
            "$defs": {"d0": {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}}}}},
            "type": "object",
            "properties": {"body": {"type": "object", "properties": {"filter": {"$ref": "#/$defs/d0"}}}}
        }))
        .unwrap();
        assert!(
            c.check(&json!({"body": {"filter": {"ids": ["a"]}}}))
                .is_ok()
        );
        let v = c
            .check(&json!({"body": {"filter": {"ids": ["a", 3]}}}))
            .unwrap_err();
        assert_eq!(v.at, "body.filter.ids[1]");
        assert!(v.what.contains("string"), "{}", v.what);
        assert_eq!(
            v.keyword.as_deref(),
            Some("/$defs/d0/properties/ids/items/type")
        );
    }

    #[test]
    fn a_missing_or_unknown_property_is_named() {
        let c = Compiled::new(json!({"type": "object", "properties": {"query": {
            "type": "object", "required": ["date"], "additionalProperties": false,
            "properties": {"date": {"type": "string"}}
        }}}))
        .unwrap();
        let v = c.check(&json!({"query": {}})).unwrap_err();
        assert_eq!(v.to_string(), "query.date: is required");
        let v = c
            .check(&json!({"query": {"date": "x", "colour": 1}}))
            .unwrap_err();
        assert_eq!(
            v.to_string(),
            "query.colour: is not a property this object takes"
        );
    }

    #[test]
    fn a_pattern_that_is_no_regex_is_an_error_not_a_panic() {
        assert!(Compiled::new(json!({"pattern": "(unclosed"})).is_err());
    }
}
