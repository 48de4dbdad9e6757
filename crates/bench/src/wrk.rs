//! One load run by `wrk` (Debian package `wrk`): a C load generator that needs little CPU, so on
//! its own core it leaves the server under test what it measures.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::process::pinned;

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Load {
    /// Requests per second.
    pub rps: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
    /// Requests completed.
    pub requests: u64,
    /// Answers other than 2xx and 3xx.
    pub non_2xx: u64,
    /// Connect, read, write and timeout errors.
    pub socket_errors: u64,
}

/// How to run wrk.
#[derive(Debug, Clone)]
pub struct Wrk {
    /// Keep-alive connections.
    pub connections: u32,
    /// Length of a run.
    pub duration: Duration,
    /// The core wrk runs on (`taskset`), if pinned.
    pub core: Option<usize>,
}

impl Wrk {
    /// The same load for 2 s: an unmeasured run before the measured ones.
    #[must_use]
    pub fn warm_up(&self) -> Self {
        Self {
            duration: Duration::from_secs(2),
            ..self.clone()
        }
    }

    /// Whether `wrk` is on the PATH.
    #[must_use]
    pub fn installed() -> bool {
        Command::new("wrk")
            .arg("--version")
            .output()
            .is_ok_and(|o| !o.stdout.is_empty() || !o.stderr.is_empty())
    }

    /// One run of `wrk -t1 -cN -dDs --latency` against `url` with `headers`.
    ///
    /// # Errors
    /// When wrk cannot be run or its report cannot be read.
    pub fn run(&self, url: &str, headers: &[(String, String)]) -> anyhow::Result<Load> {
        self.run_posting(url, headers, None)
    }

    /// [`run`](Self::run), each request a `POST` of `body` when one is given (wrk takes a
    /// method and body from a Lua script only: one is written for the run).
    ///
    /// # Errors
    /// When wrk cannot be run or its report cannot be read.
    pub fn run_posting(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: Option<&str>,
    ) -> anyhow::Result<Load> {
        let script = body
            .map(|b| -> anyhow::Result<tempfile::NamedTempFile> {
                use std::io::Write as _;
                anyhow::ensure!(!b.contains("]==]"), "a body wrk's long string cannot hold");
                let mut f = tempfile::Builder::new().suffix(".lua").tempfile()?;
                write!(f, "wrk.method = \"POST\"\nwrk.body = [==[{b}]==]\n")?;
                Ok(f)
            })
            .transpose()?;
        let mut cmd = pinned(std::path::Path::new("wrk"), self.core);
        if let Some(f) = &script {
            cmd.arg("-s").arg(f.path());
        }
        cmd.arg("-t1")
            .arg(format!("-c{}", self.connections))
            .arg(format!("-d{}s", self.duration.as_secs().max(1)))
            .arg("--latency");
        for (k, v) in headers {
            cmd.arg("-H").arg(format!("{k}: {v}"));
        }
        let out = cmd.arg(url).output().context("running wrk")?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            bail!("wrk failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        }
        parse(&text).with_context(|| format!("reading wrk's report:\n{text}"))
    }
}

/// Reads wrk's text report.
///
/// # Errors
/// When a figure it always prints is missing.
pub fn parse(text: &str) -> anyhow::Result<Load> {
    let field = |prefix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix).map(str::trim))
    };
    let rps: f64 = field("Requests/sec:").context("no Requests/sec")?.parse()?;
    let p50_us = micros(field("50%").context("no 50% latency")?)?;
    let p99_us = micros(field("99%").context("no 99% latency")?)?;
    let requests = text
        .lines()
        .find_map(|l| l.trim().split_once(" requests in ").map(|(n, _)| n.trim()))
        .context("no request count")?
        .parse()?;
    let non_2xx = field("Non-2xx or 3xx responses:").map_or(Ok(0), str::parse)?;
    // "Socket errors: connect 0, read 0, write 0, timeout 0"
    let socket_errors = field("Socket errors:").map_or(0, |v| {
        v.split(',')
            .filter_map(|p| p.split_whitespace().last()?.parse::<u64>().ok())
            .sum()
    });
    Ok(Load {
        rps,
        p50_us,
        p99_us,
        requests,
        non_2xx,
        socket_errors,
    })
}

fn micros(v: &str) -> anyhow::Result<f64> {
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().with_context(|| format!("latency {v:?}"))?;
    Ok(match unit {
        "ns" => n / 1e3,
        "ms" => n * 1e3,
        "s" => n * 1e6,
        _ => n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "Running 5s test @ http://127.0.0.1:8080/\n  1 threads and 32 connections\n  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency   250.00us  100.00us   3.10ms   90.00%\n    Req/Sec   120.00k     5.00k  130.00k    80.00%\n  Latency Distribution\n     50%  231.00us\n     75%  260.00us\n     90%  300.00us\n     99%    1.20ms\n  600123 requests in 5.00s, 80.00MB read\n  Socket errors: connect 0, read 2, write 0, timeout 1\n  Non-2xx or 3xx responses: 600123\nRequests/sec: 120024.60\nTransfer/sec:     16.00MB\n";

    #[test]
    fn reads_every_figure() {
        let l = parse(REPORT).unwrap();
        assert!((l.rps - 120_024.6).abs() < 1e-6);
        assert!((l.p50_us - 231.0).abs() < 1e-6);
        assert!((l.p99_us - 1200.0).abs() < 1e-6);
        assert_eq!(
            (l.requests, l.non_2xx, l.socket_errors),
            (600_123, 600_123, 3)
        );
    }
}
