//! Sandboxes, their keys, Bitrix24 local applications, per-sandbox limits and defaults, kept in an
//! embedded JSON file under the data directory (written atomically: a temporary file, then a
//! rename). Every change is written before it is answered, so a restart keeps it; a revoked key
//! stops working at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use apistend_limiter::{Algorithm, Quota};
use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::scenario::Scenario;

/// The name of the data file inside `--data DIR`.
pub const DATA_FILE: &str = "apistend-data.json";

/// One sandbox: an isolated set of keys, buckets and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SandboxRecord {
    /// Its id.
    pub id: String,
    /// A human name.
    pub name: String,
    /// Its API keys.
    pub keys: Vec<String>,
    /// Bitrix24 local applications: each has a bucket of its own.
    #[serde(default)]
    pub b24_apps: Vec<AppRecord>,
    /// Limit groups whose quota this sandbox changes.
    #[serde(default)]
    pub limits: Vec<LimitRecord>,
    /// What its requests get when they ask for nothing.
    #[serde(default)]
    pub settings: SettingsRecord,
    /// RFC 3339 creation time.
    pub created_at: String,
}

/// A Bitrix24 local application of a sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AppRecord {
    /// The application id.
    pub id: String,
    /// The access token it sends as `auth=`.
    pub token: String,
}

/// A sandbox's own quota for one limit group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LimitRecord {
    /// Service id.
    pub service: String,
    /// Group id.
    pub group: String,
    /// Bucket capacity.
    pub burst: u32,
    /// One token back every this many microseconds.
    pub interval_us: u64,
    /// `gcra` or `fixed_window`.
    pub algorithm: String,
}

/// A sandbox's defaults for requests that ask for nothing themselves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SettingsRecord {
    /// Latency of every answer, in milliseconds, when a request sends no `X-Mock-Delay` (instead
    /// of the service's own profile).
    #[serde(default)]
    pub latency_ms: Option<u64>,
    /// A scenario drawn at random for requests that send no `X-Mock-Scenario`.
    #[serde(default)]
    pub scenario: Option<ChaosRecord>,
}

/// Reproducible chaos: the n-th request of the sandbox (counted from when this was set, or from
/// start) gets `scenario` when a hash of (`seed`, n) falls below `probability`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChaosRecord {
    /// A scenario name, as `X-Mock-Scenario` takes it.
    pub name: String,
    /// From 0 to 1.
    pub probability: f64,
    /// The same seed gives the same sequence of hits.
    pub seed: u64,
}

impl SettingsRecord {
    /// Checks the settings, saying what is wrong.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown scenario, a probability outside 0..=1, or a
    /// latency above `max_delay_ms`.
    pub fn validate(&self, max_delay_ms: u64) -> Result<(), SandboxError> {
        if let Some(ms) = self.latency_ms
            && ms > max_delay_ms
        {
            return Err(SandboxError::Config(format!(
                "latency_ms: at most {max_delay_ms} (the server's largest delay), got {ms}"
            )));
        }
        if let Some(c) = &self.scenario {
            if Scenario::parse(&c.name).is_none() {
                return Err(SandboxError::Config(format!(
                    "scenario.name: unknown scenario {:?}; valid: {}",
                    c.name,
                    Scenario::valid_list()
                )));
            }
            if !(0.0..=1.0).contains(&c.probability) {
                return Err(SandboxError::Config(format!(
                    "scenario.probability: from 0 to 1, got {}",
                    c.probability
                )));
            }
        }
        Ok(())
    }
}

/// What the pipeline needs of a sandbox on every request, made once per change of the data and
/// carried by each of its credentials: no further lookup (nor lock) per request.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// service → group → this sandbox's own quota.
    limits: HashMap<String, HashMap<String, Quota>>,
    /// The default latency.
    pub(crate) latency_ms: Option<u64>,
    chaos: Option<Chaos>,
}

#[derive(Debug)]
struct Chaos {
    record: ChaosRecord,
    scenario: Scenario,
    /// Draws so far; shared with the view this one replaces when the chaos did not change.
    drawn: Arc<AtomicU64>,
}

impl View {
    fn new(s: &SandboxRecord, previous: Option<&View>) -> Self {
        let mut limits: HashMap<String, HashMap<String, Quota>> = HashMap::new();
        for l in &s.limits {
            let algorithm = l.algorithm.parse::<Algorithm>().unwrap_or_default();
            if let Ok(q) = Quota::new(l.burst, Duration::from_micros(l.interval_us)) {
                limits
                    .entry(l.service.clone())
                    .or_default()
                    .insert(l.group.clone(), q.with_algorithm(algorithm));
            }
        }
        let chaos = s.settings.scenario.as_ref().and_then(|c| {
            // An unrelated change (a new key) keeps the sequence of draws going.
            let drawn = previous
                .and_then(|p| p.chaos.as_ref())
                .filter(|old| old.record == *c)
                .map_or_else(Arc::default, |old| Arc::clone(&old.drawn));
            Some(Chaos {
                record: c.clone(),
                scenario: Scenario::parse(&c.name)?,
                drawn,
            })
        });
        Self {
            limits,
            latency_ms: s.settings.latency_ms,
            chaos,
        }
    }

    /// The sandbox's own quota of `service`'s `group`, if it set one.
    pub(crate) fn quota(&self, service: &str, group: &str) -> Option<Quota> {
        self.limits.get(service)?.get(group).copied()
    }

    /// The scenario the next request gets, if the dice say so.
    pub(crate) fn draw(&self) -> Option<Scenario> {
        let c = self.chaos.as_ref()?;
        let n = c.drawn.fetch_add(1, Ordering::Relaxed);
        hit(c.record.seed, n, c.record.probability).then_some(c.scenario)
    }
}

/// Whether draw `n` of `seed` falls below `p` (splitmix64 of the pair, as a fraction of 2^64).
fn hit(seed: u64, n: u64, p: f64) -> bool {
    let mut z = seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    #[allow(clippy::cast_precision_loss)]
    let x = (z >> 11) as f64 / (1u64 << 53) as f64;
    x < p
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct DataFile {
    version: u32,
    #[serde(default)]
    admin_token: Option<String>,
    sandboxes: Vec<SandboxRecord>,
}

impl DataFile {
    fn sandbox(&mut self, id: &str) -> Result<&mut SandboxRecord, SandboxError> {
        self.sandboxes
            .iter_mut()
            .find(|s| s.id == id)
            .ok_or_else(|| SandboxError::Config(format!("no sandbox {id:?}")))
    }
}

/// Who a credential belongs to, with its sandbox's view.
#[derive(Debug, Clone)]
pub(crate) enum Principal {
    /// A sandbox key.
    Key { key: Arc<str>, view: Arc<View> },
    /// A Bitrix24 local application.
    App { app: Arc<str>, view: Arc<View> },
}

#[derive(Default)]
struct Index {
    data: DataFile,
    by_credential: HashMap<String, Principal>,
    /// sandbox → its view.
    views: HashMap<String, Arc<View>>,
}

impl Index {
    /// Indexes `data`; `previous` views pass on their chaos draw counts.
    fn rebuild(data: DataFile, previous: &HashMap<String, Arc<View>>) -> Self {
        let mut by_credential = HashMap::new();
        let mut views = HashMap::new();
        for s in &data.sandboxes {
            let view = Arc::new(View::new(s, previous.get(&s.id).map(AsRef::as_ref)));
            for k in &s.keys {
                let principal = Principal::Key {
                    key: k.as_str().into(),
                    view: Arc::clone(&view),
                };
                by_credential.insert(k.clone(), principal);
            }
            for a in &s.b24_apps {
                let principal = Principal::App {
                    app: a.id.as_str().into(),
                    view: Arc::clone(&view),
                };
                by_credential.insert(a.token.clone(), principal);
            }
            views.insert(s.id.clone(), view);
        }
        Self {
            data,
            by_credential,
            views,
        }
    }
}

/// The sandboxes of this instance, looked up by credential on every request.
#[derive(Clone)]
pub struct Tenants {
    index: Arc<RwLock<Index>>,
    file: Option<PathBuf>,
    /// Changes made here (not adopted from other instances), for sharing them.
    changes: Arc<AtomicU64>,
}

impl std::fmt::Debug for Tenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl Tenants {
    /// Loads `DIR/apistend-data.json` (an absent file is an empty set), creating `DIR` if needed.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the directory cannot be created or the file is not valid.
    pub fn open(dir: &Path) -> Result<Self, SandboxError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| SandboxError::Data(format!("cannot create {}: {e}", dir.display())))?;
        let file = dir.join(DATA_FILE);
        let data: DataFile = match std::fs::read_to_string(&file) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                SandboxError::Data(format!(
                    "{} is not a valid APIStend data file: {e}",
                    file.display()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => DataFile::default(),
            Err(e) => {
                return Err(SandboxError::Data(format!(
                    "cannot read {}: {e}",
                    file.display()
                )));
            }
        };
        Ok(Self {
            index: Arc::new(RwLock::new(Index::rebuild(data, &HashMap::new()))),
            file: Some(file),
            changes: Arc::default(),
        })
    }

    /// Sandboxes kept in memory only (tests).
    pub fn in_memory() -> Self {
        Self {
            index: Arc::default(),
            file: None,
            changes: Arc::default(),
        }
    }

    pub(crate) fn lookup(&self, credential: &str) -> Option<Principal> {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .by_credential
            .get(credential)
            .cloned()
    }

    /// How many changes were made here since start.
    pub(crate) fn changes(&self) -> u64 {
        self.changes.load(Ordering::Relaxed)
    }

    /// The view of sandbox `id` (for the management API; requests get it with their principal).
    pub(crate) fn view(&self, id: &str) -> Option<Arc<View>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.views.get(id).cloned()
    }

    /// All sandboxes.
    pub fn list(&self) -> Vec<SandboxRecord> {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .data
            .sandboxes
            .clone()
    }

    /// One sandbox.
    pub fn get(&self, id: &str) -> Option<SandboxRecord> {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .data
            .sandboxes
            .iter()
            .find(|s| s.id == id)
            .cloned()
    }

    /// The admin token, generated (and kept) on first use when none is configured.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn admin_token(&self, configured: Option<&str>) -> Result<String, SandboxError> {
        self.change(|data| {
            let token = match configured {
                Some(t) => t.to_owned(),
                None => data.admin_token.clone().unwrap_or_else(|| {
                    format!("adm_{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
                }),
            };
            data.admin_token = Some(token.clone());
            Ok(token)
        })
    }

    /// Makes sure a sandbox named `name` holds `key` (and a Bitrix24 local app whose token is
    /// `key-app`), creating what is missing; returns the sandbox.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unusable key; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn ensure_key(&self, name: &str, key: &str) -> Result<SandboxRecord, SandboxError> {
        check_key(key)?;
        self.change(|data| {
            if let Some(s) = data
                .sandboxes
                .iter()
                .find(|s| s.keys.iter().any(|k| k == key))
            {
                return Ok(s.clone());
            }
            let record = new_record(name, key);
            data.sandboxes.push(record.clone());
            Ok(record)
        })
    }

    /// A new sandbox with a first key.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn create(&self, name: &str) -> Result<SandboxRecord, SandboxError> {
        let record = new_record(name, &new_key());
        self.change(|data| {
            data.sandboxes.push(record.clone());
            Ok(record)
        })
    }

    /// Deletes a sandbox; `false` when there was none.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn delete(&self, id: &str) -> Result<bool, SandboxError> {
        self.change(|data| {
            let before = data.sandboxes.len();
            data.sandboxes.retain(|s| s.id != id);
            Ok(data.sandboxes.len() != before)
        })
    }

    /// Adds `key` to the sandbox `id`.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unusable or taken key or an unknown sandbox;
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn add_key(&self, id: &str, key: &str) -> Result<(), SandboxError> {
        check_key(key)?;
        let taken = self.lookup(key).is_some();
        if taken {
            return Err(SandboxError::Config(format!("key {key:?} is taken")));
        }
        self.change(|data| {
            let s = data.sandbox(id)?;
            s.keys.push(key.to_owned());
            Ok(())
        })
    }

    /// Revokes `key` of the sandbox `id`; `false` when the sandbox has no such key.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn revoke_key(&self, id: &str, key: &str) -> Result<bool, SandboxError> {
        self.change(|data| {
            let Ok(s) = data.sandbox(id) else {
                return Ok(false);
            };
            let before = s.keys.len();
            s.keys.retain(|k| k != key);
            Ok(s.keys.len() != before)
        })
    }

    /// Sets the sandbox's own quota of a group.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown sandbox; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn set_limit(
        &self,
        id: &str,
        service: &str,
        group: &str,
        quota: Quota,
    ) -> Result<(), SandboxError> {
        self.change(|data| {
            let s = data.sandbox(id)?;
            s.limits
                .retain(|l| !(l.service == service && l.group == group));
            s.limits.push(LimitRecord {
                service: service.to_owned(),
                group: group.to_owned(),
                burst: quota.burst(),
                interval_us: quota.interval_micros(),
                algorithm: quota.algorithm().as_str().to_owned(),
            });
            Ok(())
        })
    }

    /// Sets the sandbox's defaults (already validated); setting a scenario again restarts its
    /// sequence of draws.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown sandbox; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn set_settings(&self, id: &str, settings: SettingsRecord) -> Result<(), SandboxError> {
        self.index
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .views
            .remove(id);
        self.change(|data| {
            let s = data.sandbox(id)?;
            s.settings = settings;
            Ok(())
        })
    }

    /// A new Bitrix24 local application of the sandbox `id`, with a bucket of its own.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unknown sandbox; [`SandboxError::Data`] when the data file
    /// cannot be written.
    pub fn add_app(&self, id: &str) -> Result<AppRecord, SandboxError> {
        let app = AppRecord {
            id: new_id("app"),
            token: format!("at_{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
        };
        self.change(|data| {
            let s = data.sandbox(id)?;
            s.b24_apps.push(app.clone());
            Ok(app)
        })
    }

    /// Removes the application `app` of the sandbox `id` (its token stops working at once);
    /// `false` when there is no such application.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn remove_app(&self, id: &str, app: &str) -> Result<bool, SandboxError> {
        self.change(|data| {
            let Ok(s) = data.sandbox(id) else {
                return Ok(false);
            };
            let before = s.b24_apps.len();
            s.b24_apps.retain(|a| a.id != app);
            Ok(s.b24_apps.len() != before)
        })
    }

    /// The whole state as JSON (for sharing through Redis).
    pub(crate) fn to_json(&self) -> Result<String, SandboxError> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        serde_json::to_string(&index.data).map_err(|e| SandboxError::Data(e.to_string()))
    }

    /// Replaces the whole state by `text` (another instance's, through Redis), and keeps it.
    pub(crate) fn replace_from_json(&self, text: &str) -> Result<(), SandboxError> {
        let data: DataFile = serde_json::from_str(text)
            .map_err(|e| SandboxError::Data(format!("shared state: {e}")))?;
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        self.persist(&data)?;
        *index = Index::rebuild(data, &index.views);
        Ok(())
    }

    /// Applies `f` to the data, writes the file, then rebuilds the index.
    fn change<T>(
        &self,
        f: impl FnOnce(&mut DataFile) -> Result<T, SandboxError>,
    ) -> Result<T, SandboxError> {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        let mut data = std::mem::take(&mut index.data);
        let result = f(&mut data);
        data.version = 1;
        let written = if result.is_ok() {
            self.persist(&data)
        } else {
            Ok(())
        };
        *index = Index::rebuild(data, &index.views);
        written?;
        if result.is_ok() {
            self.changes.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    fn persist(&self, data: &DataFile) -> Result<(), SandboxError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let text =
            serde_json::to_string_pretty(data).map_err(|e| SandboxError::Data(e.to_string()))?;
        let tmp = file.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, file))
            .map_err(|e| SandboxError::Data(format!("cannot write {}: {e}", file.display())))
    }
}

fn new_record(name: &str, key: &str) -> SandboxRecord {
    SandboxRecord {
        id: new_id("sbx"),
        name: name.to_owned(),
        keys: vec![key.to_owned()],
        b24_apps: vec![AppRecord {
            id: new_id("app"),
            token: format!("{key}-app"),
        }],
        limits: Vec::new(),
        settings: SettingsRecord::default(),
        created_at: crate::clock::rfc3339(crate::clock::unix_now()),
    }
}

fn check_key(key: &str) -> Result<(), SandboxError> {
    if key.is_empty() || key.len() > 256 || key.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(SandboxError::Config(format!(
            "{key:?} is not usable as a key: 1 to 256 printable characters, no spaces"
        )));
    }
    Ok(())
}

/// A random id with a prefix: `sbx_4f3c…`.
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}_{:016x}", fastrand::u64(..))
}

/// A random API key.
pub fn new_key() -> String {
    format!("ak_{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_seed_and_the_probability() {
        let pattern = |seed| (0..1000).map(|n| hit(seed, n, 0.25)).collect::<Vec<_>>();
        assert_eq!(pattern(7), pattern(7));
        assert_ne!(pattern(7), pattern(8));
        let hits = pattern(7).iter().filter(|h| **h).count();
        assert!((200..300).contains(&hits), "{hits}");
        assert!((0..100).all(|n| !hit(3, n, 0.0) && hit(3, n, 1.0)));
    }

    #[test]
    fn an_unrelated_change_keeps_the_sequence_a_new_setting_restarts_it() {
        let t = Tenants::in_memory();
        let s = t.create("chaos").unwrap();
        let settings = SettingsRecord {
            latency_ms: None,
            scenario: Some(ChaosRecord {
                name: "server_error".into(),
                probability: 0.5,
                seed: 1,
            }),
        };
        t.set_settings(&s.id, settings.clone()).unwrap();
        let first: Vec<_> = (0..20).map(|_| t.view(&s.id).unwrap().draw()).collect();
        t.add_key(&s.id, "another-key").unwrap();
        let next = t.view(&s.id).unwrap().draw();
        t.set_settings(&s.id, settings).unwrap();
        let again: Vec<_> = (0..21).map(|_| t.view(&s.id).unwrap().draw()).collect();
        assert_eq!(again[..20], first[..]);
        assert_eq!(again[20], next, "the 21st draw continued after the new key");
    }
}
