//! `(method, path) → operation`: literal paths by hash, templates by a trie of their segments.
//!
//! A request walks the trie segment by segment, into the literal child of its segment and into
//! the parameter child, so the work follows the path's length and the few templates that share
//! its prefix — not the number of templates (100 000 templated operations resolve as fast as ten).
//! Of the templates that match, the one with the most literal segments wins, then the one
//! defined first ("a literal segment wins over a parameter", docs/services.md); a request's host
//! picks among operations that exist on several hosts (WB `/ping`).

use foldhash::HashMap;

use crate::model::{Method, Operation};

/// A template's end: the operation at a trie node.
#[derive(Debug, Clone)]
struct End {
    op: usize,
    method: Method,
    host: Option<String>,
    /// Its literal segments: more wins.
    literals: usize,
}

/// A node of the template trie: what follows one segment.
#[derive(Debug, Clone, Default)]
struct Node {
    literal: HashMap<String, Node>,
    param: Option<Box<Node>>,
    ends: Vec<End>,
}

/// Finds the operation a request addresses. Built once per service.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolver {
    exact: HashMap<String, Vec<(Method, Option<String>, usize)>>,
    templates: Node,
}

impl Resolver {
    pub(crate) fn new(ops: &[Operation]) -> Self {
        let mut r = Resolver::default();
        for (i, op) in ops.iter().enumerate() {
            // As a request's path is taken: without a trailing '/'.
            let path = if op.path.len() > 1 {
                op.path.trim_end_matches('/')
            } else {
                op.path.as_str()
            };
            if path.contains('{') {
                let mut node = &mut r.templates;
                let mut literals = 0;
                for s in path.split('/') {
                    node = if s.starts_with('{') && s.ends_with('}') {
                        node.param.get_or_insert_with(Box::default)
                    } else {
                        literals += 1;
                        node.literal.entry(s.to_owned()).or_default()
                    };
                }
                node.ends.push(End {
                    op: i,
                    method: op.method,
                    host: op.host.clone(),
                    literals,
                });
            } else {
                r.exact
                    .entry(path.to_owned())
                    .or_default()
                    .push((op.method, op.host.clone(), i));
            }
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
        let mut best = Best::default();
        walk(&self.templates, Some(path), method, host, &mut best);
        best.matched.or(best.any).map(|(_, op)| op)
    }
}

/// The best template so far, by (most literals, first defined): of those whose host fits the
/// request's, and of all (the answer when none fits).
#[derive(Default)]
struct Best {
    matched: Option<((std::cmp::Reverse<usize>, usize), usize)>,
    any: Option<((std::cmp::Reverse<usize>, usize), usize)>,
}

impl Best {
    fn offer(&mut self, e: &End, host: Option<&str>) {
        let rank = ((std::cmp::Reverse(e.literals), e.op), e.op);
        let better = |cur: &Option<_>| {
            cur.is_none_or(|c: ((std::cmp::Reverse<usize>, usize), usize)| rank.0 < c.0)
        };
        if better(&self.any) {
            self.any = Some(rank);
        }
        if (host.is_none() || e.host.is_none() || e.host.as_deref() == host)
            && better(&self.matched)
        {
            self.matched = Some(rank);
        }
    }
}

/// Offers `best` the ends of `method` below `node` that the segments of `rest` reach (`None`:
/// no segment left): each segment through its literal child and, when not empty, through the
/// parameter child. Allocates nothing.
fn walk(node: &Node, rest: Option<&str>, method: Method, host: Option<&str>, best: &mut Best) {
    let Some(rest) = rest else {
        for e in node.ends.iter().filter(|e| e.method == method) {
            best.offer(e, host);
        }
        return;
    };
    let (first, after) = match rest.split_once('/') {
        Some((first, after)) => (first, Some(after)),
        None => (rest, None),
    };
    if let Some(child) = node.literal.get(first) {
        walk(child, after, method, host, best);
    }
    if let Some(child) = node.param.as_deref()
        && !first.is_empty()
    {
        walk(child, after, method, host, best);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(method: Method, path: &str, host: Option<&str>) -> Operation {
        Operation {
            host: host.map(str::to_owned),
            also_hosts: Vec::new(),
            method,
            path: path.to_owned(),
            spec_path: path.to_owned(),
            groups: Vec::new(),
            cost: std::collections::BTreeMap::new(),
            deprecated: false,
            category: None,
            summary: None,
            weight: 1,
            weight_from: None,
            cost_from: None,
            fixture: None,
            anonymous: false,
            repeatable: true,
            binding: None,
            max_body: None,
            request: None,
        }
    }

    /// The scan this trie replaced, as the reference: every template of the path's segment
    /// count, most literal segments first, then in definition order.
    fn by_scan(ops: &[Operation], method: Method, path: &str, host: Option<&str>) -> Option<usize> {
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        let exact: Vec<usize> = (0..ops.len())
            .filter(|&i| {
                !ops[i].path.contains('{') && ops[i].path == path && ops[i].method == method
            })
            .collect();
        let lits = |p: &str| p.split('/').filter(|s| !s.starts_with('{')).count();
        let mut templated: Vec<usize> = (0..ops.len())
            .filter(|&i| {
                let t = &ops[i].path;
                t.contains('{')
                    && ops[i].method == method
                    && t.split('/').count() == path.split('/').count()
                    && t.split('/').zip(path.split('/')).all(|(s, p)| {
                        if s.starts_with('{') && s.ends_with('}') {
                            !p.is_empty()
                        } else {
                            s == p
                        }
                    })
            })
            .collect();
        templated.sort_by_key(|&i| (std::cmp::Reverse(lits(&ops[i].path)), i));
        let pick = |c: &[usize]| {
            c.iter()
                .copied()
                .find(|&i| {
                    host.is_none() || ops[i].host.is_none() || ops[i].host.as_deref() == host
                })
                .or_else(|| c.first().copied())
        };
        pick(&exact).or_else(|| pick(&templated))
    }

    #[test]
    fn the_trie_answers_as_the_scan_did() {
        let ops = vec![
            op(Method::Get, "/a/{x}/c/d", None),
            op(Method::Get, "/a/b/{y}/{z}", None),
            op(Method::Get, "/a/b/c", None),
            op(Method::Get, "/a/{x}/c", Some("one")),
            op(Method::Get, "/a/{y}/c", Some("two")),
            op(Method::Post, "/a/{x}", None),
            op(Method::Get, "/v2/{id}/items", None),
            op(Method::Get, "/v2/acts/items", None),
            op(Method::Get, "/trailing/", None),
            op(Method::Get, "/t/{id}/", None),
        ];
        let r = Resolver::new(&ops);
        let paths = [
            "/a/b/c/d",
            "/a/b/c",
            "/a/q/c",
            "/a/q",
            "/a//c",
            "/v2/7/items",
            "/v2/acts/items/",
            "/v2/acts/items",
            "/nothing",
            "/",
            "/a/b/c/d/e",
        ];
        for p in paths {
            for m in [Method::Get, Method::Post] {
                for h in [None, Some("one"), Some("two"), Some("three")] {
                    assert_eq!(
                        r.resolve(m, p, h),
                        by_scan(&ops, m, p, h),
                        "{m:?} {p} {h:?}"
                    );
                }
            }
        }
        assert_eq!(
            r.resolve(Method::Get, "/a/b/c/d", None),
            Some(0),
            "more literals win"
        );
        assert_eq!(r.resolve(Method::Get, "/a/q/c", Some("two")), Some(4));
        // A template written with a trailing '/' is found with or without one.
        assert_eq!(r.resolve(Method::Get, "/trailing", None), Some(8));
        assert_eq!(r.resolve(Method::Get, "/trailing/", None), Some(8));
        assert_eq!(r.resolve(Method::Get, "/t/5/", None), Some(9));
    }
}
