//! What a gateway run talks to: the hello-world, a sandbox set up through its management API
//! with the two paths, and Redis.

use std::process::Command;

use anyhow::{Context, ensure};
use apistend_testkit::{RedisCluster, RedisServer};
use serde_json::{Value, json};

use super::config::{Backing, Config};
use crate::cpu::{CpuTime, PerRequest};
use crate::process::{Server, wrapped};
use crate::wrk::{Load, Wrk};

/// The operation of the allowed path and its limit group.
pub const ALLOWED: (&str, &str) = ("/wb/api/v3/warehouses", "marketplace-api.skladov-prodavtsa");
/// The operation of the rejected path and its limit group.
pub const REJECTED: (&str, &str) = (
    "/wb/api/v1/seller-info",
    "common-api.get.api-v1-seller-info",
);

/// The operation of the posted path (a 2 KB valid body: [`super::posted`]) and its limit group.
pub const POSTED: (&str, &str) = (
    "/wb/discounts-prices-api/api/v2/list/goods/filter",
    "discounts-prices-api.tseny-i-skidki",
);

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

/// Creates a sandbox named `name` with [`ALLOWED`]'s and [`POSTED`]'s groups opened wide, [`REJECTED`]'s closed
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
        (
            POSTED.1,
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

/// Issues another key of sandbox `id` through the management API and returns it.
///
/// # Errors
/// When the management API refuses or cannot be reached.
pub async fn issue_key(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    id: &str,
) -> anyhow::Result<String> {
    let issued: Value = http
        .post(format!("{base}/api/v1/sandboxes/{id}/keys"))
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let key = issued.pointer("/key").and_then(Value::as_str);
    Ok(key.context("an issued key without its key")?.to_owned())
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
pub(super) struct Backend {
    pub(super) url: String,
    _standalone: Option<RedisServer>,
    _cluster: Option<RedisCluster>,
}

pub(super) fn start_redis(
    backing: Backing,
    core: Option<usize>,
) -> anyhow::Result<Option<Backend>> {
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
