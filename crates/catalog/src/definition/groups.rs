//! The limit groups of a definition: its own and imported ones, their quotas, the plans that
//! change them, and the checks that tie operations to them.

use std::collections::BTreeMap;
use std::time::Duration;

use apistend_limiter::{Algorithm, Quota};
use toml::Spanned;

use super::file::{GroupDef, QuotaDef, ServiceFile};
use super::source::Source;
use crate::error::CatalogError;
use crate::model::{LimitGroup, Operation, Plan};

/// A service's groups, and their indices by id.
pub(super) struct Groups {
    pub(super) list: Vec<LimitGroup>,
    index: BTreeMap<String, usize>,
}

impl Groups {
    /// The `imported` groups (a service's documented buckets) first, then the file's own.
    pub(super) fn of(
        src: &Source<'_>,
        file: &ServiceFile,
        imported: &[LimitGroup],
    ) -> Result<Self, CatalogError> {
        let mut groups = Self {
            list: Vec::new(),
            index: BTreeMap::new(),
        };
        for g in imported {
            groups.index.insert(g.id.clone(), groups.list.len());
            groups.list.push(g.clone());
        }
        for (i, g) in file.groups.iter().enumerate() {
            let field = format!("groups[{i}]");
            let gid = g.id.get_ref();
            if gid.is_empty()
                || groups
                    .index
                    .insert(gid.clone(), groups.list.len())
                    .is_some()
            {
                return Err(src.err(
                    g.id.span(),
                    &format!("{field}.id"),
                    format!("{gid:?}: group ids are non-empty and unique within the service"),
                ));
            }
            groups.list.push(group(src, g, &field)?);
        }
        Ok(groups)
    }

    /// The index of the group `r` names, or an error at `field` listing the groups.
    pub(super) fn lookup(
        &self,
        src: &Source<'_>,
        r: &Spanned<String>,
        field: &str,
    ) -> Result<usize, CatalogError> {
        self.index.get(r.get_ref()).copied().ok_or_else(|| {
            src.err(
                r.span(),
                field,
                format!(
                    "no group {:?}; the groups are {}",
                    r.get_ref(),
                    some(self.index.keys())
                ),
            )
        })
    }

    /// The index of the group `id` (an imported operation's).
    pub(super) fn get(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The groups of requests that match no operation: at least one.
    pub(super) fn fallback(
        &self,
        src: &Source<'_>,
        file: &ServiceFile,
    ) -> Result<Vec<usize>, CatalogError> {
        let fallback = file
            .fallback_groups
            .iter()
            .enumerate()
            .map(|(i, r)| self.lookup(src, r, &format!("fallback_groups[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        if fallback.is_empty() {
            return Err(src.err(
                0..0,
                "fallback_groups",
                "name at least one group for requests that match no operation",
            ));
        }
        Ok(fallback)
    }

    /// Every `per_resource` parameter of a group is a path parameter of one of its operations.
    pub(super) fn check_resources(
        &self,
        src: &Source<'_>,
        file: &ServiceFile,
        operations: &[Operation],
    ) -> Result<(), CatalogError> {
        for (i, g) in file.groups.iter().enumerate() {
            let at = self.get(g.id.get_ref());
            for param in &g.per_resource {
                let named = format!("{{{}}}", param.get_ref());
                let used = operations.iter().any(|o| {
                    at.is_some_and(|at| o.groups.contains(&at)) && o.path.contains(&named)
                });
                if !used {
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
        Ok(())
    }

    /// The file's plans, each a quota per group it names.
    pub(super) fn plans(
        &self,
        src: &Source<'_>,
        file: &ServiceFile,
    ) -> Result<Vec<Plan>, CatalogError> {
        file.plans
            .iter()
            .map(|(name, p)| {
                let mut quotas = BTreeMap::new();
                for (gid, q) in &p.quotas {
                    let field = format!("plans.{name}.quotas.{gid}");
                    if !self.index.contains_key(gid) {
                        return Err(src.err(
                            q.span(),
                            &field,
                            format!(
                                "no group {gid:?}; the groups are {}",
                                some(self.index.keys())
                            ),
                        ));
                    }
                    quotas.insert(gid.clone(), quota(src, q, &field)?);
                }
                Ok(Plan {
                    name: name.clone(),
                    quotas,
                })
            })
            .collect()
    }
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
