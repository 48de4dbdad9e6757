//! Sandboxes, their keys and Bitrix24 local applications, kept in an embedded JSON file under the
//! data directory (written atomically: a temporary file, then a rename).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;

/// The name of the data file inside `--data DIR`.
pub const DATA_FILE: &str = "apistend-data.json";

/// One sandbox: an isolated set of keys and buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Default, Serialize, Deserialize)]
struct DataFile {
    version: u32,
    sandboxes: Vec<SandboxRecord>,
}

/// Who a credential belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Principal {
    /// A sandbox key.
    Key { key: Arc<str> },
    /// A Bitrix24 local application.
    App { app: Arc<str> },
}

#[derive(Default)]
struct Index {
    sandboxes: Vec<SandboxRecord>,
    by_credential: HashMap<String, Principal>,
}

impl Index {
    fn rebuild(sandboxes: Vec<SandboxRecord>) -> Self {
        let mut by_credential = HashMap::new();
        for s in &sandboxes {
            for k in &s.keys {
                by_credential.insert(
                    k.clone(),
                    Principal::Key {
                        key: k.as_str().into(),
                    },
                );
            }
            for a in &s.b24_apps {
                by_credential.insert(
                    a.token.clone(),
                    Principal::App {
                        app: a.id.as_str().into(),
                    },
                );
            }
        }
        Self {
            sandboxes,
            by_credential,
        }
    }
}

/// The sandboxes of this instance, looked up by credential on every request.
#[derive(Clone)]
pub struct Tenants {
    index: Arc<RwLock<Index>>,
    file: Option<PathBuf>,
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
            index: Arc::new(RwLock::new(Index::rebuild(data.sandboxes))),
            file: Some(file),
        })
    }

    /// Sandboxes kept in memory only (tests).
    pub fn in_memory() -> Self {
        Self {
            index: Arc::default(),
            file: None,
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

    /// All sandboxes.
    pub fn list(&self) -> Vec<SandboxRecord> {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .sandboxes
            .clone()
    }

    /// Makes sure a sandbox named `name` holds `key` (and a Bitrix24 local app whose token is
    /// `key-app`), creating what is missing; returns the sandbox.
    ///
    /// # Errors
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn ensure_key(&self, name: &str, key: &str) -> Result<SandboxRecord, SandboxError> {
        check_key(key)?;
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        let mut sandboxes = std::mem::take(&mut index.sandboxes);
        let pos = match sandboxes
            .iter()
            .position(|s| s.keys.iter().any(|k| k == key))
        {
            Some(i) => i,
            None => {
                sandboxes.push(SandboxRecord {
                    id: new_id("sbx"),
                    name: name.to_owned(),
                    keys: vec![key.to_owned()],
                    b24_apps: vec![AppRecord {
                        id: new_id("app"),
                        token: format!("{key}-app"),
                    }],
                    created_at: crate::clock::rfc3339(crate::clock::unix_now()),
                });
                sandboxes.len() - 1
            }
        };
        let record = sandboxes
            .get(pos)
            .cloned()
            .ok_or_else(|| SandboxError::Data("sandbox vanished".into()))?;
        *index = Index::rebuild(sandboxes);
        self.persist(&index)?;
        Ok(record)
    }

    /// Adds `key` to the sandbox `id`.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an unusable or taken key or an unknown sandbox;
    /// [`SandboxError::Data`] when the data file cannot be written.
    pub fn add_key(&self, id: &str, key: &str) -> Result<(), SandboxError> {
        check_key(key)?;
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        if index.by_credential.contains_key(key) {
            return Err(SandboxError::Config(format!("key {key:?} is taken")));
        }
        let mut sandboxes = std::mem::take(&mut index.sandboxes);
        let found = sandboxes
            .iter_mut()
            .find(|s| s.id == id)
            .map(|s| s.keys.push(key.to_owned()))
            .is_some();
        *index = Index::rebuild(sandboxes);
        if !found {
            return Err(SandboxError::Config(format!("no sandbox {id:?}")));
        }
        self.persist(&index)
    }

    fn persist(&self, index: &Index) -> Result<(), SandboxError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let data = DataFile {
            version: 1,
            sandboxes: index.sandboxes.clone(),
        };
        let text =
            serde_json::to_string_pretty(&data).map_err(|e| SandboxError::Data(e.to_string()))?;
        let tmp = file.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, file))
            .map_err(|e| SandboxError::Data(format!("cannot write {}: {e}", file.display())))
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
