//! `apistend serve`: the sandbox on a socket, with graceful shutdown on SIGINT/SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use std::io::Write;

use crate::data_dir::DataArg;
use crate::services_arg::ServicesArg;
use anyhow::Context;
use apistend_catalog::{CredentialChannel, Overrides};
use apistend_sandbox::{Sandbox, SandboxConfig};
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "APISTEND_ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Also serve HTTPS here, for clients with fixed https:// hosts (point the services'
    /// hostnames at it, or use the plain address as HTTPS_PROXY). Loopback unless you say
    /// otherwise.
    #[arg(long, env = "APISTEND_TLS_ADDR")]
    tls_addr: Option<SocketAddr>,
    /// Directory of the local certificate authority (default: the data directory); give several
    /// instances the same one to share it.
    #[arg(long, env = "APISTEND_CA_DIR")]
    ca_dir: Option<PathBuf>,
    /// Tunnel a CONNECT to a host that no service definition claims to that host (bytes only)
    /// instead of answering 502 — to public addresses only (403 for loopback, private,
    /// link-local and the sandbox's own addresses), closed after the idle timeout without a byte.
    #[arg(long, env = "APISTEND_PASSTHROUGH")]
    passthrough: bool,
    /// Internal address ranges a passthrough tunnel may reach all the same (CIDR, repeatable or
    /// comma-separated: `--passthrough-allow 10.0.0.0/8,127.0.0.1/32`).
    #[arg(
        long,
        env = "APISTEND_PASSTHROUGH_ALLOW",
        value_delimiter = ',',
        requires = "passthrough"
    )]
    passthrough_allow: Vec<ipnet::IpNet>,
    #[command(flatten)]
    data: DataArg,
    /// Make sure a demo sandbox with this key exists.
    #[arg(long, env = "APISTEND_DEMO_KEY")]
    demo_key: Option<String>,
    /// WB's OpenAPI specs, newer than the import embedded in the binary: answer every WB
    /// operation with their examples instead.
    #[arg(long, env = "APISTEND_WB_OPENAPI")]
    wb_openapi: Option<PathBuf>,
    /// Share buckets through Redis: redis://host:port or redis+cluster://host:port,host:port.
    #[arg(long, env = "APISTEND_REDIS")]
    redis: Option<String>,
    /// A TOML file of catalog overrides.
    #[arg(long, env = "APISTEND_OVERRIDES")]
    overrides: Option<PathBuf>,
    /// A JSON file of objects the demo sandbox starts with, as `GET /api/v1/sandboxes/{id}/objects`
    /// exports them (`{"amocrm": {"leads": [{"id": 1, …}]}}`): checked whole, loaded at start.
    #[arg(long, env = "APISTEND_SEED")]
    seed: Option<PathBuf>,
    /// Objects one sandbox keeps at most, in all its collections (a create beyond answers 507).
    #[arg(long, env = "APISTEND_MAX_OBJECTS", default_value_t = 10_000)]
    max_objects: u64,
    /// Bytes of JSON one sandbox's objects take at most.
    #[arg(long, env = "APISTEND_MAX_OBJECT_BYTES", default_value_t = 16 << 20)]
    max_object_bytes: u64,
    /// Requests each sandbox's journal keeps, its latest (`…/requests`); 0 keeps none.
    #[arg(long, env = "APISTEND_JOURNAL_REQUESTS", default_value_t = 1000)]
    journal_requests: usize,
    /// Bytes all sandboxes' journals take in all, the oldest request of any dropped first.
    #[arg(long, env = "APISTEND_JOURNAL_BYTES", default_value_t = 64 << 20)]
    journal_bytes: usize,
    /// Bytes of each request's body, and of its answer's, a journal keeps.
    #[arg(long, env = "APISTEND_JOURNAL_BODY_BYTES", default_value_t = 16 << 10)]
    journal_body_bytes: usize,
    #[command(flatten)]
    services: ServicesArg,
    /// The management API's token, at least 16 printable characters (when absent, one is
    /// generated on first start and shown once; only its SHA-256 is kept).
    #[arg(long, env = "APISTEND_ADMIN_TOKEN")]
    admin_token: Option<String>,
    /// The management API's own rate limit, in requests per second (a burst of 50 or this,
    /// whichever is more): raise it for a tool that drives the API hard.
    #[arg(long, env = "APISTEND_ADMIN_PER_SECOND", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    admin_per_second: u32,
    /// Longest X-Mock-Delay accepted, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    max_delay_ms: u64,
    /// Longest hold of the `timeout` scenario, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    max_timeout_ms: u64,
    /// How long an idle keep-alive connection stays open, in seconds (nginx's default: 75).
    #[arg(long, env = "APISTEND_IDLE_TIMEOUT_S", default_value_t = 75)]
    idle_timeout_s: u64,
    /// Log lines on stderr: `text` for people, `json` (one object per line) for a log pipeline.
    /// The level comes from `RUST_LOG` (default `info`).
    #[arg(long, env = "APISTEND_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// The format of log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// What is worth a warning at start about who can reach this instance: a listener beyond
/// loopback with passthrough (a tunnel from anywhere into what this host reaches), or with an
/// admin token nobody chose (printed once, to whoever read the banner).
fn exposure_warnings(addr: SocketAddr, passthrough: bool, token_given: bool) -> Vec<String> {
    if addr.ip().is_loopback() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if passthrough {
        out.push(format!(
            "--passthrough on {addr}, beyond loopback: anyone who reaches this address can tunnel \
             through this host to public addresses (and to the ranges of --passthrough-allow)"
        ));
    }
    if !token_given {
        out.push(format!(
            "the management API on {addr}, beyond loopback, with no --admin-token: set one \
             (APISTEND_ADMIN_TOKEN) rather than rely on the generated one"
        ));
    }
    out
}

/// The sandbox's configuration from the arguments, with the warnings they deserve logged.
fn sandbox_config(args: &ServeArgs) -> anyhow::Result<SandboxConfig> {
    let (data, moved) = args.data.resolve()?;
    if let Some(warning) = moved {
        tracing::warn!("{warning}");
    }
    for warning in exposure_warnings(args.addr, args.passthrough, args.admin_token.is_some()) {
        tracing::warn!("{warning}");
    }
    let mut config = SandboxConfig::new(&data);
    config.demo_key.clone_from(&args.demo_key);
    // The flag is named for WB: its specs are the `wb` examples set of the WB definition.
    config.newer_examples = args
        .wb_openapi
        .iter()
        .map(|dir| ("wb".to_owned(), dir.clone()))
        .collect();
    config.definitions = args.services.definitions()?;
    config.redis.clone_from(&args.redis);
    config.max_delay_ms = args.max_delay_ms;
    config.max_timeout_ms = args.max_timeout_ms;
    config.idle_timeout = std::time::Duration::from_secs(args.idle_timeout_s);
    config.admin_token.clone_from(&args.admin_token);
    config.admin_per_second = args.admin_per_second;
    config.ca_dir.clone_from(&args.ca_dir);
    config.passthrough = args.passthrough;
    config.passthrough_allow.clone_from(&args.passthrough_allow);
    config.max_objects = args.max_objects;
    config.max_object_bytes = args.max_object_bytes;
    config.journal.requests = args.journal_requests;
    config.journal.bytes = args.journal_bytes;
    config.journal.body_bytes = args.journal_body_bytes;
    if let Some(path) = &args.seed {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.seed = Some(
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?,
        );
    }
    if let Some(path) = &args.overrides {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.overrides = Overrides::from_toml(&text)?;
    }
    Ok(config)
}

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match args.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().flatten_event(true).init(),
    }
    let config = sandbox_config(args)?;
    let sources = config.definitions.sources();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let sandbox = Sandbox::new(config).await?;
        // The engine's facade metrics go to the registry `/metrics` renders.
        metrics::set_global_recorder(sandbox.recorder())
            .map_err(|_| anyhow::anyhow!("a metrics recorder is already installed"))?;
        // Handlers first: a SIGTERM that arrives right after the banner must stop us gracefully.
        let shutdown = shutdown_signal()?;
        let listener = tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("binding {}", args.addr))?;
        let addr = listener.local_addr()?;
        let tls = match args.tls_addr {
            Some(a) => Some(tokio::net::TcpListener::bind(a).await.with_context(|| format!("binding {a}"))?),
            None => None,
        };
        let demo = sandbox.demo();
        crate::alloc::release_freed();
        // The banner is for whoever started us; if they stopped reading, keep serving anyway.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "APIStend sandbox listening on http://{addr}");
        if let Some(tls) = &tls {
            let _ = writeln!(out, "HTTPS (the services' own hostnames, and localhost) on https://{}", tls.local_addr()?);
        }
        let ca = std::fs::canonicalize(sandbox.ca().cert_path()).unwrap_or_else(|_| sandbox.ca().cert_path().to_owned());
        let _ = writeln!(
            out,
            "clients with fixed hosts: HTTPS_PROXY=http://{addr} and trust {} (apistend ca shows how)",
            ca.display()
        );
        let _ = writeln!(out, "services: {}", services_line(sandbox.catalog(), &sources));
        let described: Vec<String> = sandbox
            .described_operations()
            .into_iter()
            .map(|(id, n)| format!("{id} {n}"))
            .collect();
        if !described.is_empty() {
            let _ = writeln!(out, "operations answered from the official descriptions: {}", described.join(", "));
        }
        // The application token, where a loaded service takes one (a Bitrix24 local app's `auth`).
        let app_tokens = sandbox.catalog().services().iter().any(|s| s.credentials.contains(&CredentialChannel::AuthParam));
        if app_tokens {
            let _ = writeln!(out, "demo key: {}   (local app token: {})", demo.key, demo.app_token);
        } else {
            let _ = writeln!(out, "demo key: {}", demo.key);
        }
        match sandbox.generated_admin_token() {
            Some(token) => {
                let _ = writeln!(out, "management API: http://{addr}/api/v1 (Authorization: Bearer {token})");
                let _ = writeln!(out, "  this admin token is shown once: only its hash is kept (--admin-token or APISTEND_ADMIN_TOKEN sets another)");
            }
            None => {
                let _ = writeln!(out, "management API: http://{addr}/api/v1 (Authorization: Bearer the admin token configured or shown at first start)");
            }
        }
        if let Some(try_line) = try_line(sandbox.catalog(), addr, &demo.key) {
            let _ = writeln!(out, "{try_line}");
        }
        let _ = out.flush();
        drop(out);
        match tls {
            Some(tls) => sandbox.serve_with_tls(listener, tls, shutdown).await?,
            None => sandbox.serve(listener, shutdown).await?,
        }
        tracing::info!("stopped");
        anyhow::Ok(())
    })
}

/// Every loaded service with its prefix, and the file of each that is not a built-in.
fn services_line(
    catalog: &apistend_catalog::Catalog,
    sources: &[(String, Option<String>)],
) -> String {
    let listed: Vec<String> = catalog
        .services()
        .iter()
        .map(|s| {
            let file = sources
                .iter()
                .find(|(id, _)| id == s.id.as_str())
                .and_then(|(_, file)| file.as_deref());
            match file {
                Some(file) => format!("{} {} ({file})", s.id, s.prefix),
                None => format!("{} {}", s.id, s.prefix),
            }
        })
        .collect();
    listed.join(", ")
}

/// A request to paste: the first plain operation (no path parameter, not anonymous) of the first
/// service loaded; every service takes the sandbox's `X-Mock-Key`.
fn try_line(catalog: &apistend_catalog::Catalog, addr: SocketAddr, key: &str) -> Option<String> {
    let (service, op) = catalog.services().iter().find_map(|s| {
        let op = s
            .operations
            .iter()
            .find(|op| !op.path.contains('{') && !op.anonymous)?;
        Some((s, op))
    })?;
    let method = match op.method.as_str() {
        "GET" => String::new(),
        m => format!("-X {m} "),
    };
    Some(format!(
        "try:  curl -i {method}http://{addr}{}{} -H 'X-Mock-Key: {key}' -H 'X-Mock-Delay: 0'",
        service.prefix, op.path
    ))
}

pub(crate) fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    #[cfg(unix)]
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .context("installing the SIGINT handler")?;
    Ok(async move {
        #[cfg(unix)]
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down: finishing requests in flight");
    })
}

#[cfg(test)]
mod tests {
    use super::exposure_warnings;

    #[test]
    fn only_a_listener_beyond_loopback_is_warned_about() {
        let lo = "127.0.0.1:8080".parse().unwrap();
        let any = "0.0.0.0:8080".parse().unwrap();
        assert!(exposure_warnings(lo, true, false).is_empty());
        assert_eq!(exposure_warnings(any, true, false).len(), 2);
        assert_eq!(exposure_warnings(any, false, true).len(), 0);
        assert!(exposure_warnings(any, true, true)[0].contains("--passthrough"));
        for w in exposure_warnings(any, true, false) {
            assert!(!w.contains("  "), "one line, no runs of spaces: {w}");
        }
    }
}
