//! The soak of the shipped binary: `apistend serve` (release build, its own process, pinned to
//! one core) under a steady mix for a long time, its resident set and latency sampled every 10 s.
//!
//! One sandbox with 10 000 keys (every key its own buckets), one WB group opened wide and one
//! closed (as in the gateway benchmark). The mix, per 100 requests: 75 allowed, 20 rejected (WB's
//! 429), 4 with a scenario (`X-Mock-Scenario`: those that answer at once on a connection that
//! stays up), 1 read of the management API (a page of buckets, as the dashboard reads them),
//! keys taken in turn. First the driver's maximum is measured closed-loop (every connection
//! sends its next request when the last is answered); then it runs open-loop at half of it:
//! each connection sends on a fixed schedule.
//!
//! The verdict: the resident set stays within +10 % of its size at the end of the first minute,
//! and the p99 of the last 5 minutes is at most 1.2 × the p99 of minutes 2–6.

#![allow(clippy::cast_precision_loss)] // rates and ratios for a report

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::ensure;
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::cpu::machine_ticks;
use crate::gateway::{ALLOWED, REJECTED, issue_key, open_sandbox};
use crate::process::{Server, pinned, rss_kib};

/// How to run the soak.
#[derive(Debug, Clone)]
pub struct Config {
    /// Directory of the release binaries.
    pub bin_dir: PathBuf,
    /// How long the soak runs after the maximum is measured.
    pub duration: Duration,
    /// Keys in the sandbox.
    pub keys: usize,
    /// Concurrent connections of the driver.
    pub connections: usize,
    /// The core the sandbox is pinned to (the driver runs wherever it is started: the script
    /// pins it to the other).
    pub server_core: Option<usize>,
    /// The share of the measured maximum to run at.
    pub load: f64,
}

/// One 10-second sample.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Seconds since the soak began.
    pub t_s: f64,
    /// Requests answered in the window, by kind of answer.
    pub ok: u64,
    /// 429s (the rejected part of the mix).
    pub rejected: u64,
    /// Other statuses (the scenarios' own).
    pub other: u64,
    /// Transport errors (none expected).
    pub errors: u64,
    /// Latency percentiles of the window, µs.
    pub p50_us: u64,
    /// The window's p99, µs.
    pub p99_us: u64,
    /// The sandbox's resident set, KiB (`VmRSS`).
    pub rss_kib: u64,
    /// The share of the machine's CPU time the hypervisor took in the window, in percent.
    pub steal_pct: f64,
}

/// What the soak measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The driver's closed-loop maximum, requests per second.
    pub max_rps: f64,
    /// The rate the soak ran at.
    pub target_rps: f64,
    /// The rate achieved over the soak.
    pub achieved_rps: f64,
    /// Every sample.
    pub samples: Vec<Sample>,
    /// `VmRSS` at the end of the first minute, and the most after it, KiB.
    pub rss_at_1min_kib: u64,
    /// The largest resident set after the first minute.
    pub rss_max_after_kib: u64,
    /// p99 of minutes 2–6 and of the last 5 minutes, µs.
    pub p99_early_us: u64,
    /// p99 of the last 5 minutes.
    pub p99_late_us: u64,
    /// Whether both criteria hold.
    pub passed: bool,
}

/// The counters every connection adds to.
struct Window {
    ok: AtomicU64,
    rejected: AtomicU64,
    other: AtomicU64,
    errors: AtomicU64,
    latencies: std::sync::Mutex<Histogram<u64>>,
}

impl Window {
    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            ok: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            other: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            latencies: std::sync::Mutex::new(Histogram::new_with_bounds(1, 60_000_000, 2)?),
        })
    }

    /// Takes the window's figures and starts the next one.
    fn take(&self) -> (u64, u64, u64, u64, Histogram<u64>) {
        let mut h = self
            .latencies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let copy = h.clone();
        h.reset();
        (
            self.ok.swap(0, Ordering::Relaxed),
            self.rejected.swap(0, Ordering::Relaxed),
            self.other.swap(0, Ordering::Relaxed),
            self.errors.swap(0, Ordering::Relaxed),
            copy,
        )
    }
}

/// One request of the mix.
struct Mix {
    base: String,
    token: String,
    sandbox: String,
    keys: Vec<String>,
    scenarios: Vec<String>,
}

impl Mix {
    fn request(&self, http: &reqwest::Client, i: u64) -> reqwest::RequestBuilder {
        let n = usize::try_from(i).unwrap_or(0);
        let key = self
            .keys
            .get(n % self.keys.len().max(1))
            .map_or("", String::as_str);
        match i % 100 {
            0..75 => http
                .get(format!("{}{}", self.base, ALLOWED.0))
                .header("Authorization", key),
            75..95 => http
                .get(format!("{}{}", self.base, REJECTED.0))
                .header("Authorization", key),
            95..99 => {
                let s = self
                    .scenarios
                    .get(n % self.scenarios.len().max(1))
                    .map_or("", String::as_str);
                http.get(format!("{}{}", self.base, ALLOWED.0))
                    .header("Authorization", key)
                    .header("X-Mock-Scenario", s)
            }
            // A page of the sandbox's buckets among its first thousand, as the dashboard reads
            // them (`all`: without it the list scans every key's groups for the ones not full,
            // about 45 ms at 10 000 keys — a cost of its own, not what this soak is about).
            _ => http
                .get(format!(
                    "{}/api/v1/sandboxes/{}/buckets?all=true&limit=50&offset={}",
                    self.base,
                    self.sandbox,
                    (i / 100 % 20) * 50
                ))
                .bearer_auth(&self.token),
        }
    }
}

/// Runs the soak.
///
/// # Errors
/// When the sandbox cannot be started or set up, or the driver sees no answers at all.
pub fn run(config: &Config) -> anyhow::Result<Report> {
    let data = tempfile::tempdir()?;
    let token = format!("soak-{:032x}", u128::from(std::process::id()) * 0x9E37_79B9);
    let mut serve = pinned(&config.bin_dir.join("apistend"), config.server_core);
    serve
        .args(["serve", "--addr", "127.0.0.1:0", "--admin-token", &token])
        .args(["--admin-per-second", "1000000", "--data"])
        .arg(data.path())
        .env_remove("RUST_LOG")
        .env_remove("APISTEND_LOG_FORMAT");
    let sandbox = Server::start(serve, "apistend serve")?;
    let pid = sandbox.pid();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(config.connections)
            .timeout(Duration::from_secs(10))
            .build()?;
        let mix = Arc::new(set_up(&http, &sandbox.base, &token, config.keys).await?);
        eprintln!(
            "set up: {} keys; measuring the driver's maximum (10 s)",
            mix.keys.len()
        );
        let max_rps = closed_loop(&http, &mix, config.connections, Duration::from_secs(10)).await?;
        let target = max_rps * config.load;
        eprintln!(
            "maximum {max_rps:.0} req/s; soaking at {target:.0} req/s for {:?}",
            config.duration
        );
        let windows = open_loop(&http, &mix, config, target, pid).await?;
        Ok::<_, anyhow::Error>(verdict(max_rps, target, &windows, config.duration))
    })
}

async fn set_up(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    keys: usize,
) -> anyhow::Result<Mix> {
    let (id, first) = open_sandbox(http, base, token, "soak").await?;
    let mut all = vec![first];
    while all.len() < keys {
        all.push(issue_key(http, base, token, &id).await?);
    }
    // The scenarios that answer at once, on a connection that stays up (a timeout, a slow
    // answer or a reset would measure the scenario, not the sandbox).
    let scenarios: Vec<String> = http
        .get(format!("{base}/api/v1/scenarios"))
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json::<Vec<String>>()
        .await?
        .into_iter()
        .filter(|s| !["timeout", "slow", "reset"].contains(&s.as_str()))
        .collect();
    ensure!(!scenarios.is_empty(), "the sandbox names no scenario");
    Ok(Mix {
        base: base.to_owned(),
        token: token.to_owned(),
        sandbox: id,
        keys: all,
        scenarios,
    })
}

/// Every connection sends its next request when the last is answered, for `d`: the driver's
/// maximum rate.
async fn closed_loop(
    http: &reqwest::Client,
    mix: &Arc<Mix>,
    connections: usize,
    d: Duration,
) -> anyhow::Result<f64> {
    let done = Arc::new(AtomicU64::new(0));
    let end = Instant::now() + d;
    let tasks: Vec<_> = (0..connections)
        .map(|c| {
            let (http, mix, done) = (http.clone(), Arc::clone(mix), Arc::clone(&done));
            tokio::spawn(async move {
                let mut i = c as u64;
                while Instant::now() < end {
                    if mix.request(&http, i).send().await.is_ok() {
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    i += connections as u64;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await?;
    }
    let n = done.load(Ordering::Relaxed);
    ensure!(n > 0, "no request was answered");
    Ok(n as f64 / d.as_secs_f64())
}

/// Each connection sends on its own schedule (`connections / target` apart) for the configured
/// duration; a sample every 10 s.
async fn open_loop(
    http: &reqwest::Client,
    mix: &Arc<Mix>,
    config: &Config,
    target: f64,
    pid: u32,
) -> anyhow::Result<Vec<(Sample, Histogram<u64>)>> {
    let window = Arc::new(Window::new()?);
    let start = Instant::now();
    let end = start + config.duration;
    let every = Duration::from_secs_f64(config.connections as f64 / target.max(1.0));
    let tasks: Vec<_> = (0..config.connections)
        .map(|c| {
            let (http, mix, window) = (http.clone(), Arc::clone(mix), Arc::clone(&window));
            let connections = config.connections as u64;
            tokio::spawn(async move {
                // Spread the connections' schedules over one period.
                let offset = every.mul_f64(c as f64 / connections as f64);
                let mut tick =
                    tokio::time::interval_at(tokio::time::Instant::now() + offset, every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
                let mut i = c as u64;
                while Instant::now() < end {
                    tick.tick().await;
                    let sent = Instant::now();
                    let answer = mix.request(&http, i).send().await;
                    let us = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
                    match answer {
                        Ok(r) => {
                            let counter = match r.status().as_u16() {
                                200..300 => &window.ok,
                                429 => &window.rejected,
                                _ => &window.other,
                            };
                            counter.fetch_add(1, Ordering::Relaxed);
                            let _ = r.bytes().await;
                        }
                        Err(_) => {
                            window.errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    let _ = window
                        .latencies
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .record(us.max(1));
                    i += connections;
                }
            })
        })
        .collect();
    let mut windows = Vec::new();
    let mut sampler = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(10),
        Duration::from_secs(10),
    );
    let mut ticks = machine_ticks();
    while Instant::now() < end {
        sampler.tick().await;
        let (ok, rejected, other, errors, h) = window.take();
        let now_ticks = machine_ticks();
        let steal_pct = match (ticks, now_ticks) {
            (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => {
                (s1 - s0) as f64 * 100.0 / (t1 - t0) as f64
            }
            _ => 0.0,
        };
        ticks = now_ticks;
        let s = Sample {
            t_s: start.elapsed().as_secs_f64(),
            ok,
            rejected,
            other,
            errors,
            p50_us: h.value_at_quantile(0.5),
            p99_us: h.value_at_quantile(0.99),
            rss_kib: rss_kib(pid).unwrap_or(0),
            steal_pct,
        };
        eprintln!(
            "t={:>5.0}s ok {:>7} 429 {:>6} other {:>5} errors {} p50 {:>6} µs p99 {:>6} µs rss {} KiB steal {:.0} %",
            s.t_s, s.ok, s.rejected, s.other, s.errors, s.p50_us, s.p99_us, s.rss_kib, s.steal_pct
        );
        windows.push((s, h));
    }
    for t in tasks {
        t.await?;
    }
    Ok(windows)
}

/// The p99 of the windows that end in `(from, to]` seconds, merged.
fn p99_between(windows: &[(Sample, Histogram<u64>)], from: f64, to: f64) -> u64 {
    let mut merged: Option<Histogram<u64>> = None;
    for (_, h) in windows.iter().filter(|(s, _)| s.t_s > from && s.t_s <= to) {
        match merged.as_mut() {
            Some(m) => {
                let _ = m.add(h);
            }
            None => merged = Some(h.clone()),
        }
    }
    merged.map_or(0, |m| m.value_at_quantile(0.99))
}

fn verdict(
    max_rps: f64,
    target: f64,
    windows: &[(Sample, Histogram<u64>)],
    duration: Duration,
) -> Report {
    let samples: Vec<Sample> = windows.iter().map(|(s, _)| s.clone()).collect();
    let total = duration.as_secs_f64();
    let answered: u64 = samples.iter().map(|s| s.ok + s.rejected + s.other).sum();
    let rss_at_1min = samples
        .iter()
        .find(|s| s.t_s >= 60.0)
        .map_or(0, |s| s.rss_kib);
    let rss_max_after = samples
        .iter()
        .filter(|s| s.t_s > 60.0)
        .map(|s| s.rss_kib)
        .max()
        .unwrap_or(0);
    let p99_early = p99_between(windows, 60.0, 360.0);
    let p99_late = p99_between(windows, total - 300.0, total + 10.0);
    let passed = rss_at_1min > 0
        && (rss_max_after as f64) <= rss_at_1min as f64 * 1.10
        && p99_early > 0
        && (p99_late as f64) <= p99_early as f64 * 1.2;
    Report {
        max_rps,
        target_rps: target,
        achieved_rps: answered as f64 / total,
        samples,
        rss_at_1min_kib: rss_at_1min,
        rss_max_after_kib: rss_max_after,
        p99_early_us: p99_early,
        p99_late_us: p99_late,
        passed,
    }
}
