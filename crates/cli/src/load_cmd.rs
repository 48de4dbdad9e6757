//! `apistend load`: N concurrent workers through the client against a sandbox (or any base URL)
//! for a bounded time; how close they get to the allowed rate and how often they still hit the
//! limit.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use apistend_catalog::{Catalog, CredentialChannel, Method, Overrides, Service};
use apistend_client::{Client, ClientConfig};
use apistend_limiter::{Algorithm, MemoryStore, Store};
use clap::Args;
use serde::Serialize;

use crate::load_run::{Counts, Run, Worker, sent_and_rejected, spawn_progress, spawn_timeline};
use crate::services_arg::ServicesArg;

#[derive(Debug, Args)]
pub(crate) struct LoadArgs {
    /// Base URL of the sandbox (http://127.0.0.1:8080) or of the service itself.
    #[arg(long)]
    target: String,
    /// Service: wb, b24, apify, ozon or one of `--services`.
    #[arg(long)]
    service: String,
    #[command(flatten)]
    services: ServicesArg,
    /// HTTP method.
    #[arg(long, default_value = "GET")]
    method: String,
    /// Path of the operation, relative to the service's base (`/api/v3/warehouses`).
    #[arg(long)]
    path: String,
    /// The key (sent as X-Mock-Key, and as the service's own credential header).
    #[arg(long)]
    key: String,
    /// Concurrent workers in all.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    workers: u32,
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    duration: u64,
    /// Independent client instances (each with its own limiter on a memory store; one shared
    /// limiter on Redis).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    instances: u32,
    /// `memory` or a Redis URL (redis://… or redis+cluster://…).
    #[arg(long, default_value = "memory")]
    store: String,
    /// The client's algorithm: gcra or fixed-window.
    #[arg(long, default_value = "gcra")]
    algorithm: String,
    /// Send without the client limiter (and without retries): the baseline.
    #[arg(long)]
    no_limiter: bool,
    /// The account the clients share.
    #[arg(long, default_value = "load")]
    account: String,
    /// A TOML file of quota overrides for the client's catalog.
    #[arg(long)]
    overrides: Option<std::path::PathBuf>,
    /// Attempts per call.
    #[arg(long, default_value_t = 3)]
    attempts: u32,
    /// Print one JSON object at the end instead of the summary.
    #[arg(long)]
    json: bool,
    /// Serve the clients' metrics (`apistend_client_*`, `apistend_limiter_*`) as Prometheus
    /// text at `http://ADDR/metrics` while the run lasts.
    #[arg(long, env = "APISTEND_METRICS_ADDR")]
    metrics_addr: Option<std::net::SocketAddr>,
    /// The sandbox's admin token: with it, utilization is measured against the quota the
    /// sandbox enforces on the key (read from its management API) as well as the client's.
    #[arg(long, env = "APISTEND_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Write the run as a time series (JSON lines every 100 ms: sent, accepted, refused, the
    /// bucket level the server reports) to this file.
    #[arg(long)]
    timeline: Option<std::path::PathBuf>,
}

/// What a run measured.
#[derive(Debug, Serialize)]
struct Summary {
    sent: u64,
    ok: u64,
    rejected: u64,
    local_refusals: u64,
    other_errors: u64,
    duration_s: f64,
    achieved_rps: f64,
    allowed_rps: f64,
    utilization: f64,
    /// What the server's quota admits in the run, when known (`--admin-token`).
    server_allowed_rps: Option<f64>,
    server_utilization: Option<f64>,
    /// The quota the client learned from the server's answers and ended the run with, if any.
    learned_burst: Option<u32>,
    learned_interval_ms: Option<f64>,
    wait_p50_ms: f64,
    wait_p99_ms: f64,
    workers: u32,
    instances: u32,
    store: String,
    algorithm: String,
    limiter: bool,
    /// The sandbox's conduct report on the run's key (`--admin-token`): whether its requests
    /// waited what the refusals announced and left dead ends alone.
    conduct: Option<crate::server_conduct::Conduct>,
}

pub(crate) fn run(args: &LoadArgs) -> anyhow::Result<()> {
    let method = Method::parse(&args.method).with_context(|| {
        format!(
            "--method {:?}: expected GET, POST, PUT, PATCH or DELETE",
            args.method
        )
    })?;
    let algorithm: Algorithm = match args.algorithm.as_str() {
        "gcra" => Algorithm::Gcra,
        "fixed-window" | "fixed_window" => Algorithm::FixedWindow,
        other => bail!("--algorithm {other:?}: expected gcra or fixed-window"),
    };
    if !args.target.starts_with("http://") && !args.target.starts_with("https://") {
        bail!(
            "--target {:?}: expected an http:// or https:// URL",
            args.target
        );
    }
    if !args.path.starts_with('/') {
        bail!("--path {:?}: expected a path starting with /", args.path);
    }
    let overrides = match &args.overrides {
        Some(p) => Overrides::from_toml(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )?,
        None => Overrides::default(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let summary = rt.block_on(load(args, method, algorithm, &overrides))?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!(
            "sent {} · ok {} · rejected by the server {} · refused locally {} · other errors {}\n\
             achieved {:.2} req/s of {:.2} allowed: utilization {:.3} · local wait p50 {:.1} ms, p99 {:.1} ms",
            summary.sent,
            summary.ok,
            summary.rejected,
            summary.local_refusals,
            summary.other_errors,
            summary.achieved_rps,
            summary.allowed_rps,
            summary.utilization,
            summary.wait_p50_ms,
            summary.wait_p99_ms
        );
        if let (Some(a), Some(u)) = (summary.server_allowed_rps, summary.server_utilization) {
            println!("the sandbox's own quota allowed {a:.2} req/s: utilization {u:.3}");
        }
        if let (Some(b), Some(i)) = (summary.learned_burst, summary.learned_interval_ms) {
            println!("learned from the server's answers: burst {b}, one every {i:.1} ms");
        }
        if let Some(c) = &summary.conduct {
            println!(
                "the sandbox's verdict on the key: {} · early retries {} · retried dead ends {}",
                c.verdict, c.early_retries, c.retried_dead_ends
            );
            for r in &c.reasons {
                println!("  {r}");
            }
        }
    }
    Ok(())
}

/// The client's base URL for `target`: a sandbox's root gets the service's prefix (`/wb`); a URL
/// already under that prefix (`…/moysklad/api/remap/1.2`), or one of the service itself (a host
/// its definition claims: `https://content-api.wildberries.ru`), is used as it is.
fn base_for(target: &str, catalog: &Catalog, service: &Service) -> String {
    let t = target.trim_end_matches('/');
    let url = reqwest::Url::parse(t).ok();
    let own_host = url
        .as_ref()
        .and_then(|u| u.host_str())
        .and_then(|h| catalog.by_hostname(h))
        .is_some_and(|s| s.id == service.id);
    let under_prefix = url
        .as_ref()
        .is_some_and(|u| service.strip_prefix(u.path()).is_some());
    if own_host || under_prefix {
        t.to_owned()
    } else {
        format!("{t}{}", service.prefix)
    }
}

/// The sandbox's own key header, a delay of 0 and no validation (a load measures the limits,
/// and sends no body an operation may require), then the service's first credential channel
/// (from its definition), so the request is what a real client of the service sends.
fn credential_headers(service: &Service, key: &str) -> Vec<(&'static str, String)> {
    let mut h = CredentialChannel::MockKey.headers(key);
    h.push(("X-Mock-Delay", "0".to_owned()));
    h.push(("X-Mock-Validation", "off".to_owned()));
    h.extend(service.credential_headers(key));
    h
}

async fn load(
    args: &LoadArgs,
    method: Method,
    algorithm: Algorithm,
    overrides: &Overrides,
) -> anyhow::Result<Summary> {
    serve_metrics(args.metrics_addr).await?;
    let catalog = args.services.catalog(&Overrides::default())?;
    let sid = catalog.service_id(&args.service)?;
    let service = catalog
        .service(sid)
        .with_context(|| format!("--service {}", args.service))?;
    let base = base_for(&args.target, &catalog, service);
    let credentials = credential_headers(service, &args.key);
    let clients = clients(
        args,
        &catalog,
        service,
        &base,
        &credentials,
        algorithm,
        overrides,
    )?;
    let group = clients
        .first()
        .and_then(|c| c.group_of(method, &args.path))
        .context("no limit group for this operation")?;
    let (quota, group_id) = (group.quota, group.id.clone());
    // Tokens one request takes (MoySklad's 4): the allowed rates below are in requests.
    let weight = catalog
        .resolve(service.id, method, &args.path, None)
        .and_then(|r| r.operation)
        .map_or(1, |o| o.weight.max(1));
    let raw = reqwest::Client::new();
    let server_quota = match &args.admin_token {
        Some(token) => Some(server_quota(&raw, &base, token, args, service, &group_id).await?),
        None => None,
    };
    let started_ms = u64::try_from(apistend_answers::clock::unix_now_ms()).unwrap_or(0);
    let run = Run {
        start: Instant::now(),
        duration: Duration::from_secs(args.duration),
        counts: Arc::new(Counts::default()),
        reported: Arc::new(crate::load_timeline::Reported::default()),
    };
    let timeline = args
        .timeline
        .is_some()
        .then(|| spawn_timeline(&run, &clients, args.no_limiter));
    let mut tasks = Vec::new();
    for w in 0..args.workers {
        let client = clients
            .get(w as usize % clients.len())
            .cloned()
            .context("no client")?;
        let worker = Worker {
            raw: raw.clone(),
            url: format!("{base}{}", args.path),
            path: args.path.clone(),
            method,
            headers: credentials.clone(),
            no_limiter: args.no_limiter,
            service: service.clone(),
        };
        tasks.push(tokio::spawn(worker.run(client, run.clone())));
    }
    let progress = std::io::stderr()
        .is_terminal()
        .then(|| spawn_progress(&run));
    let mut waits = Vec::new();
    for t in tasks {
        waits.extend(t.await?);
    }
    if let Some(p) = progress {
        p.abort();
    }
    if let (Some(path), Some(t)) = (&args.timeline, timeline) {
        crate::load_timeline::write(path, &t.await?)?;
    }
    let learned = clients
        .first()
        .and_then(|c| c.learned().into_iter().find(|l| l.group == group_id));
    let conduct = conduct_since(&raw, &base, args, started_ms).await?;
    let measured = Measured {
        elapsed: run
            .start
            .elapsed()
            .as_secs_f64()
            .max(run.duration.as_secs_f64()),
        waits,
        quota,
        server_quota,
        weight,
        learned,
        conduct,
    };
    Ok(summarize(args, algorithm, &clients, &run.counts, measured))
}

/// One client per `--instances`, sharing the store when it is Redis.
fn clients(
    args: &LoadArgs,
    catalog: &apistend_catalog::Catalog,
    service: &Service,
    base: &str,
    credentials: &[(&'static str, String)],
    algorithm: Algorithm,
    overrides: &Overrides,
) -> anyhow::Result<Vec<Client>> {
    let mut config = ClientConfig::default();
    config.attempts = args.attempts.max(1);
    let shared_redis = match args.store.as_str() {
        "memory" => None,
        url => Some(Store::from_url(url)?),
    };
    let mut clients = Vec::new();
    for _ in 0..args.instances {
        let store = shared_redis
            .clone()
            .unwrap_or_else(|| Store::from(MemoryStore::new()));
        let mut b = Client::builder()
            .service(service.id)
            .catalog(catalog.clone())
            .account(&args.account)
            .base_url(base)
            .store(store)
            .overrides(overrides.clone())
            .algorithm(algorithm)
            .config(config.clone());
        for (k, v) in credentials {
            b = b.header(*k, v);
        }
        clients.push(b.build()?);
    }
    Ok(clients)
}

/// The quota the sandbox enforces on the key's group (its management API is at the root of
/// `base`).
async fn server_quota(
    raw: &reqwest::Client,
    base: &str,
    token: &str,
    args: &LoadArgs,
    service: &Service,
    group: &str,
) -> anyhow::Result<apistend_limiter::Quota> {
    let root = root_of(base);
    crate::server_quota::server_quota(raw, &root, token, &args.key, service.id.as_str(), group)
        .await
}

/// Serves the clients' metrics at `addr`, when given, while the run lasts.
async fn serve_metrics(addr: Option<std::net::SocketAddr>) -> anyhow::Result<()> {
    if let Some(addr) = addr {
        let bound = crate::metrics_listener::serve(addr).await?;
        eprintln!("metrics on http://{bound}/metrics");
    }
    Ok(())
}

/// The sandbox's conduct report on the run's key since `started_ms`, when `--admin-token` is
/// given.
async fn conduct_since(
    raw: &reqwest::Client,
    base: &str,
    args: &LoadArgs,
    started_ms: u64,
) -> anyhow::Result<Option<crate::server_conduct::Conduct>> {
    let Some(token) = &args.admin_token else {
        return Ok(None);
    };
    let root = root_of(base);
    let c = crate::server_conduct::conduct(raw, &root, token, &args.key, started_ms);
    Ok(Some(c.await?))
}

/// The root of `base`, where the sandbox's management API is.
fn root_of(base: &str) -> String {
    reqwest::Url::parse(base)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| base.to_owned())
}

/// What a run measured besides its counts.
struct Measured {
    elapsed: f64,
    waits: Vec<Duration>,
    quota: apistend_limiter::Quota,
    server_quota: Option<apistend_limiter::Quota>,
    weight: u32,
    learned: Option<apistend_client::LearnedQuota>,
    conduct: Option<crate::server_conduct::Conduct>,
}

/// The run's summary.
fn summarize(
    args: &LoadArgs,
    algorithm: Algorithm,
    clients: &[Client],
    counts: &Counts,
    mut m: Measured,
) -> Summary {
    let elapsed = m.elapsed;
    let ok = counts.ok.load(Ordering::Relaxed);
    m.waits.sort_unstable();
    let waits = &m.waits;
    let pct = |p: f64| {
        waits
            .get(((waits.len() as f64 * p) as usize).min(waits.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    // The requests GCRA admits in the run: the burst, then one token per interval, over the
    // request's weight.
    let weight = m.weight;
    let admits = |q: &apistend_limiter::Quota| {
        (f64::from(q.burst()) + elapsed / q.interval().as_secs_f64()) / elapsed / f64::from(weight)
    };
    let allowed = admits(&m.quota);
    let server_allowed = m.server_quota.as_ref().map(admits);
    let achieved = ok as f64 / elapsed;
    let (sent, rejected) = sent_and_rejected(args.no_limiter, counts, clients);
    let local_refusals = clients.iter().map(|c| c.stats().local_refusals).sum();
    Summary {
        sent,
        ok,
        rejected,
        local_refusals,
        other_errors: counts.other.load(Ordering::Relaxed),
        duration_s: elapsed,
        achieved_rps: achieved,
        allowed_rps: allowed,
        utilization: achieved / allowed,
        server_allowed_rps: server_allowed,
        server_utilization: server_allowed.map(|a| achieved / a),
        learned_burst: m.learned.as_ref().map(|l| l.quota.burst()),
        learned_interval_ms: m.learned.map(|l| l.quota.interval().as_secs_f64() * 1e3),
        wait_p50_ms: pct(0.5),
        wait_p99_ms: pct(0.99),
        workers: args.workers,
        instances: args.instances,
        store: if args.store == "memory" {
            "memory".into()
        } else {
            "redis".into()
        },
        algorithm: algorithm.as_str().into(),
        limiter: !args.no_limiter,
        conduct: m.conduct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_a_sandbox_root_a_base_under_its_prefix_or_the_service_itself() {
        let c = Catalog::builtin().unwrap();
        // (service, target, base)
        for (id, target, base) in [
            ("wb", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/wb"),
            ("wb", "http://127.0.0.1:8080/wb", "http://127.0.0.1:8080/wb"),
            (
                "moysklad",
                "http://127.0.0.1:8080/moysklad/api/remap/1.2",
                "http://127.0.0.1:8080/moysklad/api/remap/1.2",
            ),
            (
                "moysklad",
                "https://api.moysklad.ru/api/remap/1.2",
                "https://api.moysklad.ru/api/remap/1.2",
            ),
            (
                "wb",
                "https://content-api.wildberries.ru",
                "https://content-api.wildberries.ru",
            ),
            // A prefix is a whole segment.
            (
                "wb",
                "http://127.0.0.1:8080/wbx",
                "http://127.0.0.1:8080/wbx/wb",
            ),
        ] {
            let svc = c.service(c.service_id(id).unwrap()).unwrap();
            assert_eq!(base_for(target, &c, svc), base, "{id} {target}");
        }
    }
}
