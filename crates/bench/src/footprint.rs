//! A sandbox's memory under a fleet's load: `sandboxes` sandboxes made through the management
//! API, then requests with their keys to WB operations of distinct limit groups (by the real
//! hostnames, as an intercepted client sends them) until the store holds `buckets` buckets (its
//! `apistend_store_keys` gauge). What a CI runner that hosts many suites' sandboxes in one
//! instance holds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use apistend_catalog::Service;
use serde_json::{Value, json};

use crate::gateway::issue_key;

/// How many sandboxes and buckets to make.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Sandboxes made through the management API.
    pub sandboxes: usize,
    /// Buckets the store should hold at the end.
    pub buckets: u64,
}

/// What was made.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Populated {
    /// Sandboxes made.
    pub sandboxes: usize,
    /// Keys issued in them (the first of each sandbox, and more where the target needs them).
    pub keys: usize,
    /// Buckets the store holds (its gauge).
    pub buckets: u64,
    /// Requests sent to the gateway.
    pub requests: u64,
}

/// Requests in flight at once.
const IN_FLIGHT: usize = 16;

/// The longest a population may take.
const LIMIT: Duration = Duration::from_secs(300);

/// The shortest interval of a group the population calls: its buckets stay drained that long.
const HELD: Duration = Duration::from_secs(60);

/// A host and a path to call there.
type Call = (String, String);

/// The plain `GET` operations (no path parameter, on a host of their own) of the catalog's
/// service whose such operations reach the most limit groups, one per group (WB's, in the
/// built-in catalog): each call of a new one by a key makes one bucket.
fn plain_operations() -> anyhow::Result<(Arc<Service>, Vec<Call>)> {
    let catalog = apistend_catalog::Catalog::builtin()?;
    let of = |svc: &Service| -> Vec<Call> {
        let mut seen = std::collections::HashSet::new();
        svc.operations
            .iter()
            .filter(|op| op.method == apistend_catalog::Method::Get && !op.path.contains('{'))
            .filter_map(|op| Some((op.host.clone()?, op.path.clone(), *op.groups.first()?)))
            // A bucket per key (a group shared by an account or a host makes fewer) that stays
            // drained while the population runs: the store sweeps a bucket once it is full
            // again, and a 10 ms group's is at once.
            .filter(|(_, _, g)| {
                svc.groups.get(*g).is_some_and(|g| {
                    g.scope == apistend_catalog::BucketScope::Key && g.quota.interval() >= HELD
                })
            })
            .filter(|(_, _, g)| seen.insert(*g))
            .map(|(host, path, _)| (host, path))
            .collect()
    };
    catalog
        .services()
        .iter()
        .map(|svc| (Arc::new(svc.clone()), of(svc)))
        .max_by_key(|(_, ops)| ops.len())
        .context("an empty catalog")
}

/// Fills the sandbox at `base` (management token `token`) to `target`.
///
/// # Errors
/// When the management API refuses, the gateway cannot be reached, or the store does not reach
/// the target within five minutes.
pub fn populate(base: &str, token: &str, target: Target) -> anyhow::Result<Populated> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(populate_async(base, token, target))
}

async fn populate_async(base: &str, token: &str, target: Target) -> anyhow::Result<Populated> {
    let http = reqwest::Client::new();
    let started = Instant::now();
    let (service, ops) = plain_operations()?;
    ensure!(!ops.is_empty(), "no plain GET operation to call");
    // A key holds a bucket per group it has called: enough keys for the target, spread over the
    // sandboxes.
    let keys_needed = usize::try_from(target.buckets)?.div_ceil(ops.len());
    let per_sandbox = keys_needed.div_ceil(target.sandboxes.max(1)).max(1);
    let mut keys = Vec::with_capacity(target.sandboxes * per_sandbox);
    for i in 0..target.sandboxes {
        let created: Value = http
            .post(format!("{base}/api/v1/sandboxes"))
            .bearer_auth(token)
            .json(&json!({ "name": format!("suite-{i:04}") }))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let key = created.pointer("/keys/0").and_then(Value::as_str);
        keys.push(key.context("a sandbox without a key")?.to_owned());
        let id = created.pointer("/id").and_then(Value::as_str);
        let id = id.context("a sandbox without an id")?;
        for _ in 1..per_sandbox {
            keys.push(issue_key(&http, base, token, id).await?);
        }
    }
    let mut requests = 0u64;
    // Rounds of one more operation per key until the gauge says enough.
    for round in 0.. {
        let store = buckets(&http, base).await?;
        if store >= target.buckets {
            return Ok(Populated {
                sandboxes: target.sandboxes,
                keys: keys.len(),
                buckets: store,
                requests,
            });
        }
        // A round after every operation was called once adds no bucket.
        ensure!(
            started.elapsed() < LIMIT && round < ops.len(),
            "{store} buckets after {requests} requests: short of {}",
            target.buckets
        );
        let (host, path) = ops.get(round % ops.len()).context("no operation")?;
        let url = format!("{base}{path}");
        let mut set = tokio::task::JoinSet::new();
        for chunk in keys.chunks(keys.len().div_ceil(IN_FLIGHT).max(1)) {
            let (http, url, host, chunk) =
                (http.clone(), url.clone(), host.clone(), chunk.to_vec());
            let service = Arc::clone(&service);
            set.spawn(async move {
                for key in chunk {
                    let mut r = http
                        .get(&url)
                        .header("Host", &host)
                        .header("X-Mock-Delay", "0");
                    // The credential as the service's clients send it (its definition's).
                    for (name, value) in service.credential_headers(&key) {
                        r = r.header(name, value);
                    }
                    let r = r.send().await?;
                    let _ = r.bytes().await?;
                }
                anyhow::Ok(())
            });
        }
        while let Some(done) = set.join_next().await {
            done??;
        }
        requests += keys.len() as u64;
    }
    anyhow::bail!("the rounds ran out")
}

/// The store's bucket count, from `/metrics`.
async fn buckets(http: &reqwest::Client, base: &str) -> anyhow::Result<u64> {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    let line = text
        .lines()
        .find(|l| l.starts_with("apistend_store_keys{") || l.starts_with("apistend_store_keys "))
        .context("no apistend_store_keys in /metrics")?;
    let value = line.split_whitespace().last().unwrap_or("0");
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(value.parse::<f64>()? as u64)
}
