//! Values an OpenAPI schema accepts: examples repaired where they break their own schema, and
//! values built from a schema where there is no example. The rules are those the validation walk
//! (`tests/compat/validate_answers.py`) checks; docs/answers.md lists them.

use serde_json::{Value, json};

/// Makes an example agree with its schema, as the walking test checks it: a value of the wrong
/// type, or outside its enum, is replaced by one built from the schema (the vendors' examples
/// contradict their own schemas in places — "ОСНО" where the enum says "OSNO"); properties the
/// schema requires that the example lacks are added. Recursive over objects and arrays.
pub(crate) fn complete(doc: &Value, schema: &Value, value: &mut Value, depth: u32) {
    let s = deref(doc, schema);
    if depth > 16 {
        return;
    }
    if let Some(parts) = s.get("allOf").and_then(Value::as_array) {
        for part in parts {
            complete(doc, part, value, depth + 1);
        }
    }
    let wrong_enum = s
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty() && !e.contains(value))
        || s.get("const").is_some_and(|c| c != value);
    let wrong_literal =
        literal_pattern(s).is_some_and(|p| value.as_str().is_some_and(|v| !v.contains(p)));
    let wrong_branch = discriminated(s).is_some_and(|(prop, _, _)| {
        let names = s
            .get("discriminator")
            .and_then(|d| d.get("mapping"))
            .and_then(Value::as_object);
        value
            .get(prop)
            .and_then(Value::as_str)
            .is_none_or(|v| names.is_none_or(|m| !m.contains_key(v)))
    });
    // A number where the schema says a string (Ozon's int64 ids and counts, numbers in its own
    // examples): the same number as text, not a value built from nothing.
    if value.is_number() && type_of(s) == "string" && !wrong_enum && !wrong_literal {
        *value = Value::String(value.to_string());
        return;
    }
    // The placeholder a vendor's example generator leaves ("string", in Ozon's) where the
    // schema declares a format a client parses (a date, a number): a value of the format.
    let placeholder = value.as_str() == Some("string")
        && s.get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !matches!(f, "binary" | "byte" | "password"));
    if placeholder || wrong_enum || wrong_literal || wrong_branch || !type_fits(s, value) {
        *value = from_schema(doc, s, depth);
        return;
    }
    match value {
        Value::Object(obj) => {
            let props = s.get("properties").and_then(Value::as_object);
            for name in required(s) {
                if !obj.contains_key(name) {
                    let sub = props
                        .and_then(|p| p.get(name))
                        .cloned()
                        .unwrap_or(json!({}));
                    obj.insert(name.to_owned(), from_schema(doc, &sub, depth + 1));
                }
            }
            if let Some(props) = props {
                for (name, sub) in props {
                    if let Some(v) = obj.get_mut(name) {
                        complete(doc, sub, v, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for v in items {
                    complete(doc, item_schema, v, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// A schema's discriminator: its property, and its first mapping's name and schema reference.
fn discriminated(schema: &Value) -> Option<(&str, &str, &str)> {
    let d = schema.get("discriminator")?;
    let prop = d.get("propertyName")?.as_str()?;
    let (name, target) = d.get("mapping")?.as_object()?.iter().next()?;
    Some((prop, name.as_str(), target.as_str()?))
}

/// A string schema's `pattern` when it has no regex syntax at all: a text to contain.
fn literal_pattern(schema: &Value) -> Option<&str> {
    schema.get("pattern").and_then(Value::as_str).filter(|p| {
        !p.is_empty()
            && !p.contains([
                '^', '$', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\',
            ])
    })
}

/// Whether `value`'s JSON type is one `schema` allows (any, when it names none).
fn type_fits(schema: &Value, value: &Value) -> bool {
    let nullable = schema.get("nullable").and_then(Value::as_bool) == Some(true);
    let fits = |t: &str| match t {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    };
    match schema.get("type") {
        Some(Value::String(t)) => fits(t) || (nullable && value.is_null()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(fits),
        _ => true,
    }
}

/// An instance of `schema`: examples and defaults where the spec gives them, the first of an
/// enum, otherwise the plainest value of the type. Bounded in depth, for recursive schemas.
pub(crate) fn from_schema(doc: &Value, schema: &Value, depth: u32) -> Value {
    build(doc, schema, depth, None)
}

/// [`from_schema`], inside the branch `within` of a discriminated union: a base schema that the
/// branch extends through `allOf` (MoySklad's `attributeFile` is `allOf: [AttributeAbstract]`,
/// whose discriminator maps `file` back to `attributeFile`) is built as itself there, not
/// dispatched to the branch again.
fn build(doc: &Value, schema: &Value, depth: u32, within: Option<&str>) -> Value {
    let s = deref(doc, schema);
    if let Some(v) = s.get("const") {
        return v.clone();
    }
    // An example or default that breaks its own schema (a string default on an array, one
    // outside the enum — both in Ozon's document) is not used.
    let usable = |v: &Value| {
        type_fits(s, v)
            && s.get("enum")
                .and_then(Value::as_array)
                .is_none_or(|e| e.is_empty() || e.contains(v))
    };
    let given = s.get("example").or_else(|| s.get("default")).or_else(|| {
        s.get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
    });
    if let Some(v) = given.filter(|v| usable(v)) {
        return v.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    // Deep in a recursive schema: the plainest value of its type, never a null it forbids.
    let deep = depth > 24;
    // A discriminated union: its first mapping's schema, with the discriminating property set
    // to that mapping's name (MoySklad's `type`), as a validator of the union requires.
    if let Some((prop, name, target)) = discriminated(s).filter(|d| !deep && within != Some(d.2)) {
        let mut v = build(doc, &json!({"$ref": target}), depth + 1, Some(target));
        if let Value::Object(obj) = &mut v {
            obj.insert(prop.to_owned(), json!(name));
        }
        return v;
    }
    // `allOf`: every part merged, then the schema's own properties over them (a schema may
    // have both, as MoySklad's `AttributeAbstract` does).
    if let Some(parts) = s.get("allOf").and_then(Value::as_array).filter(|_| !deep) {
        let mut merged = serde_json::Map::new();
        for part in parts {
            match build(doc, part, depth + 1, within) {
                Value::Object(o) => merged.extend(o),
                other if parts.len() == 1 && s.get("properties").is_none() => return other,
                _ => {}
            }
        }
        merged.extend(properties(doc, s, depth, within));
        require(s, &mut merged);
        return Value::Object(merged);
    }
    if let Some(first) = ["oneOf", "anyOf"]
        .iter()
        .filter(|_| !deep)
        .find_map(|k| s.get(*k).and_then(Value::as_array).and_then(|a| a.first()))
    {
        return build(doc, first, depth + 1, within);
    }
    by_type(doc, s, depth, within)
}

/// The schema's type: its `type` (of a 3.1 list, the first that is not "null"), else what its
/// keywords imply.
fn type_of(s: &Value) -> &str {
    match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.get("properties").is_some() => "object",
        _ if s.get("items").is_some() => "array",
        _ => "",
    }
}

/// The plainest value of the schema's type.
fn by_type(doc: &Value, s: &Value, depth: u32, within: Option<&str>) -> Value {
    let deep = depth > 24;
    match type_of(s) {
        "object" if deep => json!({}),
        "array" if deep => json!([]),
        "object" => {
            let mut obj = properties(doc, s, depth, within);
            require(s, &mut obj);
            Value::Object(obj)
        }
        // One item near the top; deeper lists stay empty unless the schema needs items.
        "array" => match s.get("items") {
            Some(items)
                if depth < 6 || s.get("minItems").and_then(Value::as_u64).unwrap_or(0) > 0 =>
            {
                json!([build(doc, items, depth + 1, within)])
            }
            _ => json!([]),
        },
        "string" => string(s),
        "integer" | "number" => number(s),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ if s.get("nullable").and_then(Value::as_bool) == Some(true) => Value::Null,
        _ => json!({}),
    }
}

/// A string of the schema: a value of its format, its literal pattern, or empty unless it must
/// not be. A client parses a declared format: an empty string where a date, a time or a number
/// is declared breaks it (Ozon's `"sku": ""` of an int64, Yandex Market's `"fromTime": ""`).
fn string(s: &Value) -> Value {
    match s.get("format").and_then(Value::as_str) {
        Some("date-time") => json!("2026-01-01T00:00:00Z"),
        Some("date") => json!("2026-01-01"),
        // Yandex Market's, the only descriptions with `time`: `ЧЧ:ММ`, 24-hour.
        Some("time") => json!("00:00"),
        Some("uuid") => json!("00000000-0000-0000-0000-000000000000"),
        Some("email") => json!("user@example.com"),
        Some("uri" | "url" | "uri-reference" | "link") => json!("https://example.com/"),
        // A number written as a string (Ozon's int64 ids and counts).
        Some(
            "int" | "int32" | "int64" | "uint" | "uint32" | "uint64" | "float" | "float32"
            | "float64" | "double" | "decimal",
        ) => json!("0"),
        // A pattern without any regex syntax is its own only match (Ozon's " YYYY-MM-DD").
        _ if literal_pattern(s).is_some() => json!(literal_pattern(s)),
        // A string the schema asks to be non-empty is one.
        _ if s.get("minLength").and_then(Value::as_u64).unwrap_or(0) > 0 => json!("string"),
        _ => json!(""),
    }
}

/// The smallest value the schema allows (0 unless its minimum says more; above an exclusive
/// minimum).
fn number(s: &Value) -> Value {
    let min = s
        .get("minimum")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
        .max(0.0);
    let exclusive = s.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true)
        || s.get("exclusiveMinimum").and_then(Value::as_f64).is_some();
    let min = s
        .get("exclusiveMinimum")
        .and_then(Value::as_f64)
        .unwrap_or(min)
        .max(min);
    let v = if exclusive {
        min.floor() + 1.0
    } else {
        min.ceil()
    };
    #[allow(clippy::cast_possible_truncation)] // a schema's small bound
    let v = v as i64;
    json!(v)
}

/// An object of `s`'s properties (deep down only the required ones: recursive schemas end,
/// answers stay small).
fn properties(
    doc: &Value,
    s: &Value,
    depth: u32,
    within: Option<&str>,
) -> serde_json::Map<String, Value> {
    let required: Vec<&str> = required(s).collect();
    s.get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| depth < 6 || required.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), build(doc, v, depth + 1, within)))
        .collect()
}

/// A name `s` requires that nothing defines (MoySklad's `FinanceInOperationAbstract` requires
/// `meta` and leaves its shape to the branches): an empty object, which a property without a
/// schema accepts.
fn require(s: &Value, obj: &mut serde_json::Map<String, Value>) {
    for name in required(s) {
        if !obj.contains_key(name) {
            obj.insert(name.to_owned(), json!({}));
        }
    }
}

/// The names `s` lists as `required`.
fn required(s: &Value) -> impl Iterator<Item = &str> {
    s.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// `v`, or what its `$ref` (a JSON pointer into `doc`) names, followed up to 8 times.
pub(crate) fn deref<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(pointer) = r.strip_prefix('#') else {
            break;
        };
        match doc.pointer(pointer) {
            Some(next) => v = next,
            None => break,
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_format_gets_a_value_of_it_and_a_number_example_its_text() {
        let doc = json!({});
        for (format, want) in [
            ("date-time", "2026-01-01T00:00:00Z"),
            ("time", "00:00"),
            ("int64", "0"),
            ("double", "0"),
            ("email", "user@example.com"),
            ("uri", "https://example.com/"),
        ] {
            let schema = json!({"type": "string", "format": format});
            assert_eq!(from_schema(&doc, &schema, 0), json!(want), "{format}");
        }
        let schema = json!({"type": "object", "properties": {
            "sku": {"type": "string", "format": "int64"},
            "total": {"type": "string"}}});
        let mut example = json!({"sku": 123_456, "total": 7});
        complete(&doc, &schema, &mut example, 0);
        assert_eq!(example, json!({"sku": "123456", "total": "7"}));
        let mut placeholder = json!({"sku": "string", "total": "string"});
        complete(&doc, &schema, &mut placeholder, 0);
        assert_eq!(placeholder, json!({"sku": "0", "total": "string"}));
    }

    #[test]
    fn schemas_without_an_example_are_built_from_their_properties() {
        let doc = json!({"components": {"schemas": {"Count": {"type": "integer", "example": 24}}}});
        let schema = json!({
            "type": "object",
            "properties": {
                "data": {"type": "object", "properties": {"count": {"$ref": "#/components/schemas/Count"}}},
                "error": {"type": "boolean", "example": false},
                "errorText": {"type": "string"},
                "additionalErrors": {"nullable": true, "type": "array", "items": {"type": "string"}, "example": null},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "when": {"type": "string", "format": "date-time"},
                "list": {"type": "array", "items": {"allOf": [{"type": "object", "properties": {"id": {"type": "integer"}}}]}},
                "either": {"oneOf": [{"type": "number", "example": 1.5}, {"type": "string"}]}
            }
        });
        assert_eq!(
            from_schema(&doc, &schema, 0),
            json!({"data": {"count": 24}, "error": false, "errorText": "", "additionalErrors": null,
                   "kind": "a", "when": "2026-01-01T00:00:00Z", "list": [{"id": 0}], "either": 1.5})
        );
        // A schema that refers to itself ends in null, not in a stack overflow.
        let doc = json!({"components": {"schemas": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}}}}}});
        let v = from_schema(&doc, &json!({"$ref": "#/components/schemas/Node"}), 0);
        assert!(v.pointer("/next/next/next").is_some());
    }
    #[test]
    fn a_union_whose_branches_extend_its_base_is_built_as_its_first_branch() {
        // MoySklad's shape: the base maps `file` to a branch that is `allOf: [base]`.
        let doc = json!({"components": {"schemas": {
            "Base": {"type": "object", "required": ["type"],
                     "discriminator": {"propertyName": "type",
                                       "mapping": {"file": "#/components/schemas/File"}},
                     "allOf": [{"$ref": "#/components/schemas/Meta"}],
                     "properties": {"id": {"type": "string", "format": "uuid"}, "type": {"type": "string"}}},
            "File": {"type": "object", "allOf": [{"$ref": "#/components/schemas/Base"}],
                     "properties": {"value": {"type": "string"}}},
            "Meta": {"type": "object", "properties": {"meta": {"type": "object"}}},
            "Linked": {"type": "object", "required": ["meta", "sum"],
                       "allOf": [{"type": "object", "properties": {"sum": {"type": "number"}}}]}
        }}});
        let v = from_schema(&doc, &json!({"$ref": "#/components/schemas/Base"}), 0);
        assert_eq!(
            v,
            json!({"meta": {}, "id": "00000000-0000-0000-0000-000000000000", "type": "file", "value": ""})
        );
        // A required name that nothing defines is still there.
        let v = from_schema(&doc, &json!({"$ref": "#/components/schemas/Linked"}), 0);
        assert_eq!(v, json!({"sum": 0, "meta": {}}));
    }
}
