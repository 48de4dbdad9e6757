//! Instances that share a Redis merge their records: a later revision wins, record by record,
//! and what changed here is marked until it is shared.

use std::collections::HashSet;
use std::sync::PoisonError;

use super::index::Index;
use super::records::{DATA_VERSION, DataFile, Shared, Touched};
use super::store::Tenants;
use crate::error::SandboxError;

impl Tenants {
    /// What changed here and is not yet shared (taken: the caller shares it or gives it back
    /// with [`unshared`](Self::unshared)).
    pub(crate) fn take_dirty(&self) -> Vec<Touched> {
        self.dirty
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect()
    }

    /// Marks `touched` as not yet shared again (the write to Redis failed).
    pub(crate) fn unshared(&self, touched: impl IntoIterator<Item = Touched>) {
        self.dirty
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(touched);
    }

    /// Everything, as instances exchange it (for a Redis that came back empty).
    pub(crate) fn everything(&self) -> Vec<Touched> {
        let index = self.read();
        let data = &index.data;
        data.sandboxes
            .iter()
            .map(|s| Touched::Sandbox(s.id.clone()))
            .chain(data.deleted.iter().map(|t| Touched::Sandbox(t.id.clone())))
            .chain(data.admin.iter().map(|_| Touched::Admin))
            .collect()
    }

    /// The current record of `t`.
    pub(crate) fn shared(&self, t: &Touched) -> Option<Shared> {
        let index = self.read();
        let data = &index.data;
        match t {
            Touched::Admin => data.admin.clone().map(Shared::Admin),
            Touched::Sandbox(id) => data
                .sandboxes
                .iter()
                .find(|s| &s.id == id)
                .cloned()
                .map(|s| Shared::Sandbox(Box::new(s)))
                .or_else(|| {
                    data.deleted
                        .iter()
                        .find(|d| &d.id == id)
                        .cloned()
                        .map(Shared::Deleted)
                }),
        }
    }

    /// Merges other instances' records: a later revision wins, record by record; a sandbox is
    /// dropped only for a tombstone at least as late. Returns what this instance holds that the
    /// shared state lacks or has older (to publish). Nothing is adopted unless it is written.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the merged data cannot be written (nothing changed then).
    pub(crate) fn merge(&self, remote: Vec<Shared>) -> Result<Vec<Touched>, SandboxError> {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        let mut data = index.data.clone();
        let mut seen: HashSet<Touched> = HashSet::new();
        let mut later_here = Vec::new();
        let mut changed = false;
        for r in remote {
            self.observe(r.rev());
            let t = r.touched();
            let local = local_rev(&data, &t);
            seen.insert(t.clone());
            if let Some(l) = local
                && l >= r.rev()
            {
                if l > r.rev() {
                    later_here.push(t);
                }
                continue;
            }
            changed = true;
            match r {
                Shared::Admin(a) => data.admin = Some(a),
                Shared::Sandbox(s) => {
                    data.deleted.retain(|d| d.id != s.id);
                    match data.sandboxes.iter_mut().find(|x| x.id == s.id) {
                        Some(x) => *x = *s,
                        None => data.sandboxes.push(*s),
                    }
                }
                Shared::Deleted(d) => {
                    data.sandboxes.retain(|x| x.id != d.id);
                    data.deleted.retain(|x| x.id != d.id);
                    data.deleted.push(d);
                }
            }
        }
        if changed {
            data.version = DATA_VERSION;
            self.persist(&data)?;
            *index = Index::rebuild(data, &index.views);
        }
        drop(index);
        // Ours where theirs is missing or older.
        let mut publish: Vec<Touched> = self
            .everything()
            .into_iter()
            .filter(|t| !seen.contains(t))
            .collect();
        publish.extend(later_here);
        Ok(publish)
    }
}
/// The revision `data` holds for `t`, if any.
fn local_rev(data: &DataFile, t: &Touched) -> Option<u64> {
    match t {
        Touched::Admin => data.admin.as_ref().map(|a| a.rev),
        Touched::Sandbox(id) => data
            .sandboxes
            .iter()
            .find(|s| &s.id == id)
            .map(|s| s.rev)
            .or_else(|| data.deleted.iter().find(|d| &d.id == id).map(|d| d.rev)),
    }
}

/// Reads untrusted tenant state as a start (a data file) or a merge (a shared record) reads it.
#[cfg(fuzzing)]
pub(crate) fn fuzz_read(bytes: &[u8]) {
    if let Ok(data) = serde_json::from_slice::<DataFile>(bytes) {
        let _ = data.check(crate::config::DEFAULT_MAX_DELAY_MS);
        let _ = Index::rebuild(data, &foldhash::HashMap::default());
    }
    if let Ok(record) = serde_json::from_slice::<Shared>(bytes) {
        let t = Tenants::in_memory();
        let _ = t.merge(vec![record]);
    }
}
