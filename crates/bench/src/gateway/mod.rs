//! The gateway benchmark of the shipped binary: `apistend serve` (release build, started as the
//! README starts it, its own process) against `apistend-hello` (axum's hello-world, its own
//! process), both pinned to one core and `wrk` on the other.
//!
//! A sandbox is created through the management API with one WB group opened wide (the allowed
//! path) and one closed to a token an hour (the rejected path: every answer WB's 429 with its
//! headers and body), its default latency 0; requests carry WB's own credential header. The
//! rounds alternate: hello, then per round allowed, rejected, hello; each round's ratio is its
//! path's rate over the mean of the hello runs before and after it. Each run also reports the
//! server's CPU time per request, user and kernel ([`crate::cpu`]): what a ratio is made of.
//!
//! With Redis (a `redis-server`, or a 3-master Cluster, on the servers' core) a memory-backed
//! sandbox runs beside it as a second anchor, measured in the same rounds: the Redis sandbox's
//! rate over the memory sandbox's is the cost of sharing buckets.

mod alternate;
mod config;
pub mod kept;
pub mod posted;
mod report;
mod servers;

use anyhow::ensure;

pub use config::{Backing, Config};
pub use report::{CpuSummary, Report, Round, RoundCpu, table};
pub use servers::{ALLOWED, POSTED, REJECTED, issue_key, open_sandbox};
pub(crate) use servers::{BenchPath, Sandbox, admin_token, measured, start_hello};

use crate::cpu::PerRequest;
use crate::process::peak_rss_kib;
use crate::stats::Summary;
use crate::wrk::{Load, Wrk};
use report::cpu_summary;
use servers::start_redis;

/// Runs the benchmark.
///
/// # Errors
/// When a server cannot be started or set up, wrk fails, or an answer is not what the path
/// promises (a 429 on the allowed path, a 200 on the rejected one, socket errors).
pub fn run(config: &Config) -> anyhow::Result<Report> {
    ensure!(config.rounds >= 1, "at least one round");
    ensure!(
        Wrk::installed(),
        "wrk is not installed (apt-get install wrk)"
    );
    let core = config.server_core;
    let token = admin_token();
    let redis = start_redis(config.backing, core)?;
    let sandbox = Sandbox::start(config, &token, redis.as_ref().map(|r| r.url.as_str()))?;
    // With Redis, a memory-backed sandbox as the second anchor.
    let memory = redis
        .as_ref()
        .map(|_| Sandbox::start(config, &token, None))
        .transpose()?;
    let hello = start_hello(config)?;
    let hello_url = format!("{}/", hello.base);
    let warm = config.wrk.warm_up();
    warm.run(&hello_url, &[])?;
    for s in std::iter::once(&sandbox).chain(&memory) {
        for path in BenchPath::BOTH {
            warm.run(&s.url(path), &s.headers())?;
        }
    }

    // One run, printed with the CPU time the server `pid` spent per request in it.
    let measure = |name: &str,
                   url: &str,
                   headers: &[(String, String)],
                   pid: u32|
     -> anyhow::Result<(Load, Option<PerRequest>)> {
        let (l, cpu) = measured(&config.wrk, url, headers, pid)?;
        let cpu_text = cpu.map_or_else(String::new, |c| {
            format!(
                "  cpu/req user {:.2} µs kernel {:.2} µs",
                c.user_us, c.kernel_us
            )
        });
        eprintln!(
            "  {name:<9} {:>9.0} req/s  p50 {:>6.0} µs  p99 {:>6.0} µs  non-2xx {}{cpu_text}",
            l.rps, l.p50_us, l.p99_us, l.non_2xx
        );
        Ok((l, cpu))
    };
    type Path = (Load, Option<PerRequest>);
    // A sandbox's two paths, each checked for the answers it promises.
    let paths = |s: &Sandbox, tag: &str| -> anyhow::Result<(Path, Path)> {
        let (h, pid) = (s.headers(), s.server.pid());
        let run = |path: BenchPath| -> anyhow::Result<Path> {
            let (load, cpu) = measure(&format!("{tag}{}", path.name()), &s.url(path), &h, pid)?;
            path.check(&load)?;
            Ok((load, cpu))
        };
        Ok((run(BenchPath::Allowed)?, run(BenchPath::Rejected)?))
    };
    let (mut before, _) = measure("hello", &hello_url, &[], hello.pid())?;
    let mut rounds = Vec::with_capacity(config.rounds);
    for i in 0..config.rounds {
        eprintln!("round {}/{}", i + 1, config.rounds);
        let ((allowed, allowed_cpu), (rejected, rejected_cpu)) = paths(&sandbox, "")?;
        let in_memory = memory
            .as_ref()
            .map(|m| paths(m, "memory ").map(|((a, _), (r, _))| (a, r)))
            .transpose()?;
        let (after, hello_cpu) = measure("hello", &hello_url, &[], hello.pid())?;
        let anchor = (before.rps + after.rps) / 2.0;
        rounds.push(Round {
            hello_before: before,
            allowed,
            rejected,
            hello_after: after,
            allowed_ratio: allowed.rps / anchor,
            rejected_ratio: rejected.rps / anchor,
            memory: in_memory,
            cpu: RoundCpu {
                hello: hello_cpu,
                allowed: allowed_cpu,
                rejected: rejected_cpu,
            },
        });
        before = after;
    }
    report(config, rounds, sandbox.server.pid())
}

/// The report of `rounds` (the sandbox's server being `pid`).
fn report(config: &Config, rounds: Vec<Round>, pid: u32) -> anyhow::Result<Report> {
    let core = config.server_core;
    let summary =
        |f: &dyn Fn(&Round) -> f64| Summary::of(&rounds.iter().map(f).collect::<Vec<_>>());
    let mut hellos: Vec<f64> = rounds.iter().map(|r| r.hello_after.rps).collect();
    hellos.extend(rounds.first().map(|r| r.hello_before.rps));
    let none = || anyhow::anyhow!("no rounds");
    Ok(Report {
        backing: config.backing,
        connections: config.wrk.connections,
        seconds: config.wrk.duration.as_secs(),
        pinned: core.is_some() && config.wrk.core.is_some(),
        allowed_ratio: summary(&|r| r.allowed_ratio).ok_or_else(none)?,
        rejected_ratio: summary(&|r| r.rejected_ratio).ok_or_else(none)?,
        hello_rps: Summary::of(&hellos).ok_or_else(none)?,
        allowed_rps: summary(&|r| r.allowed.rps).ok_or_else(none)?,
        rejected_rps: summary(&|r| r.rejected.rps).ok_or_else(none)?,
        allowed_p99_us: summary(&|r| r.allowed.p99_us).ok_or_else(none)?,
        rejected_p99_us: summary(&|r| r.rejected.p99_us).ok_or_else(none)?,
        vs_memory: summary(&|r| r.memory.map_or(f64::NAN, |m| r.allowed.rps / m.0.rps)).zip(
            summary(&|r| r.memory.map_or(f64::NAN, |m| r.rejected.rps / m.1.rps)),
        ),
        cpu: cpu_summary(&rounds),
        sandbox_peak_rss_kib: peak_rss_kib(pid),
        rounds,
    })
}
