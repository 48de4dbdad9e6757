//! `bench-start`: start and footprint of the shipped binary against the hello-world (see
//! `apistend_bench::start`). `scripts/bench-start.sh` builds the release binaries and runs it.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Duration;

use apistend_bench::footprint::Target;
use apistend_bench::start::{self, Config};
use clap::Parser;

/// Time to the first answer and idle memory of `apistend serve` and axum's hello-world.
#[derive(Debug, Parser)]
struct Args {
    /// Starts of each server, alternating.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Milliseconds a server idles after its first answer before its memory is read.
    #[arg(long, default_value_t = 500)]
    idle_ms: u64,
    /// Directory of the release binaries (default: build them with cargo).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Another build's directory: its `apistend` joins the alternation.
    #[arg(long)]
    against: Option<PathBuf>,
    /// After the rounds, start each `apistend` once more, make this many sandboxes in it…
    #[arg(long, default_value_t = 1000)]
    sandboxes: usize,
    /// …and send requests until its store holds this many buckets, then read its memory (0:
    /// skip this step).
    #[arg(long, default_value_t = 100_000)]
    buckets: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let bin_dir = match args.bin_dir {
        Some(d) => d,
        None => apistend_bench::process::build_release(&["apistend", "apistend-bench"])?,
    };
    let core = apistend_bench::process::can_pin(&[0]).then_some(0);
    let rows = start::run(&Config {
        bin_dir,
        against: args.against,
        rounds: args.rounds.max(1),
        idle: Duration::from_millis(args.idle_ms),
        core,
        populate: (args.buckets > 0).then_some(Target {
            sandboxes: args.sandboxes.max(1),
            buckets: args.buckets,
        }),
    })?;
    println!(
        "{:<20} {:>28} {:>34}",
        "server", "first answer ms: median (min–max)", "idle RSS MiB: median (min–max)"
    );
    for r in &rows {
        let t = r.first_answer_ms;
        let m = r.idle_rss_kib;
        println!(
            "{:<20} {:>12.1} ({:.1}–{:.1}) {:>18.1} ({:.1}–{:.1})",
            r.what,
            t.median,
            t.min,
            t.max,
            m.median / 1024.0,
            m.min / 1024.0,
            m.max / 1024.0
        );
    }
    for r in &rows {
        if let Some(l) = r.loaded {
            #[allow(clippy::cast_precision_loss)]
            let mib = l.rss_kib as f64 / 1024.0;
            println!(
                "{:<20} with {} sandboxes ({} keys) and {} buckets ({} requests): RSS {mib:.1} MiB",
                r.what,
                l.populated.sandboxes,
                l.populated.keys,
                l.populated.buckets,
                l.populated.requests
            );
        }
    }
    println!("{}", serde_json::to_string(&rows)?);
    Ok(())
}
