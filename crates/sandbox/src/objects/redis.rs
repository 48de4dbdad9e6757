//! Objects in the Redis every instance shares: one script (`objects.lua`) per change, atomic
//! for the sandbox (all its keys carry its hash tag). JSON is merged here, not in Lua (cjson
//! would rewrite numbers and empty lists); an update writes only if every object is still what
//! it read, and is read and tried again otherwise. What this instance writes is mirrored here
//! (`mirror.rs`) and written back when Redis comes back empty.

use apistend_answers::objects::{Outcome, Plan, Window};
use apistend_catalog::{IdKind, IdStyle};
use redis::Value as R;
use serde_json::{Map, Value};

use super::bounds::Bounds;
use super::coll::Coll;
use super::collection::{first_after, key_of, patched, removable, with_id, written};
use super::error::ObjectsError;
use super::mirror::Mirror;
use crate::sync::Conn;

const SCRIPT: &str = include_str!("objects.lua");

/// How often a change is read and tried again when another instance changed its objects in
/// between.
const TRIES: usize = 16;

#[derive(Clone)]
pub(crate) struct RedisObjects {
    pub(super) conn: Conn,
    pub(super) script: redis::Script,
    pub(super) bounds: Bounds,
    /// What this instance wrote, and the next sequential id of each collection it made or
    /// seeded: a Redis that comes back empty has lost its own, and gets them back.
    pub(super) mirror: std::sync::Arc<Mirror>,
}

/// The collection a call is about.
#[derive(Clone, Copy)]
struct On<'a> {
    sandbox: &'a str,
    /// `service/collection`.
    name: &'a str,
}

/// What one call of the script came to.
enum Step {
    Done(Outcome),
    Seed,
    Again,
}

fn prefix(sandbox: &str) -> String {
    format!("apistend:{{o:{sandbox}}}")
}

pub(super) fn unavailable(e: impl std::fmt::Display) -> ObjectsError {
    ObjectsError::Unavailable(e.to_string())
}

pub(super) fn text(v: &R) -> Option<String> {
    match v {
        R::BulkString(b) => String::from_utf8(b.clone()).ok(),
        R::SimpleString(s) => Some(s.clone()),
        R::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

pub(super) fn json(v: &R) -> Result<Value, ObjectsError> {
    let t = text(v).ok_or_else(|| unavailable("an object that is not text"))?;
    serde_json::from_str(&t).map_err(unavailable)
}

pub(super) fn dump(v: &Value) -> String {
    v.to_string()
}

fn number(v: Option<&R>) -> u64 {
    // The script writes revisions and places as whole numbers.
    v.and_then(text).and_then(|t| t.parse().ok()).unwrap_or(0)
}

/// A change's `{"wrote", rev, at…}`: its revision and each object's place.
pub(super) fn wrote(reply: &R) -> (u64, Vec<u64>) {
    let R::Array(parts) = reply else {
        return (0, Vec::new());
    };
    let at = parts.iter().skip(2).map(|v| number(Some(v))).collect();
    (number(parts.get(1)), at)
}

impl RedisObjects {
    pub(super) fn new(conn: Conn, bounds: Bounds) -> Self {
        Self {
            conn,
            script: redis::Script::new(SCRIPT),
            bounds,
            mirror: std::sync::Arc::default(),
        }
    }

    pub(super) async fn call(&self, sandbox: &str, args: &[String]) -> Result<R, ObjectsError> {
        let mut inv = self.script.key(prefix(sandbox));
        for a in args {
            inv.arg(a);
        }
        self.conn
            .clone()
            .invoke::<R>(&inv)
            .await
            .map_err(unavailable)
    }

    /// `{"seed"}`, `{"full", what, held, bound}` and `{"missing", id}` as steps and errors.
    fn common(reply: &R) -> Option<Result<Step, ObjectsError>> {
        let R::Array(parts) = reply else { return None };
        let tag = parts.first().and_then(text)?;
        match tag.as_str() {
            "seed" => Some(Ok(Step::Seed)),
            "changed" => Some(Ok(Step::Again)),
            "missing" => Some(Ok(Step::Done(Outcome::Missing(
                parts.get(1).and_then(text).unwrap_or_default(),
            )))),
            "full" => {
                let n = |i: usize| parts.get(i).and_then(text).and_then(|t| t.parse().ok());
                Some(Err(ObjectsError::Full {
                    what: if parts.get(1).and_then(text).as_deref() == Some("bytes") {
                        "bytes"
                    } else {
                        "objects"
                    },
                    held: n(2).unwrap_or(0),
                    bound: n(3).unwrap_or(0),
                }))
            }
            _ => None,
        }
    }

    pub(super) async fn apply(
        &self,
        coll: Coll<'_>,
        id: &IdStyle,
        plan: &Plan,
        seed: &(dyn Fn() -> Vec<Value> + Sync),
    ) -> Result<Outcome, ObjectsError> {
        let name = format!("{}/{}", coll.service, coll.name);
        for _ in 0..TRIES {
            match self.step(coll.sandbox, &name, id, plan).await? {
                Step::Done(o) => {
                    if let Outcome::Created(made) = &o {
                        self.mirror.gave(coll.sandbox, &name, first_after(id, made));
                    }
                    return Ok(o);
                }
                Step::Again => {}
                Step::Seed => {
                    // Untouched: a Redis that came back empty, maybe before the instances
                    // noticed; what this instance wrote comes back first.
                    self.restore(coll.sandbox, Some(&name)).await?;
                    let first = seed();
                    let mut args = vec!["seed".into(), name.clone()];
                    let known = self.mirror.next(coll.sandbox, &name);
                    args.push(first_after(id, &first).max(known).to_string());
                    for o in &first {
                        if let Some(k) = key_of(id, o) {
                            args.push(k);
                            args.push(dump(o));
                        }
                    }
                    self.call(coll.sandbox, &args).await?;
                }
            }
        }
        Err(unavailable(
            "the objects kept changing under this change; try again",
        ))
    }

    /// Mirrors `written` `(id, json)` (`None`: deleted) as the change `reply` answered.
    fn mirror(&self, on: On<'_>, reply: &R, written: Vec<(String, Option<String>)>) {
        let (rev, at) = wrote(reply);
        let at = at.into_iter().chain(std::iter::repeat(0));
        self.mirror.wrote(
            on.sandbox,
            on.name,
            rev,
            written
                .into_iter()
                .zip(at)
                .map(|((id, json), at)| (id, at, json)),
        );
    }

    /// One call of the script for `plan` on the collection `name` (`service/collection`).
    async fn step(
        &self,
        sandbox: &str,
        name: &str,
        id: &IdStyle,
        plan: &Plan,
    ) -> Result<Step, ObjectsError> {
        let on = On { sandbox, name };
        match plan {
            Plan::Create(new) => self.create(on, id, new).await,
            Plan::Read(k) => self.found(on, "read", k, Outcome::Found).await,
            Plan::Delete(k) => self.found(on, "delete", k, Outcome::Deleted).await,
            Plan::List(w) => self.list(on, w).await,
            Plan::Update(patches) => self.update(on, patches).await,
            Plan::Upsert(objects) => self.upsert(on, objects).await,
            Plan::Remove(ids) => self.remove(on, ids).await,
            Plan::RemoveWhere(w) => self.remove_where(on, id, w).await,
        }
    }

    /// The script's answer to `op` with `args` on `on`, or the step a common answer makes.
    async fn ask(
        &self,
        on: On<'_>,
        op: &str,
        args: Vec<String>,
    ) -> Result<Result<R, Step>, ObjectsError> {
        let mut a = vec![op.to_owned(), on.name.to_owned()];
        a.extend(args);
        let reply = self.call(on.sandbox, &a).await?;
        match Self::common(&reply) {
            Some(step) => step.map(Err),
            None => Ok(Ok(reply)),
        }
    }

    async fn create(
        &self,
        on: On<'_>,
        id: &IdStyle,
        new: &[Map<String, Value>],
    ) -> Result<Step, ObjectsError> {
        let first = if id.kind == IdKind::Sequential {
            let reply = match self.ask(on, "ids", vec![new.len().to_string()]).await? {
                Ok(r) => r,
                Err(step) => return Ok(step),
            };
            let R::Int(last) = reply else {
                return Err(unavailable("ids: not a number"));
            };
            u64::try_from(last + 1)
                .unwrap_or(0)
                .saturating_sub(new.len() as u64)
        } else {
            0
        };
        let made: Vec<Value> = new
            .iter()
            .enumerate()
            .map(|(i, o)| with_id(id, o.clone(), written(id, first + i as u64)))
            .collect();
        let mut a = vec![
            self.bounds.objects.to_string(),
            self.bounds.bytes.to_string(),
        ];
        let mut mirrored = Vec::with_capacity(made.len());
        for o in &made {
            let (k, j) = (key_of(id, o).unwrap_or_default(), dump(o));
            a.extend([k.clone(), j.clone()]);
            mirrored.push((k, Some(j)));
        }
        Ok(match self.ask(on, "create", a).await? {
            Ok(reply) => {
                self.mirror(on, &reply, mirrored);
                Step::Done(Outcome::Created(made))
            }
            Err(step) => step,
        })
    }

    async fn upsert(
        &self,
        on: On<'_>,
        objects: &[(String, Map<String, Value>)],
    ) -> Result<Step, ObjectsError> {
        let written: Vec<Value> = objects
            .iter()
            .map(|(_, o)| Value::Object(o.clone()))
            .collect();
        let mut a = vec![
            self.bounds.objects.to_string(),
            self.bounds.bytes.to_string(),
        ];
        let mut mirrored = Vec::with_capacity(written.len());
        for ((k, _), o) in objects.iter().zip(&written) {
            let j = dump(o);
            a.extend([k.clone(), j.clone()]);
            mirrored.push((k.clone(), Some(j)));
        }
        Ok(match self.ask(on, "upsert", a).await? {
            Ok(reply) => {
                self.mirror(on, &reply, mirrored);
                Step::Done(Outcome::Written(written))
            }
            Err(step) => step,
        })
    }

    async fn remove(&self, on: On<'_>, ids: &[String]) -> Result<Step, ObjectsError> {
        self.removed(on, "remove", ids.to_vec(), ids).await
    }

    /// The script's `op` with `args`, which removes objects of `ids`: what it removed (its
    /// `{"removed", rev, object…}`), their tombstones mirrored.
    async fn removed(
        &self,
        on: On<'_>,
        op: &str,
        args: Vec<String>,
        ids: &[String],
    ) -> Result<Step, ObjectsError> {
        let reply = match self.ask(on, op, args).await? {
            Ok(r) => r,
            Err(step) => return Ok(step),
        };
        let R::Array(parts) = &reply else {
            return Err(unavailable(format!("{op}: not a list")));
        };
        let gone = parts.iter().skip(2).map(json).collect::<Result<_, _>>()?;
        self.mirror(on, &reply, ids.iter().map(|k| (k.clone(), None)).collect());
        Ok(Step::Done(Outcome::Removed(gone)))
    }

    /// A delete by fields other than the id: the objects it removes read, and removed only if
    /// each is still what was read (else read and tried again).
    async fn remove_where(
        &self,
        on: On<'_>,
        id: &IdStyle,
        w: &Window,
    ) -> Result<Step, ObjectsError> {
        let listed = match self
            .list(
                on,
                &Window {
                    ids: w.ids.clone(),
                    ..Window::all()
                },
            )
            .await?
        {
            Step::Done(Outcome::Listed { items, .. }) => items,
            other => return Ok(other),
        };
        let (mut a, mut ids) = (Vec::new(), Vec::new());
        for o in removable(listed, w, id) {
            if let Some(k) = key_of(id, &o) {
                a.extend([k.clone(), dump(&o)]);
                ids.push(k);
            }
        }
        self.removed(on, "remove_if", a, &ids).await
    }

    /// A read or a delete of `k`: what it found, as `outcome` makes it.
    async fn found(
        &self,
        on: On<'_>,
        op: &str,
        k: &str,
        outcome: fn(Value) -> Outcome,
    ) -> Result<Step, ObjectsError> {
        let reply = match self.ask(on, op, vec![k.to_owned()]).await? {
            Ok(r) => r,
            Err(step) => return Ok(step),
        };
        let found = match &reply {
            R::Array(p) => p.get(1).filter(|v| !matches!(v, R::Nil)),
            _ => None,
        };
        if op == "delete" && found.is_some() {
            // `{"found", object, rev}`: the revision where `wrote` reads it.
            if let R::Array(p) = &reply {
                let r = R::Array(vec![R::Nil, p.get(2).cloned().unwrap_or(R::Nil)]);
                self.mirror(on, &r, vec![(k.to_owned(), None)]);
            }
        }
        Ok(Step::Done(match found {
            None => Outcome::Missing(k.to_owned()),
            Some(v) => outcome(json(v)?),
        }))
    }

    async fn list(&self, on: On<'_>, w: &Window) -> Result<Step, ObjectsError> {
        let mut a = vec![w.offset.to_string(), w.limit.min(100_000).to_string()];
        if let Some(ids) = &w.ids {
            if ids.is_empty() {
                let none = Outcome::Listed {
                    items: Vec::new(),
                    total: 0,
                };
                return Ok(Step::Done(none));
            }
            a.extend(ids.iter().cloned());
        }
        let reply = match self.ask(on, "list", a).await? {
            Ok(r) => r,
            Err(step) => return Ok(step),
        };
        let R::Array(parts) = reply else {
            return Err(unavailable("list: not a list"));
        };
        let total = parts
            .get(1)
            .and_then(text)
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let items = parts
            .iter()
            .skip(2)
            .filter(|v| !matches!(v, R::Nil))
            .map(json)
            .collect::<Result<_, _>>()?;
        Ok(Step::Done(Outcome::Listed { items, total }))
    }

    /// Each object read, patched here, and written only if still what was read.
    async fn update(
        &self,
        on: On<'_>,
        patches: &[(String, Map<String, Value>)],
    ) -> Result<Step, ObjectsError> {
        let mut a = vec![self.bounds.bytes.to_string()];
        let mut out = Vec::new();
        let mut mirrored = Vec::with_capacity(patches.len());
        for (k, patch) in patches {
            let reply = match self.ask(on, "read", vec![k.clone()]).await? {
                Ok(r) => r,
                Err(step) => return Ok(step),
            };
            let old = match &reply {
                R::Array(p) => p.get(1).filter(|v| !matches!(v, R::Nil)).and_then(text),
                _ => None,
            };
            let Some(old) = old else {
                return Ok(Step::Done(Outcome::Missing(k.clone())));
            };
            let stored: Value = serde_json::from_str(&old).map_err(unavailable)?;
            let new = patched(&stored, patch);
            let j = dump(&new);
            a.extend([k.clone(), old, j.clone()]);
            mirrored.push((k.clone(), Some(j)));
            out.push(new);
        }
        Ok(match self.ask(on, "update", a).await? {
            Ok(reply) => {
                self.mirror(on, &reply, mirrored);
                Step::Done(Outcome::Updated(out))
            }
            Err(step) => step,
        })
    }
}
