//! The quota an APIStend sandbox enforces on a key's limit group, read from its management API:
//! the sandbox's own limit for the group where it sets one, else the group's quota in the
//! sandbox's catalog. `apistend load` measures utilization against it, not only against the
//! client's model (which may be wrong: that is what the client learns from the answers).

use std::time::Duration;

use anyhow::{Context as _, bail};
use apistend_limiter::Quota;
use serde::Deserialize;

#[derive(Deserialize)]
pub(crate) struct Sandbox {
    pub(crate) id: String,
    keys: Vec<String>,
    limits: Vec<Limit>,
}

#[derive(Deserialize)]
struct Limit {
    service: String,
    group: String,
    burst: u32,
    interval_ms: f64,
}

#[derive(Deserialize)]
struct ServiceInfo {
    id: String,
    groups: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    id: String,
    burst: u32,
    interval_ms: f64,
}

/// The quota the sandbox at `root` (`http://127.0.0.1:8080`) enforces on group `group` of
/// service `service` for `key`.
///
/// # Errors
/// The management API refuses the token or cannot be reached, or knows no such group.
pub(crate) async fn server_quota(
    http: &reqwest::Client,
    root: &str,
    token: &str,
    key: &str,
    service: &str,
    group: &str,
) -> anyhow::Result<Quota> {
    let get = |path: &str| {
        http.get(format!("{root}{path}"))
            .bearer_auth(token)
            .timeout(Duration::from_secs(10))
    };
    let sandboxes = sandboxes_of(http, root, token, key).await?;
    let own = sandboxes
        .iter()
        .flat_map(|s| &s.limits)
        .find(|l| l.service == service && l.group == group)
        .map(|l| (l.burst, l.interval_ms));
    let (burst, interval_ms) = match own {
        Some(q) => q,
        None => {
            let services: Vec<ServiceInfo> = get("/api/v1/services")
                .send()
                .await
                .context("the sandbox's management API")?
                .error_for_status()?
                .json()
                .await
                .context("its list of services")?;
            services
                .iter()
                .filter(|s| s.id == service)
                .flat_map(|s| &s.groups)
                .find(|g| g.id == group)
                .map(|g| (g.burst, g.interval_ms))
                .with_context(|| format!("the sandbox has no group {group:?} of {service}"))?
        }
    };
    Ok(Quota::new(
        burst,
        Duration::from_secs_f64(interval_ms / 1e3),
    )?)
}

/// The sandboxes of the sandbox at `root` that have `key` (one, unless the key is unknown).
///
/// # Errors
/// The management API refuses the token or cannot be reached.
pub(crate) async fn sandboxes_of(
    http: &reqwest::Client,
    root: &str,
    token: &str,
    key: &str,
) -> anyhow::Result<Vec<Sandbox>> {
    let answer = http
        .get(format!("{root}/api/v1/sandboxes"))
        .bearer_auth(token)
        .timeout(Duration::from_secs(10))
        .query(&[("q", key), ("limit", "10")])
        .send()
        .await
        .context("the sandbox's management API")?;
    if !answer.status().is_success() {
        bail!(
            "the sandbox's management API answered {} to GET /api/v1/sandboxes (check --admin-token)",
            answer.status()
        );
    }
    let mut all: Vec<Sandbox> = answer.json().await.context("its list of sandboxes")?;
    all.retain(|s| s.keys.iter().any(|k| k == key));
    Ok(all)
}
