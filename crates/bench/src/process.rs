//! Servers under test as their own processes, pinned to a core, stopped when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The workspace root (two levels above this crate).
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Builds the release binaries of `packages` (`cargo build --release --locked`) and returns the
/// directory that holds them.
///
/// # Errors
/// When cargo cannot be run or the build fails.
pub fn build_release(packages: &[&str]) -> anyhow::Result<PathBuf> {
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["build", "--release", "--locked"]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    let status = cmd.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release failed ({status})");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target.join("release"))
}

/// Whether `taskset` works here and the machine has the two cores asked for.
#[must_use]
pub fn can_pin(cores: &[usize]) -> bool {
    let have = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    cores.iter().all(|c| *c < have)
        && Command::new("taskset")
            .args(["-c", "0", "true"])
            .status()
            .is_ok_and(|s| s.success())
}

/// A command run through `taskset -c CORE` when `core` is given.
#[must_use]
pub fn pinned(program: &Path, core: Option<usize>) -> Command {
    match core {
        Some(c) => {
            let mut cmd = Command::new("taskset");
            cmd.arg("-c").arg(c.to_string()).arg(program);
            cmd
        }
        None => Command::new(program),
    }
}

/// `program` run under `wrapper` (`valgrind --tool=callgrind …`, or nothing), pinned to `core`
/// when given: `taskset -c CORE WRAPPER… PROGRAM`.
#[must_use]
pub fn wrapped(wrapper: &[String], program: &Path, core: Option<usize>) -> Command {
    let Some((first, rest)) = wrapper.split_first() else {
        return pinned(program, core);
    };
    let mut cmd = pinned(Path::new(first), core);
    cmd.args(rest).arg(program);
    cmd
}

/// A child process, killed (and reaped) when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    /// `http://ADDR` it announced.
    pub base: String,
}

impl Server {
    /// Starts `cmd` with its stdout piped and waits (up to 30 s) for a line containing
    /// `http://ADDR`, the address it listens on; the rest of its output is discarded.
    ///
    /// # Errors
    /// When it cannot be started, or exits or stays silent before announcing an address.
    pub fn start(cmd: Command, what: &str) -> anyhow::Result<Self> {
        Self::start_within(cmd, what, Duration::from_secs(30))
    }

    /// [`Server::start`], waiting up to `limit` (a server under valgrind starts some fifty
    /// times slower).
    ///
    /// # Errors
    /// When it cannot be started, or exits or stays silent before announcing an address.
    pub fn start_within(mut cmd: Command, what: &str, limit: Duration) -> anyhow::Result<Self> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut announced = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !announced && let Some(i) = line.find("http://") {
                    let base: String = line
                        .get(i..)
                        .unwrap_or_default()
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned();
                    announced = true;
                    let _ = tx.send(base);
                }
            }
        });
        let deadline = Instant::now() + limit;
        let mut server = Self {
            child,
            base: String::new(),
        };
        while Instant::now() < deadline {
            if let Ok(base) = rx.recv_timeout(Duration::from_millis(100)) {
                server.base = base;
                return Ok(server);
            }
            if let Some(status) = server.child.try_wait()? {
                bail!("{what} exited before listening ({status})");
            }
        }
        bail!("{what} did not announce an address within {limit:?}")
    }

    /// The process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Peak resident set of a process in KiB (`VmHWM` of `/proc/PID/status`), where Linux says it.
#[must_use]
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// Resident set of a process now, in KiB (`VmRSS`), where Linux says it.
#[must_use]
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
