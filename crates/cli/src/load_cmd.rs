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
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use apistend_catalog::{Catalog, CredentialChannel, Method, Overrides, Service};
use apistend_client::{Client, ClientConfig, ClientError, RefusedBy};
use apistend_limiter::{Algorithm, MemoryStore, Store};
use clap::Args;
use serde::Serialize;

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

/// The sandbox's own key header and a delay of 0, then the service's first credential channel
/// (from its definition), so the request is what a real client of the service sends.
fn credential_headers(service: &Service, key: &str) -> Vec<(&'static str, String)> {
    let mut h = CredentialChannel::MockKey.headers(key);
    h.push(("X-Mock-Delay", "0".to_owned()));
    if let Some(channel) = service.credentials.first() {
        h.extend(channel.headers(key));
    }
    h
}

async fn load(
    args: &LoadArgs,
    method: Method,
    algorithm: Algorithm,
    overrides: &Overrides,
) -> anyhow::Result<Summary> {
    if let Some(addr) = args.metrics_addr {
        let bound = crate::metrics_listener::serve(addr).await?;
        eprintln!("metrics on http://{bound}/metrics");
    }
    let catalog = args.services.catalog(&Overrides::default())?;
    let sid = catalog.service_id(&args.service)?;
    let service = catalog
        .service(sid)
        .with_context(|| format!("--service {}", args.service))?;
    let base = base_for(&args.target, &catalog, service);
    let mut config = ClientConfig::default();
    config.attempts = args.attempts.max(1);
    let shared_redis = match args.store.as_str() {
        "memory" => None,
        url => Some(Store::from_url(url)?),
    };
    let mut clients = Vec::new();
    let credentials = credential_headers(service, &args.key);
    for _ in 0..args.instances {
        let store = shared_redis
            .clone()
            .unwrap_or_else(|| Store::from(MemoryStore::new()));
        let mut b = Client::builder()
            .service(sid)
            .catalog(catalog.clone())
            .account(&args.account)
            .base_url(&base)
            .store(store)
            .overrides(overrides.clone())
            .algorithm(algorithm)
            .config(config.clone());
        for (k, v) in &credentials {
            b = b.header(*k, v);
        }
        clients.push(b.build()?);
    }
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
        Some(token) => {
            // The management API is at the sandbox's root.
            let root = reqwest::Url::parse(&base)
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_else(|_| base.clone());
            let root = root.as_str();
            let q = crate::server_quota::server_quota(
                &raw,
                root,
                token,
                &args.key,
                service.id.as_str(),
                &group_id,
            )
            .await?;
            Some(q)
        }
        None => None,
    };
    let duration = Duration::from_secs(args.duration);
    let start = Instant::now();
    let end = start + duration;
    let counts = Arc::new(Counts::default());
    let reported = Arc::new(crate::load_timeline::Reported::default());
    let timeline = args.timeline.is_some().then(|| {
        let (counts, reported, clients) =
            (Arc::clone(&counts), Arc::clone(&reported), clients.clone());
        let no_limiter = args.no_limiter;
        tokio::spawn(crate::load_timeline::record(start, end, move |t_s| {
            let stats: Vec<_> = clients.iter().map(Client::stats).collect();
            let sum = |f: fn(&apistend_client::Stats) -> u64| stats.iter().map(f).sum::<u64>();
            crate::load_timeline::Row {
                t_s,
                sent: if no_limiter {
                    counts.sent.load(Ordering::Relaxed)
                } else {
                    sum(|s| s.attempts)
                },
                ok: counts.ok.load(Ordering::Relaxed),
                rejected: if no_limiter {
                    counts.rejected.load(Ordering::Relaxed)
                } else {
                    sum(|s| s.server_rate_limits)
                },
                remaining: reported.get(),
            }
        }))
    });
    let mut tasks = Vec::new();
    for w in 0..args.workers {
        let client = clients
            .get(w as usize % clients.len())
            .cloned()
            .context("no client")?;
        let (raw, counts, url, path) = (
            raw.clone(),
            Arc::clone(&counts),
            format!("{base}{}", args.path),
            args.path.clone(),
        );
        let headers = credentials.clone();
        let no_limiter = args.no_limiter;
        let (reported, service) = (Arc::clone(&reported), service.clone());
        tasks.push(tokio::spawn(async move {
            let mut waits = Vec::new();
            while Instant::now() < end {
                if no_limiter {
                    let mut r = raw.request(apistend_client::http_method(method), &url);
                    for (k, v) in &headers {
                        r = r.header(*k, v);
                    }
                    counts.sent.fetch_add(1, Ordering::Relaxed);
                    match r.send().await.map(|r| r.status().as_u16()) {
                        Ok(s) if s < 400 => counts.ok.fetch_add(1, Ordering::Relaxed),
                        Ok(429 | 503) => counts.rejected.fetch_add(1, Ordering::Relaxed),
                        _ => counts.other.fetch_add(1, Ordering::Relaxed),
                    };
                    continue;
                }
                match client.request(method, &path).deadline(end).send().await {
                    Ok(r) => {
                        counts.ok.fetch_add(1, Ordering::Relaxed);
                        if let Some(left) =
                            service.reported_remaining(|name| r.headers.get(name)?.to_str().ok())
                        {
                            reported.set(left);
                        }
                        waits.push(r.waited);
                    }
                    Err(ClientError::RateLimited {
                        refused_by: RefusedBy::Local,
                        retry_after,
                    }) => {
                        // The next slot is past the end of the run (or the ceiling): this worker is done.
                        if Instant::now() + retry_after >= end {
                            break;
                        }
                        tokio::time::sleep(retry_after).await;
                    }
                    Err(ClientError::RateLimited { .. }) => {}
                    Err(_) => {
                        counts.other.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            waits
        }));
    }
    let progress = std::io::stderr().is_terminal().then(|| {
        let counts = Arc::clone(&counts);
        tokio::spawn(async move {
            while Instant::now() < end {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let done = start.elapsed().as_secs_f64() / duration.as_secs_f64();
                let bar = "#".repeat((done.min(1.0) * 30.0) as usize);
                eprint!(
                    "\r[{bar:<30}] {:>3.0}%  ok {}",
                    done.min(1.0) * 100.0,
                    counts.ok.load(Ordering::Relaxed)
                );
            }
            eprintln!();
        })
    });
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
    let elapsed = start.elapsed().as_secs_f64().max(duration.as_secs_f64());
    let stats: Vec<_> = clients.iter().map(Client::stats).collect();
    let sum = |f: fn(&apistend_client::Stats) -> u64| stats.iter().map(f).sum::<u64>();
    let ok = counts.ok.load(Ordering::Relaxed);
    waits.sort_unstable();
    let pct = |p: f64| {
        waits
            .get(((waits.len() as f64 * p) as usize).min(waits.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    // The requests GCRA admits in the run: the burst, then one token per interval, over the
    // request's weight.
    let admits = |q: &apistend_limiter::Quota| {
        (f64::from(q.burst()) + elapsed / q.interval().as_secs_f64()) / elapsed / f64::from(weight)
    };
    let allowed = admits(&quota);
    let server_allowed = server_quota.as_ref().map(admits);
    let achieved = ok as f64 / elapsed;
    let learned = clients
        .first()
        .and_then(|c| c.learned().into_iter().find(|l| l.group == group_id));
    Ok(Summary {
        sent: if args.no_limiter {
            counts.sent.load(Ordering::Relaxed)
        } else {
            sum(|s| s.attempts)
        },
        ok,
        rejected: if args.no_limiter {
            counts.rejected.load(Ordering::Relaxed)
        } else {
            sum(|s| s.server_rate_limits)
        },
        local_refusals: sum(|s| s.local_refusals),
        other_errors: counts.other.load(Ordering::Relaxed),
        duration_s: elapsed,
        achieved_rps: achieved,
        allowed_rps: allowed,
        utilization: achieved / allowed,
        server_allowed_rps: server_allowed,
        server_utilization: server_allowed.map(|a| achieved / a),
        learned_burst: learned.as_ref().map(|l| l.quota.burst()),
        learned_interval_ms: learned.map(|l| l.quota.interval().as_secs_f64() * 1e3),
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
    })
}

#[derive(Debug, Default)]
struct Counts {
    sent: AtomicU64,
    ok: AtomicU64,
    rejected: AtomicU64,
    other: AtomicU64,
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
