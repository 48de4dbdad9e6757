//! Objects in this process's memory: one lock over all sandboxes (a change is a few map
//! operations; the request path holds it for microseconds, never across an await).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use apistend_answers::objects::{Outcome, Plan, Window};
use apistend_catalog::IdStyle;
use serde_json::{Map, Value};

use super::bounds::Bounds;
use super::coll::{Coll, Export};
use super::collection::{first_after, key_of, patched, removable, size, with_id, written};
use super::error::ObjectsError;

/// The objects of every sandbox.
pub(crate) struct MemoryObjects {
    bounds: Bounds,
    sandboxes: Mutex<HashMap<String, Held>>,
}

/// One sandbox's collections and what they hold in all.
#[derive(Default)]
struct Held {
    colls: BTreeMap<(String, String), Collection>,
    objects: u64,
    bytes: u64,
    /// The next sequential id of each collection reset since: a reset collection starts
    /// again with its examples, but no id is given twice.
    marks: BTreeMap<(String, String), u64>,
}

impl Held {
    /// `c`, seeded as the collection `key`, continuing after the ids it gave before a reset.
    fn continued(&self, key: &(String, String), mut c: Collection) -> Collection {
        if let Some(m) = self.marks.get(key) {
            c.next_id = c.next_id.max(*m);
        }
        c
    }
}

/// One collection: objects by id, and their order of creation.
#[derive(Default)]
struct Collection {
    /// The next sequential id.
    next_id: u64,
    /// The next place in the order.
    next_at: u64,
    order: BTreeMap<u64, String>,
    items: HashMap<String, (u64, Value)>,
}

impl Collection {
    /// Removes each object of `ids` it holds: what went, and the change in objects and bytes.
    fn remove(&mut self, ids: &[String]) -> (Outcome, i64, i64) {
        let gone: Vec<Value> = ids
            .iter()
            .filter_map(|k| {
                let (at, o) = self.items.remove(k)?;
                self.order.remove(&at);
                Some(o)
            })
            .collect();
        let bytes: i64 = gone.iter().map(|o| size(o) as i64).sum();
        let n = gone.len() as i64;
        (Outcome::Removed(gone), -n, -bytes)
    }

    fn seeded(id: &IdStyle, seed: Vec<Value>) -> Self {
        let mut c = Self {
            next_id: first_after(id, &seed),
            ..Self::default()
        };
        for o in seed {
            // The first of an id counts, as on Redis (Apify's example lists one run twice).
            if let Some(k) = key_of(id, &o).filter(|k| !c.items.contains_key(k)) {
                c.put(k, o);
            }
        }
        c
    }

    fn put(&mut self, key: String, object: Value) {
        let at = self.next_at;
        self.next_at += 1;
        self.order.insert(at, key.clone());
        self.items.insert(key, (at, object));
    }

    /// Writes each of `upserts` in place of the object of its id, or adds it, if what the
    /// sandbox holds (`objects`, `bytes`) stays within `bounds`; the outcome and the change of
    /// the sandbox's counts.
    fn upsert(
        &mut self,
        upserts: &[(String, Map<String, Value>)],
        bounds: &Bounds,
        objects: u64,
        bytes: u64,
    ) -> Result<(Outcome, i64, i64), ObjectsError> {
        let (mut add, mut d) = (0u64, 0i64);
        for (k, o) in upserts {
            let new = size(&Value::Object(o.clone())) as i64;
            match self.items.get(k) {
                Some((_, old)) => d += new - size(old) as i64,
                None => {
                    add += 1;
                    d += new;
                }
            }
        }
        bounds.check(objects + add, bytes.saturating_add_signed(d.max(0)))?;
        let mut out = Vec::with_capacity(upserts.len());
        for (k, o) in upserts {
            let o = Value::Object(o.clone());
            match self.items.get_mut(k) {
                Some((_, old)) => *old = o.clone(),
                None => self.put(k.clone(), o.clone()),
            }
            out.push(o);
        }
        Ok((Outcome::Written(out), add as i64, d))
    }

    fn page(&self, w: &Window) -> Outcome {
        let wanted = w.ids.as_ref();
        let matching = self
            .order
            .values()
            .filter(|k| wanted.is_none_or(|ids| ids.contains(k)));
        let total = match wanted {
            Some(_) => matching.clone().count() as u64,
            None => self.items.len() as u64,
        };
        let items = matching
            .skip(usize::try_from(w.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(w.limit).unwrap_or(usize::MAX))
            .filter_map(|k| self.items.get(k).map(|(_, o)| o.clone()))
            .collect();
        Outcome::Listed { items, total }
    }
}

impl MemoryObjects {
    pub(super) fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            sandboxes: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn apply(
        &self,
        coll: Coll<'_>,
        id: &IdStyle,
        plan: &Plan,
        seed: &(dyn Fn() -> Vec<Value> + Sync),
    ) -> Result<Outcome, ObjectsError> {
        let mut all = self
            .sandboxes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = all.entry(coll.sandbox.to_owned()).or_default();
        let key = (coll.service.to_owned(), coll.name.to_owned());
        if !held.colls.contains_key(&key) {
            let c = held.continued(&key, Collection::seeded(id, seed()));
            held.objects += c.items.len() as u64;
            held.bytes += c.items.values().map(|(_, o)| size(o)).sum::<u64>();
            held.colls.insert(key.clone(), c);
        }
        let (objects, bytes) = (held.objects, held.bytes);
        let Some(c) = held.colls.get_mut(&key) else {
            return Err(ObjectsError::Unavailable("a collection vanished".into()));
        };
        let (outcome, d_objects, d_bytes) = match plan {
            Plan::Create(new) => {
                let made: Vec<Value> = new
                    .iter()
                    .enumerate()
                    .map(|(i, o)| with_id(id, o.clone(), written(id, c.next_id + i as u64)))
                    .collect();
                let add: u64 = made.iter().map(size).sum();
                self.bounds
                    .check(objects + made.len() as u64, bytes + add)?;
                c.next_id += made.len() as u64;
                for o in &made {
                    if let Some(k) = key_of(id, o) {
                        c.put(k, o.clone());
                    }
                }
                let n = made.len() as i64;
                (Outcome::Created(made), n, add as i64)
            }
            Plan::Read(k) => match c.items.get(k) {
                Some((_, o)) => (Outcome::Found(o.clone()), 0, 0),
                None => (Outcome::Missing(k.clone()), 0, 0),
            },
            Plan::List(w) => (c.page(w), 0, 0),
            Plan::Update(patches) => {
                // Every id first: an update applies whole or not at all.
                if let Some((k, _)) = patches.iter().find(|(k, _)| !c.items.contains_key(k)) {
                    return Ok(Outcome::Missing(k.clone()));
                }
                let mut out = Vec::new();
                let mut d = 0i64;
                for (k, patch) in patches {
                    if let Some((_, o)) = c.items.get_mut(k) {
                        let new = patched(o, patch);
                        d += size(&new) as i64 - size(o) as i64;
                        *o = new.clone();
                        out.push(new);
                    }
                }
                self.bounds
                    .check(objects, bytes.saturating_add_signed(d.max(0)))?;
                (Outcome::Updated(out), 0, d)
            }
            Plan::Upsert(upserts) => c.upsert(upserts, &self.bounds, objects, bytes)?,
            Plan::Remove(ids) => c.remove(ids),
            Plan::RemoveWhere(w) => {
                let listed = match c.page(&Window {
                    ids: w.ids.clone(),
                    ..Window::all()
                }) {
                    Outcome::Listed { items, .. } => items,
                    _ => Vec::new(),
                };
                let ids: Vec<String> = removable(listed, w, id)
                    .iter()
                    .filter_map(|o| key_of(id, o))
                    .collect();
                c.remove(&ids)
            }
            Plan::Delete(k) => match c.items.remove(k) {
                Some((at, o)) => {
                    c.order.remove(&at);
                    let b = size(&o) as i64;
                    (Outcome::Deleted(o), -1, -b)
                }
                None => (Outcome::Missing(k.clone()), 0, 0),
            },
        };
        held.objects = held.objects.saturating_add_signed(d_objects);
        held.bytes = held.bytes.saturating_add_signed(d_bytes);
        Ok(outcome)
    }

    pub(super) fn export(&self, sandbox: &str) -> Export {
        let all = self
            .sandboxes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = Export::new();
        if let Some(held) = all.get(sandbox) {
            for ((service, name), c) in &held.colls {
                let items = c
                    .order
                    .values()
                    .filter_map(|k| c.items.get(k).map(|(_, o)| o.clone()))
                    .collect();
                out.entry(service.clone())
                    .or_default()
                    .insert(name.clone(), items);
            }
        }
        out
    }

    pub(super) fn replace(
        &self,
        sandbox: &str,
        data: &Export,
        ids: &(dyn Fn(&str, &str) -> Option<IdStyle> + Sync),
    ) -> Result<(), ObjectsError> {
        let mut all = self
            .sandboxes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // What the sandbox's collections gave so far is kept: their ids are not given again.
        let mut held = Held::default();
        if let Some(old) = all.get(sandbox) {
            held.marks.clone_from(&old.marks);
            for (key, c) in &old.colls {
                let m = held.marks.entry(key.clone()).or_default();
                *m = (*m).max(c.next_id);
            }
        }
        for (service, colls) in data {
            for (name, items) in colls {
                let Some(id) = ids(service, name) else {
                    continue;
                };
                let key = (service.clone(), name.clone());
                let c = held.continued(&key, Collection::seeded(&id, items.clone()));
                held.objects += c.items.len() as u64;
                held.bytes += c.items.values().map(|(_, o)| size(o)).sum::<u64>();
                held.colls.insert(key, c);
            }
        }
        self.bounds.check(held.objects, held.bytes)?;
        all.insert(sandbox.to_owned(), held);
        Ok(())
    }

    /// Drops everything of `sandbox` (deleted), its marks too.
    pub(super) fn forget(&self, sandbox: &str) {
        self.sandboxes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(sandbox);
    }
}
