//! A load run's machinery: the workers that send, what they count, the timeline and the
//! progress bar.

// Rates and shares of a run: small, non-negative numbers.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use apistend_catalog::{Method, Service};
use apistend_client::{Client, ClientError, RefusedBy};

/// What every task of a run shares.
#[derive(Clone)]
pub(crate) struct Run {
    pub(crate) start: Instant,
    pub(crate) duration: Duration,
    pub(crate) counts: Arc<Counts>,
    pub(crate) reported: Arc<crate::load_timeline::Reported>,
}

impl Run {
    pub(crate) fn end(&self) -> Instant {
        self.start + self.duration
    }
}

/// Sent and rejected requests: the server's count without the limiter, else the clients'.
pub(crate) fn sent_and_rejected(
    no_limiter: bool,
    counts: &Counts,
    clients: &[Client],
) -> (u64, u64) {
    if no_limiter {
        return (
            counts.sent.load(Ordering::Relaxed),
            counts.rejected.load(Ordering::Relaxed),
        );
    }
    let stats: Vec<_> = clients.iter().map(Client::stats).collect();
    (
        stats.iter().map(|s| s.attempts).sum(),
        stats.iter().map(|s| s.server_rate_limits).sum(),
    )
}

/// The `--timeline` recorder: a row every step until the run ends.
pub(crate) fn spawn_timeline(
    run: &Run,
    clients: &[Client],
    no_limiter: bool,
) -> tokio::task::JoinHandle<Vec<crate::load_timeline::Row>> {
    let (counts, reported, clients) = (
        Arc::clone(&run.counts),
        Arc::clone(&run.reported),
        clients.to_vec(),
    );
    tokio::spawn(crate::load_timeline::record(
        run.start,
        run.end(),
        move |t_s| {
            let (sent, rejected) = sent_and_rejected(no_limiter, &counts, &clients);
            crate::load_timeline::Row {
                t_s,
                sent,
                ok: counts.ok.load(Ordering::Relaxed),
                rejected,
                remaining: reported.get(),
            }
        },
    ))
}

/// A progress bar on a terminal, every 250 ms.
pub(crate) fn spawn_progress(run: &Run) -> tokio::task::JoinHandle<()> {
    let run = run.clone();
    tokio::spawn(async move {
        while Instant::now() < run.end() {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let done = run.start.elapsed().as_secs_f64() / run.duration.as_secs_f64();
            let bar = "#".repeat((done.min(1.0) * 30.0) as usize);
            eprint!(
                "\r[{bar:<30}] {:>3.0}%  ok {}",
                done.min(1.0) * 100.0,
                run.counts.ok.load(Ordering::Relaxed)
            );
        }
        eprintln!();
    })
}

/// One worker: requests one after the other until the run ends.
pub(crate) struct Worker {
    pub(crate) raw: reqwest::Client,
    pub(crate) url: String,
    pub(crate) path: String,
    pub(crate) method: Method,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) no_limiter: bool,
    pub(crate) service: Service,
}

impl Worker {
    /// Sends until the end of `run`; the local waits of its successes.
    pub(crate) async fn run(self, client: Client, run: Run) -> Vec<Duration> {
        let (counts, end) = (&run.counts, run.end());
        let mut waits = Vec::new();
        while Instant::now() < end {
            if self.no_limiter {
                self.raw_request(counts).await;
                continue;
            }
            match client
                .request(self.method, &self.path)
                .deadline(end)
                .send()
                .await
            {
                Ok(r) => {
                    counts.ok.fetch_add(1, Ordering::Relaxed);
                    let header = |name: &str| r.headers.get(name)?.to_str().ok();
                    if let Some(left) = self.service.reported_remaining(header) {
                        run.reported.set(left);
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
    }

    /// One request without the limiter, counted by its status.
    async fn raw_request(&self, counts: &Counts) {
        let mut r = self
            .raw
            .request(apistend_client::http_method(self.method), &self.url);
        for (k, v) in &self.headers {
            r = r.header(*k, v);
        }
        counts.sent.fetch_add(1, Ordering::Relaxed);
        match r.send().await.map(|r| r.status().as_u16()) {
            Ok(s) if s < 400 => counts.ok.fetch_add(1, Ordering::Relaxed),
            Ok(429 | 503) => counts.rejected.fetch_add(1, Ordering::Relaxed),
            _ => counts.other.fetch_add(1, Ordering::Relaxed),
        };
    }
}

#[derive(Debug, Default)]
/// What the workers counted.
pub(crate) struct Counts {
    pub(crate) sent: AtomicU64,
    pub(crate) ok: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) other: AtomicU64,
}
