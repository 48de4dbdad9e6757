//! The conduct report: how each key of a sandbox treated the limits, judged from its journal
//! against the rules of the decision record (docs/architecture.md, "Conduct"):
//!
//! - **early retries** — a request to a bucket sent before the wait the bucket's last refusal
//!   announced had passed (the service's own pause header: WB's `X-Ratelimit-Retry`,
//!   MoySklad's `X-Lognex-Retry-After`, Yandex Market's `X-RateLimit-Resource-Until`, else
//!   `Retry-After` or our `X-APIStend-Retry-After`), and by how much: the record's "on 429,
//!   wait at least what the server says". A request that arrived before, or within
//!   [`IN_FLIGHT_MS`] after, the answer to the first refusal of a run of refusals is not judged
//!   unless it came on a connection a refusal of the run was answered on (then it was sent after
//!   the client read it — but for the first such request on each connection, which a pooled
//!   client may have queued before: [`ReadOn`]): it may have left before the client read that
//!   refusal (a fleet's workers have requests in flight; they are refused too, and do not move
//!   that moment); every later request before the
//!   wait the last refusal announced has passed is an early retry, until an answer that is not
//!   a refusal ends the run;
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

/// A request on another connection within this many milliseconds after the answer to the first
/// refusal of a run may have been sent before the client read that refusal: it is not judged.
/// 50 ms judged a proxy's concurrent workers early on a loaded 2-core CI machine (six proxies,
/// thirty clients: requests released together reached the sandbox tenths of a second apart). A
/// request on the refused connection itself is judged at once ([`Pause::judges`]).
pub(crate) const IN_FLIGHT_MS: u64 = 250;

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
    /// The last refusal that announced a wait: no request before `until` (Unix ms).
    not_before: Option<Pause>,
    early: Vec<u64>,
}

/// A wait a refusal announced.
#[derive(Clone)]
struct Pause {
    /// No request before this moment (Unix ms), as the last refusal announced.
    until: u64,
    /// Requests on other connections before this moment (Unix µs) may have been in flight when
    /// the run's first refusal was read.
    in_flight_until_us: u64,
    /// The connections the run's refusals were answered on ([`ReadOn`]).
    read_on: Vec<ReadOn>,
}

/// A connection a refusal of the run was answered on. HTTP/1.1 sends the next request on a
/// connection only once the answer is read, so a request on it after that answer was sent after
/// the client's transport read the refusal and is judged at once — but for one: a pooled client
/// hands a freed connection to a request it queued before the refusal came (one its limiter had
/// already let go), which goes out a moment after the answer. Within the in-flight window, the
/// first request on each such connection is not judged; every later one is.
#[derive(Clone, Copy)]
struct ReadOn {
    connection: u64,
    /// When the refusal was answered on it (Unix µs).
    answered_us: u64,
    /// Whether its one possibly queued request has been seen.
    excused: bool,
}

/// The most connections of one run that are remembered (a fleet's concurrency, bounded).
const READ_ON_MAX: usize = 64;

impl Pause {
    /// Whether a request that arrived at `at_us` on `connection` is judged: sent after the
    /// client can have read the run's refusals.
    fn judges(&mut self, at_us: u64, connection: u64) -> bool {
        if at_us >= self.in_flight_until_us {
            return true;
        }
        let Some(read) = self
            .read_on
            .iter_mut()
            .find(|r| connection != 0 && r.connection == connection && at_us >= r.answered_us)
        else {
            return false;
        };
        std::mem::replace(&mut read.excused, true)
    }
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
        if let Some(p) = &mut self.not_before {
            if r.at_ms + SLACK_MS >= p.until {
                // Waited long enough: what comes later is judged by the next refusal.
                self.not_before = None;
            } else if p.judges(r.at_us, r.connection) {
                self.early.push(p.until - r.at_ms);
            }
        }
        match r.decision.refused {
            Some(kind) => {
                rep.refused += 1;
                *rep.refusals.entry(kind.as_str().to_owned()).or_default() += 1;
                self.run += 1;
                rep.longest_refusal_run = rep.longest_refusal_run.max(self.run);
            }
            None => {
                self.run = 0;
                // An answer that was not a refusal ends the pause: what follows it is no retry.
                self.not_before = None;
            }
        }
        if let Some(wait) = r.decision.wait_ms.filter(|_| r.decision.refused.is_some()) {
            let answered_us = r.at_us + r.latency_us;
            // A run of refusals keeps the moment of its first: a refusal of a request in
            // flight, or of an early one, does not move it (the pause is still on).
            let (in_flight_until_us, mut read_on) = match self.not_before.take() {
                Some(p) => (p.in_flight_until_us, p.read_on),
                None => (answered_us + IN_FLIGHT_MS * 1000, Vec::new()),
            };
            // A connection's first refusal of the run is the one remembered: its one queued
            // request is excused once per run.
            if read_on.len() < READ_ON_MAX && !read_on.iter().any(|o| o.connection == r.connection)
            {
                read_on.push(ReadOn {
                    connection: r.connection,
                    answered_us,
                    excused: false,
                });
            }
            self.not_before = Some(Pause {
                until: answered_us / 1000 + wait,
                in_flight_until_us,
                read_on,
            });
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A request of key `k` to WB's group `g`, arriving at `at` on connection `conn`.
    fn rec(
        k: &str,
        at: u64,
        conn: u64,
        status: u16,
        refused: Option<&str>,
        wait: Option<u64>,
    ) -> Record {
        serde_json::from_value(json!({
            "id": "0000abcd-1", "at": "", "at_ms": at, "at_us": at * 1000, "latency_us": 1000,
            "connection": conn,
            "key": k, "service": "wb", "operation": null, "group": "g",
            "request": {"method": "GET", "path": "/wb/x", "query": null, "headers": {},
                        "body_bytes": 0, "body_truncated": false},
            "response": {"status": status, "headers": {}, "body_bytes": 0, "body_truncated": false},
            "decision": {"remaining": 0, "limit": 1, "refused": refused, "reason": null,
                         "scenario": null, "wait_ms": wait},
        }))
        .unwrap()
    }

    fn early(records: &[Record]) -> u64 {
        report(records).keys[0].groups[0].early_retries
    }

    #[test]
    fn a_request_is_early_unless_it_may_have_left_before_the_refusal_was_read() {
        let refused = |at, conn| rec("k", at, conn, 429, Some("limit"), Some(1000));
        let ok = |at, conn| rec("k", at, conn, 200, None, None);
        // A refusal answered at 1001: the wait ends at 2001, requests until 1251 were in flight.
        let base = vec![ok(900, 1), refused(1000, 1)];
        let with = |more: Vec<Record>| [base.clone(), more].concat();
        assert_eq!(early(&with(vec![ok(1000, 2)])), 0, "before the answer");
        assert_eq!(
            early(&with(vec![ok(1240, 2)])),
            0,
            "in flight on another connection"
        );
        assert_eq!(
            early(&with(vec![ok(1010, 1)])),
            0,
            "the first on the refused connection: a pooled client may have queued it before"
        );
        assert_eq!(
            early(&with(vec![refused(1010, 1), ok(1030, 1)])),
            1,
            "the second on the refused connection: sent after its answer was read"
        );
        assert_eq!(
            early(&with(vec![ok(1260, 1)])),
            1,
            "after the client read it"
        );
        assert_eq!(early(&with(vec![ok(2001, 1)])), 0, "waited");
        // Requests in flight are refused too; they do not move the run's moment.
        let run = vec![refused(1010, 2), refused(1230, 3), ok(1255, 2)];
        assert_eq!(early(&with(run)), 1);
        // An answer that is not a refusal ends the run.
        let run = vec![ok(1260, 1), ok(1270, 1)];
        assert_eq!(early(&with(run)), 1);
        // A client sending again every 100 ms on its connection: every one is early but the
        // first (it may have been queued); on new connections, all but those in flight.
        let hammer: Vec<Record> = (1..=10).map(|i| refused(1000 + 100 * i, 1)).collect();
        let fresh: Vec<Record> = (1..=10).map(|i| refused(1000 + 100 * i, 10 + i)).collect();
        assert_eq!(report(&with(fresh)).keys[0].groups[0].early_retries, 8);
        let r = report(&with(hammer));
        assert_eq!(r.keys[0].groups[0].early_retries, 9);
        assert_eq!(r.keys[0].groups[0].longest_refusal_run, 11);
        assert_eq!(r.verdict, Verdict::Violations);
        // Each judged one came 100 ms after a refusal that announced a second (1200 before the
        // 2101 the refusal at 1100 announced).
        assert_eq!(r.keys[0].groups[0].early_by_max_ms, Some(2101 - 1200));
    }

    #[test]
    fn a_request_repeated_after_a_dead_end_counts_until_a_write_succeeds() {
        let mut get = rec("k", 1, 1, 401, Some("scenario"), None);
        let again = rec("k", 2, 1, 401, Some("scenario"), None);
        let r = report(&[get.clone(), again.clone(), again.clone()]);
        assert_eq!(
            r.keys[0].groups[0].retried_dead_ends,
            BTreeMap::from([(401, 2)])
        );
        let mut write = rec("k", 3, 1, 201, None, None);
        write.request.method = "POST".to_owned();
        write.request.path = "/wb/other".to_owned();
        get.at_ms = 4;
        get.response.status = 200;
        let r = report(&[again, write, get]);
        assert!(r.keys[0].groups[0].retried_dead_ends.is_empty());
        assert_eq!(r.verdict, Verdict::Clean);
    }
}
