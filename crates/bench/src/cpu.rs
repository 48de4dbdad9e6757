//! A server's CPU time per request over a load run, split into user and kernel time: where a
//! throughput ratio comes from. Two servers answering the same load with the same system calls
//! differ in user time by what they do per request; kernel time tells what the network stack and
//! the load generator's wake-ups cost on this machine (large on a VM, where waking an idle core
//! is an exit to the hypervisor).

use serde::Serialize;

use crate::stats::Summary;

/// Linux reports a process's times in `/proc/PID/stat` in `USER_HZ` ticks, 100 a second on every
/// architecture it runs on (`USER_HZ` is fixed for user space, unlike the kernel's `HZ`).
const TICKS_PER_SECOND: f64 = 100.0;

/// A process's CPU time so far, in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTime {
    /// Time in user mode.
    pub user: u64,
    /// Time in the kernel on the process's behalf.
    pub kernel: u64,
}

impl CpuTime {
    /// The CPU time of process `pid` so far; `None` where `/proc` does not say.
    #[must_use]
    pub fn of(pid: u32) -> Option<Self> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Self::parse(&text)
    }

    /// Parses a `/proc/PID/stat` line. The command name, in parentheses, may hold spaces and
    /// parentheses itself, so fields are counted from the last `)`: `utime` and `stime` are the
    /// 14th and 15th fields of the line, the 12th and 13th after the name.
    ///
    /// ```
    /// use apistend_bench::cpu::CpuTime;
    /// let line = "42 (tokio (rt)) S 1 42 42 0 -1 4194560 900 0 0 0 1234 567 0 0 20 0 2 0";
    /// assert_eq!(CpuTime::parse(line), Some(CpuTime { user: 1234, kernel: 567 }));
    /// ```
    #[must_use]
    pub fn parse(stat: &str) -> Option<Self> {
        let (_, after_name) = stat.rsplit_once(')')?;
        let mut fields = after_name.split_whitespace().skip(11);
        Some(Self {
            user: fields.next()?.parse().ok()?,
            kernel: fields.next()?.parse().ok()?,
        })
    }

    /// The time from `self` to `later`, spread over `requests`.
    #[must_use]
    pub fn per_request(self, later: Self, requests: u64) -> Option<PerRequest> {
        if requests == 0 {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let us = |from: u64, to: u64| {
            to.saturating_sub(from) as f64 * 1e6 / TICKS_PER_SECOND / requests as f64
        };
        Some(PerRequest {
            user_us: us(self.user, later.user),
            kernel_us: us(self.kernel, later.kernel),
        })
    }
}

/// CPU time a server spent per request over a run, µs (10 ms ticks over a 5 s run: about 0.2 %
/// resolution).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerRequest {
    /// User time.
    pub user_us: f64,
    /// Kernel time.
    pub kernel_us: f64,
}

/// The machine's CPU time so far, in clock ticks: (stolen by the hypervisor, all), from the
/// `cpu` line of `/proc/stat`. On a shared VM the stolen share is noise no benchmark controls:
/// reported beside the figures it disturbs.
#[must_use]
pub fn machine_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let steal = *fields.get(7)?;
    Some((steal, fields.iter().take(8).sum()))
}

/// One path's CPU time per request over the rounds, µs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PerRequestSummary {
    /// User time.
    pub user_us: Summary,
    /// Kernel time.
    pub kernel_us: Summary,
}

impl PerRequestSummary {
    /// Summarizes `runs`; `None` when one of them has no figure (or there are none).
    #[must_use]
    pub fn of(runs: impl IntoIterator<Item = Option<PerRequest>>) -> Option<Self> {
        let runs: Vec<PerRequest> = runs.into_iter().collect::<Option<_>>()?;
        let spread =
            |f: fn(&PerRequest) -> f64| Summary::of(&runs.iter().map(f).collect::<Vec<_>>());
        Some(Self {
            user_us: spread(|c| c.user_us)?,
            kernel_us: spread(|c| c.kernel_us)?,
        })
    }
}

impl std::fmt::Display for PerRequestSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "user {} kernel {}", self.user_us, self.kernel_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_ticks_over_requests() {
        let a = CpuTime {
            user: 100,
            kernel: 50,
        };
        let b = CpuTime {
            user: 150,
            kernel: 150,
        };
        // 50 ticks = 0.5 s of user time over 100 000 requests: 5 µs each.
        let p = a.per_request(b, 100_000).unwrap();
        assert!((p.user_us - 5.0).abs() < 1e-9);
        assert!((p.kernel_us - 10.0).abs() < 1e-9);
        assert!(a.per_request(b, 0).is_none());
        assert!(CpuTime::parse("garbage").is_none());
    }

    #[test]
    fn summarizes_only_complete_runs() {
        let run = |u: f64| {
            Some(PerRequest {
                user_us: u,
                kernel_us: 2.0 * u,
            })
        };
        let s = PerRequestSummary::of([run(1.0), run(3.0), run(2.0)]).unwrap();
        assert_eq!((s.user_us.median, s.kernel_us.max), (2.0, 6.0));
        assert!(PerRequestSummary::of([run(1.0), None]).is_none());
    }

    #[test]
    fn reads_this_process() {
        assert!(CpuTime::of(std::process::id()).is_some());
    }
}
