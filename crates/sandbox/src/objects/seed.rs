//! A sandbox's objects as JSON (`{"amocrm": {"leads": [{…}, …]}}`), checked whole against the
//! catalog before any of it is loaded: the management API's `PUT …/objects` and `serve --seed`.

use std::collections::{BTreeMap, HashMap};

use apistend_catalog::{Catalog, IdStyle, Resource};
use serde_json::Value;

use super::coll::Export;
use super::collection::key_of;

/// The collection `name` of the service `service` keeps, if it keeps one (`stocks@507`: the
/// part of `stocks` kept for warehouse 507).
pub(crate) fn resource<'c>(
    catalog: &'c Catalog,
    service: &str,
    name: &str,
) -> Option<&'c Resource> {
    let name = name.split_once('@').map_or(name, |(n, _)| n);
    let id = catalog.service_id(service).ok()?;
    catalog
        .service(id)?
        .resources
        .iter()
        .find(|r| r.name == name)
}

/// How `service`'s collection `name` makes its ids, if it keeps one.
pub(crate) fn id_style(catalog: &Catalog, service: &str, name: &str) -> Option<IdStyle> {
    resource(catalog, service, name).map(|r| r.id.clone())
}

/// `doc` as a sandbox's objects, every part checked: a service of the catalog that keeps
/// objects, a collection of it, a list of objects each with its id. A later object of an id
/// replaces an earlier one, in its place (as a later member of a JSON object does).
///
/// # Errors
/// The first part that is not so, named (`amocrm.leads[2].id: missing`).
pub(crate) fn check(catalog: &Catalog, doc: &Value) -> Result<Export, String> {
    let Value::Object(services) = doc else {
        return Err(
            "the objects are a JSON object: {\"SERVICE\": {\"COLLECTION\": [OBJECT, …]}}".into(),
        );
    };
    let mut out = Export::new();
    for (service, colls) in services {
        let keeping: Vec<&str> = catalog
            .service_id(service)
            .ok()
            .and_then(|id| catalog.service(id))
            .map(|s| s.resources.iter().map(|r| r.name.as_str()).collect())
            .unwrap_or_default();
        if keeping.is_empty() {
            return Err(format!(
                "{service}: no service of the catalog keeps objects by this id"
            ));
        }
        let Value::Object(colls) = colls else {
            return Err(format!(
                "{service}: an object of collections ({})",
                keeping.join(", ")
            ));
        };
        let mut mine = BTreeMap::new();
        for (name, items) in colls {
            let Some(r) = resource(catalog, service, name) else {
                return Err(format!(
                    "{service}.{name}: no such collection; {service} keeps {}",
                    keeping.join(", ")
                ));
            };
            let Value::Array(items) = items else {
                return Err(format!("{service}.{name}: a list of objects"));
            };
            let mut kept: Vec<Value> = Vec::new();
            let mut at_of: HashMap<String, usize> = HashMap::new();
            for (i, item) in items.iter().enumerate() {
                let at = format!("{service}.{name}[{i}]");
                if !item.is_object() {
                    return Err(format!("{at}: an object"));
                }
                let Some(key) = key_of(&r.id, item) else {
                    return Err(format!(
                        "{at}.{}: missing (a string or a number)",
                        r.id.names()
                    ));
                };
                match at_of.get(&key).and_then(|&j| kept.get_mut(j)) {
                    Some(earlier) => *earlier = item.clone(),
                    None => {
                        at_of.insert(key, kept.len());
                        kept.push(item.clone());
                    }
                }
            }
            mine.insert(name.clone(), kept);
        }
        out.insert(service.clone(), mine);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_what_is_wrong() {
        let c = Catalog::builtin().unwrap();
        let ok = json!({"amocrm": {"leads": [{"id": 1, "name": "a"}, {"id": "2"}]}});
        assert_eq!(check(&c, &ok).unwrap()["amocrm"]["leads"].len(), 2);
        let err = |v: Value| check(&c, &v).unwrap_err();
        assert!(err(json!([])).contains("a JSON object"));
        assert!(err(json!({"nope": {}})).starts_with("nope:"));
        let part = json!({"wb": {"stocks@507": [{"chrtId": 1, "amount": 1}]}});
        assert!(
            check(&c, &part).is_ok(),
            "a warehouse's part of WB's stocks"
        );
        assert!(err(json!({"amocrm": {"deals": []}})).contains("keeps leads"));
        assert!(err(json!({"amocrm": {"leads": {}}})).contains("a list"));
        assert_eq!(
            err(json!({"amocrm": {"leads": [{"id": 1}, 5]}})),
            "amocrm.leads[1]: an object"
        );
        assert!(
            err(json!({"amocrm": {"leads": [{"name": "x"}]}}))
                .starts_with("amocrm.leads[0].id: missing")
        );
        let twice =
            json!({"amocrm": {"leads": [{"id": 1, "n": "a"}, {"id": 2}, {"id": "1", "n": "b"}]}});
        assert_eq!(
            check(&c, &twice).unwrap()["amocrm"]["leads"],
            [json!({"id": "1", "n": "b"}), json!({"id": 2})],
            "a later object of an id replaces the earlier one, in its place"
        );
    }
}
