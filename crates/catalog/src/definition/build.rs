//! A definition file → a validated [`Service`], one section at a time. Every error names the
//! file, the line and the field, and says what is allowed.

use std::time::Duration;

use super::document::Document;
use super::file::{Import, ServiceFile};
use super::groups::Groups;
use super::source::Source;
use super::{operations, resources, responses};
use crate::error::CatalogError;
use crate::intern::intern;
use crate::model::{
    BucketScope, HeaderRequirement, InFlightLimit, LatencyProfile, Rejection, Service, ServiceId,
    short_host,
};
use crate::wb_catalog::WbCatalogFile;

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
    if let Some(m) = &file.rejection.in_flight
        && m.value.is_some() == m.contains.is_some()
    {
        return Err(src.err(
            file.rejection.status.span(),
            "rejection.in_flight",
            "a refusal for requests in flight is told by a value or by a text it contains: one of the two",
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
    // Imported groups first: they are the service's documented buckets.
    let mut imported = match file.import {
        Some(Import::WbOpenapi) => Some(crate::wb::parts(imports.wb)?),
        None => None,
    };
    let document = file
        .openapi
        .as_ref()
        .map(|named| Document::read(src, named))
        .transpose()?;
    if let Some(doc) = &document {
        doc.add_to(file, imported.get_or_insert_with(crate::wb::Parts::default));
    }
    let groups = Groups::of(
        src,
        file,
        imported.as_ref().map_or(&[][..], |p| p.groups.as_slice()),
    )?;
    let fallback_groups = groups.fallback(src, file)?;
    let cost = operations::costs(src, &file.cost, 0..0, "cost")?;
    let (mut operations, mut hosts) = match imported {
        Some(parts) => (
            operations::imported(src, parts.operations, &groups, &fallback_groups, &cost)?,
            parts.hosts,
        ),
        None => (Vec::new(), Vec::new()),
    };
    operations::defined(src, file, &groups, &cost, &mut operations)?;
    groups.check_resources(src, file, &operations)?;
    let resources = resources::bind(src, file, &mut operations)?;
    let token = resources::token(src, file, &operations)?;
    for h in &file.hosts {
        if !hosts.contains(h) {
            hosts.push(h.clone());
        }
    }
    hosts.sort_by(|a, b| short_host(a).cmp(short_host(b)));
    check_hostnames(src, file)?;
    check_lockout(src, file)?;
    let id = file.id.get_ref();
    let max_body = file.max_body_bytes.map(std::num::NonZeroU64::get);
    let ops = operations.iter().filter_map(|o| o.max_body);
    let largest_body = ops.chain(max_body).max();
    Ok(Service {
        id: ServiceId::new(id),
        name: file.name.clone().unwrap_or_else(|| id.clone()),
        prefix: intern(file.prefix.get_ref()),
        content_type: intern(
            file.content_type
                .as_deref()
                .unwrap_or(&file.rejection.content_type),
        ),
        credentials: file.credentials.clone(),
        rejection: Rejection {
            status: *file.rejection.status.get_ref(),
            content_type: intern(&file.rejection.content_type),
            style: file.errors,
            in_flight: file.rejection.in_flight.clone(),
        },
        errors: file.errors,
        headers: responses::rate_headers(src, file)?,
        apistend_retry_after: file.apistend_retry_after,
        error_templates: responses::templates(src, file)?,
        lockout: file.lockout,
        in_flight: in_flight(src, file, &groups)?,
        case_insensitive_paths: file.case_insensitive_paths,
        latency: LatencyProfile {
            base_ms: file.latency_ms,
        },
        plans: groups.plans(src, file)?,
        groups: groups.list,
        operations,
        fallback_groups,
        operating_budget: file.operating_budget,
        batch_max: file.batch.map(|b| b.max),
        answers: file.answers,
        examples: file.examples.clone(),
        requests: file.requests.clone().or_else(|| file.examples.clone()),
        openapi: document.map(|d| d.path),
        empty_body_is_empty_object: file.empty_body_is_empty_object,
        hosts,
        hostnames: file.hostnames.iter().map(|n| n.get_ref().clone()).collect(),
        resources,
        token,
        requires: requires(src, file)?,
        max_body,
        largest_body,
        max_array_items: file.max_array_items.map(std::num::NonZeroU32::get),
        json: file.json,
    })
}

/// Each required header is a header name with a token, refused by a client error.
fn requires(src: &Source<'_>, file: &ServiceFile) -> Result<Vec<HeaderRequirement>, CatalogError> {
    file.requires
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (span, def) = (r.span(), r.get_ref());
            let token = |s: &str| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            };
            let bad = if !token(&def.header) {
                Some(("header", "a header name (letters, digits, '-')"))
            } else if !token(&def.token) {
                Some(("token", "one list member, as `gzip`"))
            } else if !(400..=499).contains(&def.status) {
                Some(("status", "a client error, 400 to 499"))
            } else {
                None
            };
            match bad {
                Some((field, want)) => Err(src.err(span, &format!("requires[{i}].{field}"), want)),
                None => Ok(HeaderRequirement::new(&def.header, &def.token, def.status)),
            }
        })
        .collect()
}

/// Each hostname is a valid pattern.
fn check_hostnames(src: &Source<'_>, file: &ServiceFile) -> Result<(), CatalogError> {
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
    Ok(())
}

/// A lockout counts at least one rejection within at least a second, for at least a second.
fn check_lockout(src: &Source<'_>, file: &ServiceFile) -> Result<(), CatalogError> {
    match file.lockout {
        Some(l) if l.after == 0 || l.within_secs == 0 || l.for_secs == 0 => Err(src.err(
            0..0,
            "lockout",
            "after, within_secs and for_secs are at least 1",
        )),
        _ => Ok(()),
    }
}

/// The concurrency limits: per key or per account, each with its slots, of every call or of
/// some groups' (instead of another limit).
fn in_flight(
    src: &Source<'_>,
    file: &ServiceFile,
    groups: &Groups,
) -> Result<Vec<InFlightLimit>, CatalogError> {
    let ids: Vec<&str> = file
        .in_flight
        .iter()
        .map(|c| c.id.get_ref().as_str())
        .collect();
    file.in_flight
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let field = format!("in_flight[{i}]");
            if !matches!(c.scope, BucketScope::Key | BucketScope::Account) {
                return Err(src.err(c.id.span(), &format!("{field}.scope"), "key or account"));
            }
            if ids.iter().take(i).any(|id| *id == c.id.get_ref().as_str()) {
                return Err(src.err(c.id.span(), &format!("{field}.id"), "a second limit of this id"));
            }
            let lease = Duration::from_millis(c.lease_ms.unwrap_or(10_000));
            let slots = apistend_limiter::Slots::new(c.max, lease)
                .map_err(|e| src.err(c.id.span(), &field, e.to_string()))?;
            let held_groups = c
                .groups
                .iter()
                .enumerate()
                .map(|(j, g)| groups.lookup(src, g, &format!("{field}.groups[{j}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let instead_of = match &c.instead_of {
                None => None,
                Some(other) => {
                    let at = ids.iter().position(|id| *id == other.get_ref().as_str());
                    let replaced = at.filter(|&j| {
                        j != i && file.in_flight.get(j).is_some_and(|l| l.groups.is_empty())
                    });
                    if held_groups.is_empty() || replaced.is_none() {
                        return Err(src.err(
                            other.span(),
                            &format!("{field}.instead_of"),
                            format!(
                                "{:?}: a limit of some groups replaces another limit, one of every call (the limits are {})",
                                other.get_ref(),
                                ids.join(", ")
                            ),
                        ));
                    }
                    replaced
                }
            };
            Ok(InFlightLimit {
                id: c.id.get_ref().clone(),
                slots,
                scope: c.scope,
                per_resource: c.per_resource.clone(),
                groups: held_groups,
                instead_of,
            })
        })
        .collect()
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
