//! The sandbox's verdict on a load run's key (its conduct report, `…/conduct?key=&since_ms=`):
//! whether the run's requests waited what the refusals announced and left dead ends alone, for
//! `apistend load`'s summary.

use std::time::Duration;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The report's part on one key, as a load run sums it up.
#[derive(Debug, Serialize)]
pub(crate) struct Conduct {
    /// `clean` or `violations`.
    pub(crate) verdict: String,
    /// Requests sent before the wait the last refusal announced had passed.
    pub(crate) early_retries: u64,
    /// Requests repeated after a 401, 403 or 404 answered them.
    pub(crate) retried_dead_ends: u64,
    /// Why, a line per rule broken.
    pub(crate) reasons: Vec<String>,
}

#[derive(Deserialize)]
struct Report {
    keys: Vec<KeyReport>,
}

#[derive(Deserialize)]
struct KeyReport {
    key: String,
    verdict: String,
    reasons: Vec<String>,
    groups: Vec<GroupReport>,
}

#[derive(Deserialize)]
struct GroupReport {
    early_retries: u64,
    retried_dead_ends: std::collections::BTreeMap<String, u64>,
}

/// The conduct of `key`'s requests since `since_ms` (Unix milliseconds), from the sandbox at
/// `root`; clean when it kept none (a sandbox whose journal is off).
///
/// # Errors
/// The management API refuses the token, cannot be reached, or knows no sandbox with the key.
pub(crate) async fn conduct(
    http: &reqwest::Client,
    root: &str,
    token: &str,
    key: &str,
    since_ms: u64,
) -> anyhow::Result<Conduct> {
    let sandboxes = crate::server_quota::sandboxes_of(http, root, token, key).await?;
    let id = &sandboxes
        .first()
        .context("the sandbox has no sandbox with this key")?
        .id;
    let report: Report = http
        .get(format!("{root}/api/v1/sandboxes/{id}/conduct"))
        .bearer_auth(token)
        .timeout(Duration::from_secs(30))
        .query(&[("key", key), ("since_ms", &since_ms.to_string())])
        .send()
        .await
        .context("the sandbox's conduct report")?
        .error_for_status()?
        .json()
        .await
        .context("its conduct report")?;
    Ok(report.keys.into_iter().find(|k| k.key == key).map_or_else(
        || Conduct {
            verdict: "clean".to_owned(),
            early_retries: 0,
            retried_dead_ends: 0,
            reasons: Vec::new(),
        },
        |k| Conduct {
            verdict: k.verdict,
            early_retries: k.groups.iter().map(|g| g.early_retries).sum(),
            retried_dead_ends: k
                .groups
                .iter()
                .flat_map(|g| g.retried_dead_ends.values())
                .sum(),
            reasons: k.reasons,
        },
    ))
}
