//! An OpenAPI schema (3.0, or 3.1's JSON Schema) as a JSON Schema 2020-12 a validator compiles,
//! self-contained: every `$ref` to a component becomes a `$ref` to the `$defs` of the result,
//! and what a request does not need is left out (descriptions, examples, vendor extensions).
//!
//! OpenAPI 3.0's own keywords are translated: `nullable: true` adds `null` to the type (and to an
//! enum), a boolean `exclusiveMinimum`/`exclusiveMaximum` becomes the number form, a `readOnly`
//! property is not required in a request (3.0: "SHOULD NOT be sent"). `oneOf` is checked as
//! `anyOf`: the vendors' unions overlap (MoySklad's entities are open objects with no required
//! property, so a product is also a service), and a request that fits two branches is one the
//! real service takes. A type no JSON Schema has (Ozon's `"array of strings"`, `"int"`) is
//! read as the type it names where that is clear, and otherwise not checked; each such change is
//! noted, and the notes become the operation's relaxations. Bounds a description states only in
//! prose are added where the schema states none ([`super::prose`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub(crate) use super::keywords::Dialect;
use super::keywords::{exclusive, nullable, numbers_as_text, well_formed, without_lookarounds};

/// How deep a schema may nest before the rest is accepted unchecked (the vendors' deepest is
/// about 20; a cycle goes through `$defs`, which are converted once each).
const MAX_DEPTH: usize = 64;

/// Keywords whose value is one schema.
const ONE: [&str; 8] = [
    "items",
    "not",
    "additionalProperties",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
];
/// Keywords whose value is a list of schemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const MAP: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];
/// Keywords kept as they are.
const KEPT: [&str; 15] = [
    "type",
    "enum",
    "const",
    "required",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];
/// The formats asserted: those whose meaning the vendors and JSON Schema agree on. Others
/// (`int64`, `double`, `binary`…) say how a value is stored, not what it may be.
const FORMATS: [&str; 4] = ["date", "uuid", "email", "ipv4"];

/// A `date-time` as the services read one: a date, then optionally a time with optional
/// fractions and offset (RFC 3339 asks for the offset; the services' own examples and parsers
/// do without).
const DATE_TIME: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})?)?$";

/// Converts the schemas of one OpenAPI document, collecting the components they use.
#[derive(Debug)]
pub(crate) struct Converter<'d> {
    doc: &'d Value,
    /// Component pointer → its name in `$defs` (`d0`, `d1`…: names are pointers' text, which
    /// may hold any character).
    names: BTreeMap<String, String>,
    defs: Map<String, Value>,
    pending: Vec<(String, String)>,
    /// How the service reads JSON numbers.
    dialect: Dialect,
    /// Patterns tried, and whether the validator reads them.
    patterns: BTreeMap<String, bool>,
    /// What was not kept, and why (`"int" read as integer`).
    pub(crate) notes: Vec<String>,
}

impl<'d> Converter<'d> {
    /// A converter for the schemas of `doc`, read by a service that reads JSON as `dialect`.
    pub(crate) fn new(doc: &'d Value, dialect: Dialect) -> Self {
        Self {
            doc,
            dialect,
            names: BTreeMap::new(),
            defs: Map::new(),
            pending: Vec::new(),
            patterns: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// `schema` converted; components it uses are added to the `$defs` [`finish`](Self::finish)
    /// returns.
    pub(crate) fn schema(&mut self, schema: &Value) -> Value {
        self.convert(schema, 0)
    }

    /// The `$defs` every converted schema refers to (converting each once).
    pub(crate) fn finish(mut self) -> (Map<String, Value>, Vec<String>) {
        while let Some((pointer, name)) = self.pending.pop() {
            let converted = match self.doc.pointer(&pointer) {
                Some(target) => self.convert(target, 1),
                None => {
                    self.notes.push(format!("$ref {pointer} not found"));
                    Value::Bool(true)
                }
            };
            self.defs.insert(name, converted);
        }
        self.notes.sort();
        self.notes.dedup();
        (self.defs, self.notes)
    }

    fn convert(&mut self, s: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Bool(true);
        }
        let Some(obj) = s.as_object() else {
            // `true`/`false` are schemas in 3.1; anything else accepts anything.
            return if s.is_boolean() {
                s.clone()
            } else {
                Value::Bool(true)
            };
        };
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return self.reference(r);
        }
        let mut out = self.kept(obj);
        self.types(&mut out);
        self.pattern(&mut out);
        if let Some(d) = obj.get("description").and_then(Value::as_str) {
            super::prose::add_bounds(&mut out, d);
        }
        if self.dialect == Dialect::ProtobufJson {
            numbers_as_text(&mut out);
        }
        if matches!(self.dialect, Dialect::ProtobufJson | Dialect::GoJson) {
            // protobuf's JSON mapping reads `null` as a field's default, Go's decoder leaves
            // the field as it was: whatever its type.
            nullable(&mut out);
        }
        exclusive(obj, &mut out, "exclusiveMinimum", "minimum");
        exclusive(obj, &mut out, "exclusiveMaximum", "maximum");
        self.subschemas(obj, &mut out, depth);
        self.read_only(obj, &mut out);
        self.undeclared_required(&mut out);
        if obj.get("nullable").and_then(Value::as_bool) == Some(true) {
            nullable(&mut out);
        }
        Value::Object(out)
    }

    /// The keywords kept as they are (where well formed), the properties Swagger 2 marks
    /// `required: true` required by the object, and the format as checked.
    fn kept(&mut self, obj: &Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for key in KEPT {
            match obj.get(key) {
                Some(v) if well_formed(key, v) => {
                    out.insert(key.to_owned(), v.clone());
                }
                Some(v) if key == "required" && v.is_boolean() => {} // read by the parent
                Some(Value::Null) | None => {}
                Some(v) => self
                    .notes
                    .push(format!("{key}: {v} is not a schema's {key}")),
            }
        }
        let flagged: Vec<Value> = obj
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, p)| p.get("required") == Some(&Value::Bool(true)))
            .map(|(k, _)| Value::from(k.as_str()))
            .collect();
        if !flagged.is_empty() {
            let req = out
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(req) = req.as_array_mut() {
                for f in flagged {
                    if !req.contains(&f) {
                        req.push(f);
                    }
                }
            }
        }
        match obj.get("format").and_then(Value::as_str) {
            // As the services read a date-time: RFC 3339, with or without its offset, or a
            // date alone (WB's `dateFrom=2019-06-20`, "a date or a date with time").
            Some("date-time") if !out.contains_key("pattern") => {
                out.insert("pattern".into(), Value::from(DATE_TIME));
            }
            Some(f) if FORMATS.contains(&f) => {
                out.insert("format".into(), Value::from(f));
            }
            _ => {}
        }
        out
    }

    /// The keywords whose values are schemas, each converted (`oneOf` as `anyOf`).
    fn subschemas(&mut self, obj: &Map<String, Value>, out: &mut Map<String, Value>, depth: usize) {
        for key in ONE {
            if let Some(v) = obj.get(key) {
                let c = self.convert(v, depth + 1);
                out.insert(key.to_owned(), c);
            }
        }
        for key in LIST {
            if let Some(list) = obj.get(key).and_then(Value::as_array) {
                let c: Vec<Value> = list.iter().map(|v| self.convert(v, depth + 1)).collect();
                let key = if key == "oneOf" { "anyOf" } else { key };
                match out.get_mut(key).and_then(Value::as_array_mut) {
                    // A schema with both `oneOf` and `anyOf`: both must hold.
                    Some(_) => {
                        let all = out
                            .entry("allOf")
                            .or_insert_with(|| Value::Array(Vec::new()));
                        if let Some(all) = all.as_array_mut() {
                            all.push(serde_json::json!({ "anyOf": c }));
                        }
                    }
                    None => {
                        out.insert(key.to_owned(), Value::Array(c));
                    }
                }
            }
        }
        for key in MAP {
            if let Some(map) = obj.get(key).and_then(Value::as_object) {
                let c: Map<String, Value> = map
                    .iter()
                    .map(|(k, v)| (k.clone(), self.convert(v, depth + 1)))
                    .collect();
                out.insert(key.to_owned(), Value::Object(c));
            }
        }
    }

    /// A `$ref`: a component becomes a reference to its converted copy in `$defs`.
    fn reference(&mut self, r: &str) -> Value {
        let Some(pointer) = r.strip_prefix('#') else {
            self.notes.push(format!("external $ref {r} not checked"));
            return Value::Bool(true);
        };
        let name = match self.names.get(pointer) {
            Some(n) => n.clone(),
            None => {
                let n = format!("d{}", self.names.len());
                self.names.insert(pointer.to_owned(), n.clone());
                self.pending.push((pointer.to_owned(), n.clone()));
                n
            }
        };
        serde_json::json!({ "$ref": format!("#/$defs/{name}") })
    }

    /// `type` as JSON Schema knows it: a name the vendor wrote for a known type is read as that
    /// type; an unknown one is dropped (and noted).
    fn types(&mut self, out: &mut Map<String, Value>) {
        let Some(t) = out.get("type") else { return };
        let read = |name: &str| -> Option<&'static str> {
            Some(match name {
                "string" | "timestamp" | "date" | "date-time" => "string",
                "integer" | "int" | "int32" | "int64" | "long" => "integer",
                "number" | "float" | "double" | "decimal" => "number",
                "boolean" | "bool" => "boolean",
                "object" => "object",
                "array" | "array of strings" | "array of integers" | "list" => "array",
                "null" => "null",
                _ => return None,
            })
        };
        let names: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut known = Vec::new();
        for n in &names {
            match read(n) {
                Some(k) => {
                    if k != *n {
                        self.notes.push(format!("type {n:?} read as {k}"));
                    }
                    if !known.contains(&k) {
                        known.push(k);
                    }
                }
                None => self.notes.push(format!("type {n:?} not checked")),
            }
        }
        match known.as_slice() {
            [] => {
                out.remove("type");
            }
            [one] => {
                out.insert("type".into(), Value::from(*one));
            }
            many => {
                out.insert("type".into(), Value::from(many.to_vec()));
            }
        }
    }

    /// A `pattern` the validator cannot read as a regular expression (a look-ahead, which
    /// ECMA-262 has and the `regex` crate does not) is not checked, rather than the whole schema.
    fn pattern(&mut self, out: &mut Map<String, Value>) {
        let Some(p) = out.get("pattern").and_then(Value::as_str) else {
            return;
        };
        // A pattern with no regular-expression syntax at all is a format hint written where
        // a pattern goes (Ozon's `" YYYY-MM-DD"`, `" 7XXXXXXXXXX"`): as a pattern it would
        // refuse every real value.
        if !p.contains([
            '^', '$', '[', ']', '(', ')', '*', '+', '?', '{', '}', '|', '\\', '.',
        ]) {
            self.notes.push(format!(
                "pattern {p:?} not checked: a format hint, not a regular expression"
            ));
            out.remove("pattern");
            return;
        }
        let readable = *self.patterns.entry(p.to_owned()).or_insert_with(|| {
            super::compiled::Compiled::new(serde_json::json!({ "pattern": p })).is_ok()
        });
        if readable {
            return;
        }
        // ECMA-262's look-arounds (Yandex Market's `^(?=.*\S.*)[^\x00-\x08…]{1,255}$`): the
        // rest of the pattern is checked without them.
        let without = without_lookarounds(p);
        let p = p.to_owned();
        if without != p
            && super::compiled::Compiled::new(serde_json::json!({ "pattern": without })).is_ok()
        {
            self.notes
                .push(format!("pattern {p:?} checked without its look-arounds"));
            out.insert("pattern".into(), Value::from(without));
        } else {
            self.notes.push(format!(
                "pattern {p:?} not checked: not a regular expression the validator reads"
            ));
            out.remove("pattern");
        }
    }

    /// A name `required` that the object's own `properties` do not declare, where no
    /// composition could declare it, is a typo of the description (Ozon's `operation_idd` beside
    /// its `operation_id`): not required, and noted.
    fn undeclared_required(&mut self, out: &mut Map<String, Value>) {
        if [
            "allOf",
            "anyOf",
            "oneOf",
            "$ref",
            "additionalProperties",
            "patternProperties",
        ]
        .iter()
        .any(|k| out.contains_key(*k))
        {
            return;
        }
        let Some(props) = out.get("properties").and_then(Value::as_object) else {
            return;
        };
        let declared: Vec<String> = props.keys().cloned().collect();
        let Some(req) = out.get_mut("required").and_then(Value::as_array_mut) else {
            return;
        };
        let mut dropped = Vec::new();
        req.retain(|r| {
            let keep = r.as_str().is_some_and(|r| declared.iter().any(|d| d == r));
            if !keep {
                dropped.push(r.to_string());
            }
            keep
        });
        for d in dropped {
            self.notes.push(format!(
                "required {d} is no declared property: not required"
            ));
        }
    }

    /// A read-only property is the server's: not required in a request.
    fn read_only(&self, obj: &Map<String, Value>, out: &mut Map<String, Value>) {
        let Some(props) = obj.get("properties").and_then(Value::as_object) else {
            return;
        };
        let ro: Vec<&String> = props
            .iter()
            .filter(|(_, p)| {
                let p = crate::schema_values::deref(self.doc, p);
                p.get("readOnly").and_then(Value::as_bool) == Some(true)
            })
            .map(|(k, _)| k)
            .collect();
        if ro.is_empty() {
            return;
        }
        if let Some(req) = out.get_mut("required").and_then(Value::as_array_mut) {
            req.retain(|r| !r.as_str().is_some_and(|r| ro.iter().any(|k| *k == r)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn translates_openapi_3_0() {
        let doc = json!({"components": {"schemas": {
            "Id": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "nullable": true},
            "Item": {"type": "object", "required": ["id", "name"], "properties": {
                "id": {"type": "integer", "readOnly": true},
                "name": {"type": "string", "description": "shown nowhere", "example": "x"},
                "kind": {"type": "string", "enum": ["a", "b"], "nullable": true},
                "parent": {"$ref": "#/components/schemas/Id"},
                "tags": {"type": "array of strings"},
                "x-vendor": {"type": "int"}
            }}
        }}});
        let mut c = Converter::new(&doc, Dialect::Json);
        let root = c.schema(&json!({"$ref": "#/components/schemas/Item"}));
        let (defs, notes) = c.finish();
        assert_eq!(root, json!({"$ref": "#/$defs/d0"}));
        let item = &defs["d0"];
        assert_eq!(
            item["required"],
            json!(["name"]),
            "readOnly id not required"
        );
        assert_eq!(item["properties"]["name"], json!({"type": "string"}));
        assert_eq!(item["properties"]["kind"]["enum"], json!(["a", "b", null]));
        assert_eq!(
            item["properties"]["kind"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(item["properties"]["tags"], json!({"type": "array"}));
        assert_eq!(
            defs["d1"],
            json!({"type": ["integer", "null"], "exclusiveMinimum": 0})
        );
        assert!(notes.iter().any(|n| n.contains("array of strings")));
    }

    #[test]
    fn protobuf_json_takes_integers_as_text() {
        let doc = json!({});
        let mut c = Converter::new(&doc, Dialect::ProtobufJson);
        let s = c.schema(&json!({"type": "integer", "minimum": 1}));
        assert_eq!(
            s,
            json!({"type": ["integer", "string", "null"], "minimum": 1, "pattern": "^-?[0-9]+$"})
        );
    }

    #[test]
    fn go_json_takes_null_anywhere_and_numbers_only_as_numbers() {
        let doc = json!({});
        let mut c = Converter::new(&doc, Dialect::GoJson);
        let s = c.schema(&json!({"type": "object", "properties": {
            "updatedAt": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}
        }}));
        assert_eq!(s["type"], json!(["object", "null"]));
        assert_eq!(
            s["properties"]["updatedAt"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            s["properties"]["limit"],
            json!({"type": ["integer", "null"], "minimum": 1})
        );
    }

    #[test]
    fn look_arounds_are_left_out_of_a_pattern() {
        assert_eq!(
            without_lookarounds(r"^(?=.*\S.*)[^\x00-\x08]{1,255}$"),
            r"^[^\x00-\x08]{1,255}$"
        );
        assert_eq!(without_lookarounds(r"a(?!b\))c"), "ac");
        assert_eq!(without_lookarounds("abc"), "abc");
    }

    #[test]
    fn one_of_is_any_of_and_cycles_end() {
        let doc = json!({"components": {"schemas": {
            "Node": {"type": "object", "properties": {
                "next": {"$ref": "#/components/schemas/Node"},
                "v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
            }}
        }}});
        let mut c = Converter::new(&doc, Dialect::Json);
        let root = c.schema(&json!({"$ref": "#/components/schemas/Node"}));
        let (defs, _) = c.finish();
        assert_eq!(root, json!({"$ref": "#/$defs/d0"}));
        assert_eq!(defs.len(), 1);
        assert_eq!(
            defs["d0"]["properties"]["v"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
    }
}
