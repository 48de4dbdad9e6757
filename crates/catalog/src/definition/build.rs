//! A definition file → a validated [`Service`]. Every error names the file, the line and the
//! field, and says what is allowed.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use apistend_limiter::{Algorithm, Quota};
use toml::Spanned;

use super::file::{GroupDef, Import, QuotaDef, ServiceFile};
use super::source::Source;
use crate::error::CatalogError;
use crate::intern::intern;
use crate::model::{
    AnswerSource, BucketScope, ErrorStyle, Fixture, InFlightLimit, LatencyProfile, LimitGroup,
    Method, Operation, Plan, Rejection, Service, ServiceId, short_host,
};
use crate::rate_headers::{MAX_RATE_HEADERS, RateHeader};
use crate::templates::{TEMPLATE_NAMES, Templates};
use crate::wb_import::WbCatalogFile;

/// What an `import` of a definition reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Imports<'a> {
    /// WB's operations and limit tables.
    pub(crate) wb: &'a WbCatalogFile,
}

/// The file's id, prefix and rejection status, checked.
fn check_head(src: &Source<'_>, file: &ServiceFile) -> Result<(), CatalogError> {
    let id = file.id.get_ref();
    if !valid_id(id) {
        return Err(src.err(
            file.id.span(),
            "id",
            format!(
                "{id:?}: an id is 1–32 lower-case letters, digits, '-' or '_', starting with a letter"
            ),
        ));
    }
    let prefix = file.prefix.get_ref();
    if !valid_prefix(prefix) {
        return Err(src.err(
            file.prefix.span(),
            "prefix",
            format!("{prefix:?}: a prefix is one path segment such as \"/wb\": '/' then letters, digits, '-', '_' or '.'"),
        ));
    }
    if crate::reserved::RESERVED_PREFIXES.contains(&prefix.as_str()) {
        return Err(src.err(
            file.prefix.span(),
            "prefix",
            format!(
                "prefix {prefix} is one of the sandbox's own routes ({})",
                crate::reserved::RESERVED_PREFIXES.join(", ")
            ),
        ));
    }
    let status = *file.rejection.status.get_ref();
    if !(400..=599).contains(&status) {
        return Err(src.err(
            file.rejection.status.span(),
            "rejection.status",
            format!("{status}: a rejection is a 4xx or 5xx status"),
        ));
    }
    Ok(())
}

/// The service `file` (parsed from `src`) defines, checked section by section.
pub(crate) fn build(
    src: &Source<'_>,
    file: &ServiceFile,
    imports: Imports<'_>,
) -> Result<Service, CatalogError> {
    check_head(src, file)?;
    let (id, prefix) = (file.id.get_ref(), file.prefix.get_ref());
    let status = *file.rejection.status.get_ref();
    let mut groups = Vec::new();
    let mut hosts: Vec<String> = Vec::new();
    let mut operations = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    // Imported groups first: they are the service's documented buckets.
    let imported = match file.import {
        Some(Import::WbOpenapi) => Some(crate::wb::parts(imports.wb)?),
        None => None,
    };
    if let Some(parts) = &imported {
        for g in &parts.groups {
            index.insert(g.id.clone(), groups.len());
            groups.push(g.clone());
        }
    }
    for (i, g) in file.groups.iter().enumerate() {
        let field = format!("groups[{i}]");
        let gid = g.id.get_ref();
        if gid.is_empty() || index.insert(gid.clone(), groups.len()).is_some() {
            return Err(src.err(
                g.id.span(),
                &format!("{field}.id"),
                format!("{gid:?}: group ids are non-empty and unique within the service"),
            ));
        }
        groups.push(group(src, g, &field)?);
    }
    let lookup = |r: &Spanned<String>, field: &str| {
        index.get(r.get_ref()).copied().ok_or_else(|| {
            src.err(
                r.span(),
                field,
                format!(
                    "no group {:?}; the groups are {}",
                    r.get_ref(),
                    some(index.keys())
                ),
            )
        })
    };
    let fallback_groups = file
        .fallback_groups
        .iter()
        .enumerate()
        .map(|(i, r)| lookup(r, &format!("fallback_groups[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if fallback_groups.is_empty() {
        return Err(src.err(
            0..0,
            "fallback_groups",
            "name at least one group for requests that match no operation",
        ));
    }
    if let Some(parts) = imported {
        operations = parts
            .operations
            .into_iter()
            .map(|(mut op, group)| {
                op.groups = match group {
                    Some(g) => index.get(&g).map(|i| vec![*i]).ok_or_else(|| {
                        CatalogError::Data(format!("{}: import: unknown group {g}", src.file))
                    })?,
                    None => fallback_groups.clone(),
                };
                Ok(op)
            })
            .collect::<Result<Vec<_>, CatalogError>>()?;
        hosts = parts.hosts;
    }
    let service_cost = costs(src, &file.cost, 0..0, "cost")?;
    for op in &mut operations {
        let own = std::mem::take(&mut op.cost);
        op.cost = service_cost.clone();
        op.cost.extend(own);
    }
    let mut defined = super::template::Defined::default();
    for (i, o) in file.operations.iter().enumerate() {
        let field = format!("operations[{i}]");
        let method = Method::parse(o.method.get_ref()).ok_or_else(|| {
            src.err(
                o.method.span(),
                &format!("{field}.method"),
                format!(
                    "{:?}: one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS",
                    o.method.get_ref()
                ),
            )
        })?;
        let op_groups = o
            .groups
            .iter()
            .enumerate()
            .map(|(j, r)| lookup(r, &format!("{field}.groups[{j}]")))
            .collect::<Result<Vec<_>, _>>()?;
        if op_groups.is_empty() {
            return Err(src.err(
                o.method.span(),
                &format!("{field}.groups"),
                "an operation draws from at least one group",
            ));
        }
        let mut cost = service_cost.clone();
        cost.extend(costs(
            src,
            &o.cost,
            o.method.span(),
            &format!("{field}.cost"),
        )?);
        let weight = o.weight.or(file.weight).unwrap_or(1);
        if weight == 0 {
            return Err(src.err(
                o.method.span(),
                &format!("{field}.weight"),
                "a request takes at least 1 token",
            ));
        }
        let fixture = match &o.answer {
            Some(a) => Some(answer(src, a, &format!("{field}.answer"))?),
            None => None,
        };
        if file.answers == AnswerSource::Fixtures && fixture.is_none() && file.examples.is_none() {
            return Err(src.err(
                o.method.span(),
                &format!("{field}.answer"),
                "answers = \"fixtures\" without `examples`: every operation writes its answer = { status, body }",
            ));
        }
        for path in &o.paths {
            defined.claim(src, method, path, &field, o.method.span())?;
            operations.push(Operation {
                host: None,
                also_hosts: Vec::new(),
                method,
                path: path.clone(),
                spec_path: o.paths.first().unwrap_or(path).clone(),
                groups: op_groups.clone(),
                cost: cost.clone(),
                deprecated: false,
                category: o.category.clone(),
                summary: o.summary.clone(),
                weight,
                weight_from: o.weight_from.clone(),
                fixture: fixture.clone(),
                anonymous: o.anonymous,
                repeatable: o
                    .repeatable
                    .unwrap_or_else(|| crate::repeat::repeatable_by_rule(method, path)),
            });
        }
    }
    for (i, g) in file.groups.iter().enumerate() {
        let at = index.get(g.id.get_ref()).copied();
        for param in &g.per_resource {
            let named = format!("{{{}}}", param.get_ref());
            if !operations
                .iter()
                .any(|o| at.is_some_and(|at| o.groups.contains(&at)) && o.path.contains(&named))
            {
                return Err(src.err(
                    param.span(),
                    &format!("groups[{i}].per_resource"),
                    format!(
                        "no operation of group {:?} has a path parameter {named}",
                        g.id.get_ref()
                    ),
                ));
            }
        }
    }
    for h in &file.hosts {
        if !hosts.contains(h) {
            hosts.push(h.clone());
        }
    }
    hosts.sort_by(|a, b| short_host(a).cmp(short_host(b)));
    for (i, name) in file.hostnames.iter().enumerate() {
        if !crate::hostnames::valid_pattern(name.get_ref()) {
            return Err(src.err(
                name.span(),
                &format!("hostnames[{i}]"),
                format!(
                    "{:?}: a hostname is lower-case labels of letters, digits and '-' (at least two), optionally after \"*.\"",
                    name.get_ref()
                ),
            ));
        }
    }
    let hostnames = file.hostnames.iter().map(|n| n.get_ref().clone()).collect();
    let plans = file
        .plans
        .iter()
        .map(|(name, p)| {
            let mut quotas = BTreeMap::new();
            for (gid, q) in &p.quotas {
                let field = format!("plans.{name}.quotas.{gid}");
                if !index.contains_key(gid) {
                    return Err(src.err(
                        q.span(),
                        &field,
                        format!("no group {gid:?}; the groups are {}", some(index.keys())),
                    ));
                }
                quotas.insert(gid.clone(), quota(src, q, &field)?);
            }
            Ok(Plan {
                name: name.clone(),
                quotas,
            })
        })
        .collect::<Result<Vec<_>, CatalogError>>()?;
    let headers = rate_headers(src, file)?;
    let in_flight = file
        .in_flight
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let field = format!("in_flight[{i}]");
            if !matches!(c.scope, BucketScope::Key | BucketScope::Account) {
                return Err(src.err(c.id.span(), &format!("{field}.scope"), "key or account"));
            }
            let lease = Duration::from_millis(c.lease_ms.unwrap_or(10_000));
            let slots = apistend_limiter::Slots::new(c.max, lease)
                .map_err(|e| src.err(c.id.span(), &field, e.to_string()))?;
            Ok(InFlightLimit {
                id: c.id.get_ref().clone(),
                slots,
                scope: c.scope,
                per_resource: c.per_resource.clone(),
            })
        })
        .collect::<Result<Vec<_>, CatalogError>>()?;
    let error_templates = templates(src, file)?;
    if let Some(l) = file.lockout
        && (l.after == 0 || l.within_secs == 0 || l.for_secs == 0)
    {
        return Err(src.err(
            0..0,
            "lockout",
            "after, within_secs and for_secs are at least 1",
        ));
    }
    Ok(Service {
        id: ServiceId::new(id),
        name: file.name.clone().unwrap_or_else(|| id.clone()),
        prefix: intern(prefix),
        content_type: intern(
            file.content_type
                .as_deref()
                .unwrap_or(&file.rejection.content_type),
        ),
        credentials: file.credentials.clone(),
        rejection: Rejection {
            status,
            content_type: intern(&file.rejection.content_type),
            style: file.errors,
        },
        errors: file.errors,
        headers,
        apistend_retry_after: file.apistend_retry_after,
        error_templates,
        lockout: file.lockout,
        in_flight,
        case_insensitive_paths: file.case_insensitive_paths,
        latency: LatencyProfile {
            base_ms: file.latency_ms,
        },
        groups,
        operations,
        fallback_groups,
        operating_budget: file.operating_budget,
        batch_max: file.batch.map(|b| b.max),
        answers: file.answers,
        examples: file.examples.clone(),
        empty_body_is_empty_object: file.empty_body_is_empty_object,
        hosts,
        hostnames,
        plans,
    })
}

/// Cost rules: HTTP status → tokens in all (0: the answer costs nothing).
fn costs(
    src: &Source<'_>,
    rules: &BTreeMap<String, u32>,
    span: Range<usize>,
    field: &str,
) -> Result<BTreeMap<u16, u32>, CatalogError> {
    rules
        .iter()
        .map(|(status, tokens)| {
            let code = status
                .parse::<u16>()
                .ok()
                .filter(|s| (100..=599).contains(s))
                .ok_or_else(|| {
                    src.err(
                        span.clone(),
                        field,
                        format!("{status} = {tokens}: keys are HTTP statuses, values tokens"),
                    )
                })?;
            Ok((code, *tokens))
        })
        .collect()
}

fn rate_headers(src: &Source<'_>, file: &ServiceFile) -> Result<Vec<RateHeader>, CatalogError> {
    if file.rate_headers.len() > MAX_RATE_HEADERS {
        return Err(src.err(
            0..0,
            "rate_headers",
            format!("at most {MAX_RATE_HEADERS} headers"),
        ));
    }
    file.rate_headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let field = format!("rate_headers[{i}]");
            let name = h.name.get_ref();
            if !is_token(name) {
                return Err(src.err(
                    h.name.span(),
                    &format!("{field}.name"),
                    format!("{name:?} is not a header name"),
                ));
            }
            let value = match (h.value, h.fixed) {
                (Some(v), None) => Ok(v),
                (None, Some(n)) => Err(n),
                _ => {
                    return Err(src.err(
                        h.name.span(),
                        &field,
                        "give value (remaining, limit, retry_after_secs, retry_after_ms, reset_secs, reset_ms, reset_date, window_ms) or fixed = N",
                    ));
                }
            };
            Ok(RateHeader {
                name: intern(&name.to_ascii_lowercase()),
                value,
                on: h.on,
            })
        })
        .collect()
}

fn templates(src: &Source<'_>, file: &ServiceFile) -> Result<Templates, CatalogError> {
    if file.errors == ErrorStyle::Template && file.error_templates.is_empty() {
        return Err(src.err(
            0..0,
            "error_templates",
            "errors = \"template\" needs error_templates (at least `default`)",
        ));
    }
    let mut out = Templates::new();
    for (name, t) in &file.error_templates {
        let field = format!("error_templates.{name}");
        if !TEMPLATE_NAMES.contains(&name.as_str()) {
            return Err(src.err(
                t.span(),
                &field,
                format!(
                    "no error kind {name:?}; one of {}",
                    TEMPLATE_NAMES.join(", ")
                ),
            ));
        }
        let tv = t.get_ref();
        if tv.status.is_some_and(|s| !(400..=599).contains(&s)) {
            return Err(src.err(t.span(), &format!("{field}.status"), "a 4xx or 5xx status"));
        }
        let json = tv
            .content_type
            .as_deref()
            .unwrap_or(&file.rejection.content_type)
            .contains("json");
        // A body that is JSON must stay JSON once filled (a message with quotes included).
        let mut one = Templates::new();
        one.insert(name.clone(), tv.clone());
        let filled = crate::templates::render(
            &one,
            &template_kind(name),
            &crate::error_kind::ErrorContext::new("req-1", "2026-01-01T00:00:00Z", 1),
            (429, "application/json"),
        )
        .body;
        if json
            && !filled.is_empty()
            && let Err(e) = serde_json::from_str::<serde_json::Value>(&filled)
        {
            return Err(src.err(
                t.span(),
                &format!("{field}.body"),
                format!("the filled body is not JSON ({e}): {filled}"),
            ));
        }
        out.insert(name.clone(), tv.clone());
    }
    Ok(out)
}

fn template_kind(name: &str) -> crate::error_kind::ErrorKind {
    use crate::error_kind::ErrorKind as K;
    match name {
        "rate_limited" => K::RateLimited,
        "too_many_in_flight" => K::TooManyInFlight,
        "operating_time" => K::OperatingTime,
        "unauthorized" => K::Unauthorized,
        "forbidden" => K::Forbidden,
        "locked" => K::Locked,
        "not_found" => K::NotFound,
        "conflict" => K::Conflict,
        "server_error" => K::ServerError,
        "unavailable" => K::Unavailable,
        "too_large" => K::TooLarge("a \"sample\" message".into()),
        "request_timeout" => K::RequestTimeout("a \"sample\" message".into()),
        "gateway_timeout" => K::GatewayTimeout,
        _ => K::BadRequest("a \"sample\" message".into()),
    }
}

fn answer(
    src: &Source<'_>,
    a: &super::file::AnswerDef,
    field: &str,
) -> Result<Fixture, CatalogError> {
    if !(100..=599).contains(&a.status) {
        return Err(src.err(0..0, &format!("{field}.status"), "an HTTP status"));
    }
    let body = match &a.body {
        Some(b) => serde_json::from_str(b.get_ref())
            .map_err(|e| src.err(b.span(), &format!("{field}.body"), format!("not JSON: {e}")))?,
        None => serde_json::Value::Null,
    };
    Ok(Fixture {
        status: a.status,
        body,
    })
}

/// An HTTP header name (RFC 9110 token).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn group(src: &Source<'_>, g: &GroupDef, field: &str) -> Result<LimitGroup, CatalogError> {
    Ok(LimitGroup {
        id: g.id.get_ref().clone(),
        label: g.label.clone(),
        quota: quota(src, &g.quota, &format!("{field}.quota"))?,
        scope: g.scope,
        documented: g.documented.map(|d| (d.period_ms, d.limit)),
        per_resource: g.per_resource.iter().map(|p| p.get_ref().clone()).collect(),
    })
}

/// The quota a [`QuotaDef`] spells.
fn quota(src: &Source<'_>, q: &Spanned<QuotaDef>, field: &str) -> Result<Quota, CatalogError> {
    let err = |reason: String| src.err(q.span(), field, reason);
    let d = q.get_ref();
    let built = match (d.burst, d.interval_ms, d.per_second, d.count, d.period_ms) {
        (Some(b), Some(ms), None, None, None) => Quota::new(b, Duration::from_millis(ms)),
        (Some(b), None, Some(n), None, None) => Quota::leaky_bucket(b, n),
        (None, None, None, Some(c), Some(ms)) => Quota::per_period(c, Duration::from_millis(ms)),
        _ => {
            return Err(err(
                "give burst + interval_ms, burst + per_second, or count + period_ms".into(),
            ));
        }
    }
    .map_err(|e| err(e.to_string()))?;
    let algorithm = match &d.algorithm {
        Some(a) => a
            .parse::<Algorithm>()
            .map_err(|_| err(format!("algorithm {a:?}: gcra or fixed_window")))?,
        None => Algorithm::Gcra,
    };
    Ok(built.with_algorithm(algorithm))
}

/// The first dozen of `names`, comma-separated (WB has hundreds of groups).
fn some<'a>(names: impl ExactSizeIterator<Item = &'a String>) -> String {
    let total = names.len();
    let mut list: Vec<&str> = names.take(12).map(String::as_str).collect();
    if total > list.len() {
        list.push("…");
    }
    list.join(", ")
}

fn valid_id(id: &str) -> bool {
    (1..=32).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn valid_prefix(prefix: &str) -> bool {
    prefix.strip_prefix('/').is_some_and(|seg| {
        !seg.is_empty()
            && seg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    })
}
