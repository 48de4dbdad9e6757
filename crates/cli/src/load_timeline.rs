//! `apistend load --timeline FILE`: the run as a time series, one JSON line every 100 ms —
//! what the clients sent, what the server accepted and refused (cumulative), and the bucket
//! level the server last reported — for the time-series plot of BENCHMARKS.md.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::Serialize;

/// How often the timeline is sampled.
pub(crate) const EVERY: Duration = Duration::from_millis(100);

/// One sample.
#[derive(Debug, Serialize)]
pub(crate) struct Row {
    /// Seconds since the start of the run.
    pub(crate) t_s: f64,
    /// Requests sent so far (every attempt).
    pub(crate) sent: u64,
    /// Answered with a success so far.
    pub(crate) ok: u64,
    /// Refused by the server so far (429, or the service's own limit status).
    pub(crate) rejected: u64,
    /// The tokens the server last reported left (its remaining header), if it reports them.
    pub(crate) remaining: Option<u32>,
}

/// The last bucket level a server reported, shared by the workers.
#[derive(Debug)]
pub(crate) struct Reported(AtomicI64);

impl Default for Reported {
    fn default() -> Self {
        Self(AtomicI64::new(-1))
    }
}

impl Reported {
    pub(crate) fn set(&self, remaining: u32) {
        self.0.store(i64::from(remaining), Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Option<u32> {
        u32::try_from(self.0.load(Ordering::Relaxed)).ok()
    }
}

/// Samples `now()` every [`EVERY`] from `start` until `end`.
pub(crate) async fn record(
    start: Instant,
    end: Instant,
    mut now: impl FnMut(f64) -> Row,
) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut tick = tokio::time::interval(EVERY);
    loop {
        tick.tick().await;
        rows.push(now(start.elapsed().as_secs_f64()));
        if Instant::now() >= end {
            return rows;
        }
    }
}

/// Writes `rows` to `path`, one JSON object per line.
///
/// # Errors
/// When the file cannot be written.
pub(crate) fn write(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    for r in rows {
        serde_json::to_writer(&mut out, r)?;
        out.write_all(b"\n")?;
    }
    out.flush()
        .with_context(|| format!("writing {}", path.display()))
}
