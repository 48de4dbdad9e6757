//! `bench-soak`: the soak of the shipped binary (see `apistend_bench::soak`). `scripts/soak.sh`
//! builds the release binaries, runs it pinned to the other core and plots the result.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use std::path::PathBuf;
use std::time::Duration;

use apistend_bench::soak::{self, Config};
use clap::Parser;
use serde_json::json;

/// The release `apistend serve` under a steady mix for a long time.
#[derive(Debug, Parser)]
struct Args {
    /// Minutes of the soak (after the driver's maximum is measured for 10 s).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(7..=1440))]
    minutes: u64,
    /// Keys in the sandbox.
    #[arg(long, default_value_t = 10_000)]
    keys: usize,
    /// Concurrent connections of the driver.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// The share of the driver's maximum to run at.
    #[arg(long, default_value_t = 0.5)]
    load: f64,
    /// Directory of the release binaries (default: build them with cargo).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Write the report as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write a chart of it for `apistend plot` here.
    #[arg(long)]
    chart: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let bin_dir = match args.bin_dir {
        Some(d) => d,
        None => apistend_bench::process::build_release(&["apistend"])?,
    };
    let pin = apistend_bench::process::can_pin(&[0, 1]);
    let report = soak::run(&Config {
        bin_dir,
        duration: Duration::from_secs(args.minutes * 60),
        keys: args.keys,
        connections: args.connections.max(1),
        server_core: pin.then_some(0),
        load: args.load.clamp(0.01, 1.0),
    })?;
    println!(
        "max {:.0} req/s, soaked at {:.0} (achieved {:.0}); RSS at 1 min {} KiB, most after {} KiB \
         (+{:.1} %); p99 minutes 2-6 {} µs, last 5 minutes {} µs ({:.2}x): {}",
        report.max_rps,
        report.target_rps,
        report.achieved_rps,
        report.rss_at_1min_kib,
        report.rss_max_after_kib,
        (report.rss_max_after_kib as f64 / report.rss_at_1min_kib.max(1) as f64 - 1.0) * 100.0,
        report.p99_early_us,
        report.p99_late_us,
        report.p99_late_us as f64 / report.p99_early_us.max(1) as f64,
        if report.passed { "PASS" } else { "FAIL" }
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    if let Some(path) = &args.chart {
        let minutes = |t: f64| (t / 60.0 * 100.0).round() / 100.0;
        let chart = json!({
            "title": format!("{}-minute soak at {:.0} req/s: p99 latency and resident set", args.minutes, report.target_rps),
            "x_label": "time (minutes)",
            "y_label": "p99 latency of the 10 s window (ms)",
            "y2_label": "sandbox resident set (MiB)",
            "kind": "line",
            "series": [
                {"name": "p99", "markers": false, "points": report.samples.iter()
                    .map(|s| [minutes(s.t_s), s.p99_us as f64 / 1000.0]).collect::<Vec<_>>()},
                {"name": "RSS", "axis": "right", "markers": false, "points": report.samples.iter()
                    .map(|s| [minutes(s.t_s), s.rss_kib as f64 / 1024.0]).collect::<Vec<_>>()},
            ],
        });
        std::fs::write(path, serde_json::to_string_pretty(&chart)?)?;
    }
    if !report.passed {
        std::process::exit(1);
    }
    Ok(())
}
