//! The objects each sandbox keeps for the collections its services declare (their
//! definitions' `resources`): in memory (lost on restart, like the buckets), or in Redis with
//! `--redis`, where every instance sees the same writes. Bounded per sandbox in objects and
//! bytes. The request path reaches it through `pipeline/objects.rs`; the management API
//! exports, seeds and clears it.

mod bounds;
mod coll;
mod collection;
mod error;
mod memory;
mod mirror;
mod redis;
mod restore;
pub(crate) mod seed;
mod whole;

pub(crate) use bounds::Bounds;
pub(crate) use coll::{Coll, Export};
pub(crate) use error::ObjectsError;

use std::collections::BTreeMap;

use apistend_answers::objects::{Outcome, Plan, Window};
use apistend_catalog::IdStyle;
use serde_json::Value;

/// Where the objects live.
pub(crate) enum Objects {
    /// This process's memory.
    Memory(memory::MemoryObjects),
    /// A Redis every instance shares.
    Redis(redis::RedisObjects),
}

impl Objects {
    /// Objects in memory, within `bounds`.
    pub(crate) fn memory(bounds: Bounds) -> Self {
        Self::Memory(memory::MemoryObjects::new(bounds))
    }

    /// Objects in the Redis `conn` reaches, within `bounds`.
    pub(crate) fn redis(conn: crate::sync::Conn, bounds: Bounds) -> Self {
        Self::Redis(redis::RedisObjects::new(conn, bounds))
    }

    /// With Redis, gives it back what this instance wrote each time it comes back empty,
    /// while `tenants` is in use.
    pub(crate) fn follow(&self, tenants: crate::tenants::WeakTenants) {
        if let Self::Redis(r) = self {
            r.follow(tenants);
        }
    }

    /// Applies `plan` to `coll` (whose ids `id` makes); a collection a sandbox has never
    /// touched starts with `seed`'s objects.
    ///
    /// # Errors
    /// Over the sandbox's bounds, or when Redis does not answer.
    pub(crate) async fn apply(
        &self,
        coll: Coll<'_>,
        id: &IdStyle,
        plan: &Plan,
        seed: &(dyn Fn() -> Vec<Value> + Sync),
    ) -> Result<Outcome, ObjectsError> {
        // A filter by a field other than the id reads every object its id filter lets
        // through, and narrows them here: the stores key objects by id only.
        if let Plan::List(w) = plan
            && w.narrowed()
        {
            let all = Plan::List(Window {
                ids: w.ids.clone(),
                ..Window::all()
            });
            return Ok(match self.store(coll, id, &all, seed).await? {
                Outcome::Listed { items, .. } => apistend_answers::objects::narrow(items, w, id),
                other => other,
            });
        }
        self.store(coll, id, plan, seed).await
    }

    async fn store(
        &self,
        coll: Coll<'_>,
        id: &IdStyle,
        plan: &Plan,
        seed: &(dyn Fn() -> Vec<Value> + Sync),
    ) -> Result<Outcome, ObjectsError> {
        match self {
            Self::Memory(m) => m.apply(coll, id, plan, seed),
            Self::Redis(r) => r.apply(coll, id, plan, seed).await,
        }
    }

    /// Every object of `sandbox`.
    ///
    /// # Errors
    /// When Redis does not answer.
    pub(crate) async fn export(&self, sandbox: &str) -> Result<Export, ObjectsError> {
        match self {
            Self::Memory(m) => Ok(m.export(sandbox)),
            Self::Redis(r) => r.export(sandbox).await,
        }
    }

    /// How many objects each collection of `sandbox` holds, by `service/collection` (those it
    /// has touched).
    ///
    /// # Errors
    /// When Redis does not answer.
    pub(crate) async fn counts(
        &self,
        sandbox: &str,
    ) -> Result<BTreeMap<String, usize>, ObjectsError> {
        Ok(self
            .export(sandbox)
            .await?
            .into_iter()
            .flat_map(|(service, colls)| {
                colls
                    .into_iter()
                    .map(move |(name, items)| (format!("{service}/{name}"), items.len()))
            })
            .collect())
    }

    /// Drops every object of `sandbox`, a deleted sandbox, and what its collections gave.
    ///
    /// # Errors
    /// When Redis does not answer.
    pub(crate) async fn forget(&self, sandbox: &str) -> Result<(), ObjectsError> {
        match self {
            Self::Memory(m) => {
                m.forget(sandbox);
                Ok(())
            }
            Self::Redis(r) => r.forget(sandbox).await,
        }
    }

    /// Replaces every object of `sandbox` with `data`, at once: a collection `data` names holds
    /// exactly its objects (an empty list: none), every other one starts again with its
    /// examples when next touched; no collection gives an id it gave before.
    ///
    /// # Errors
    /// Over the bounds (nothing changed), or when Redis does not answer.
    pub(crate) async fn replace(
        &self,
        sandbox: &str,
        data: &Export,
        ids: &(dyn Fn(&str, &str) -> Option<IdStyle> + Sync),
    ) -> Result<(), ObjectsError> {
        match self {
            Self::Memory(m) => m.replace(sandbox, data, ids),
            Self::Redis(r) => r.replace(sandbox, data, ids).await,
        }
    }
}
