//! `apistend`: the command line of APIStend.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ca_cmd;
mod catalog_cmd;
mod data_dir;
mod load_cmd;
mod load_run;
mod load_timeline;
mod metrics_listener;
mod plot_cmd;
mod proxy;
mod serve_cmd;
mod server_conduct;
mod server_quota;
mod services_arg;

use clap::{Parser, Subcommand};

// The gateway allocates a few small buffers per request (paths, keys, bodies); mimalloc's
// thread-local free lists make that cheaper than glibc's malloc (the gateway bench measures it).
// `--cfg apistend_heap_profile` leaves the system's allocator in place, for a heap profiler that
// intercepts malloc (scripts/heap-profile.sh).
#[cfg(not(apistend_heap_profile))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Gives the system back what start-up freed (the definitions' parse trees, about 6 MiB):
/// mimalloc purges freed memory only after a delay, on later activity of the allocator, which a
/// server idling after its start never has (BENCHMARKS.md, "Start and footprint"). The one
/// unsafe call of the crate: mimalloc offers no safe wrapper for it.
pub(crate) fn release_freed() {
    #[cfg(not(apistend_heap_profile))]
    #[allow(unsafe_code)]
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// APIStend: emulate marketplace and CRM APIs with their real rate limits, and call them without
/// hitting those limits.
#[derive(Debug, Parser)]
#[command(name = "apistend", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the catalog of emulated services and their limits, or import WB's OpenAPI specs.
    Catalog(catalog_cmd::CatalogArgs),
    /// Run the sandbox: the emulated services (seven built in, and those of `--services`) with
    /// their real limits.
    Serve(serve_cmd::ServeArgs),
    /// Drive concurrent workers through the client against a sandbox for a bounded time.
    Load(load_cmd::LoadArgs),
    /// Print the local certificate authority's certificate path and how to trust it.
    Ca(ca_cmd::CaArgs),
    /// The integration core as a local proxy: requests pass through the client's limiter and
    /// retry rules on their way to the service, for integrations in any language.
    Proxy(proxy::ProxyArgs),
    /// Draw an SVG chart from a JSON description (used by scripts/bench.sh).
    Plot(plot_cmd::PlotArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Catalog(args) => catalog_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(&args),
        Command::Load(args) => load_cmd::run(&args),
        Command::Plot(args) => plot_cmd::run(&args),
        Command::Ca(args) => ca_cmd::run(&args),
        Command::Proxy(args) => proxy::run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
