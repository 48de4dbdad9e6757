//! What a gateway run reports: its rounds, their ratios and CPU per request, and the table.

use serde::Serialize;

use super::config::Backing;
use crate::cpu::{PerRequest, PerRequestSummary};
use crate::stats::Summary;
use crate::wrk::Load;

/// One round.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// The hello-world run before this round.
    pub hello_before: Load,
    /// The allowed path.
    pub allowed: Load,
    /// The rejected path.
    pub rejected: Load,
    /// The hello-world run after it.
    pub hello_after: Load,
    /// `allowed.rps` over the mean of the two hello runs.
    pub allowed_ratio: f64,
    /// `rejected.rps` over the mean of the two hello runs.
    pub rejected_ratio: f64,
    /// The memory-backed sandbox's allowed and rejected paths in this round, when the
    /// sandbox under test keeps its buckets in Redis.
    pub memory: Option<(Load, Load)>,
    /// The server's CPU time per request in this round's runs, where `/proc` says it.
    pub cpu: RoundCpu,
}

/// The server's CPU time per request in a round's runs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RoundCpu {
    /// The hello-world, in the run after the round.
    pub hello: Option<PerRequest>,
    /// The sandbox under test, allowed path.
    pub allowed: Option<PerRequest>,
    /// The sandbox under test, rejected path.
    pub rejected: Option<PerRequest>,
}

/// CPU time per request over the rounds, of each server and path.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CpuSummary {
    /// The hello-world.
    pub hello: PerRequestSummary,
    /// The sandbox under test, allowed path.
    pub allowed: PerRequestSummary,
    /// The sandbox under test, rejected path.
    pub rejected: PerRequestSummary,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// How the buckets were kept.
    pub backing: Backing,
    /// wrk's connections and seconds per run.
    pub connections: u32,
    /// Seconds per run.
    pub seconds: u64,
    /// Whether servers and load had a core each.
    pub pinned: bool,
    /// Every round.
    pub rounds: Vec<Round>,
    /// Allowed ratio over the rounds.
    pub allowed_ratio: Summary,
    /// Rejected ratio over the rounds.
    pub rejected_ratio: Summary,
    /// Hello-world requests per second over all its runs.
    pub hello_rps: Summary,
    /// Allowed path requests per second.
    pub allowed_rps: Summary,
    /// Rejected path requests per second.
    pub rejected_rps: Summary,
    /// Allowed path p99, µs.
    pub allowed_p99_us: Summary,
    /// Rejected path p99, µs.
    pub rejected_p99_us: Summary,
    /// With Redis: allowed and rejected rates over the memory-backed sandbox's of each round.
    pub vs_memory: Option<(Summary, Summary)>,
    /// CPU time per request (where `/proc` says it).
    pub cpu: Option<CpuSummary>,
    /// The sandbox's peak resident set at the end, KiB.
    pub sandbox_peak_rss_kib: Option<u64>,
}

/// The rounds' CPU times per request, when every run has them.
pub(super) fn cpu_summary(rounds: &[Round]) -> Option<CpuSummary> {
    let of = |f: fn(&RoundCpu) -> Option<PerRequest>| {
        PerRequestSummary::of(rounds.iter().map(|r| f(&r.cpu)))
    };
    Some(CpuSummary {
        hello: of(|c| c.hello)?,
        allowed: of(|c| c.allowed)?,
        rejected: of(|c| c.rejected)?,
    })
}

/// The report as a table, for people.
#[must_use]
pub fn table(r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "apistend serve ({:?} buckets) against apistend-hello, wrk -t1 -c{} -d{}s, pinned: {}",
        r.backing, r.connections, r.seconds, r.pinned
    );
    let _ = writeln!(
        s,
        "| round | hello req/s (before / after) | allowed req/s (p50 / p99 µs) | rejected req/s (p50 / p99 µs) | allowed ratio | rejected ratio |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for (i, x) in r.rounds.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | {:.0} / {:.0} | {:.0} ({:.0} / {:.0}) | {:.0} ({:.0} / {:.0}) | {:.3} | {:.3} |",
            i + 1,
            x.hello_before.rps,
            x.hello_after.rps,
            x.allowed.rps,
            x.allowed.p50_us,
            x.allowed.p99_us,
            x.rejected.rps,
            x.rejected.p50_us,
            x.rejected.p99_us,
            x.allowed_ratio,
            x.rejected_ratio
        );
    }
    let _ = writeln!(s, "allowed ratio median (min–max): {}", r.allowed_ratio);
    let _ = writeln!(s, "rejected ratio median (min–max): {}", r.rejected_ratio);
    let _ = writeln!(
        s,
        "p99 µs allowed {} rejected {}",
        r.allowed_p99_us, r.rejected_p99_us
    );
    for (i, m) in r.rounds.iter().enumerate() {
        if let Some((a, j)) = m.memory {
            let _ = writeln!(
                s,
                "round {}: memory-backed allowed {:.0} req/s (p99 {:.0} µs), rejected {:.0} req/s (p99 {:.0} µs)",
                i + 1,
                a.rps,
                a.p99_us,
                j.rps,
                j.p99_us
            );
        }
    }
    if let Some((a, j)) = &r.vs_memory {
        let _ = writeln!(
            s,
            "over the memory-backed sandbox, median (min–max): allowed {a}, rejected {j}"
        );
    }
    if let Some(c) = &r.cpu {
        let _ = writeln!(
            s,
            "CPU µs per request, median (min–max): hello {}; allowed {}; rejected {}",
            c.hello, c.allowed, c.rejected
        );
    }
    if let Some(kib) = r.sandbox_peak_rss_kib {
        let _ = writeln!(s, "sandbox peak RSS: {kib} KiB");
    }
    s
}
