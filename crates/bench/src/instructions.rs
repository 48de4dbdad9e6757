//! User-space instructions per request of the shipped binary and of the hello-world anchor,
//! counted by callgrind: the same servers, set up as [`crate::gateway`] sets them up, each path
//! in its own `valgrind --tool=callgrind` process.
//!
//! Unlike rates, the counts do not move with what else the machine is doing: two runs of one
//! build agree within a fraction of a percent on the sandbox's paths, so an A/B of two builds
//! (`--bin-dir` of each) shows a change of a few percent in one run. The hello's count moves a
//! few percent more, with how many requests its runtime finds per wake-up. Kernel time is not
//! counted (callgrind sees user space only); [`crate::gateway`]'s CPU times per request are the
//! complement.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde::Serialize;

use crate::gateway::{BenchPath, Config, Sandbox, admin_token, start_hello};
use crate::process::Server;
use crate::wrk::Wrk;

/// One path's count.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Count {
    /// `hello`, `allowed` or `rejected`.
    pub path: &'static str,
    /// Requests answered while the counters ran.
    pub requests: u64,
    /// User-space instructions executed meanwhile, by every thread of the server.
    pub instructions: u64,
}

impl Count {
    /// Instructions per request.
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // counts far below 2^52
    pub fn per_request(&self) -> f64 {
        self.instructions as f64 / self.requests.max(1) as f64
    }
}

/// Whether valgrind's callgrind and its `callgrind_control` are installed.
#[must_use]
pub fn installed() -> bool {
    ["valgrind", "callgrind_control"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Counts the hello's, then the sandbox's allowed and rejected paths, with `config.wrk` as the
/// measured load (after a 2 s warm-up whose instructions are not counted). `config.wrapper` is
/// replaced by callgrind's. The dumps go to `keep/PATH/cg.out` when `keep` is given (to read with
/// `callgrind_annotate`), to a temporary directory otherwise.
///
/// # Errors
/// When valgrind or wrk is missing, a server does not start, or a count cannot be read.
pub fn run(config: &Config, keep: Option<&Path>) -> anyhow::Result<Vec<Count>> {
    ensure!(
        installed(),
        "valgrind is not installed (apt-get install valgrind)"
    );
    ensure!(
        Wrk::installed(),
        "wrk is not installed (apt-get install wrk)"
    );
    let token = admin_token();
    let mut counts = Vec::with_capacity(3);
    let temp = tempfile::tempdir()?;
    let out = keep.unwrap_or(temp.path());
    let under = |name: &str| -> anyhow::Result<(Config, PathBuf)> {
        let dir = out.join(name);
        // A kept directory may hold an earlier run's dumps, which must not be read as this one's.
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        let mut c = config.clone();
        c.wrapper = vec![
            "valgrind".into(),
            "--tool=callgrind".into(),
            format!("--callgrind-out-file={}", dir.join("cg.out").display()),
        ];
        c.start_limit = c.start_limit.max(Duration::from_secs(120));
        Ok((c, dir))
    };

    let (c, dir) = under("hello")?;
    let hello = start_hello(&c)?;
    let url = format!("{}/", hello.base);
    counts.push(count("hello", &c.wrk, &hello, &url, &[], &dir)?);
    drop(hello);

    for path in BenchPath::BOTH {
        let (c, dir) = under(path.name())?;
        let sandbox = Sandbox::start(&c, &token, None)?;
        let url = sandbox.url(path);
        counts.push(count(
            path.name(),
            &c.wrk,
            &sandbox.server,
            &url,
            &sandbox.headers(),
            &dir,
        )?);
    }
    Ok(counts)
}

/// A warm-up, the counters zeroed, the measured load, the counters dumped and read.
fn count(
    path: &'static str,
    wrk: &Wrk,
    server: &Server,
    url: &str,
    headers: &[(String, String)],
    dir: &Path,
) -> anyhow::Result<Count> {
    wrk.warm_up().run(url, headers)?;
    let pid = server.pid().to_string();
    control(&["-z", &pid])?;
    let load = wrk.run(url, headers)?;
    ensure!(
        load.socket_errors == 0,
        "{path}: {} socket errors",
        load.socket_errors
    );
    control(&["-d", &pid])?;
    let counted = Count {
        path,
        requests: load.requests,
        instructions: dumped_total(dir)?,
    };
    eprintln!(
        "  {path:<9} {:>8} requests  {:>7.0} instructions a request",
        counted.requests,
        counted.per_request()
    );
    Ok(counted)
}

fn control(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("callgrind_control")
        .args(args)
        .output()
        .context("running callgrind_control")?;
    ensure!(
        out.status.success(),
        "callgrind_control {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// The `totals:` (or `summary:`) line of the newest dump in `dir`, waiting up to 10 s for it:
/// callgrind writes the dump after `callgrind_control -d` returns.
fn dumped_total(dir: &Path) -> anyhow::Result<u64> {
    for _ in 0..100 {
        let newest = std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("cg.out."))
            .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok());
        if let Some(entry) = newest
            && let Ok(text) = std::fs::read_to_string(entry.path())
            && let Some(total) = total_of(&text)
        {
            return Ok(total);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    anyhow::bail!("no callgrind dump in {}", dir.display())
}

/// The instruction total of a callgrind dump.
fn total_of(dump: &str) -> Option<u64> {
    dump.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The counts as a table, with each path's instructions per request over the hello's.
#[must_use]
pub fn table(counts: &[Count]) -> String {
    use std::fmt::Write as _;
    let hello = counts
        .iter()
        .find(|c| c.path == "hello")
        .map(Count::per_request);
    let mut out = String::from(
        "| path | requests | instructions a request | over the hello |\n|---|---|---|---|\n",
    );
    for c in counts {
        let over = hello.map_or_else(String::new, |h| format!("{:.2}", c.per_request() / h));
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {over} |",
            c.path,
            c.requests,
            c.per_request()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_total_of_a_dump() {
        let dump =
            "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=main\n3 10\ntotals: 791516856\n";
        assert_eq!(total_of(dump), Some(791_516_856));
        assert_eq!(total_of("summary: 12\n"), Some(12));
        assert_eq!(total_of("events: Ir\n"), None);
    }

    #[test]
    fn tables_counts_over_the_hello() {
        let counts = [
            Count {
                path: "hello",
                requests: 10,
                instructions: 100_000,
            },
            Count {
                path: "allowed",
                requests: 10,
                instructions: 175_000,
            },
        ];
        let t = table(&counts);
        assert!(t.contains("| allowed | 10 | 17500 | 1.75 |"), "{t}");
    }
}
