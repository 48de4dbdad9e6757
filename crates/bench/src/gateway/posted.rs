//! What validating a request costs: a `POST` with a 2 KB valid JSON body
//! ([`POSTED`]), checked against its operation's description, against the
//! same requests with `X-Mock-Validation: off`, on one sandbox, in alternating runs.

use serde::Serialize;

use super::config::Config;
use super::servers::{POSTED, Sandbox, admin_token};
use crate::stats::Summary;
use crate::wrk::Load;

/// The body: WB's price list filter with 250 article numbers, about 2 KB.
#[must_use]
pub fn body() -> String {
    let ids: Vec<String> = (0..250)
        .map(|i| (10_000_000 + i * 7919).to_string())
        .collect();
    format!("{{\"nmList\":[{}]}}", ids.join(","))
}

/// One round: validated, then not.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PostedRound {
    /// Checked against the description (`strict`).
    pub validated: Load,
    /// `X-Mock-Validation: off`.
    pub off: Load,
}

/// What the posted runs measured.
#[derive(Debug, Clone, Serialize)]
pub struct PostedReport {
    /// The body's length in bytes.
    pub body_bytes: usize,
    /// Validated requests per second over those not validated, per round.
    pub ratio: Summary,
    /// The rounds.
    pub rounds: Vec<PostedRound>,
}

/// Runs `config.rounds` alternating rounds of the posted path, validated and not.
///
/// # Errors
/// When the sandbox cannot be started, wrk fails, or an answer is not a 2xx.
pub fn run(config: &Config) -> anyhow::Result<PostedReport> {
    let sandbox = Sandbox::start(config, &admin_token(), None)?;
    let url = format!("{}{}", sandbox.server.base, POSTED.0);
    let body = body();
    let mut headers = sandbox.headers();
    headers.push(("Content-Type".into(), "application/json".into()));
    let mut off_headers = headers.clone();
    off_headers.push(("X-Mock-Validation".into(), "off".into()));
    let run = |h: &[(String, String)], name: &str| -> anyhow::Result<Load> {
        let load = config.wrk.run_posting(&url, h, Some(&body))?;
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
    config
        .wrk
        .warm_up()
        .run_posting(&url, &headers, Some(&body))?;
    let mut rounds = Vec::with_capacity(config.rounds);
    for i in 0..config.rounds {
        eprintln!("posted round {}/{}", i + 1, config.rounds);
        // Alternating which goes first, so neither always runs on a warmer machine.
        let (validated, off) = if i % 2 == 0 {
            let v = run(&headers, "validated")?;
            (v, run(&off_headers, "off")?)
        } else {
            let o = run(&off_headers, "off")?;
            (run(&headers, "validated")?, o)
        };
        rounds.push(PostedRound { validated, off });
    }
    let ratios: Vec<f64> = rounds.iter().map(|r| r.validated.rps / r.off.rps).collect();
    Ok(PostedReport {
        body_bytes: body.len(),
        ratio: Summary::of(&ratios).ok_or_else(|| anyhow::anyhow!("no rounds"))?,
        rounds,
    })
}

/// The report as a few lines of text.
#[must_use]
pub fn table(r: &PostedReport) -> String {
    format!(
        "POST {} ({} bytes, valid), validated over X-Mock-Validation: off, {} rounds: median {:.3} ({:.3}–{:.3})\n",
        POSTED.0,
        r.body_bytes,
        r.rounds.len(),
        r.ratio.median,
        r.ratio.min,
        r.ratio.max
    )
}
