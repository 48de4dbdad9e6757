//! An operation's `[operations.request]`: what its requests must be, for a service with no
//! description to check them by, written as the OpenAPI operation the validation reads
//! (`parameters` and `requestBody`), checked here for what needs no JSON Schema compiler.

use serde_json::{Map, Value, json};

use super::file::RequestDef;
use super::source::Source;
use crate::error::CatalogError;

/// `def` (at `field`, of an operation on `paths`) as an OpenAPI operation's request part.
///
/// # Errors
/// [`CatalogError::Definition`] at the field: a path parameter no path has, a schema that is
/// not a table, a query parameter's `required` that is not `true` or `false`, no media type.
pub(super) fn openapi(
    src: &Source<'_>,
    def: &toml::Spanned<RequestDef>,
    field: &str,
    paths: &[String],
) -> Result<Value, CatalogError> {
    let (span, def) = (def.span(), def.get_ref());
    let err = |at: &str, why: String| src.err(span.clone(), &format!("{field}.{at}"), why);
    let mut parameters = Vec::new();
    for (name, schema) in &def.path {
        let braced = format!("{{{name}}}");
        if let Some(p) = paths.iter().find(|p| !p.contains(&braced)) {
            return Err(err(
                &format!("path.{name}"),
                format!("the path {p} has no {braced}"),
            ));
        }
        let schema = table(schema).map_err(|why| err(&format!("path.{name}"), why))?;
        parameters.push(json!({"name": name, "in": "path", "required": true, "schema": schema}));
    }
    for (name, schema) in &def.query {
        let at = format!("query.{name}");
        let mut schema = table(schema).map_err(|why| err(&at, why))?;
        let required = match schema.remove("required") {
            None => false,
            Some(Value::Bool(b)) => b,
            Some(other) => return Err(err(&at, format!("required = {other}: true or false"))),
        };
        parameters
            .push(json!({"name": name, "in": "query", "required": required, "schema": schema}));
    }
    let mut op = Map::new();
    op.insert("parameters".into(), Value::Array(parameters));
    if let Some(body) = &def.body {
        let schema = table(body).map_err(|why| err("body", why))?;
        let media: Vec<&str> = match def.media.as_slice() {
            [] => vec!["application/json"],
            m => m.iter().map(String::as_str).collect(),
        };
        if let Some(m) = media.iter().find(|m| !m.contains('/')) {
            return Err(err(
                "media",
                format!("{m:?}: a media type, as application/json"),
            ));
        }
        let content: Map<String, Value> = media
            .iter()
            .map(|m| ((*m).to_owned(), json!({"schema": schema})))
            .collect();
        op.insert(
            "requestBody".into(),
            json!({"required": !def.body_optional, "content": content}),
        );
    } else if !def.media.is_empty() || def.body_optional {
        return Err(err(
            "body",
            "`media` and `body_optional` describe a `body`".into(),
        ));
    }
    Ok(Value::Object(op))
}

/// A schema written as a table.
fn table(schema: &Value) -> Result<Map<String, Value>, String> {
    match schema {
        Value::Object(o) => Ok(o.clone()),
        other => Err(format!(
            "{other}: a JSON Schema, written as a table ({{ type = \"integer\" }})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(text: &str) -> toml::Spanned<RequestDef> {
        toml::from_str::<std::collections::BTreeMap<String, toml::Spanned<RequestDef>>>(text)
            .unwrap()
            .remove("r")
            .unwrap()
    }

    #[test]
    fn writes_the_openapi_request_of_a_definition() {
        let src = Source {
            file: "shop.toml",
            text: "",
        };
        let r = def(r#"
            [r]
            path = { id = { type = "integer", minimum = 1 } }
            query = { limit = { type = "integer", required = true }, q = { type = "string" } }
            body = { type = "object", required = ["name"] }
        "#);
        let op = openapi(&src, &r, "operations[0].request", &["/items/{id}".into()]).unwrap();
        assert_eq!(op["parameters"][0]["in"], "path");
        assert_eq!(op["parameters"][1]["name"], "limit");
        assert_eq!(op["parameters"][1]["required"], true);
        assert!(op["parameters"][1]["schema"].get("required").is_none());
        assert_eq!(op["parameters"][2]["required"], false);
        let body = &op["requestBody"];
        assert_eq!(body["required"], true);
        assert_eq!(
            body["content"]["application/json"]["schema"]["required"][0],
            "name"
        );

        let bad = def("[r]\npath = { sku = { type = \"string\" } }");
        let e = openapi(&src, &bad, "operations[0].request", &["/items".into()]).unwrap_err();
        assert!(e.to_string().contains("path.sku"), "{e}");
        let bad = def("[r]\nquery = { q = { required = \"yes\" } }");
        let e = openapi(&src, &bad, "operations[0].request", &["/items".into()]).unwrap_err();
        assert!(e.to_string().contains("true or false"), "{e}");
        let bad = def("[r]\nbody = \"object\"");
        assert!(openapi(&src, &bad, "x", &["/items".into()]).is_err());
        let bad = def("[r]\nmedia = [\"application/json\"]");
        assert!(openapi(&src, &bad, "x", &["/items".into()]).is_err());
    }
}
