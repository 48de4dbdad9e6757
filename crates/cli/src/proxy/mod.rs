//! `apistend proxy`: the integration core as a local HTTP proxy, for integrations in any
//! language. Each request goes through the same limiter and retry rules as the Rust client
//! (`RetryPolicy` around `RateLimitLayer`, shared buckets in memory or Redis), then on to the
//! real service or a sandbox; the integration changes only its base URL.
//!
//! - [`route`]: which service a request is for, and where it goes upstream;
//! - [`forward`]: one request through the stack, and every way it can fail as a clear answer;
//! - [`upstream`]: the transport, answers streamed through unless judged by their body;
//! - [`listen`]: the listener, on the sandbox's connection clock;
//! - [`generic`]: the definition of an API that has none.

mod forward;
mod generic;
mod limits;
mod listen;
mod route;
mod upstream;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use apistend_catalog::Overrides;
use apistend_limiter::Store;
use clap::Args;

use crate::services_arg::ServicesArg;
use limits::Limits;

/// `apistend proxy` arguments.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// Address to listen on.
    #[arg(long, env = "APISTEND_PROXY_LISTEN", default_value = "127.0.0.1:9000")]
    listen: SocketAddr,
    /// Services to proxy (repeat for several: each is then reached under its prefix, `/wb/…`,
    /// or by a `Host` it claims). With one, every path is its. `generic` is an API with no
    /// definition (with `--upstream`): one bucket per account, learned from its rate-limit
    /// headers (IETF `RateLimit`, `RateLimit-Limit/-Remaining/-Reset`, `X-RateLimit-*`,
    /// `Retry-After`) and its 429s.
    #[arg(long = "service", required = true)]
    services: Vec<String>,
    /// Where requests go: replaces the scheme and host of the services' own hosts (WB's per-host
    /// upstreams come from its definition), e.g. a sandbox's `http://127.0.0.1:8080`. Without
    /// it, the real service's host.
    #[arg(long, env = "APISTEND_PROXY_UPSTREAM")]
    upstream: Option<String>,
    /// The account whose buckets the requests draw from (every process of one account shares
    /// them).
    #[arg(long, default_value = "_global")]
    account: String,
    /// Where the buckets live: `memory`, or `redis://…` / `redis+cluster://…` to share them
    /// with other proxies and clients.
    #[arg(long, env = "APISTEND_PROXY_STORE", default_value = "memory")]
    store: String,
    /// A TOML file of quota overrides for the catalog (docs/services.md).
    #[arg(long)]
    overrides: Option<std::path::PathBuf>,
    /// Largest request body accepted, in bytes, or the service's documented largest if larger
    /// (MoySklad's 20 MB).
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    max_body_bytes: usize,
    /// Requests in flight at once; more are refused with a 503 at once.
    #[arg(long, default_value_t = 1024)]
    max_in_flight: usize,
    /// Seconds a client has to send its request body.
    #[arg(long, default_value_t = 30)]
    read_timeout_s: u64,
    /// Seconds a request may take in all, from its arrival to its answer's head (every try,
    /// every wait for a token, every backoff); a streamed answer body may then pause this long
    /// between its pieces.
    #[arg(long, default_value_t = 60)]
    upstream_timeout_s: u64,
    /// Seconds an idle keep-alive connection stays open.
    #[arg(long, default_value_t = 75)]
    idle_timeout_s: u64,
    /// Seconds a request head, once started, may take to arrive whole.
    #[arg(long, default_value_t = 10)]
    head_timeout_s: u64,
    /// Largest answer body read whole, for the answers a service's definition judges by their
    /// body (Bitrix24's 503 and 429, its successes' operating time); a larger one is a 502.
    /// Every other answer streams through unread.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    max_judged_body_bytes: usize,
    #[command(flatten)]
    services_dir: ServicesArg,
}

/// The largest request head, as the sandbox's.
const MAX_HEAD_BYTES: usize = 16 * 1024;

pub(crate) fn run(args: &ProxyArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(serve(args))
}

async fn serve(args: &ProxyArgs) -> anyhow::Result<()> {
    // The recorder first: clients register their metric handles when built.
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .context("installing the metrics recorder")?;
    // The engine's decisions here are the clients' own waits, counted as waits by the clients.
    apistend_limiter::count_no_decisions();
    let overrides = match &args.overrides {
        Some(p) => Overrides::from_toml(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )?,
        None => Overrides::default(),
    };
    let catalog = generic::catalog(&args.services_dir, &args.services)?;
    let store = Store::from_url(&args.store).with_context(|| format!("--store {}", args.store))?;
    let limits = Limits {
        max_body_bytes: args.max_body_bytes,
        read_timeout: Duration::from_secs(args.read_timeout_s),
        upstream_timeout: Duration::from_secs(args.upstream_timeout_s),
        max_judged_body_bytes: args.max_judged_body_bytes,
    };
    let routes = route::Routes::new(
        &catalog,
        &args.services,
        args.upstream.as_deref(),
        &args.account,
        &store,
        &overrides,
        &limits,
    )?;
    let state = Arc::new(forward::State {
        routes,
        limits,
        in_flight: Arc::new(tokio::sync::Semaphore::new(args.max_in_flight.max(1))),
        metrics,
    });
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    {
        // The banner is for whoever started us; if they stopped reading, keep serving anyway.
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "APIStend proxy listening on http://{addr}");
        for line in state.routes.describe() {
            let _ = writeln!(out, "  {line}");
        }
        let _ = out.flush();
    }
    let upkeep = state.metrics.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    let app = axum::Router::new()
        .route("/metrics", axum::routing::get(forward::metrics))
        .route(
            "/learned",
            axum::routing::get(forward::learned).delete(forward::forget_learned),
        )
        .fallback(forward::handle)
        .with_state(state);
    let timeouts = apistend_sandbox::transport::Timeouts {
        idle: Duration::from_secs(args.idle_timeout_s.max(1)),
        head: Duration::from_secs(args.head_timeout_s.max(1)),
    };
    let shutdown = crate::serve_cmd::shutdown_signal()?;
    listen::serve(listener, app, timeouts, MAX_HEAD_BYTES, shutdown).await;
    Ok(())
}
