//! `(method, path) → operation`: literal paths by hash, templates by segment count.

use foldhash::HashMap;

use crate::model::{Method, Operation};

#[derive(Debug, Clone)]
enum Seg {
    Lit(String),
    Param,
}

#[derive(Debug, Clone)]
struct Template {
    op: usize,
    method: Method,
    host: Option<String>,
    segs: Vec<Seg>,
}

/// Finds the operation a request addresses. Built once per service.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolver {
    exact: HashMap<String, Vec<(Method, Option<String>, usize)>>,
    /// Templates by number of segments, most literal segments first.
    templates: Vec<Vec<Template>>,
}

impl Resolver {
    pub(crate) fn new(ops: &[Operation]) -> Self {
        let mut r = Resolver::default();
        for (i, op) in ops.iter().enumerate() {
            if op.path.contains('{') {
                let segs: Vec<Seg> = op
                    .path
                    .split('/')
                    .map(|s| {
                        if s.starts_with('{') && s.ends_with('}') {
                            Seg::Param
                        } else {
                            Seg::Lit(s.to_owned())
                        }
                    })
                    .collect();
                let n = segs.len();
                if r.templates.len() <= n {
                    r.templates.resize_with(n + 1, Vec::new);
                }
                if let Some(bucket) = r.templates.get_mut(n) {
                    bucket.push(Template {
                        op: i,
                        method: op.method,
                        host: op.host.clone(),
                        segs,
                    });
                }
            } else {
                r.exact
                    .entry(op.path.clone())
                    .or_default()
                    .push((op.method, op.host.clone(), i));
            }
        }
        for bucket in &mut r.templates {
            bucket.sort_by_key(|t| {
                std::cmp::Reverse(t.segs.iter().filter(|s| matches!(s, Seg::Lit(_))).count())
            });
        }
        r
    }

    /// The index of the operation for `method` on `path`; `host` picks between operations that
    /// exist on several hosts (WB `/ping`), and is otherwise not required.
    pub(crate) fn resolve(&self, method: Method, path: &str, host: Option<&str>) -> Option<usize> {
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        let pick = |candidates: &mut dyn Iterator<Item = (Option<&str>, usize)>| {
            let mut first = None;
            for (h, op) in candidates {
                if host.is_none() || h.is_none() || h == host {
                    return Some(op);
                }
                first.get_or_insert(op);
            }
            first
        };
        if let Some(list) = self.exact.get(path) {
            let mut it = list
                .iter()
                .filter(|(m, _, _)| *m == method)
                .map(|(_, h, op)| (h.as_deref(), *op));
            if let Some(op) = pick(&mut it) {
                return Some(op);
            }
        }
        let n = path.split('/').count();
        let bucket = self.templates.get(n)?;
        let mut it = bucket
            .iter()
            .filter(|t| t.method == method && matches(&t.segs, path))
            .map(|t| (t.host.as_deref(), t.op));
        pick(&mut it)
    }
}

fn matches(segs: &[Seg], path: &str) -> bool {
    segs.iter()
        .zip(path.split('/'))
        .all(|(seg, part)| match seg {
            Seg::Lit(l) => l == part,
            Seg::Param => !part.is_empty(),
        })
}
