//! A request to an operation bound to a collection, read into what the store is to do.

use apistend_catalog::{Action, ActionKind, Operation, Paging, Resource};
use serde_json::{Map, Value};

use super::params::params;
use super::stamp;
use crate::answer::Refusal;
use crate::call::Call;

/// What the store is to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Add these objects, each with a new id.
    Create(Vec<Map<String, Value>>),
    /// Read the object of this id.
    Read(String),
    /// List a page.
    List(Window),
    /// Merge each patch into the object of its id.
    Update(Vec<(String, Map<String, Value>)>),
    /// Remove the object of this id.
    Delete(String),
    /// Remove each object of these ids that the collection holds.
    Remove(Vec<String>),
    /// Remove each object the window lists (a delete by other fields than the id, within its
    /// `only`; the window's paging is not used).
    RemoveWhere(Window),
    /// Write each object under its id, new or in place of the one there.
    Upsert(Vec<(String, Map<String, Value>)>),
}

/// The page a list asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Objects skipped.
    pub offset: u64,
    /// Objects on the page at most.
    pub limit: u64,
    /// Only the objects of these ids, when the request filters by id.
    pub ids: Option<Vec<String>>,
    /// Only the objects whose field (the first) holds one of these values (the second), for
    /// each filter by another field the request sends.
    pub by: Vec<(String, Vec<String>)>,
    /// The page starts after the object of this id (the `after` paging style).
    pub after: Option<String>,
    /// Only the objects holding these fields (a list's `view`, a delete's `only`).
    pub view: Option<std::collections::BTreeMap<String, Value>>,
}

impl Window {
    /// Every object, no filter.
    pub fn all() -> Self {
        Self {
            offset: 0,
            limit: u64::MAX,
            ids: None,
            by: Vec::new(),
            after: None,
            view: None,
        }
    }

    /// Whether the store's window cannot say it: filters by other fields, or a page after an
    /// id (read whole and narrowed by [`narrow`](super::narrow::narrow)).
    pub fn narrowed(&self) -> bool {
        !self.by.is_empty() || self.after.is_some() || self.view.is_some()
    }
}

/// What `call` asks of `resource` through `action` (the operation `op`); `now` stamps what it
/// writes (Unix seconds).
///
/// # Errors
/// The service's 400 for a request the action cannot read: no input object where it writes,
/// no id where it needs one.
pub fn plan(
    resource: &Resource,
    action: &Action,
    op: &Operation,
    call: &Call,
    now: i64,
) -> Result<Plan, Refusal> {
    let doc = params(call);
    Ok(match action.action {
        // A create that starts from its answer and takes no input makes one object of it.
        ActionKind::Create if action.from_answer && action.input.is_none() => {
            let mut o = Map::new();
            stamp::apply(resource, &mut o, now, true);
            Plan::Create(vec![o])
        }
        ActionKind::Create => {
            let mut objects = input_objects(action, &doc)?;
            for o in &mut objects {
                o.remove(&resource.id.field);
                stamp::apply(resource, o, now, true);
            }
            Plan::Create(objects)
        }
        ActionKind::Read => Plan::Read(id_of(action, op, call, &doc)?),
        ActionKind::Delete if action.id.is_none() && !action.filter_by.is_empty() => {
            Plan::RemoveWhere(window(action, op, call, &doc)?)
        }
        ActionKind::Delete if action.id.is_none() => {
            Plan::Remove(window(action, op, call, &doc)?.ids.unwrap_or_default())
        }
        ActionKind::Update if !action.set.is_empty() => set(resource, action, op, call, &doc, now)?,
        ActionKind::Delete => Plan::Delete(id_of(action, op, call, &doc)?),
        ActionKind::Update => {
            let many = action.id.is_none();
            let mut patches = Vec::new();
            for mut o in input_objects(action, &doc)? {
                let id = if many {
                    o.get(&resource.id.field)
                        .and_then(text)
                        .ok_or_else(|| bad(format!("every item names its {}", resource.id.field)))?
                } else {
                    id_of(action, op, call, &doc)?
                };
                o.remove(&resource.id.field);
                stamp::apply(resource, &mut o, now, false);
                patches.push((id, o));
            }
            Plan::Update(patches)
        }
        ActionKind::List => Plan::List(window(action, op, call, &doc)?),
        // One object under the id its path or parameters name (Apify's record by its key):
        // the input, or for a collection of values the whole body, JSON or text.
        ActionKind::Upsert if action.id.is_some() => {
            let id = id_of(action, op, call, &doc)?;
            let mut o = match &resource.value {
                Some(field) => super::value::kept(resource, field, call),
                None => input_objects(action, &doc)?
                    .into_iter()
                    .next()
                    .unwrap_or_default(),
            };
            o.insert(resource.id.field.clone(), Value::String(id.clone()));
            stamp::apply(resource, &mut o, now, true);
            Plan::Upsert(vec![(id, o)])
        }
        ActionKind::Upsert => {
            let mut objects = Vec::new();
            for o in input_objects(action, &doc)? {
                let mut o = Value::Object(o);
                let id = resource
                    .id
                    .key(&o)
                    .ok_or_else(|| bad(format!("every item names its {}", resource.id.names())))?;
                if let Value::Object(m) = &mut o {
                    stamp::apply(resource, m, now, true);
                }
                if let Value::Object(m) = o {
                    objects.push((id, m));
                }
            }
            Plan::Upsert(objects)
        }
        // Stopping a job marks when; how it shows is the job's to say when it is read.
        ActionKind::Abort => {
            let mut stop = Map::new();
            let now_ms = crate::clock::unix_now_ms();
            stop.insert(stamp::ABORT.into(), Value::from(now_ms));
            Plan::Update(vec![(id_of(action, op, call, &doc)?, stop)])
        }
        _ => return Err(bad("this action is not implemented".into())),
    })
}

/// Fields set on each object the request lists by id (Ozon's archive), stamped as a change.
fn set(
    resource: &Resource,
    action: &Action,
    op: &Operation,
    call: &Call,
    doc: &Value,
    now: i64,
) -> Result<Plan, Refusal> {
    let ids = window(action, op, call, doc)?.ids.unwrap_or_default();
    if ids.is_empty() {
        return Err(bad(format!("{}: no id", action.filter.join(", "))));
    }
    let mut set: Map<String, Value> = action.set.clone().into_iter().collect();
    stamp::apply(resource, &mut set, now, false);
    Ok(Plan::Update(
        ids.into_iter().map(|id| (id, set.clone())).collect(),
    ))
}

fn bad(why: String) -> Refusal {
    Refusal::BadRequest(why)
}

/// The objects at the action's `input`: one object, or a list of them; none there is one empty
/// object (Bitrix24's `crm.deal.update` without `fields` changes nothing; whether a request
/// may leave them out is the validation stage's to say, by the service's description).
fn input_objects(action: &Action, doc: &Value) -> Result<Vec<Map<String, Value>>, Refusal> {
    let at = action.input.as_deref().unwrap_or("");
    let what = if at.is_empty() { "the body" } else { at };
    // A `*` step is each item of a list there (Yandex Market's `/offerMappings/*/offer`).
    if at.contains("/*") {
        let found = super::pointer::each(doc, at);
        if found.is_empty() {
            return Err(bad(format!("{what}: none in the request")));
        }
        return found
            .into_iter()
            .map(|v| {
                v.as_object()
                    .cloned()
                    .ok_or_else(|| bad(format!("{what}: every item is an object")))
            })
            .collect();
    }
    match doc.pointer(at) {
        None | Some(Value::Null) => Ok(vec![Map::new()]),
        Some(Value::Object(o)) => Ok(vec![o.clone()]),
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .map(|v| {
                v.as_object()
                    .cloned()
                    .ok_or_else(|| bad(format!("{what}: every item is an object")))
            })
            .collect(),
        Some(Value::Array(_)) => Err(bad(format!("{what}: an empty list"))),
        _ => Err(bad(format!("{what}: an object is required"))),
    }
}

/// The collection's part the request addresses, for an action kept apart per value of a path
/// parameter (its `scope`: WB's stocks per warehouse): that value.
pub fn scope(action: &Action, op: &Operation, call: &Call) -> Option<String> {
    let name = action.scope.as_deref()?.strip_prefix("path:")?;
    op.param(&call.path, name).map(str::to_owned)
}

/// The id the action's `id` names: a path parameter, or a parameter whatever its case.
fn id_of(action: &Action, op: &Operation, call: &Call, doc: &Value) -> Result<String, Refusal> {
    let spec = action.id.as_deref().unwrap_or("");
    let found = if let Some(name) = spec.strip_prefix("path:") {
        op.param(&call.path, name).map(str::to_owned)
    } else {
        let name = spec.strip_prefix("param:").unwrap_or(spec);
        doc.as_object().and_then(|m| {
            m.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| text(v))
        })
    };
    found
        .filter(|id| !id.is_empty())
        .ok_or_else(|| bad("ID is not defined or invalid.".into()))
}

/// A scalar as an id's text.
pub(super) fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The page a list asks for, by its paging style, and its filters.
fn window(action: &Action, op: &Operation, call: &Call, doc: &Value) -> Result<Window, Refusal> {
    let num = |at: &str| {
        doc.pointer(at)
            .and_then(text)
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let (offset, limit) = match &action.page {
        Some(Paging::Offset { max, .. }) => {
            let max = u64::from(*max);
            (
                num("/offset").unwrap_or(0),
                num("/limit").unwrap_or(max).clamp(1, max),
            )
        }
        Some(Paging::Page { default, max, .. }) => {
            let limit = num("/limit")
                .unwrap_or(u64::from(*default))
                .clamp(1, u64::from(*max));
            let page = num("/page").unwrap_or(1).max(1);
            ((page - 1).saturating_mul(limit), limit)
        }
        Some(Paging::Cursor {
            cursor,
            limit,
            default,
            max,
            ..
        }) => {
            let size = size(num(limit), *default, *max);
            let at = match doc.pointer(cursor).and_then(text) {
                None => 0,
                Some(c) if c.is_empty() => 0,
                Some(c) => super::cursor::offset(&c).ok_or_else(|| {
                    bad(format!(
                        "{}: {c:?} is not a cursor this list gave",
                        cursor.trim_start_matches('/')
                    ))
                })?,
            };
            (at, size)
        }
        Some(Paging::After {
            limit,
            default,
            max,
            ..
        }) => (0, size(num(limit), *default, *max)),
        Some(Paging::Start { size, .. }) => (num("/start").unwrap_or(0), u64::from(*size)),
        _ => (0, u64::MAX),
    };
    // An empty filter is no filter (Ozon's `"offer_id": []`, WB's `"textSearch": ""`).
    let mut ids: Option<Vec<String>> = None;
    for p in &action.filter {
        if let Some(v) = doc.pointer(p) {
            let mut found = Vec::new();
            values(v, &mut found);
            if !found.is_empty() {
                ids.get_or_insert_with(Vec::new).extend(found);
            }
        }
    }
    let mut by = Vec::new();
    for (p, field) in &action.filter_by {
        // A path parameter (Apify's runs of one actor), or a pointer into the parameters.
        if let Some(name) = p.strip_prefix("path:") {
            if let Some(v) = op.param(&call.path, name) {
                by.push((field.clone(), vec![v.to_owned()]));
            }
        } else {
            // A `*` step is each item of a list there (Ozon's `/products/*/offer_id`).
            let mut found = Vec::new();
            for v in super::pointer::each(doc, p) {
                values(v, &mut found);
            }
            if !found.is_empty() {
                by.push((field.clone(), found));
            }
        }
    }
    let after = match &action.page {
        Some(Paging::After { after, .. }) => doc
            .pointer(after)
            .and_then(text)
            .filter(|a| !a.is_empty() && a != "0"),
        _ => None,
    };
    let view = view(action, doc, ids.is_some() || !by.is_empty());
    Ok(Window {
        offset,
        limit,
        ids,
        by,
        after,
        view,
    })
}

/// The fields the objects of a window hold: a list's `view` of the request's value (unless
/// it lists by ids, `by_ids`, and its view shows those whatever it is), a delete's `only`.
fn view(
    action: &Action,
    doc: &Value,
    by_ids: bool,
) -> Option<std::collections::BTreeMap<String, Value>> {
    match &action.view {
        Some(v) if !(v.not_by_ids && by_ids) => {
            let asked = doc.pointer(&v.at).and_then(Value::as_str);
            v.fields(asked).cloned()
        }
        _ if action.action == ActionKind::Delete && !action.only.is_empty() => {
            Some(action.only.clone())
        }
        _ => None,
    }
}

/// A page size asked (`asked`, none or 0: `default`), at most `max`.
fn size(asked: Option<u64>, default: u32, max: u32) -> u64 {
    asked
        .filter(|n| *n > 0)
        .unwrap_or(u64::from(default))
        .min(u64::from(max))
}

/// The scalars of a filter's value (one, a list, or an object's members) added to `out`, but
/// empty ones.
fn values(v: &Value, out: &mut Vec<String>) {
    let found: Vec<String> = match v {
        Value::Array(list) => list.iter().filter_map(text).collect(),
        Value::Object(m) => m.values().filter_map(text).collect(),
        other => text(other).into_iter().collect(),
    };
    out.extend(found.into_iter().filter(|s| !s.is_empty()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use apistend_catalog::{Catalog, Method};
    use serde_json::json;

    /// amoCRM's leads, the operation `method path` and a call of it with `query` and `body`.
    fn planned(
        method: Method,
        path: &str,
        query: &str,
        body: Option<Value>,
    ) -> Result<Plan, Refusal> {
        let catalog = Catalog::builtin().unwrap();
        let amo = catalog
            .service(catalog.service_id("amocrm").unwrap())
            .unwrap();
        let op = catalog
            .resolve(amo.id, method, path, None)
            .and_then(|r| r.operation)
            .unwrap();
        let b = op.binding.unwrap();
        let resource = &amo.resources[b.resource];
        let req = http::Request::builder()
            .method(method.as_str())
            .uri(format!("{path}?{query}"))
            .header("content-type", "application/json")
            .body(())
            .unwrap();
        let (parts, ()) = req.into_parts();
        let bytes = body.map(|v| v.to_string()).unwrap_or_default();
        let call = Call::parse(amo, &parts, path, bytes.as_bytes(), None);
        plan(resource, &resource.actions[b.action], op, &call, 1_000)
    }

    #[test]
    fn a_create_takes_each_item_without_its_id_and_stamped() {
        let p = planned(
            Method::Post,
            "/api/v4/leads",
            "",
            Some(json!([{"id": 9, "name": "a"}, {"name": "b"}])),
        );
        let Ok(Plan::Create(objects)) = p else {
            panic!("{p:?}")
        };
        assert_eq!(objects.len(), 2);
        assert_eq!(
            objects[0].get("id"),
            None,
            "a client does not choose the id"
        );
        assert_eq!(objects[0]["created_at"], 1_000);
        assert_eq!(objects[1]["updated_at"], 1_000);
        let bad = planned(Method::Post, "/api/v4/leads", "", Some(json!([1, 2])));
        assert_eq!(
            bad,
            Err(Refusal::BadRequest(
                "the body: every item is an object".into()
            ))
        );
    }

    #[test]
    fn an_update_finds_its_ids_in_the_path_or_in_each_item() {
        let one = planned(
            Method::Patch,
            "/api/v4/leads/5",
            "",
            Some(json!({"name": "x"})),
        );
        let Ok(Plan::Update(p)) = one else {
            panic!("{one:?}")
        };
        assert_eq!((p[0].0.as_str(), &p[0].1["name"]), ("5", &json!("x")));
        assert!(
            p[0].1.get("created_at").is_none(),
            "only a create stamps created_at"
        );
        let many = planned(
            Method::Patch,
            "/api/v4/leads",
            "",
            Some(json!([{"id": 1}, {"name": "no id"}])),
        );
        assert_eq!(
            many,
            Err(Refusal::BadRequest("every item names its id".into()))
        );
    }

    #[test]
    fn a_list_reads_its_page_and_its_filter() {
        let p = planned(
            Method::Get,
            "/api/v4/leads",
            "page=3&limit=20&filter[id][]=7&filter[id][]=8",
            None,
        );
        assert_eq!(
            p,
            Ok(Plan::List(Window {
                offset: 40,
                limit: 20,
                ids: Some(vec!["7".into(), "8".into()]),
                by: Vec::new(),
                after: None,
                view: None,
            }))
        );
        let p = planned(Method::Get, "/api/v4/leads", "limit=100000&page=0", None);
        assert_eq!(
            p,
            Ok(Plan::List(Window {
                offset: 0,
                limit: 250,
                ids: None,
                by: Vec::new(),
                after: None,
                view: None,
            })),
            "limit at most 250, page at least 1"
        );
    }
}
