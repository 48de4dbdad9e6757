//! `cargo bench -p apistend-bench --bench gateway_binary`: the same run as
//! `scripts/bench-gateway.sh` (five rounds, memory buckets), on the release binaries it builds.
#![allow(missing_docs, clippy::print_stdout)]

fn main() -> anyhow::Result<()> {
    // cargo passes `--bench`; nothing else to read.
    let bin_dir = apistend_bench::process::build_release(&["apistend", "apistend-bench"])?;
    let report = apistend_bench::gateway::run(&apistend_bench::gateway::Config::new(bin_dir))?;
    print!("{}", apistend_bench::gateway::table(&report));
    Ok(())
}
