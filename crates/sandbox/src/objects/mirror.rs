//! What this instance wrote to the shared objects, so that a Redis that comes back empty gets
//! it back.
//!
//! Every change the script makes carries a revision (Redis's clock in µs, never behind the
//! sandbox's last one). Each instance keeps the latest revision of every object it wrote, and a
//! tombstone for every one it deleted; the union of the instances' mirrors, each object taken at
//! its latest revision, is the shared state. When the instances' epoch moves (Redis lost its
//! keys), each one writes its mirror back and the script keeps, object by object, the later
//! revision — in whatever order the instances come. A clearing (a sandbox's objects replaced)
//! has a revision too, and nothing written before it comes back.
//!
//! Bounded like what it mirrors: an instance holds at most what the sandboxes hold, plus at most
//! [`TOMBSTONES`] deletions per collection (the oldest forgotten first).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Deletions remembered per collection, here and in Redis.
pub(crate) const TOMBSTONES: usize = 10_000;

/// One object as this instance last wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    /// The change's revision.
    pub(crate) rev: u64,
    /// Its place in the collection's order.
    pub(crate) at: u64,
    /// Its JSON; `None` for an object deleted.
    pub(crate) json: Option<String>,
}

/// One collection's objects written here, and the next sequential id given here.
#[derive(Debug, Default, Clone)]
pub(crate) struct Collection {
    /// The next sequential id this instance made or seeded (kept through a reset, so that no
    /// id is given twice).
    pub(crate) next: u64,
    /// By id.
    pub(crate) objects: HashMap<String, Kept>,
    /// How many of them are deletions.
    gone: usize,
}

/// One sandbox's collections written here.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sandbox {
    /// The revision of the last clearing seen here: nothing written before it is restored.
    pub(crate) cleared: u64,
    /// By `service/collection`.
    pub(crate) colls: HashMap<String, Collection>,
}

/// The mirror of every sandbox this instance wrote to.
#[derive(Debug, Default)]
pub(crate) struct Mirror {
    sandboxes: Mutex<HashMap<String, Sandbox>>,
}

impl Mirror {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Sandbox>) -> T) -> T {
        f(&mut self
            .sandboxes
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
    }

    /// Notes `(id, at, json)` objects written (`json` `None`: deleted) at `rev` in `sandbox`'s
    /// collection `name`; an object already noted at a later revision stays as it is.
    pub(crate) fn wrote(
        &self,
        sandbox: &str,
        name: &str,
        rev: u64,
        objects: impl IntoIterator<Item = (String, u64, Option<String>)>,
    ) {
        self.with(|all| {
            let s = all.entry(sandbox.to_owned()).or_default();
            if rev < s.cleared {
                return;
            }
            let c = s.colls.entry(name.to_owned()).or_default();
            for (id, at, json) in objects {
                let kept = Kept { rev, at, json };
                let old = c.objects.get(&id);
                if old.is_some_and(|k| k.rev >= rev) {
                    continue;
                }
                c.gone -= usize::from(old.is_some_and(|k| k.json.is_none()));
                c.gone += usize::from(kept.json.is_none());
                c.objects.insert(id, kept);
            }
            forget_oldest_deletions(c);
        });
    }

    /// Notes that `sandbox`'s collection `name` gave sequential ids up to `next` (excluded).
    pub(crate) fn gave(&self, sandbox: &str, name: &str, next: u64) {
        self.with(|all| {
            let c = all
                .entry(sandbox.to_owned())
                .or_default()
                .colls
                .entry(name.to_owned())
                .or_default();
            c.next = c.next.max(next);
        });
    }

    /// The next sequential id `sandbox`'s collection `name` gave here (0: none).
    pub(crate) fn next(&self, sandbox: &str, name: &str) -> u64 {
        self.with(|all| {
            all.get(sandbox)
                .and_then(|s| s.colls.get(name))
                .map_or(0, |c| c.next)
        })
    }

    /// `sandbox`'s objects were replaced at `rev` by `data` (`service/collection` → `(id,
    /// json)` in order): what was written here before is dropped, the ids given stay given.
    pub(crate) fn replaced(
        &self,
        sandbox: &str,
        rev: u64,
        data: Vec<(String, Vec<(String, String)>)>,
    ) {
        self.with(|all| {
            let s = all.entry(sandbox.to_owned()).or_default();
            s.cleared = s.cleared.max(rev);
            for c in s.colls.values_mut() {
                c.objects.clear();
                c.gone = 0;
            }
            for (name, objects) in data {
                let c = s.colls.entry(name).or_default();
                for (at, (id, json)) in (1..).zip(objects) {
                    c.objects.insert(
                        id,
                        Kept {
                            rev,
                            at,
                            json: Some(json),
                        },
                    );
                }
            }
        });
    }

    /// A copy of `sandbox`'s mirror, if this instance wrote to it.
    pub(crate) fn of(&self, sandbox: &str) -> Option<Sandbox> {
        self.with(|all| all.get(sandbox).cloned())
    }

    /// Drops `sandbox` (deleted).
    pub(crate) fn forget(&self, sandbox: &str) {
        self.with(|all| {
            all.remove(sandbox);
        });
    }

    /// Keeps only the sandboxes `live` names (others were deleted on another instance).
    pub(crate) fn retain(&self, live: &dyn Fn(&str) -> bool) {
        self.with(|all| all.retain(|id, _| live(id)));
    }

    /// A copy of every sandbox's mirror, to write back.
    pub(crate) fn snapshot(&self) -> Vec<(String, Sandbox)> {
        self.with(|all| all.iter().map(|(id, s)| (id.clone(), s.clone())).collect())
    }
}

/// Drops the oldest tombstones of `c` past [`TOMBSTONES`] (in one pass once they are twice as
/// many, so that the cost is spread over the deletions).
fn forget_oldest_deletions(c: &mut Collection) {
    if c.gone <= 2 * TOMBSTONES {
        return;
    }
    let mut revs: Vec<u64> = c
        .objects
        .values()
        .filter(|k| k.json.is_none())
        .map(|k| k.rev)
        .collect();
    revs.sort_unstable();
    let floor = revs.get(revs.len() - TOMBSTONES).copied().unwrap_or(0);
    c.objects.retain(|_, k| k.json.is_some() || k.rev >= floor);
    c.gone = c.objects.values().filter(|k| k.json.is_none()).count();
}

impl Sandbox {
    /// The script's `restore` arguments after its operation and collection: the clearing
    /// revision, then per collection (every one, or `only`) its name, next id, count and
    /// `(id, rev, at, json or "")`.
    pub(crate) fn restore_args(&self, only: Option<&str>) -> Vec<String> {
        let mut a = vec![self.cleared.to_string()];
        let colls = self
            .colls
            .iter()
            .filter(|(n, _)| only.is_none_or(|o| o == *n));
        for (name, c) in colls {
            a.push(name.clone());
            a.push(c.next.to_string());
            a.push(c.objects.len().to_string());
            for (id, k) in &c.objects {
                a.push(id.clone());
                a.push(k.rev.to_string());
                a.push(k.at.to_string());
                a.push(k.json.clone().unwrap_or_default());
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(json: &str) -> Option<String> {
        Some(json.to_owned())
    }

    #[test]
    fn a_later_write_wins_and_an_earlier_one_is_ignored() {
        let m = Mirror::default();
        m.wrote("s", "svc/c", 5, [("1".to_owned(), 1, obj("{\"v\":5}"))]);
        m.wrote("s", "svc/c", 3, [("1".to_owned(), 1, obj("{\"v\":3}"))]);
        m.wrote("s", "svc/c", 7, [("2".to_owned(), 2, None)]);
        let snap = m.snapshot();
        let c = &snap[0].1.colls["svc/c"];
        assert_eq!(c.objects["1"].json.as_deref(), Some("{\"v\":5}"));
        assert_eq!(c.objects["2"].json, None);
    }

    #[test]
    fn a_clearing_drops_what_came_before_and_keeps_the_ids_given() {
        let m = Mirror::default();
        m.gave("s", "svc/c", 12);
        m.wrote("s", "svc/c", 5, [("10".to_owned(), 3, obj("{}"))]);
        m.replaced(
            "s",
            9,
            vec![("svc/d".to_owned(), vec![("a".to_owned(), "{}".to_owned())])],
        );
        m.wrote("s", "svc/c", 8, [("11".to_owned(), 4, obj("{}"))]);
        let snap = m.snapshot();
        let s = &snap[0].1;
        assert_eq!(s.cleared, 9);
        assert!(s.colls["svc/c"].objects.is_empty());
        assert_eq!(s.colls["svc/d"].objects["a"].at, 1);
        assert_eq!(m.next("s", "svc/c"), 12);
        assert_eq!(
            s.restore_args(None).first().map(String::as_str),
            Some("9"),
            "the clearing first"
        );
    }

    #[test]
    fn deletions_are_bounded_oldest_first() {
        let m = Mirror::default();
        for i in 0..(2 * TOMBSTONES + 1) {
            m.wrote("s", "c", i as u64 + 1, [(i.to_string(), 0, None)]);
        }
        let snap = m.snapshot();
        let objects = &snap[0].1.colls["c"].objects;
        assert_eq!(objects.len(), TOMBSTONES);
        assert!(!objects.contains_key("0") && objects.contains_key(&(2 * TOMBSTONES).to_string()));
    }

    #[test]
    fn a_deleted_sandbox_is_forgotten() {
        let m = Mirror::default();
        m.wrote("a", "c", 1, [("1".to_owned(), 1, obj("{}"))]);
        m.wrote("b", "c", 1, [("1".to_owned(), 1, obj("{}"))]);
        m.forget("a");
        m.retain(&|s| s != "b");
        assert!(m.snapshot().is_empty());
    }
}
