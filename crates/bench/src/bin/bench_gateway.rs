//! `bench-gateway`: the gateway benchmark of the shipped binary (see `apistend_bench::gateway`).
//! `scripts/bench-gateway.sh` builds the release binaries, installs wrk when missing and runs it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::time::Duration;

use apistend_bench::gateway::{self, Backing, Config};
use apistend_bench::{builds, instructions};
use clap::Parser;

/// The release `apistend serve` against axum's hello-world, both as their own processes.
#[derive(Debug, Parser)]
struct Args {
    /// Alternating rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds per wrk run.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// wrk connections (default 32; 8 with `--instructions`).
    #[arg(long)]
    connections: Option<u32>,
    /// Where the sandbox keeps its buckets.
    #[arg(long, value_enum, default_value_t = Backing::Memory)]
    backing: Backing,
    /// Directory of the release binaries (default: build them with cargo).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Write the report as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Count user-space instructions per request under callgrind instead of measuring rates
    /// (one run of each path, `--seconds` long, 8 connections by default).
    #[arg(long)]
    instructions: bool,
    /// With `--instructions`: keep callgrind's dumps in this directory (`PATH/cg.out` for each
    /// path), for `callgrind_annotate`.
    #[arg(long, requires = "instructions")]
    keep_dumps: Option<PathBuf>,
    /// Compare the build in `--bin-dir` with the `apistend` in this directory instead of with
    /// the hello-world: both up at once, in alternating runs (`--rounds` of each path).
    #[arg(long, conflicts_with = "instructions")]
    against: Option<PathBuf>,
    /// Measure what validating a request costs instead: a POST with a 2 KB valid body, checked
    /// against its description, against the same with `X-Mock-Validation: off` (`--rounds` of
    /// each, alternating).
    #[arg(long, conflicts_with_all = ["instructions", "against"])]
    posted: bool,
    /// Measure what answering from the objects a sandbox keeps costs instead: `GET` of one
    /// stored amoCRM lead against the same with `X-Mock-State: off` (its example).
    #[arg(long, conflicts_with_all = ["instructions", "against", "posted"])]
    kept: bool,
    /// Extra arguments passed to `apistend serve` (after `--`).
    #[arg(last = true)]
    serve_args: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let bin_dir = match args.bin_dir {
        Some(d) => d,
        None => apistend_bench::process::build_release(&["apistend", "apistend-bench"])?,
    };
    let mut config = Config::new(bin_dir);
    config.rounds = args.rounds;
    config.wrk.duration = Duration::from_secs(args.seconds);
    config.wrk.connections = args
        .connections
        .unwrap_or(if args.instructions { 8 } else { 32 });
    config.backing = args.backing;
    config.serve_args = args.serve_args;
    if args.instructions {
        let counts = instructions::run(&config, args.keep_dumps.as_deref())?;
        print!("{}", instructions::table(&counts));
        if let Some(path) = args.json {
            std::fs::write(&path, serde_json::to_string_pretty(&counts)?)?;
            println!("report: {}", path.display());
        }
        return Ok(());
    }
    if args.kept {
        let report = gateway::kept::run(&config)?;
        print!("{}", gateway::kept::table(&report));
        if let Some(path) = args.json {
            std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
            println!("report: {}", path.display());
        }
        return Ok(());
    }
    if args.posted {
        let report = gateway::posted::run(&config)?;
        print!("{}", gateway::posted::table(&report));
        if let Some(path) = args.json {
            std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
            println!("report: {}", path.display());
        }
        return Ok(());
    }
    if let Some(baseline) = args.against {
        let comparison = builds::run(&config, baseline)?;
        print!("{}", builds::table(&comparison));
        if let Some(path) = args.json {
            std::fs::write(&path, serde_json::to_string_pretty(&comparison)?)?;
            println!("report: {}", path.display());
        }
        return Ok(());
    }
    let report = gateway::run(&config)?;
    print!("{}", gateway::table(&report));
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
        println!("report: {}", path.display());
    }
    Ok(())
}
