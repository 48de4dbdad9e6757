//! A definition's `resources`: each action bound to the operation it names, every pointer and
//! template checked, so that the sandbox finds nothing to refuse at request time.

use super::file::ServiceFile;
use super::source::Source;
use crate::error::CatalogError;
use crate::model::{ActionKind, Binding, Method, Operation, Paging, Resource};

/// Checks `file`'s resources and binds each action to its operation in `operations`.
pub(super) fn bind(
    src: &Source<'_>,
    file: &ServiceFile,
    operations: &mut [Operation],
) -> Result<Vec<Resource>, CatalogError> {
    for (r, res) in file.resources.iter().enumerate() {
        let field = format!("resources[{r}]");
        let err = |f: &str, why: String| src.err(0..0, &format!("{field}{f}"), why);
        if res.name.is_empty() || file.resources.iter().take(r).any(|o| o.name == res.name) {
            return Err(err(
                ".name",
                format!("{:?}: a name is unique and not empty", res.name),
            ));
        }
        if res.actions.is_empty() {
            return Err(err(".actions", "a resource has at least one action".into()));
        }
        check_links(res).map_err(|why| err(".links", why))?;
        for s in &res.stamps {
            pointer(&s.at).map_err(|why| err(".stamps", why))?;
        }
        if let Some(job) = &res.job {
            check_job(job).map_err(|why| err(".job", why))?;
        }
        let given = res.id.kind == crate::model::IdKind::Given;
        let writes = |k| res.actions.iter().any(|a| a.action == k);
        // A create on a collection of given ids would write a made-up id; written without
        // create when no action of the collection writes (a read-only collection) is fine.
        if (given && writes(ActionKind::Create)) || (!given && writes(ActionKind::Upsert)) {
            return Err(err(
                ".id.kind",
                "a collection of given ids is written by upsert, any other by create".into(),
            ));
        }
        for (a, act) in res.actions.iter().enumerate() {
            let f = format!(".actions[{a}]");
            let e = |why: String| err(&f, why);
            let method = Method::parse(&act.method)
                .filter(|m| m.as_str() == act.method)
                .ok_or_else(|| {
                    e(format!(
                        "{:?}: one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, in capitals",
                        act.method
                    ))
                })?;
            let op = operations
                .iter_mut()
                .find(|o| o.method == method && o.path == act.path)
                .ok_or_else(|| {
                    e(format!(
                        "{} {}: no operation of the service",
                        act.method, act.path
                    ))
                })?;
            if op.binding.is_some() {
                return Err(e(format!(
                    "{} {}: bound to a collection already",
                    act.method, act.path
                )));
            }
            op.binding = Some(Binding {
                resource: r,
                action: a,
            });
            for p in act
                .input
                .iter()
                .chain(std::iter::once(&act.at))
                .chain(&act.filter)
                .chain(act.filter_by.keys().filter(|k| !k.starts_with("path:")))
                .chain(&act.item_at)
                .chain(&act.drop)
                .chain(&act.index)
            {
                pointer(p).map_err(&e)?;
            }
            check_action(act, &e)?;
            if act.action == ActionKind::Abort
                && res.job.as_ref().is_none_or(|j| j.aborted.is_none())
            {
                return Err(e(
                    "an abort stops a job: its collection's job says `aborted`".into(),
                ));
            }
            if let Some(m) = &act.makes {
                check_makes(file, res, act, m).map_err(&e)?;
            }
        }
    }
    Ok(file.resources.clone())
}

fn check_action(
    act: &crate::model::Action,
    e: &impl Fn(String) -> CatalogError,
) -> Result<(), CatalogError> {
    check_selections(act, e)?;
    // A delete names its id, or the objects it removes (`filter`: WB's `chrtIds`; `filter_by`:
    // Ozon's `offer_id`s); an update its id, its input's, or the ids it `set`s (`filter`).
    let sets = !act.set.is_empty();
    let needs_id = matches!(act.action, ActionKind::Read | ActionKind::Abort)
        || (act.action == ActionKind::Delete && act.filter.is_empty() && act.filter_by.is_empty())
        || (act.action == ActionKind::Update && act.input.as_deref() != Some("") && !sets);
    match act.id.as_deref() {
        Some(id) if !(id.starts_with("path:") || id.starts_with("param:")) => {
            return Err(e(format!("id {id:?}: \"path:NAME\" or \"param:NAME\"")));
        }
        Some(id) if id.starts_with("path:") && !act.path.contains(&format!("{{{}}}", &id[5..])) => {
            return Err(e(format!(
                "id {id:?}: the path {} has no such parameter",
                act.path
            )));
        }
        None if needs_id => {
            return Err(e(
                "a read, an abort, a delete of one object or a single update says where its id is"
                    .into(),
            ));
        }
        _ => {}
    }
    if matches!(
        act.action,
        ActionKind::Create | ActionKind::Update | ActionKind::Upsert
    ) && act.input.is_none()
        && !act.from_answer
        && !sets
    {
        return Err(e(
            "a create (unless `from_answer`), update or upsert says where its input is (`input`)"
                .into(),
        ));
    }
    if act.page.is_some() && act.action != ActionKind::List {
        return Err(e("only a list is paged (`page`)".into()));
    }
    if let Some(scope) = &act.scope {
        let name = scope.strip_prefix("path:").unwrap_or("");
        if name.is_empty() || !act.path.contains(&format!("{{{name}}}")) {
            return Err(e(format!(
                "scope {scope:?}: \"path:NAME\", a parameter of the path"
            )));
        }
    }
    if act.from_answer && act.action != ActionKind::Create {
        return Err(e(
            "only a create starts from its answer (`from_answer`)".into()
        ));
    }
    for key in act.filter_by.keys() {
        if let Some(name) = key.strip_prefix("path:")
            && !act.path.contains(&format!("{{{name}}}"))
        {
            return Err(e(format!(
                "filter_by {key:?}: the path {} has no such parameter",
                act.path
            )));
        }
    }
    check_paging(act.page.as_ref(), e)
}

/// What selects the objects an action acts on beyond its ids: `set` is an update's by `filter`,
/// `view` a list's, `only` and `unmatched` a delete's by `filter_by`.
fn check_selections(
    act: &crate::model::Action,
    e: &impl Fn(String) -> CatalogError,
) -> Result<(), CatalogError> {
    if !act.set.is_empty() && (act.action != ActionKind::Update || act.filter.is_empty()) {
        return Err(e(
            "`set` is an update's, of the ids its `filter` lists".into()
        ));
    }
    if let Some(v) = &act.view {
        if act.action != ActionKind::List {
            return Err(e("only a list has a `view`".into()));
        }
        pointer(&v.at).map_err(e)?;
        if !v.values.contains_key(&v.default) {
            return Err(e(format!(
                "view: its default {:?} is none of its values",
                v.default
            )));
        }
    }
    let by_fields = act.action == ActionKind::Delete && !act.filter_by.is_empty();
    if (!act.only.is_empty() || !act.unmatched.is_empty()) && !by_fields {
        return Err(e(
            "`only` and `unmatched` are a delete's, by its `filter_by`".into(),
        ));
    }
    Ok(())
}

/// A list's paging: a page holds at least one item, every pointer is one.
fn check_paging(
    page: Option<&Paging>,
    e: &impl Fn(String) -> CatalogError,
) -> Result<(), CatalogError> {
    match page {
        Some(Paging::Offset {
            max,
            total,
            limit_at,
            offset_at,
            next,
            count,
            ..
        }) => {
            nonzero(*max, e)?;
            for p in [total, limit_at, offset_at, next, count]
                .into_iter()
                .flatten()
            {
                pointer(p).map_err(e)?;
            }
        }
        Some(Paging::Page {
            default,
            max,
            page_at,
            next,
            this,
            ..
        }) => {
            nonzero(*default, e)?;
            nonzero(*max, e)?;
            for p in [page_at, next, this].into_iter().flatten() {
                pointer(p).map_err(e)?;
            }
        }
        Some(Paging::Cursor {
            cursor,
            limit,
            default,
            max,
            next,
            total,
            ..
        }) => {
            nonzero(*default, e)?;
            nonzero(*max, e)?;
            for p in [cursor, limit, next].into_iter().chain(total) {
                pointer(p).map_err(e)?;
            }
        }
        Some(Paging::After {
            after,
            limit,
            default,
            max,
            next,
            also,
            count,
            more,
            limit_at,
            after_at,
        }) => {
            nonzero(*default, e)?;
            nonzero(*max, e)?;
            for p in [after, limit, next]
                .into_iter()
                .chain(also.keys())
                .chain(count)
                .chain(more)
                .chain(limit_at)
                .chain(after_at)
            {
                pointer(p).map_err(e)?;
            }
        }
        Some(Paging::Start { size, next, total }) => {
            nonzero(*size, e)?;
            pointer(next).map_err(e)?;
            pointer(total).map_err(e)?;
        }
        _ => {}
    }
    Ok(())
}

/// A resource's links: each at a pointer, a template of the object's `{id}` (and `{base}`,
/// `{parent}`).
fn check_links(res: &Resource) -> Result<(), String> {
    for (p, template) in &res.links {
        pointer(p)?;
        if let Some(unknown) =
            crate::templates::unknown_placeholder(template, &["{base}", "{id}", "{parent}"])
        {
            return Err(format!(
                "{template:?}: {unknown} is no placeholder; a link has {{base}}, {{id}} and \
                 {{parent}}"
            ));
        }
        if !template.contains("{id}") {
            return Err(format!("{template:?}: a link names the object's {{id}}"));
        }
    }
    Ok(())
}

/// A job's statuses and pointers.
fn check_job(job: &crate::model::Job) -> Result<(), String> {
    if job.states.len() < 2 {
        return Err("a job has at least two states: one while it runs, one when done".into());
    }
    if job.status.is_empty() {
        return Err("a job says where its status is written (`status`)".into());
    }
    for p in job
        .status
        .iter()
        .chain(job.failure.keys())
        .chain(job.done.keys())
        .chain(job.shown_when.keys())
        .chain(&job.takes)
    {
        pointer(p)?;
    }
    for template in job.done.values() {
        if let Some(unknown) =
            crate::templates::unknown_placeholder(template, &["{base}", "{id}", "{finished}"])
        {
            return Err(format!(
                "{template:?}: {unknown} is no placeholder; `done` has {{base}}, {{id}} and {{finished}}"
            ));
        }
    }
    Ok(())
}

/// What a job's create makes: a collection of the service that a create writes, under a job.
fn check_makes(
    file: &ServiceFile,
    res: &Resource,
    act: &crate::model::Action,
    m: &crate::model::Makes,
) -> Result<(), String> {
    if act.action != ActionKind::Create || res.job.is_none() {
        return Err("only the create of a job makes objects (`makes`)".into());
    }
    if let Some(name) = &m.resource {
        let target = file.resources.iter().find(|r| &r.name == name);
        let Some(target) = target.filter(|t| t.id.kind != crate::model::IdKind::Given) else {
            return Err(format!(
                "makes {name:?}: no collection of the service with ids it makes"
            ));
        };
        if target.job.is_some() {
            return Err(format!("makes {name:?}: a job makes no jobs"));
        }
    }
    for p in [&m.input, &m.into].into_iter().chain(&m.count) {
        pointer(p)?;
    }
    if m.fields.is_empty() {
        return Err("makes: `fields` says what the job lists of each object".into());
    }
    Ok(())
}

fn nonzero(n: u32, e: &impl Fn(String) -> CatalogError) -> Result<(), CatalogError> {
    if n == 0 {
        return Err(e("a page holds at least one item".into()));
    }
    Ok(())
}

/// A JSON pointer (RFC 6901): empty, or `/` and tokens.
fn pointer(p: &str) -> Result<(), String> {
    if p.is_empty() || p.starts_with('/') {
        Ok(())
    } else {
        Err(format!("{p:?}: a JSON pointer is \"\" or starts with '/'"))
    }
}

/// `file`'s token endpoint, checked: an anonymous operation of the service, pointers, claims
/// that are a JSON object.
pub(super) fn token(
    src: &Source<'_>,
    file: &ServiceFile,
    operations: &[Operation],
) -> Result<Option<crate::model::TokenEndpoint>, CatalogError> {
    let Some(t) = &file.token else {
        return Ok(None);
    };
    let e = |why: String| src.err(0..0, "token", why);
    if !operations.iter().any(|o| o.path == t.path && o.anonymous) {
        return Err(e(format!(
            "{}: no anonymous operation of the service",
            t.path
        )));
    }
    for p in [&t.access_at, &t.refresh_at]
        .into_iter()
        .chain(&t.expires_at)
        .chain(&t.time_at)
    {
        pointer(p).map_err(&e)?;
    }
    if let Some(c) = &t.claims
        && !serde_json::from_str::<serde_json::Value>(c).is_ok_and(|v| v.is_object())
    {
        return Err(e(format!("claims {c:?}: a JSON object")));
    }
    if t.lifetime_secs == 0 || t.refresh_lifetime_secs == 0 {
        return Err(e("a token lives at least a second".into()));
    }
    Ok(Some(t.clone()))
}
