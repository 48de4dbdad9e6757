//! `apistend`: the command line of APIStend.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod alloc;
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
