//! What answering from the objects a sandbox keeps costs: `GET` of one stored amoCRM lead
//! ([`KEPT`], an object the sandbox starts with), against the same requests with
//! `X-Mock-State: off` (the operation's static example), on one sandbox, in alternating runs.

use serde::Serialize;

use super::config::Config;
use super::servers::{Sandbox, admin_token};
use crate::stats::Summary;
use crate::wrk::Load;

/// The path read: one lead, kept in the sandbox's memory (or its Redis).
pub const KEPT: &str = "/amocrm/api/v4/leads/20000001";

/// amoCRM's 7 requests a second opened wide for the run.
const WIDE: &str = "[amocrm.groups.integration]\nburst = 1000000\nper_second = 1000000\n";

/// One round: from the kept objects, then from the example.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct KeptRound {
    /// `X-Mock-State: on` (the default).
    pub kept: Load,
    /// `X-Mock-State: off`.
    pub example: Load,
}

/// What the kept runs measured.
#[derive(Debug, Clone, Serialize)]
pub struct KeptReport {
    /// Kept reads per second over static ones, per round.
    pub ratio: Summary,
    /// The rounds.
    pub rounds: Vec<KeptRound>,
}

/// Runs `config.rounds` alternating rounds of reads, kept and static.
///
/// # Errors
/// When the sandbox cannot be started, wrk fails, or an answer is not a 2xx.
pub fn run(config: &Config) -> anyhow::Result<KeptReport> {
    let overrides = tempfile::NamedTempFile::new()?;
    std::fs::write(overrides.path(), WIDE)?;
    let mut config = config.clone();
    config.serve_args.push("--overrides".into());
    config
        .serve_args
        .push(overrides.path().display().to_string());
    let sandbox = Sandbox::start(&config, &admin_token(), None)?;
    let url = format!("{}{KEPT}", sandbox.server.base);
    let headers = vec![("X-Mock-Key".to_owned(), sandbox.key.clone())];
    let mut example = headers.clone();
    example.push(("X-Mock-State".into(), "off".into()));
    let run = |h: &[(String, String)], name: &str| -> anyhow::Result<Load> {
        let load = config.wrk.run_posting(&url, h, None)?;
        anyhow::ensure!(
            load.non_2xx == 0 && load.socket_errors == 0,
            "{name}: {} non-2xx, {} socket errors",
            load.non_2xx,
            load.socket_errors
        );
        eprintln!(
            "  {name:<9} {:>9.0} req/s  p50 {:>6.0} µs  p99 {:>6.0} µs",
            load.rps, load.p50_us, load.p99_us
        );
        Ok(load)
    };
    config.wrk.warm_up().run_posting(&url, &headers, None)?;
    let mut rounds = Vec::with_capacity(config.rounds);
    for i in 0..config.rounds {
        eprintln!("kept round {}/{}", i + 1, config.rounds);
        let (kept, ex) = if i % 2 == 0 {
            let k = run(&headers, "kept")?;
            (k, run(&example, "example")?)
        } else {
            let e = run(&example, "example")?;
            (run(&headers, "kept")?, e)
        };
        rounds.push(KeptRound { kept, example: ex });
    }
    let ratios: Vec<f64> = rounds.iter().map(|r| r.kept.rps / r.example.rps).collect();
    Ok(KeptReport {
        ratio: Summary::of(&ratios).ok_or_else(|| anyhow::anyhow!("no rounds"))?,
        rounds,
    })
}

/// The report as a line of text.
#[must_use]
pub fn table(r: &KeptReport) -> String {
    format!(
        "GET {KEPT} from the kept objects over X-Mock-State: off (its example), {} rounds: median {:.3} ({:.3}–{:.3}); kept {:.0} req/s, example {:.0} req/s (medians)\n",
        r.rounds.len(),
        r.ratio.median,
        r.ratio.min,
        r.ratio.max,
        median(r.rounds.iter().map(|x| x.kept.rps)),
        median(r.rounds.iter().map(|x| x.example.rps)),
    )
}

fn median(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    Summary::of(&v).map_or(0.0, |s| s.median)
}
