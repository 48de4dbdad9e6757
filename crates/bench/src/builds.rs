//! Two builds of `apistend` against each other: both release binaries up at once on the servers'
//! core, set up as [`crate::gateway`] sets them up, and measured in alternating runs whose order
//! swaps every round, so that neither gains from going second or from the host's drift.
//!
//! What a change costs or saves in time, where [`crate::gateway`]'s ratio to the hello-world
//! cannot tell: a few percent of CPU per request is inside a gateway run's spread on a shared VM,
//! and well outside an A/A run of this one (about ±1 % in the median on machine E).

use std::path::PathBuf;

use anyhow::ensure;
use serde::Serialize;

use crate::gateway::{BenchPath, Config, Sandbox, admin_token, measured};
use crate::stats::Summary;
use crate::wrk::Wrk;

/// One path's comparison over the rounds: the build under test (`config.bin_dir`) over the
/// baseline, per round.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PathComparison {
    /// CPU time (user + kernel) per request, under test over baseline: below 1 it costs less.
    pub cpu_per_request: Summary,
    /// Requests per second, under test over baseline: above 1 it serves more.
    pub rate: Summary,
    /// The baseline's CPU µs per request (medians of its runs).
    pub baseline_cpu_us: f64,
}

/// Both paths.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Comparison {
    /// `GET /wb/api/v3/warehouses`, every answer a 200.
    pub allowed: PathComparison,
    /// `GET /wb/api/v1/seller-info`, every answer WB's 429.
    pub rejected: PathComparison,
}

/// Runs `config.rounds` rounds of both paths on the build in `config.bin_dir` and on the one in
/// `baseline` (a directory holding its `apistend`).
///
/// # Errors
/// When wrk is missing, a server does not start, an answer is not what its path promises, or
/// `/proc` does not give the servers' CPU times.
pub fn run(config: &Config, baseline: PathBuf) -> anyhow::Result<Comparison> {
    ensure!(config.rounds >= 1, "at least one round");
    ensure!(
        Wrk::installed(),
        "wrk is not installed (apt-get install wrk)"
    );
    let token = admin_token();
    let tested = Sandbox::start(config, &token, None)?;
    let base = Sandbox::start(
        &Config {
            bin_dir: baseline,
            ..config.clone()
        },
        &token,
        None,
    )?;
    let warm = config.wrk.warm_up();
    for s in [&tested, &base] {
        for path in BenchPath::BOTH {
            warm.run(&s.url(path), &s.headers())?;
        }
    }
    Ok(Comparison {
        allowed: compare(config, &tested, &base, BenchPath::Allowed)?,
        rejected: compare(config, &tested, &base, BenchPath::Rejected)?,
    })
}

/// One run of `path`, checked: requests per second and CPU µs per request.
fn measure(wrk: &Wrk, s: &Sandbox, path: BenchPath) -> anyhow::Result<(f64, f64)> {
    let pid = s.server.pid();
    let (load, cpu) = measured(wrk, &s.url(path), &s.headers(), pid)?;
    path.check(&load)?;
    let cpu = cpu.ok_or_else(|| anyhow::anyhow!("no CPU times for process {pid}"))?;
    Ok((load.rps, cpu.user_us + cpu.kernel_us))
}

fn compare(
    config: &Config,
    tested: &Sandbox,
    base: &Sandbox,
    path: BenchPath,
) -> anyhow::Result<PathComparison> {
    let (mut cpu, mut rate, mut base_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..config.rounds {
        let (t, b) = if round % 2 == 0 {
            let t = measure(&config.wrk, tested, path)?;
            (t, measure(&config.wrk, base, path)?)
        } else {
            let b = measure(&config.wrk, base, path)?;
            (measure(&config.wrk, tested, path)?, b)
        };
        eprintln!(
            "  round {}: under test {:>7.0} req/s {:.2} µs, baseline {:>7.0} req/s {:.2} µs",
            round + 1,
            t.0,
            t.1,
            b.0,
            b.1
        );
        cpu.push(t.1 / b.1);
        rate.push(t.0 / b.0);
        base_cpu.push(b.1);
    }
    let none = || anyhow::anyhow!("no rounds");
    Ok(PathComparison {
        cpu_per_request: Summary::of(&cpu).ok_or_else(none)?,
        rate: Summary::of(&rate).ok_or_else(none)?,
        baseline_cpu_us: Summary::of(&base_cpu).ok_or_else(none)?.median,
    })
}

/// The comparison as a table.
#[must_use]
pub fn table(c: &Comparison) -> String {
    let row = |name: &str, p: &PathComparison| {
        format!(
            "| {name} | {:.3} ({:.3}–{:.3}) | {:.3} ({:.3}–{:.3}) | {:.2} |\n",
            p.cpu_per_request.median,
            p.cpu_per_request.min,
            p.cpu_per_request.max,
            p.rate.median,
            p.rate.min,
            p.rate.max,
            p.baseline_cpu_us
        )
    };
    format!(
        "| path | CPU per request, under test / baseline | rate, under test / baseline | baseline CPU µs/request |\n|---|---|---|---|\n{}{}",
        row("allowed", &c.allowed),
        row("rejected", &c.rejected)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_both_paths() {
        let s = |m| Summary {
            median: m,
            min: m - 0.01,
            max: m + 0.01,
        };
        let p = |m| PathComparison {
            cpu_per_request: s(m),
            rate: s(2.0 - m),
            baseline_cpu_us: 6.5,
        };
        let t = table(&Comparison {
            allowed: p(0.968),
            rejected: p(0.98),
        });
        assert!(
            t.contains("| allowed | 0.968 (0.958–0.978) | 1.032 (1.022–1.042) | 6.50 |"),
            "{t}"
        );
        assert!(t.contains("| rejected | 0.980"), "{t}");
    }
}
