//! The operations of a definition: imported ones, the file's own (one per path), their weights,
//! costs and fixed answers.

use std::collections::BTreeMap;
use std::ops::Range;

use super::file::ServiceFile;
use super::groups::Groups;
use super::source::Source;
use super::template::Defined;
use crate::error::CatalogError;
use crate::model::{AnswerSource, Fixture, Method, Operation};

/// The imported `operations` with their groups (the named one, else the `fallback`) and the
/// service's `cost` rules under their own.
pub(super) fn imported(
    src: &Source<'_>,
    operations: Vec<(Operation, Option<String>)>,
    groups: &Groups,
    fallback: &[usize],
    cost: &BTreeMap<u16, u32>,
) -> Result<Vec<Operation>, CatalogError> {
    operations
        .into_iter()
        .map(|(mut op, group)| {
            op.groups = match group {
                Some(g) => groups.get(&g).map(|i| vec![i]).ok_or_else(|| {
                    CatalogError::Data(format!("{}: import: unknown group {g}", src.file))
                })?,
                None => fallback.to_vec(),
            };
            let own = std::mem::take(&mut op.cost);
            op.cost = cost.clone();
            op.cost.extend(own);
            Ok(op)
        })
        .collect()
}

/// The file's operations, one per path, after `operations` (the imported ones); no method and
/// path twice.
pub(super) fn defined(
    src: &Source<'_>,
    file: &ServiceFile,
    groups: &Groups,
    cost: &BTreeMap<u16, u32>,
    operations: &mut Vec<Operation>,
) -> Result<(), CatalogError> {
    let mut defined = Defined::default();
    for (i, o) in file.operations.iter().enumerate() {
        let field = format!("operations[{i}]");
        let template = operation(src, file, o, &field, groups, cost)?;
        for path in &o.paths {
            defined.claim(src, template.method, path, &field, o.method.span())?;
            operations.push(Operation {
                path: path.clone(),
                spec_path: o.paths.first().unwrap_or(path).clone(),
                repeatable: o
                    .repeatable
                    .unwrap_or_else(|| crate::repeat::repeatable_by_rule(template.method, path)),
                ..template.clone()
            });
        }
    }
    Ok(())
}

/// The operation `o` (at `field`) defines, but its path.
fn operation(
    src: &Source<'_>,
    file: &ServiceFile,
    o: &super::file::OperationDef,
    field: &str,
    groups: &Groups,
    service_cost: &BTreeMap<u16, u32>,
) -> Result<Operation, CatalogError> {
    let at = o.method.span();
    // As HTTP writes it (methods are case-sensitive): `get` is refused, not read as `GET`.
    let method = Method::parse(o.method.get_ref())
        .filter(|m| m.as_str() == o.method.get_ref())
        .ok_or_else(|| {
            src.err(
                at.clone(),
                &format!("{field}.method"),
                format!(
                    "{:?}: one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, in capitals",
                    o.method.get_ref()
                ),
            )
        })?;
    let op_groups = o
        .groups
        .iter()
        .enumerate()
        .map(|(j, r)| groups.lookup(src, r, &format!("{field}.groups[{j}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if op_groups.is_empty() {
        return Err(src.err(
            at,
            &format!("{field}.groups"),
            "an operation draws from at least one group",
        ));
    }
    let mut cost = service_cost.clone();
    cost.extend(costs(src, &o.cost, at.clone(), &format!("{field}.cost"))?);
    let weight = o.weight.or(file.weight).unwrap_or(1);
    if weight == 0 {
        return Err(src.err(
            at,
            &format!("{field}.weight"),
            "a request takes at least 1 token",
        ));
    }
    if o.weight_from.is_some() && o.cost_from.is_some() {
        return Err(src.err(
            at,
            &format!("{field}.cost_from"),
            "a request is weighed by its items (weight_from) or its answer's (cost_from), not both",
        ));
    }
    let fixture = match &o.answer {
        Some(a) => Some(answer(src, a, &format!("{field}.answer"))?),
        None => None,
    };
    if file.answers == AnswerSource::Fixtures
        && fixture.is_none()
        && file.examples.is_none()
        && file.openapi.is_none()
    {
        return Err(src.err(
            at,
            &format!("{field}.answer"),
            "answers = \"fixtures\" without `examples` or `openapi`: every operation writes its answer = { status, body }",
        ));
    }
    Ok(Operation {
        host: None,
        also_hosts: Vec::new(),
        method,
        path: String::new(),
        spec_path: String::new(),
        groups: op_groups,
        cost,
        deprecated: false,
        category: o.category.clone(),
        summary: o.summary.clone(),
        weight,
        weight_from: o.weight_from.clone(),
        cost_from: o.cost_from.clone(),
        fixture,
        anonymous: o.anonymous,
        repeatable: false,
        binding: None,
        max_body: o.max_body_bytes.map(std::num::NonZeroU64::get),
        request: match &o.request {
            Some(r) => Some(super::request::openapi(
                src,
                r,
                &format!("{field}.request"),
                &o.paths,
            )?),
            None => None,
        },
    })
}

/// Cost rules: HTTP status → tokens in all (0: the answer costs nothing).
pub(super) fn costs(
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
        media: a.media.clone(),
    })
}
