//! `apistend serve`: the sandbox on a socket, with graceful shutdown on SIGINT/SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use apistend_catalog::Overrides;
use apistend_sandbox::{Sandbox, SandboxConfig};
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "APISTEND_ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Directory of the embedded data file (sandboxes and keys).
    #[arg(long, env = "APISTEND_DATA", default_value = ".")]
    data: PathBuf,
    /// Make sure a demo sandbox with this key exists.
    #[arg(long, env = "APISTEND_DEMO_KEY")]
    demo_key: Option<String>,
    /// WB's OpenAPI specs: answer every WB operation with its spec example.
    #[arg(long, env = "APISTEND_WB_OPENAPI")]
    wb_openapi: Option<PathBuf>,
    /// Share buckets through Redis: redis://host:port or redis+cluster://host:port,host:port.
    #[arg(long, env = "APISTEND_REDIS")]
    redis: Option<String>,
    /// A TOML file of catalog overrides.
    #[arg(long, env = "APISTEND_OVERRIDES")]
    overrides: Option<PathBuf>,
    /// Longest X-Mock-Delay accepted, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    max_delay_ms: u64,
    /// Longest hold of the `timeout` scenario, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    max_timeout_ms: u64,
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut config = SandboxConfig::new(&args.data);
    config.demo_key = args.demo_key;
    config.wb_openapi = args.wb_openapi;
    config.redis = args.redis;
    config.max_delay_ms = args.max_delay_ms;
    config.max_timeout_ms = args.max_timeout_ms;
    if let Some(path) = &args.overrides {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.overrides = Overrides::from_toml(&text)?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let sandbox = Sandbox::new(config).await?;
        let listener = tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("binding {}", args.addr))?;
        let addr = listener.local_addr()?;
        let demo = sandbox.demo();
        println!("APIStend sandbox listening on http://{addr}");
        if sandbox.spec_operations() > 0 {
            println!("WB operations answered from specs: {}", sandbox.spec_operations());
        }
        println!("demo key: {}   (Bitrix24 local app token: {})", demo.key, demo.app_token);
        println!("try:  curl -i -X POST http://{addr}/b24/rest/crm.deal.fields.json -H 'X-Mock-Key: {}' -H 'X-Mock-Delay: 0'", demo.key);
        sandbox.serve(listener, shutdown_signal()).await?;
        tracing::info!("stopped");
        anyhow::Ok(())
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}
