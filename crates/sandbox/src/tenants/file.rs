//! The data directory: held by one process at a time (an advisory lock on
//! `apistend-data.lock`, which names its holder's PID), and a data file replaced only by a
//! complete, synced copy (temporary file mode 0600, fsync, rename, fsync of the directory).

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::records::DataFile;
use crate::error::SandboxError;

/// The name of the data file inside `--data DIR`.
pub const DATA_FILE: &str = "apistend-data.json";
const LOCK_FILE: &str = "apistend-data.lock";
/// How long to wait for a lock held by this same process (a sandbox restarted in one process is
/// still releasing it); another process's lock is reported after this too.
const LOCK_WAIT: Duration = Duration::from_secs(3);

/// The locked data directory.
#[derive(Debug)]
pub(crate) struct DataDir {
    dir: PathBuf,
    file: PathBuf,
    /// Held (locked) as long as this lives.
    _lock: File,
}

impl DataDir {
    /// Creates `dir` if needed, takes its lock, and reads the data file (an absent file is an
    /// empty set).
    ///
    /// # Errors
    /// [`SandboxError::DataDirInUse`] when another process holds it;
    /// [`SandboxError::DataFile`] for a file that is not valid (left as it is);
    /// [`SandboxError::Data`] for the directory's own errors.
    pub(crate) fn open(dir: &Path, max_delay_ms: u64) -> Result<(Self, DataFile), SandboxError> {
        let io = |what: &str, e: std::io::Error| {
            SandboxError::Data(format!("{what} {}: {e}", dir.display()))
        };
        std::fs::create_dir_all(dir).map_err(|e| io("cannot create", e))?;
        let mut lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE))
            .map_err(|e| io("cannot open the lock file in", e))?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut pid = String::new();
                    let _ = lock.read_to_string(&mut pid);
                    return Err(SandboxError::DataDirInUse {
                        dir: dir.to_path_buf(),
                        pid: pid.trim().to_owned(),
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io("cannot lock", e)),
            }
        }
        lock.set_len(0)
            .and_then(|()| lock.rewind())
            .and_then(|()| write!(lock, "{}", std::process::id()))
            .and_then(|()| lock.flush())
            .map_err(|e| io("cannot write the lock file in", e))?;
        let file = dir.join(DATA_FILE);
        let data = read(&file, max_delay_ms)?;
        Ok((
            Self {
                dir: dir.to_path_buf(),
                file,
                _lock: lock,
            },
            data,
        ))
    }

    /// Replaces the data file with `data`, durably: when this returns `Ok`, a crash or power
    /// loss keeps `data`; when it fails, the old file is as it was.
    ///
    /// # Errors
    /// [`SandboxError::Data`] naming what failed.
    pub(crate) fn write(&self, data: &DataFile) -> Result<(), SandboxError> {
        let fail = |e: std::io::Error| {
            SandboxError::Data(format!("cannot write {}: {e}", self.file.display()))
        };
        let text =
            serde_json::to_vec_pretty(data).map_err(|e| SandboxError::Data(e.to_string()))?;
        // tempfile creates the file with mode 0600, so the rename leaves the data file 0600.
        let mut tmp = tempfile::Builder::new()
            .prefix(".apistend-data.")
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(fail)?;
        tmp.write_all(&text).map_err(fail)?;
        tmp.as_file().sync_all().map_err(fail)?;
        tmp.persist(&self.file).map_err(|e| fail(e.error))?;
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(fail)
    }
}

fn read(file: &Path, max_delay_ms: u64) -> Result<DataFile, SandboxError> {
    let invalid = |reason: String| SandboxError::DataFile {
        path: file.to_path_buf(),
        reason,
    };
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DataFile::default()),
        Err(e) => return Err(invalid(format!("cannot be read: {e}"))),
    };
    if let Some(newer) = DataFile::newer(&text) {
        return Err(invalid(newer));
    }
    let data: DataFile = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("not a valid APIStend data file: {e}")))?;
    data.check(max_delay_ms).map_err(invalid)?;
    Ok(data)
}
