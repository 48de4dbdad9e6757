//! The gateway benchmark of the shipped binary: `apistend serve` (release build, started as the
//! README starts it, its own process) against `apistend-hello` (axum's hello-world, its own
//! process), both pinned to one core and `wrk` on the other.
//!
//! A sandbox is created through the management API with one WB group opened wide (the allowed
//! path) and one closed to a token an hour (the rejected path: every answer WB's 429 with its
//! headers and body), its default latency 0; requests carry WB's own credential header. The
//! rounds alternate: hello, then per round allowed, rejected, hello; each round's ratio is its
//! path's rate over the mean of the hello runs before and after it. Each run also reports the
//! server's CPU time per request, user and kernel ([`crate::cpu`]): what a ratio is made of.
//!
//! With Redis (a `redis-server`, or a 3-master Cluster, on the servers' core) a memory-backed
//! sandbox runs beside it as a second anchor, measured in the same rounds: the Redis sandbox's
//! rate over the memory sandbox's is the cost of sharing buckets.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use apistend_testkit::{RedisCluster, RedisServer};
use serde::Serialize;
use serde_json::{Value, json};

use crate::cpu::{CpuTime, PerRequest, PerRequestSummary};
use crate::process::{Server, can_pin, peak_rss_kib, wrapped};
use crate::stats::Summary;
use crate::wrk::{Load, Wrk};

/// The operation of the allowed path and its limit group.
pub const ALLOWED: (&str, &str) = ("/wb/api/v3/warehouses", "marketplace-api.skladov-prodavtsa");
/// The operation of the rejected path and its limit group.
pub const REJECTED: (&str, &str) = (
    "/wb/api/v1/seller-info",
    "common-api.get.api-v1-seller-info",
);

/// Where the sandbox keeps its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// The in-process memory store (the default of `apistend serve`).
    Memory,
    /// A `redis-server` started by the bench, pinned to the sandbox's core.
    Redis,
    /// A 3-master Redis Cluster started by the bench, every node pinned to the sandbox's core.
    RedisCluster,
}

/// How to run the benchmark.
#[derive(Debug, Clone)]
pub struct Config {
    /// Alternating rounds (each: allowed, rejected, hello).
    pub rounds: usize,
    /// The load generator.
    pub wrk: Wrk,
    /// The core of the servers under test (and of Redis).
    pub server_core: Option<usize>,
    /// Where the sandbox keeps its buckets.
    pub backing: Backing,
    /// Directory of the release binaries `apistend` and `apistend-hello`.
    pub bin_dir: PathBuf,
    /// Extra arguments for `apistend serve`.
    pub serve_args: Vec<String>,
    /// A command the servers run under (`valgrind …` for [`crate::instructions`]); empty: none.
    pub wrapper: Vec<String>,
    /// How long a server may take to announce its address.
    pub start_limit: Duration,
}

impl Config {
    /// Five rounds of `wrk -t1 -c32 -d5s`; servers on core 0 and wrk on core 1 when the machine
    /// allows pinning, unpinned otherwise.
    #[must_use]
    pub fn new(bin_dir: PathBuf) -> Self {
        let pin = can_pin(&[0, 1]);
        Self {
            rounds: 5,
            wrk: Wrk {
                connections: 32,
                duration: Duration::from_secs(5),
                core: pin.then_some(1),
            },
            server_core: pin.then_some(0),
            backing: Backing::Memory,
            bin_dir,
            serve_args: Vec::new(),
            wrapper: Vec::new(),
            start_limit: Duration::from_secs(30),
        }
    }
}

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

/// Runs the benchmark.
///
/// # Errors
/// When a server cannot be started or set up, wrk fails, or an answer is not what the path
/// promises (a 429 on the allowed path, a 200 on the rejected one, socket errors).
pub fn run(config: &Config) -> anyhow::Result<Report> {
    ensure!(config.rounds >= 1, "at least one round");
    ensure!(
        Wrk::installed(),
        "wrk is not installed (apt-get install wrk)"
    );
    let core = config.server_core;
    let token = admin_token();
    let redis = start_redis(config.backing, core)?;
    let sandbox = Sandbox::start(config, &token, redis.as_ref().map(|r| r.url.as_str()))?;
    // With Redis, a memory-backed sandbox as the second anchor.
    let memory = redis
        .as_ref()
        .map(|_| Sandbox::start(config, &token, None))
        .transpose()?;
    let hello = start_hello(config)?;
    let hello_url = format!("{}/", hello.base);
    let warm = config.wrk.warm_up();
    warm.run(&hello_url, &[])?;
    for s in std::iter::once(&sandbox).chain(&memory) {
        for path in BenchPath::BOTH {
            warm.run(&s.url(path), &s.headers())?;
        }
    }

    // One run, printed with the CPU time the server `pid` spent per request in it.
    let measure = |name: &str,
                   url: &str,
                   headers: &[(String, String)],
                   pid: u32|
     -> anyhow::Result<(Load, Option<PerRequest>)> {
        let (l, cpu) = measured(&config.wrk, url, headers, pid)?;
        let cpu_text = cpu.map_or_else(String::new, |c| {
            format!(
                "  cpu/req user {:.2} µs kernel {:.2} µs",
                c.user_us, c.kernel_us
            )
        });
        eprintln!(
            "  {name:<9} {:>9.0} req/s  p50 {:>6.0} µs  p99 {:>6.0} µs  non-2xx {}{cpu_text}",
            l.rps, l.p50_us, l.p99_us, l.non_2xx
        );
        Ok((l, cpu))
    };
    type Path = (Load, Option<PerRequest>);
    // A sandbox's two paths, each checked for the answers it promises.
    let paths = |s: &Sandbox, tag: &str| -> anyhow::Result<(Path, Path)> {
        let (h, pid) = (s.headers(), s.server.pid());
        let run = |path: BenchPath| -> anyhow::Result<Path> {
            let (load, cpu) = measure(&format!("{tag}{}", path.name()), &s.url(path), &h, pid)?;
            path.check(&load)?;
            Ok((load, cpu))
        };
        Ok((run(BenchPath::Allowed)?, run(BenchPath::Rejected)?))
    };
    let (mut before, _) = measure("hello", &hello_url, &[], hello.pid())?;
    let mut rounds = Vec::with_capacity(config.rounds);
    for i in 0..config.rounds {
        eprintln!("round {}/{}", i + 1, config.rounds);
        let ((allowed, allowed_cpu), (rejected, rejected_cpu)) = paths(&sandbox, "")?;
        let in_memory = memory
            .as_ref()
            .map(|m| paths(m, "memory ").map(|((a, _), (r, _))| (a, r)))
            .transpose()?;
        let (after, hello_cpu) = measure("hello", &hello_url, &[], hello.pid())?;
        let anchor = (before.rps + after.rps) / 2.0;
        rounds.push(Round {
            hello_before: before,
            allowed,
            rejected,
            hello_after: after,
            allowed_ratio: allowed.rps / anchor,
            rejected_ratio: rejected.rps / anchor,
            memory: in_memory,
            cpu: RoundCpu {
                hello: hello_cpu,
                allowed: allowed_cpu,
                rejected: rejected_cpu,
            },
        });
        before = after;
    }
    let summary =
        |f: &dyn Fn(&Round) -> f64| Summary::of(&rounds.iter().map(f).collect::<Vec<_>>());
    let mut hellos: Vec<f64> = rounds.iter().map(|r| r.hello_after.rps).collect();
    hellos.extend(rounds.first().map(|r| r.hello_before.rps));
    let none = || anyhow::anyhow!("no rounds");
    Ok(Report {
        backing: config.backing,
        connections: config.wrk.connections,
        seconds: config.wrk.duration.as_secs(),
        pinned: core.is_some() && config.wrk.core.is_some(),
        allowed_ratio: summary(&|r| r.allowed_ratio).ok_or_else(none)?,
        rejected_ratio: summary(&|r| r.rejected_ratio).ok_or_else(none)?,
        hello_rps: Summary::of(&hellos).ok_or_else(none)?,
        allowed_rps: summary(&|r| r.allowed.rps).ok_or_else(none)?,
        rejected_rps: summary(&|r| r.rejected.rps).ok_or_else(none)?,
        allowed_p99_us: summary(&|r| r.allowed.p99_us).ok_or_else(none)?,
        rejected_p99_us: summary(&|r| r.rejected.p99_us).ok_or_else(none)?,
        vs_memory: summary(&|r| r.memory.map_or(f64::NAN, |m| r.allowed.rps / m.0.rps)).zip(
            summary(&|r| r.memory.map_or(f64::NAN, |m| r.rejected.rps / m.1.rps)),
        ),
        cpu: cpu_summary(&rounds),
        sandbox_peak_rss_kib: peak_rss_kib(sandbox.server.pid()),
        rounds,
    })
}

/// The rounds' CPU times per request, when every run has them.
fn cpu_summary(rounds: &[Round]) -> Option<CpuSummary> {
    let of = |f: fn(&RoundCpu) -> Option<PerRequest>| {
        PerRequestSummary::of(rounds.iter().map(|r| f(&r.cpu)))
    };
    Some(CpuSummary {
        hello: of(|c| c.hello)?,
        allowed: of(|c| c.allowed)?,
        rejected: of(|c| c.rejected)?,
    })
}

/// Starts the hello-world anchor as its own process, pinned to the servers' core.
pub(crate) fn start_hello(config: &Config) -> anyhow::Result<Server> {
    let mut hello = wrapped(
        &config.wrapper,
        &config.bin_dir.join("apistend-hello"),
        config.server_core,
    );
    hello.arg("127.0.0.1:0");
    Server::start_within(hello, "apistend-hello", config.start_limit)
}

/// A token for the management API of the bench's servers.
pub(crate) fn admin_token() -> String {
    format!(
        "bench-{:032x}",
        u128::from(std::process::id()) * 0x9E37_79B9_7F4A_7C15
    )
}

/// One of the bench's two paths through the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BenchPath {
    /// [`ALLOWED`]: every answer a 2xx.
    Allowed,
    /// [`REJECTED`]: every answer WB's 429.
    Rejected,
}

impl BenchPath {
    pub(crate) const BOTH: [Self; 2] = [Self::Allowed, Self::Rejected];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Rejected => "rejected",
        }
    }

    /// Whether a run's answers are what this path promises.
    pub(crate) fn check(self, load: &Load) -> anyhow::Result<()> {
        match self {
            Self::Allowed => ensure!(
                load.non_2xx == 0,
                "the allowed path answered {} non-2xx",
                load.non_2xx
            ),
            Self::Rejected => ensure!(
                load.non_2xx == load.requests,
                "the rejected path let {} requests through",
                load.requests - load.non_2xx
            ),
        }
        Ok(())
    }
}

/// One wrk run against the server `pid`, and the CPU time it spent per request in it (`None`
/// where `/proc` does not say).
///
/// # Errors
/// When wrk fails or saw socket errors.
pub(crate) fn measured(
    wrk: &Wrk,
    url: &str,
    headers: &[(String, String)],
    pid: u32,
) -> anyhow::Result<(Load, Option<PerRequest>)> {
    let start = CpuTime::of(pid);
    let load = wrk.run(url, headers)?;
    ensure!(
        load.socket_errors == 0,
        "{url}: {} socket errors",
        load.socket_errors
    );
    let cpu = start
        .zip(CpuTime::of(pid))
        .and_then(|(a, b)| a.per_request(b, load.requests));
    Ok((load, cpu))
}

/// Creates the bench's sandbox through the management API and returns its key.
fn set_up(base: &str, token: &str) -> anyhow::Result<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let http = reqwest::Client::new();
        let (_, key) = open_sandbox(&http, base, token, "bench").await?;
        let get = |path: &str| {
            http.get(format!("{base}{path}"))
                .header("Authorization", &key)
                .send()
        };
        let ok = get(ALLOWED.0).await?.status();
        ensure!(ok == 200, "the allowed path answered {ok}");
        let _ = get(REJECTED.0).await?;
        let no = get(REJECTED.0).await?.status();
        ensure!(no == 429, "the rejected path answered {no}");
        Ok(key)
    })
}

/// Creates a sandbox named `name` with [`ALLOWED`]'s group opened wide, [`REJECTED`]'s closed
/// to a token an hour and a default latency of 0; returns its id and first key.
///
/// # Errors
/// When the management API refuses or cannot be reached.
pub async fn open_sandbox(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    name: &str,
) -> anyhow::Result<(String, String)> {
    let admin = |method: reqwest::Method, path: String, body: Value| {
        http.request(method, format!("{base}/api/v1{path}"))
            .bearer_auth(token)
            .json(&body)
            .send()
    };
    let created: Value = admin(
        reqwest::Method::POST,
        "/sandboxes".into(),
        json!({ "name": name }),
    )
    .await?
    .error_for_status()?
    .json()
    .await?;
    let id = created
        .pointer("/id")
        .and_then(Value::as_str)
        .context("no sandbox id")?
        .to_owned();
    let key = created
        .pointer("/keys/0")
        .and_then(Value::as_str)
        .context("no key")?
        .to_owned();
    for (group, limit) in [
        (
            ALLOWED.1,
            json!({"burst": 1_000_000, "per_second": 1_000_000}),
        ),
        (REJECTED.1, json!({"burst": 1, "interval_ms": 3_600_000})),
    ] {
        admin(
            reqwest::Method::PUT,
            format!("/sandboxes/{id}/limits/wb/{group}"),
            limit,
        )
        .await?
        .error_for_status()
        .with_context(|| format!("setting the limit of {group}"))?;
    }
    admin(
        reqwest::Method::PUT,
        format!("/sandboxes/{id}/settings"),
        json!({"latency_ms": 0}),
    )
    .await?
    .error_for_status()?;
    Ok((id, key))
}

/// An `apistend serve` under test: its process, data directory and key.
pub(crate) struct Sandbox {
    pub(crate) server: Server,
    pub(crate) key: String,
    _data: tempfile::TempDir,
}

impl Sandbox {
    /// Starts the release binary as the README does (`--redis URL` when given), pinned to the
    /// servers' core, and creates the bench's sandbox in it.
    pub(crate) fn start(config: &Config, token: &str, redis: Option<&str>) -> anyhow::Result<Self> {
        let data = tempfile::tempdir()?;
        let mut serve = wrapped(
            &config.wrapper,
            &config.bin_dir.join("apistend"),
            config.server_core,
        );
        serve
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--admin-token",
                token,
                "--data",
            ])
            .arg(data.path())
            .args(&config.serve_args)
            .env_remove("RUST_LOG")
            .env_remove("APISTEND_LOG_FORMAT");
        if let Some(url) = redis {
            serve.args(["--redis", url]);
        }
        let server = Server::start_within(serve, "apistend serve", config.start_limit)?;
        let key = set_up(&server.base, token)?;
        Ok(Self {
            server,
            key,
            _data: data,
        })
    }

    /// The URL of `path` on this sandbox.
    pub(crate) fn url(&self, path: BenchPath) -> String {
        let op = match path {
            BenchPath::Allowed => ALLOWED.0,
            BenchPath::Rejected => REJECTED.0,
        };
        format!("{}{op}", self.server.base)
    }

    /// The headers of the bench's requests: WB's own credential header with the sandbox's key.
    pub(crate) fn headers(&self) -> Vec<(String, String)> {
        vec![("Authorization".to_owned(), self.key.clone())]
    }
}

/// The Redis a Redis-backed run uses (testkit's servers: no persistence, free ports), moved onto
/// the servers' core; kept alive by the value.
struct Backend {
    url: String,
    _standalone: Option<RedisServer>,
    _cluster: Option<RedisCluster>,
}

fn start_redis(backing: Backing, core: Option<usize>) -> anyhow::Result<Option<Backend>> {
    let missing = "redis-server is not installed (apt-get install redis-server redis-tools)";
    let backend = match backing {
        Backing::Memory => return Ok(None),
        Backing::Redis => {
            let server = RedisServer::start("bench-gateway --backing redis").context(missing)?;
            Backend {
                url: server.url(),
                _standalone: Some(server),
                _cluster: None,
            }
        }
        Backing::RedisCluster => {
            let cluster =
                RedisCluster::start("bench-gateway --backing redis-cluster").context(missing)?;
            Backend {
                url: cluster.url(),
                _standalone: None,
                _cluster: Some(cluster),
            }
        }
    };
    let pids: Vec<u32> = backend
        ._standalone
        .iter()
        .chain(backend._cluster.iter().flat_map(|c| c.nodes()))
        .filter_map(RedisServer::pid)
        .collect();
    if let Some(core) = core {
        for pid in pids {
            let pinned = Command::new("taskset")
                .args(["-a", "-cp", &core.to_string(), &pid.to_string()])
                .output()
                .is_ok_and(|o| o.status.success());
            ensure!(pinned, "could not pin redis-server {pid} to core {core}");
        }
    }
    Ok(Some(backend))
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
