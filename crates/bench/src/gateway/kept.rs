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
    let headers = vec![("X-Mock-Key".to_owned(), sandbox.key)];
    let mut example = headers.clone();
    example.push(("X-Mock-State".into(), "off".into()));
    let rounds: Vec<KeptRound> = super::alternate::rounds(
        &config,
        "kept",
        &url,
        None,
        ("kept", &headers),
        ("example", &example),
    )?
    .into_iter()
    .map(|(kept, example)| KeptRound { kept, example })
    .collect();
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
