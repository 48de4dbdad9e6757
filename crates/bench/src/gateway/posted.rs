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
    let rounds: Vec<PostedRound> = super::alternate::rounds(
        config,
        "posted",
        &url,
        Some(&body),
        ("validated", &headers),
        ("off", &off_headers),
    )?
    .into_iter()
    .map(|(validated, off)| PostedRound { validated, off })
    .collect();
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
