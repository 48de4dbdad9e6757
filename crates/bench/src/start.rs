//! Start and footprint of what ships: the release `apistend serve` (a fresh data directory each
//! time, the README's arguments) and the axum hello-world, each started `rounds` times in
//! alternation as its own process. Per start: the time from `spawn` to the first 200 of a plain
//! `GET` (the sandbox's `/healthz`, the hello's `/`), polled every millisecond on a port chosen
//! beforehand, and the resident memory once it has idled for a moment after that answer.
//! `--against DIR` adds a second `apistend` build to the alternation.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use crate::footprint::{Populated, Target, populate};
use crate::process::{pinned, rss_kib};
use crate::stats::Summary;

/// What to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// The directory of `apistend` and `apistend-hello`.
    pub bin_dir: PathBuf,
    /// Another build's directory (its `apistend`), started in the same alternation.
    pub against: Option<PathBuf>,
    /// Starts of each.
    pub rounds: usize,
    /// How long a server idles after its first answer before its memory is read.
    pub idle: Duration,
    /// The core every server runs on, when pinning works.
    pub core: Option<usize>,
    /// After the rounds, each `apistend` started once more and filled to this many sandboxes
    /// and buckets ([`crate::footprint`]) before its memory is read.
    pub populate: Option<Target>,
}

/// One server's starts.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `apistend`, `apistend (against)` or `hello`.
    pub what: String,
    /// Milliseconds from spawn to the first answer.
    pub first_answer_ms: Summary,
    /// Resident KiB after the idle.
    pub idle_rss_kib: Summary,
    /// Resident KiB after [`Config::populate`], and what was made.
    pub loaded: Option<Loaded>,
}

/// One populated start.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Loaded {
    /// Resident KiB after the population and the idle.
    pub rss_kib: u64,
    /// What the population made.
    pub populated: Populated,
}

/// One start: spawn, first answer, memory; the server is stopped either way.
fn once(mut cmd: Command, path: &str, port: u16, idle: Duration) -> anyhow::Result<(f64, f64)> {
    let started = Instant::now();
    let mut child: Child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("spawning the server")?;
    let result = measure(&mut child, started, path, port, idle);
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Milliseconds from `started` to the first 200 of `child`, and its resident KiB after `idle`.
fn measure(
    child: &mut Child,
    started: Instant,
    path: &str,
    port: u16,
    idle: Duration,
) -> anyhow::Result<(f64, f64)> {
    let deadline = started + Duration::from_secs(30);
    while !answers(port, path) {
        if Instant::now() > deadline {
            bail!("no answer within 30 s");
        }
        if let Some(status) = child.try_wait()? {
            bail!("the server exited ({status})");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;
    std::thread::sleep(idle);
    let rss = rss_kib(child.id()).context("no /proc to read memory from")?;
    #[allow(clippy::cast_precision_loss)]
    Ok((ms, rss as f64))
}

/// Whether `GET path` on the port answers 200 now.
fn answers(port: u16, path: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    if write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.get(9..12) == Some(b"200")
}

/// A start of `bin` filled to `target`: its resident KiB after the population and `idle`.
fn loaded(
    bin: &Path,
    target: Target,
    idle: Duration,
    core: Option<usize>,
) -> anyhow::Result<Loaded> {
    let port = apistend_testkit::free_port();
    let data = tempfile::tempdir()?;
    let token = "bench-footprint-admin-token";
    let mut cmd = sandbox(bin, port, data.path(), core);
    cmd.args(["--admin-token", token, "--admin-per-second", "1000000"]);
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("spawning the server")?;
    let result = (|| {
        measure(&mut child, started, "/healthz", port, Duration::ZERO)?;
        let populated = populate(&format!("http://127.0.0.1:{port}"), token, target)?;
        std::thread::sleep(idle);
        let rss_kib = rss_kib(child.id()).context("no /proc to read memory from")?;
        Ok(Loaded { rss_kib, populated })
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// `apistend serve` of `bin` on `port`, with a fresh data directory in `data`.
fn sandbox(bin: &Path, port: u16, data: &Path, core: Option<usize>) -> Command {
    let mut cmd = pinned(bin, core);
    cmd.args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data"])
        .arg(data)
        .env_remove("RUST_LOG");
    cmd
}

/// Runs the alternation.
///
/// # Errors
/// When a server does not start or answer.
pub fn run(config: &Config) -> anyhow::Result<Vec<Row>> {
    let mut servers: Vec<(String, PathBuf, bool)> = vec![
        ("hello".into(), config.bin_dir.join("apistend-hello"), false),
        ("apistend".into(), config.bin_dir.join("apistend"), true),
    ];
    if let Some(dir) = &config.against {
        servers.push(("apistend (against)".into(), dir.join("apistend"), true));
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    let mut rss: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    for round in 0..config.rounds {
        // The order swaps every round: neither always goes first after the other's exit.
        let mut order: Vec<usize> = (0..servers.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let Some((what, bin, is_sandbox)) = servers.get(i) else {
                continue;
            };
            let port = apistend_testkit::free_port();
            let data = tempfile::tempdir()?;
            let (cmd, path) = if *is_sandbox {
                (sandbox(bin, port, data.path(), config.core), "/healthz")
            } else {
                let mut cmd = pinned(bin, config.core);
                cmd.arg(format!("127.0.0.1:{port}"));
                (cmd, "/")
            };
            let (ms, kib) = once(cmd, path, port, config.idle)
                .with_context(|| format!("{what}, round {round}"))?;
            if let (Some(t), Some(r)) = (times.get_mut(i), rss.get_mut(i)) {
                t.push(ms);
                r.push(kib);
            }
        }
    }
    servers
        .iter()
        .zip(times.iter().zip(&rss))
        .map(|((what, bin, is_sandbox), (t, r))| {
            let loaded = match config.populate {
                Some(target) if *is_sandbox => Some(
                    loaded(bin, target, config.idle, config.core)
                        .with_context(|| format!("{what}, populated"))?,
                ),
                _ => None,
            };
            Ok(Row {
                what: what.clone(),
                first_answer_ms: Summary::of(t).context("no starts")?,
                idle_rss_kib: Summary::of(r).context("no starts")?,
                loaded,
            })
        })
        .collect()
}
