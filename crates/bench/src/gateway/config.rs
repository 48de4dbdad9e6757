//! What a gateway run is configured with.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::process::can_pin;
use crate::wrk::Wrk;

/// Where the sandbox keeps its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// The in-process memory store (the default of `apistend serve`).
    Memory,
    /// A `redis-server` started by the bench, pinned to the sandbox's core.
    Redis,
    /// A 3-master Redis Cluster started by the bench, every node pinned to the sandbox's core.
    RedisCluster,
}

/// How to run the benchmark.
#[derive(Debug, Clone)]
pub struct Config {
    /// Alternating rounds (each: allowed, rejected, hello).
    pub rounds: usize,
    /// The load generator.
    pub wrk: Wrk,
    /// The core of the servers under test (and of Redis).
    pub server_core: Option<usize>,
    /// Where the sandbox keeps its buckets.
    pub backing: Backing,
    /// Directory of the release binaries `apistend` and `apistend-hello`.
    pub bin_dir: PathBuf,
    /// Extra arguments for `apistend serve`.
    pub serve_args: Vec<String>,
    /// A command the servers run under (`valgrind …` for [`crate::instructions`]); empty: none.
    pub wrapper: Vec<String>,
    /// How long a server may take to announce its address.
    pub start_limit: Duration,
}

impl Config {
    /// Five rounds of `wrk -t1 -c32 -d5s`; servers on core 0 and wrk on core 1 when the machine
    /// allows pinning, unpinned otherwise.
    #[must_use]
    pub fn new(bin_dir: PathBuf) -> Self {
        let pin = can_pin(&[0, 1]);
        Self {
            rounds: 5,
            wrk: Wrk {
                connections: 32,
                duration: Duration::from_secs(5),
                core: pin.then_some(1),
            },
            server_core: pin.then_some(0),
            backing: Backing::Memory,
            bin_dir,
            serve_args: Vec::new(),
            wrapper: Vec::new(),
            start_limit: Duration::from_secs(30),
        }
    }
}
