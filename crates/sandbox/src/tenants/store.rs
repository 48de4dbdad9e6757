//! [`Tenants`]: the sandboxes of this instance, and every change to them (applied only once
//! durably written).

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use foldhash::HashMap;

use super::file::DataDir;
use super::index::{Index, Principal};
use super::records::{
    AdminRecord, AppRecord, DATA_VERSION, DataFile, SandboxRecord, SettingsRecord, Tombstone,
    Touched, check_key,
};
use super::view::View;
use crate::error::SandboxError;
use crate::secret::{self, TokenHash};

/// [`Tenants`] without keeping it alive.
pub(crate) struct WeakTenants {
    index: std::sync::Weak<RwLock<Index>>,
    dir: Option<std::sync::Weak<DataDir>>,
    dirty: Arc<Mutex<HashSet<Touched>>>,
    clock: Arc<AtomicU64>,
}

/// The sandboxes of this instance, looked up by credential on every request.
#[derive(Clone)]
pub struct Tenants {
    pub(super) index: Arc<RwLock<Index>>,
    dir: Option<Arc<DataDir>>,
    /// What changed here and is not yet known to be shared.
    pub(super) dirty: Arc<Mutex<HashSet<Touched>>>,
    /// The highest revision seen (a Lamport clock over microseconds since the epoch).
    clock: Arc<AtomicU64>,
}

impl std::fmt::Debug for Tenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Tenants {
    /// Takes the data directory `dir` (creating it if needed) and loads its data file (an absent
    /// file is an empty set). Settings are checked against the default largest delay (60 s).
    ///
    /// # Errors
    /// As [`open_with`](Self::open_with).
    pub fn open(dir: &Path) -> Result<Self, SandboxError> {
        Self::open_with(dir, crate::config::DEFAULT_MAX_DELAY_MS)
    }

    /// Takes the data directory `dir` and loads its data file, checking latencies against
    /// `max_delay_ms`. The directory stays locked while the returned value (or a clone) lives.
    ///
    /// # Errors
    /// [`SandboxError::DataDirInUse`] when another process holds the directory;
    /// [`SandboxError::DataFile`] for a file written by a newer version, with unknown fields or
    /// invalid values (the error names the field; the file is left as it is);
    /// [`SandboxError::Data`] when the directory cannot be created.
    pub fn open_with(dir: &Path, max_delay_ms: u64) -> Result<Self, SandboxError> {
        let (dir, data) = DataDir::open(dir, max_delay_ms)?;
        let clock = data
            .sandboxes
            .iter()
            .map(|s| s.rev)
            .chain(data.deleted.iter().map(|t| t.rev))
            .chain(data.admin.iter().map(|a| a.rev))
            .max()
            .unwrap_or(0);
        Ok(Self {
            index: Arc::new(RwLock::new(Index::rebuild(data, &HashMap::default()))),
            dir: Some(Arc::new(dir)),
            dirty: Arc::default(),
            clock: Arc::new(AtomicU64::new(clock)),
        })
    }

    /// Sandboxes kept in memory only (tests).
    pub fn in_memory() -> Self {
        Self {
            index: Arc::default(),
            dir: None,
            dirty: Arc::default(),
            clock: Arc::default(),
        }
    }

    /// A handle that does not keep the store (nor its directory's lock) alive: the sync task
    /// stops once the sandbox that owns this store is gone.
    pub(crate) fn alive(&self) -> WeakTenants {
        WeakTenants {
            index: Arc::downgrade(&self.index),
            dir: self.dir.as_ref().map(Arc::downgrade),
            dirty: Arc::clone(&self.dirty),
            clock: Arc::clone(&self.clock),
        }
    }

    /// The store again, while it is in use elsewhere.
    pub(crate) fn upgrade(w: &WeakTenants) -> Option<Self> {
        let dir = match &w.dir {
            Some(d) => Some(d.upgrade()?),
            None => None,
        };
        Some(Self {
            index: w.index.upgrade()?,
            dir,
            dirty: Arc::clone(&w.dirty),
            clock: Arc::clone(&w.clock),
        })
    }

    pub(crate) fn lookup(&self, credential: &str) -> Option<Principal> {
        self.read().by_credential.get(credential).cloned()
    }

    pub(super) fn read(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The view of sandbox `id` (for the management API; requests get it with their principal).
    pub(crate) fn view(&self, id: &str) -> Option<Arc<View>> {
        self.read().views.get(id).cloned()
    }

    /// All sandboxes.
    pub fn list(&self) -> Vec<SandboxRecord> {
        self.read().data.sandboxes.clone()
    }

    /// One sandbox.
    pub fn get(&self, id: &str) -> Option<SandboxRecord> {
        self.read()
            .data
            .sandboxes
            .iter()
            .find(|s| s.id == id)
            .cloned()
    }

    /// Whether `presented` is the admin token.
    pub(crate) fn admin_matches(&self, presented: &str) -> bool {
        self.read()
            .data
            .admin
            .as_ref()
            .and_then(|a| TokenHash::parse(&a.sha256))
            .is_some_and(|h| h.matches(presented))
    }

    /// Sets up the admin token: the configured one (checked: at least 16 printable characters),
    /// else the one whose hash an earlier start kept, else a new random one, which is returned
    /// (it is shown once: only its SHA-256 is kept, in the data file and in Redis).
    ///
    /// # Errors
    /// [`SandboxError::AdminToken`] for an unusable configured token; [`SandboxError::Data`]
    /// when the data file cannot be written.
    pub fn admin_token(&self, configured: Option<&str>) -> Result<Option<String>, SandboxError> {
        let configured = configured.map(TokenHash::of_configured).transpose()?;
        let (stored, legacy) = {
            let index = self.read();
            (index.data.admin.clone(), index.data.admin_token.clone())
        };
        let (hash, generated) = match (configured, stored, legacy) {
            (Some(h), Some(a), None) if a.sha256 == h.to_hex() => return Ok(None),
            (Some(h), _, _) => (h, None),
            (None, Some(_), None) => return Ok(None),
            // A version-1 file: its plain-text token keeps working, now kept as a hash.
            (None, _, Some(t)) => (TokenHash::of(&t), None),
            (None, None, None) => {
                let t = secret::token("adm")?;
                (TokenHash::of(&t), Some(t))
            }
        };
        let rev = self.next_rev();
        self.change(Touched::Admin, |data| {
            data.admin = Some(AdminRecord {
                sha256: hash.to_hex(),
                rev,
            });
            data.admin_token = None;
            Ok(Some(()))
        })?;
        Ok(generated)
    }

    /// Makes sure a sandbox named `name` holds `key` (and a Bitrix24 local app whose token is
    /// `key-app`), creating what is missing; returns the sandbox.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unusable key; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn ensure_key(&self, name: &str, key: &str) -> Result<SandboxRecord, SandboxError> {
        check_key(key).map_err(SandboxError::Config)?;
        if let Some(s) = self
            .read()
            .data
            .sandboxes
            .iter()
            .find(|s| s.keys.iter().any(|k| k == key))
        {
            return Ok(s.clone());
        }
        let record = new_record(name, key)?;
        self.insert(record)
    }

    /// A new sandbox with a first key.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn create(&self, name: &str) -> Result<SandboxRecord, SandboxError> {
        let record = new_record(name, &new_key()?)?;
        self.insert(record)
    }

    fn insert(&self, mut record: SandboxRecord) -> Result<SandboxRecord, SandboxError> {
        record.rev = self.next_rev();
        self.change(Touched::Sandbox(record.id.clone()), |data| {
            data.sandboxes.push(record.clone());
            Ok(Some(()))
        })?;
        Ok(record)
    }

    /// Deletes a sandbox; `false` when there was none. A tombstone tells other instances.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn delete(&self, id: &str) -> Result<bool, SandboxError> {
        let rev = self.next_rev();
        self.change(Touched::Sandbox(id.to_owned()), |data| {
            let before = data.sandboxes.len();
            data.sandboxes.retain(|s| s.id != id);
            if data.sandboxes.len() == before {
                return Ok(None);
            }
            data.deleted.retain(|t| t.id != id);
            data.deleted.push(Tombstone {
                id: id.to_owned(),
                rev,
            });
            Ok(Some(()))
        })
        .map(|done| done.is_some())
    }

    /// Adds `key` to the sandbox `id`.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unusable key or an unknown sandbox,
    /// [`SandboxError::KeyTaken`] for a key some sandbox has;
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn add_key(&self, id: &str, key: &str) -> Result<(), SandboxError> {
        check_key(key).map_err(SandboxError::Config)?;
        self.edit(id, |s, taken| {
            if taken(key) {
                return Err(SandboxError::KeyTaken(key.to_owned()));
            }
            s.keys.push(key.to_owned());
            Ok(Some(()))
        })
        .map(drop)
    }

    /// Revokes `key` of the sandbox `id`; `false` when the sandbox has no such key.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn revoke_key(&self, id: &str, key: &str) -> Result<bool, SandboxError> {
        self.edit(id, |s, _| {
            let before = s.keys.len();
            s.keys.retain(|k| k != key);
            Ok((s.keys.len() != before).then_some(()))
        })
        .map(|done| done.is_some())
    }

    /// Sets the sandbox's defaults (already validated); setting a scenario again restarts its
    /// sequence of draws.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown sandbox; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn set_settings(&self, id: &str, settings: SettingsRecord) -> Result<(), SandboxError> {
        self.edit(id, |s, _| {
            s.settings = settings;
            Ok(Some(()))
        })?;
        // A new view, not one carried on from the previous: its draws start again.
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        let mut views = std::mem::take(&mut index.views);
        views.remove(id);
        let data = std::mem::take(&mut index.data);
        *index = Index::rebuild(data, &views);
        Ok(())
    }

    /// Marks every job the sandbox `id` started until `now_ms` (Unix milliseconds) done.
    ///
    /// # Errors
    /// [`SandboxError::NoSandbox`] for an unknown sandbox; [`SandboxError::Data`] when the data
    /// file cannot be written.
    pub fn finish_jobs(&self, id: &str, now_ms: i64) -> Result<(), SandboxError> {
        self.edit(id, |s, _| {
            s.jobs_finished_ms = Some(now_ms);
            Ok(Some(()))
        })
        .map(drop)
    }

    /// A new Bitrix24 local application of the sandbox `id`, with a bucket of its own.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown sandbox; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn add_app(&self, id: &str) -> Result<AppRecord, SandboxError> {
        let app = AppRecord {
            id: secret::token("app")?,
            token: secret::token("at")?,
        };
        self.edit(id, |s, _| {
            s.b24_apps.push(app.clone());
            Ok(Some(()))
        })?;
        Ok(app)
    }

    /// Removes the application `app` of the sandbox `id` (its token stops working at once);
    /// `false` when there is no such application.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn remove_app(&self, id: &str, app: &str) -> Result<bool, SandboxError> {
        self.edit(id, |s, _| {
            let before = s.b24_apps.len();
            s.b24_apps.retain(|a| a.id != app);
            Ok((s.b24_apps.len() != before).then_some(()))
        })
        .map(|done| done.is_some())
    }

    /// A revision later than every one seen.
    fn next_rev(&self) -> u64 {
        let now = apistend_answers::clock::unix_now_us();
        let mut current = self.clock.load(Ordering::Relaxed);
        loop {
            let next = now.max(current + 1);
            match self.clock.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return next,
                Err(actual) => current = actual,
            }
        }
    }

    pub(super) fn observe(&self, rev: u64) {
        self.clock.fetch_max(rev, Ordering::Relaxed);
    }

    /// Changes the sandbox `id` (`taken` says whether a credential is in use anywhere) and
    /// raises its revision; `f` answers `None` when there was nothing to change.
    pub(super) fn edit(
        &self,
        id: &str,
        f: impl FnOnce(&mut SandboxRecord, &dyn Fn(&str) -> bool) -> Result<Option<()>, SandboxError>,
    ) -> Result<Option<()>, SandboxError> {
        let rev = self.next_rev();
        self.change(Touched::Sandbox(id.to_owned()), |data| {
            let used: HashSet<String> = data
                .sandboxes
                .iter()
                .flat_map(|s| s.keys.iter().chain(s.b24_apps.iter().map(|a| &a.token)))
                .cloned()
                .collect();
            let taken = |k: &str| used.contains(k);
            let Some(s) = data.sandboxes.iter_mut().find(|s| s.id == id) else {
                return Err(SandboxError::NoSandbox { id: id.to_owned() });
            };
            let out = f(s, &taken)?;
            if out.is_some() {
                s.rev = rev;
            }
            Ok(out)
        })
    }

    /// Applies `f` to a copy of the data, writes it durably, and only then makes it the
    /// state: a failed write leaves everything as it was. `f` answers `None` when there was
    /// nothing to change (then nothing is written).
    fn change(
        &self,
        touched: Touched,
        f: impl FnOnce(&mut DataFile) -> Result<Option<()>, SandboxError>,
    ) -> Result<Option<()>, SandboxError> {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        let mut data = index.data.clone();
        let out = f(&mut data)?;
        if out.is_none() {
            return Ok(None);
        }
        data.version = DATA_VERSION;
        self.persist(&data)?;
        *index = Index::rebuild(data, &index.views);
        drop(index);
        self.dirty
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(touched);
        Ok(out)
    }

    pub(super) fn persist(&self, data: &DataFile) -> Result<(), SandboxError> {
        match &self.dir {
            Some(dir) => dir.write(data),
            None => Ok(()),
        }
    }
}

fn new_record(name: &str, key: &str) -> Result<SandboxRecord, SandboxError> {
    Ok(SandboxRecord {
        id: secret::token("sbx")?,
        name: name.to_owned(),
        keys: vec![key.to_owned()],
        b24_apps: vec![AppRecord {
            id: secret::token("app")?,
            token: format!("{key}-app"),
        }],
        limits: Vec::new(),
        settings: SettingsRecord::default(),
        created_at: apistend_answers::clock::rfc3339(apistend_answers::clock::unix_now()),
        jobs_finished_ms: None,
        rev: 0,
    })
}

/// A random API key (128 bits from the operating system's generator).
///
/// # Errors
/// [`SandboxError::Random`] when the operating system gives no random bytes.
pub fn new_key() -> Result<String, SandboxError> {
    secret::token("ak")
}
