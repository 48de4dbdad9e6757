//! A request checked against its operation's rules: the body's presence, its `Content-Type`,
//! its syntax, then one schema over its path parameters, query and body.

use serde_json::{Map, Value};

use apistend_catalog::{ErrorKind, Method, Problem};

use super::compiled::Violation;
use super::contract::{Contract, Place, essence, is_json};
use super::rules::RequestRules;
use crate::call::Call;

/// Why a request is refused: where, and what (`body.filter.offer_id[3]: want string, but got
/// number`), for the service's refusal and the `X-APIStend-Invalid` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub Violation);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Invalid {
    fn at(at: &str, problem: Problem, what: impl Into<String>) -> Self {
        Self(Violation {
            at: at.to_owned(),
            what: what.into(),
            problem,
            keyword: None,
        })
    }

    /// The service's error kind for it; its field is named as the service names it, without
    /// the part of the request it is in (`name`, not `body.name` or `params.name`).
    pub fn kind(&self) -> ErrorKind {
        let at = self.0.at.as_str();
        let field = ["body.", "query.", "path.", "params."]
            .iter()
            .find_map(|p| at.strip_prefix(p))
            .unwrap_or(at);
        ErrorKind::Invalid {
            problem: self.0.problem,
            field: field.to_owned(),
            message: self.to_string(),
        }
    }
}

impl RequestRules {
    /// Checks `call` against the rules of `method path` (a path template of the description);
    /// `empty_body_ok`: no body is read as an empty object (Ozon's gateway). An operation the
    /// description does not have is not checked; one documented elsewhere that borrows this
    /// template (`own_path` false: MoySklad's `/entity/demand/{id}/export` answered as
    /// `/entity/{type}/{id}/export`) has its path checked by its own documentation, not the
    /// template's parameters.
    ///
    /// # Errors
    /// [`Invalid`]: the first thing wrong with the request.
    pub fn check(
        &self,
        method: Method,
        path: &str,
        call: &Call,
        empty_body_ok: bool,
        own_path: bool,
    ) -> Result<(), Invalid> {
        let Some(prepared) = self.rule(method, path).and_then(|r| r.prepared()) else {
            return Ok(());
        };
        let c = &prepared.contract;
        // Most reads declare nothing to check (no parameter, no body): nothing is built.
        if c.params.is_empty() && c.body.is_none() {
            return Ok(());
        }
        let body = body(c, call, empty_body_ok)?;
        let mut instance = Map::new();
        let (path_values, query) = params(c, path, call);
        if own_path && !path_values.is_empty() {
            instance.insert("path".into(), Value::Object(path_values));
        }
        if c.params.iter().any(|p| p.place == Place::Param) {
            instance.insert("params".into(), Value::Object(either_way(c, call)));
        }
        // The query object is there whenever a query parameter is declared, so that a
        // required one that is missing is seen missing.
        if c.params.iter().any(|p| p.place == Place::Query) {
            instance.insert("query".into(), Value::Object(query));
        }
        if let Some(b) = body {
            instance.insert("body".into(), b);
        }
        prepared
            .compiled
            .check(&Value::Object(instance))
            .map_err(Invalid)
    }
}

/// The body as the schema sees it (`None`: none to check), or why it is refused before that.
fn body(c: &Contract, call: &Call, empty_body_ok: bool) -> Result<Option<Value>, Invalid> {
    let Some(rule) = &c.body else {
        // A body the description does not declare is not looked at (the services ignore it).
        return Ok(None);
    };
    if !call.has_body {
        if empty_body_ok && rule.is_json() {
            return Ok(Some(Value::Object(Map::new())));
        }
        // A body of any type (`*/*`: a key-value record, a file) may be empty: none is an
        // empty one.
        if rule.required && !rule.media.iter().any(|m| m == "*/*") {
            return Err(Invalid::at("body", Problem::Missing, "is required"));
        }
        return Ok(None);
    }
    let expected = || rule.media.join(", ");
    // A body of any type needs no name for it.
    let any = rule.media.iter().any(|m| m == "*/*");
    match call.content_type.as_deref() {
        None if !rule.media.is_empty() && !any => {
            return Err(Invalid::at(
                "Content-Type",
                Problem::MediaType,
                format!("missing; expected {}", expected()),
            ));
        }
        Some(ct) if !rule.media.is_empty() && !rule.accepts(ct) => {
            return Err(Invalid::at(
                "Content-Type",
                Problem::MediaType,
                format!("{} is not accepted; expected {}", essence(ct), expected()),
            ));
        }
        _ => {}
    }
    let json = call.content_type.as_deref().is_some_and(is_json);
    if !json {
        return Ok(None);
    }
    if let Some(why) = &call.malformed {
        return Err(Invalid::at(
            "body",
            Problem::Syntax,
            format!("malformed JSON: {why}"),
        ));
    }
    Ok(call.body.clone())
}

/// The path parameters (read from `call.path` against the template `path`) and the query, each
/// value read as its declared type.
fn params(c: &Contract, template: &str, call: &Call) -> (Map<String, Value>, Map<String, Value>) {
    let mut path_values = Map::new();
    let mut query = Map::new();
    let (mut segments, mut actual) = (Vec::new(), Vec::new());
    if c.params.iter().any(|p| p.place == Place::Path) {
        segments = template.split('/').collect();
        actual = call.path.split('/').collect();
    }
    // Aligned at the end: a path may carry a prefix the template does not (a host segment).
    let offset = actual.len().saturating_sub(segments.len());
    for p in &c.params {
        match p.place {
            Place::Param => {}
            Place::Path => {
                let value = segments
                    .iter()
                    .position(|s| {
                        s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) == Some(&p.name)
                    })
                    .and_then(|i| actual.get(i + offset));
                if let Some(v) = value {
                    path_values.insert(p.name.clone(), p.scalar.read(v));
                }
            }
            Place::Query => {
                let values: Vec<&str> = call
                    .query
                    .iter()
                    .filter(|(k, _)| *k == p.name || k.strip_suffix("[]") == Some(&p.name))
                    .map(|(_, v)| v.as_str())
                    .collect();
                let Some(first) = values.first() else {
                    continue;
                };
                let value = if p.list {
                    let items: Vec<Value> = if values.len() == 1 {
                        first.split(',').map(|v| p.scalar.read(v)).collect()
                    } else {
                        values.iter().map(|v| p.scalar.read(v)).collect()
                    };
                    Value::Array(items)
                } else {
                    p.scalar.read(first)
                };
                query.insert(p.name.clone(), value);
            }
        }
    }
    (path_values, query)
}

/// The parameters a method takes from its query or its body (Bitrix24): each found by its name
/// in any case, read as its declared type; given only as PHP's `name[key]=…` pairs, it is there
/// (an object).
fn either_way(c: &Contract, call: &Call) -> Map<String, Value> {
    let mut out = Map::new();
    let body = call.body.as_ref().and_then(Value::as_object);
    for p in c.params.iter().filter(|p| p.place == Place::Param) {
        let named = |k: &str| k.eq_ignore_ascii_case(&p.name);
        let nested = |k: &str| {
            k.get(..p.name.len()).is_some_and(named)
                && k.get(p.name.len()..).is_some_and(|r| r.starts_with('['))
        };
        let value = call
            .query
            .iter()
            .find(|(k, _)| named(k))
            .map(|(_, v)| p.scalar.read(v))
            .or_else(|| {
                let (_, v) = body?.iter().find(|(k, _)| named(k))?;
                Some(match v {
                    Value::String(text) => p.scalar.read(text),
                    other => other.clone(),
                })
            })
            .or_else(|| {
                let in_query = call.query.iter().any(|(k, _)| nested(k));
                let in_body = body.is_some_and(|b| b.keys().any(|k| nested(k)));
                (in_query || in_body).then(|| Value::Object(Map::new()))
            });
        if let Some(v) = value {
            out.insert(p.name.clone(), v);
        }
    }
    out
}
