//! Benchmarks of what ships: the release `apistend` binary, started as a user starts it, measured
//! against an anchor that runs as its own process in the same run, in alternating rounds.
//!
//! `scripts/bench-gateway.sh` and `cargo bench -p apistend-bench --bench gateway_binary` both
//! call [`gateway::run`]; `scripts/bench-instructions.sh` (`bench-gateway --instructions`) counts
//! the same servers' instructions per request with [`instructions::run`], and
//! `bench-gateway --against DIR` compares two builds in interleaved runs with [`builds::run`];
//! `scripts/bench-start.sh` (`bench-start`) times starts and reads idle memory with [`start::run`],
//! and the memory of a sandbox filled with a fleet's sandboxes and buckets ([`footprint`]).

pub mod builds;
pub mod cpu;
pub mod footprint;
pub mod gateway;
pub mod instructions;
pub mod process;
pub mod soak;
pub mod start;
pub mod stats;
pub mod wrk;
