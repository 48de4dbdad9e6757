//! The conduct report: how each key of a sandbox treated the limits, judged from its journal
//! against the rules of the decision record (docs/architecture.md, "Conduct"):
//!
//! - **early retries** — a request to a bucket sent before the wait the bucket's last refusal
//!   announced had passed (the service's own pause header: WB's `X-Ratelimit-Retry`,
//!   MoySklad's `X-Lognex-Retry-After`, Yandex Market's `X-RateLimit-Resource-Until`, else
//!   `Retry-After` or our `X-APIStend-Retry-After`), and by how much: the record's "on 429,
//!   wait at least what the server says";
//! - **retried dead ends** — the same request (method, path, query and body) sent again by
//!   the same key after a 401, 403 or 404 answered it, with no successful write of the key's in
//!   between (a write may have made the request good): the record's "never retry 401/403/404";
//! - refusals and their share, by kind, and the longest run of refusals in a row.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use utoipa::ToSchema;

use super::record::Record;

/// An early request within this many milliseconds of the announced moment is not counted:
/// the journal's times are whole milliseconds.
const SLACK_MS: u64 = 2;

/// How a sandbox's keys treated its services' limits.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Report {
    /// `clean` when no key broke a rule, else `violations`.
    pub(crate) verdict: Verdict,
    /// Why, a line per rule a key broke.
    pub(crate) reasons: Vec<String>,
    /// Requests judged.
    pub(crate) requests: u64,
    pub(crate) keys: Vec<KeyReport>,
}

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Clean,
    Violations,
}

/// One key's conduct.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct KeyReport {
    pub(crate) key: String,
    pub(crate) verdict: Verdict,
    pub(crate) reasons: Vec<String>,
    /// Per service and limit group.
    pub(crate) groups: Vec<GroupReport>,
}

/// One key's conduct toward one limit group (one bucket of the key's).
#[derive(Debug, Default, Serialize, ToSchema)]
pub(crate) struct GroupReport {
    pub(crate) service: String,
    /// The limit group (absent for requests that drew from none).
    pub(crate) group: Option<String>,
    pub(crate) requests: u64,
    /// Requests refused, of any kind.
    pub(crate) refused: u64,
    /// `refused / requests`.
    pub(crate) refused_share: f64,
    /// Refusals by kind (`limit`, `validation`, …).
    pub(crate) refusals: BTreeMap<String, u64>,
    /// The most refusals in a row.
    pub(crate) longest_refusal_run: u64,
    /// Requests sent before the last refusal's announced wait had passed.
    pub(crate) early_retries: u64,
    /// How early the earliest of them was, in milliseconds.
    pub(crate) early_by_max_ms: Option<u64>,
    /// How early they were, the median, in milliseconds.
    pub(crate) early_by_median_ms: Option<u64>,
    /// Requests repeated after a 401, 403 or 404 answered them, by that status.
    pub(crate) retried_dead_ends: BTreeMap<u16, u64>,
}

/// What is followed of one key's bucket while the journal is read.
#[derive(Default)]
struct Bucket {
    report: GroupReport,
    run: u64,
    /// No request before this moment (Unix ms), as the last refusal announced.
    not_before: Option<u64>,
    early: Vec<u64>,
}

/// What is followed of one key.
#[derive(Default)]
struct Key {
    buckets: BTreeMap<(String, Option<String>), Bucket>,
    /// Requests answered 401/403/404, by what makes them the same request.
    dead_ends: HashMap<String, u16>,
}

/// The report of `records` (one sandbox's, oldest first).
pub(crate) fn report(records: &[Record]) -> Report {
    let mut keys: BTreeMap<&str, Key> = BTreeMap::new();
    for r in records {
        let k = keys.entry(r.key.as_str()).or_default();
        let dead_end = same_request(r);
        let repeated = k.dead_ends.get(&dead_end).copied();
        let b = k
            .buckets
            .entry((r.service.clone(), r.group.clone()))
            .or_default();
        b.saw(r);
        if let Some(status) = repeated {
            *b.report.retried_dead_ends.entry(status).or_default() += 1;
        }
        let status = r.response.status;
        if matches!(status, 401 | 403 | 404) {
            k.dead_ends.insert(dead_end, status);
        } else if is_write(&r.request.method) && (200..300).contains(&status) {
            k.dead_ends.clear();
        }
    }
    let keys: Vec<KeyReport> = keys
        .into_iter()
        .map(|(key, k)| KeyReport::of(key, k))
        .collect();
    let reasons: Vec<String> = keys
        .iter()
        .flat_map(|k| k.reasons.iter().map(move |r| format!("{}: {r}", k.key)))
        .collect();
    Report {
        verdict: if reasons.is_empty() {
            Verdict::Clean
        } else {
            Verdict::Violations
        },
        reasons,
        requests: records.len() as u64,
        keys,
    }
}

impl Bucket {
    fn saw(&mut self, r: &Record) {
        let rep = &mut self.report;
        if rep.requests == 0 {
            rep.service.clone_from(&r.service);
            rep.group.clone_from(&r.group);
        }
        rep.requests += 1;
        if let Some(at) = self.not_before {
            if r.at_ms + SLACK_MS < at {
                self.early.push(at - r.at_ms);
            } else {
                // Waited long enough: what comes later is judged by the next refusal.
                self.not_before = None;
            }
        }
        match r.decision.refused {
            Some(kind) => {
                rep.refused += 1;
                *rep.refusals.entry(kind.as_str().to_owned()).or_default() += 1;
                self.run += 1;
                rep.longest_refusal_run = rep.longest_refusal_run.max(self.run);
            }
            None => self.run = 0,
        }
        if let Some(wait) = r.decision.wait_ms.filter(|_| r.decision.refused.is_some()) {
            let answered = r.at_ms + r.latency_us / 1000;
            self.not_before = Some(answered + wait);
        }
    }

    fn finish(mut self) -> GroupReport {
        let mut rep = self.report;
        #[allow(clippy::cast_precision_loss)] // counts of requests, far below 2^52
        if rep.requests > 0 {
            rep.refused_share = rep.refused as f64 / rep.requests as f64;
        }
        self.early.sort_unstable();
        rep.early_retries = self.early.len() as u64;
        rep.early_by_max_ms = self.early.last().copied();
        rep.early_by_median_ms = self.early.get(self.early.len() / 2).copied();
        rep
    }
}

impl KeyReport {
    fn of(key: &str, k: Key) -> Self {
        let groups: Vec<GroupReport> = k.buckets.into_values().map(Bucket::finish).collect();
        let mut reasons = Vec::new();
        for g in &groups {
            let name = match &g.group {
                Some(group) => format!("{} {group}", g.service),
                None => g.service.clone(),
            };
            if g.early_retries > 0 {
                reasons.push(format!(
                    "{name}: {} request(s) sent before the announced wait had passed (by up to {} ms)",
                    g.early_retries,
                    g.early_by_max_ms.unwrap_or_default()
                ));
            }
            for (status, n) in &g.retried_dead_ends {
                reasons.push(format!(
                    "{name}: {n} request(s) repeated after a {status}, which a retry does not fix"
                ));
            }
        }
        Self {
            key: key.to_owned(),
            verdict: if reasons.is_empty() {
                Verdict::Clean
            } else {
                Verdict::Violations
            },
            reasons,
            groups,
        }
    }
}

/// What makes two requests the same: method, path, query and body.
fn same_request(r: &Record) -> String {
    let q = &r.request;
    format!(
        "{} {}?{}\n{}",
        q.method,
        q.path,
        q.query.as_deref().unwrap_or(""),
        q.body
            .body
            .as_deref()
            .or(q.body.body_base64.as_deref())
            .unwrap_or("")
    )
}

/// A method that may change what the service holds.
fn is_write(method: &str) -> bool {
    !matches!(method, "GET" | "HEAD" | "OPTIONS")
}
