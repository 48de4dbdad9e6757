//! Real `redis-server` processes for tests: a standalone server or a 3-master Cluster on free
//! loopback ports, each in its own temporary directory, stopped and removed on drop.
//!
//! Outside CI a missing `redis-server` skips the test with a loud message; with `CI=true` it fails
//! the test, so CI never passes by skipping.
#![allow(clippy::print_stderr, clippy::panic, clippy::expect_used)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Whether this is a CI run (`CI=true`), where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether `redis-server` and `redis-cli` can be run. Without them: panics in CI, otherwise prints
/// a loud skip notice for `test` and returns false.
pub fn redis_available(test: &str) -> bool {
    let ok = |bin: &str| {
        Command::new(bin)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if ok("redis-server") && ok("redis-cli") {
        return true;
    }
    assert!(
        !in_ci(),
        "redis-server/redis-cli missing in CI: .ci/run must install redis-server and redis-tools"
    );
    eprintln!(
        "\n==== SKIPPED {test}: redis-server/redis-cli not found (apt-get install -y redis-server redis-tools) ====\n"
    );
    false
}

/// A loopback port that was free a moment ago (and whose Cluster bus port, +10000, was too).
pub fn free_port() -> u16 {
    for _ in 0..200 {
        let Ok(l) = TcpListener::bind("127.0.0.1:0") else {
            continue;
        };
        let Ok(addr) = l.local_addr() else { continue };
        let port = addr.port();
        if port < 50_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port found");
}

/// One `redis-server` process.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    cluster: bool,
}

impl RedisServer {
    /// Starts a standalone server on a free port, or `None` (after a loud notice) when Redis is not
    /// installed outside CI.
    pub fn start(test: &str) -> Option<Self> {
        if !redis_available(test) {
            return None;
        }
        Some(Self::spawn(free_port(), false))
    }

    fn spawn(port: u16, cluster: bool) -> Self {
        let dir =
            std::env::temp_dir().join(format!("apistend-redis-{}-{port}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let mut server = Self {
            child: None,
            port,
            dir,
            cluster,
        };
        server.launch();
        server
    }

    fn launch(&mut self) {
        let port = self.port.to_string();
        let mut cmd = Command::new("redis-server");
        cmd.args([
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
        ])
        .arg("--dir")
        .arg(&self.dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        if self.cluster {
            cmd.args([
                "--cluster-enabled",
                "yes",
                "--cluster-node-timeout",
                "2000",
                "--cluster-config-file",
            ])
            .arg(format!("nodes-{port}.conf"));
        }
        let child = cmd.spawn().expect("redis-server starts");
        self.child = Some(child);
        wait_for(self.port);
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (as a crash would).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, empty.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    /// Runs `redis-cli -p PORT args…` and returns its output.
    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.port, args)
    }

    /// How many times the server has run `command` (lower case, as `INFO commandstats` names
    /// it: `evalsha`), 0 before the first.
    pub fn calls(&self, command: &str) -> u64 {
        let prefix = format!("cmdstat_{command}:calls=");
        self.cli(&["INFO", "commandstats"])
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    /// The directory the server runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `redis-cli -p PORT args…` and returns its trimmed standard output.
pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn wait_for(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() && cli(port, &["PING"]) == "PONG" {
            return;
        }
        sleep(Duration::from_millis(20));
    }
    panic!("redis-server on port {port} did not come up within 10 s");
}

/// A 3-master Redis Cluster, without replicas or with some per master.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts three cluster-enabled servers and joins them, or `None` outside CI without Redis.
    pub fn start(test: &str) -> Option<Self> {
        Self::start_with_replicas(test, 0)
    }

    /// Starts three masters with `replicas` replicas each (so a master can fail over), or
    /// `None` outside CI without Redis.
    pub fn start_with_replicas(test: &str, replicas: usize) -> Option<Self> {
        if !redis_available(test) {
            return None;
        }
        let mut nodes: Vec<RedisServer> = Vec::new();
        while nodes.len() < 3 * (1 + replicas) {
            let port = free_port();
            if nodes.iter().all(|n| n.port.abs_diff(port) > 0) {
                nodes.push(RedisServer::spawn(port, true));
            }
        }
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()
            .expect("redis-cli --cluster create runs");
        assert!(
            out.status.success(),
            "cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        let first = nodes.first().map(|n| n.port).unwrap_or_default();
        loop {
            let ok = nodes
                .iter()
                .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"));
            if ok && cli(first, &["-c", "SET", "apistend:probe", "1"]) == "OK" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "cluster did not reach cluster_state:ok within 20 s"
            );
            sleep(Duration::from_millis(50));
        }
        Some(Self { nodes })
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// The nodes.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The nodes, to stop one.
    pub fn nodes_mut(&mut self) -> &mut [RedisServer] {
        &mut self.nodes
    }
}

/// `shared/wb-openapi` beside the repository (or under `APISTEND_SHARED`), or `None` after a loud
/// notice outside CI; in CI its absence fails the test.
pub fn wb_specs() -> Option<PathBuf> {
    let shared = std::env::var_os("APISTEND_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let dir = shared.join("wb-openapi");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        !in_ci(),
        "{} is missing in CI: the WB spec checks must run",
        dir.display()
    );
    eprintln!(
        "\n==== SKIPPED: {} not found; the WB spec checks need ../shared ====\n",
        dir.display()
    );
    None
}

/// The resident memory of process `pid` in KiB (`VmRSS` of `/proc/PID/status`); 0 where Linux
/// does not say.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// A child process, killed and reaped when dropped.
#[derive(Debug)]
pub struct Process(pub std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `bin serve --addr 127.0.0.1:0 --data DATA EXTRA…` (the `apistend` binary of the
/// calling test) and returns it with the base URL its banner prints.
///
/// # Panics
/// When the binary does not start or prints no banner.
pub fn serve_process(
    bin: &str,
    data: &std::path::Path,
    extra: &[&std::ffi::OsStr],
) -> (Process, String) {
    let mut cmd = std::process::Command::new(bin);
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(extra);
    with_banner(cmd, "APIStend sandbox listening on ")
}

/// Starts `cmd` (its stdout piped, `RUST_LOG=warn`) and returns it with what its first line
/// says after `prefix` (the address a server prints when it listens).
///
/// # Panics
/// When it does not start or its first line is not the banner.
pub fn with_banner(mut cmd: std::process::Command, prefix: &str) -> (Process, String) {
    use std::io::BufRead as _;
    let mut child = cmd
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let child = Process(child);
    let line = std::io::BufReader::new(stdout)
        .lines()
        .next()
        .and_then(Result::ok)
        .expect("the process prints its banner");
    let base = line
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("not a banner: {line}"))
        .to_owned();
    (child, base)
}

/// A new empty directory under the system's temporary directory (made by tempfile: unique to
/// this call, so tests running at once never share one). It is kept after the test, for a look
/// at what a failed one left.
///
/// # Panics
/// When it cannot be created.
pub fn temp_dir(name: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("apistend-{name}-"))
        .tempdir()
        .expect("a temporary directory")
        .keep()
}

/// A user's service that states its quota only in the IETF fields (`RateLimit-Policy` and
/// `RateLimit`, draft-ietf-httpapi-ratelimit-headers): 20 per 2 s, one operation `GET /things`
/// under `/ietf`. For the catalog's and the client's tests of those fields.
pub const IETF_DEFINITION: &str = r#"id = "ietf"
prefix = "/ietf"
credentials = ["bearer_token"]
errors = "template"
answers = "fixtures"
fallback_groups = ["default"]

[rejection]
status = 429
content_type = "application/json"

[[rate_headers]]
name = "RateLimit-Policy"
value = "ietf_policy"

[[rate_headers]]
name = "RateLimit"
value = "ietf_limit"

[[groups]]
id = "default"
quota = { count = 20, period_ms = 2000 }

[[operations]]
method = "GET"
paths = ["/things"]
groups = ["default"]

[operations.answer]
status = 200
body = '{"things":[]}'

[error_templates.default]
body = '{"status":{status}}'
"#;
