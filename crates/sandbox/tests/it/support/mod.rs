//! A sandbox started in the test, on a free loopback port, with its own data directory.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use apistend_sandbox::{Sandbox, SandboxConfig};

pub struct TestServer {
    pub base: String,
    pub key: String,
    pub app_token: String,
    pub dir: PathBuf,
    /// The admin token when this start generated it.
    pub admin_token: Option<String>,
    /// The TLS listener's address (`127.0.0.1:PORT`), for a server started with [`start_tls`].
    pub tls: Option<std::net::SocketAddr>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    keep_dir: bool,
}

impl TestServer {
    /// Stops the server, waits until it has let go of its data directory, and keeps the
    /// directory (for a restart on it).
    pub async fn stop_keeping_dir(mut self) -> PathBuf {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        self.keep_dir = true;
        self.dir.clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A new empty directory (the server removes it when dropped, unless kept for a restart).
pub fn temp_dir() -> PathBuf {
    apistend_testkit::temp_dir("test")
}

/// Starts a sandbox; `tune` adjusts the configuration first.
pub async fn start(tune: impl FnOnce(SandboxConfig) -> SandboxConfig) -> TestServer {
    start_in(temp_dir(), tune).await
}

/// Starts a sandbox with a TLS listener too.
pub async fn start_tls(tune: impl FnOnce(SandboxConfig) -> SandboxConfig) -> TestServer {
    start_on(temp_dir(), tune, true).await
}

/// Starts a sandbox on the data directory `dir` (prepared by the test).
pub async fn start_in(
    dir: PathBuf,
    tune: impl FnOnce(SandboxConfig) -> SandboxConfig,
) -> TestServer {
    start_on(dir, tune, false).await
}

/// Starts a sandbox on `dir`, with a TLS listener if `with_tls`.
pub async fn start_on(
    dir: PathBuf,
    tune: impl FnOnce(SandboxConfig) -> SandboxConfig,
    with_tls: bool,
) -> TestServer {
    let config = tune(SandboxConfig::new(&dir).with_demo_key("test-key"));
    let sandbox = Sandbox::new(config).await.expect("sandbox starts");
    let key = sandbox.demo().key.clone();
    let app_token = sandbox.demo().app_token.clone();
    let admin_token = sandbox.generated_admin_token().map(str::to_owned);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let stop = async {
        let _ = rx.await;
    };
    let (task, tls) = if with_tls {
        let tls = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tls.local_addr().unwrap();
        (
            tokio::spawn(sandbox.serve_with_tls(listener, tls, stop)),
            Some(addr),
        )
    } else {
        (tokio::spawn(sandbox.serve(listener, stop)), None)
    };
    TestServer {
        base,
        key,
        app_token,
        dir,
        admin_token,
        tls,
        stop: Some(tx),
        task: Some(task),
        keep_dir: false,
    }
}

/// Sends `r` and reads its answer as JSON.
pub async fn json(r: reqwest::RequestBuilder) -> serde_json::Value {
    r.send().await.unwrap().json().await.unwrap()
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .unwrap()
}

/// `../shared/wb-openapi` beside the repository, or `None` (loudly) outside CI.
pub fn wb_specs() -> Option<PathBuf> {
    apistend_testkit::wb_specs()
}

/// The text of `../shared/PATH` (beside WB's specs), or `None` after a loud skip outside CI.
pub fn shared_file(path: &str) -> Option<String> {
    let file = wb_specs()?.join("..").join(path);
    match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) => {
            assert!(!apistend_testkit::in_ci(), "{}: {e}", file.display());
            eprintln!("SKIP: {}: {e}", file.display());
            None
        }
    }
}

/// The Prometheus text the sandbox at `base` serves at `/metrics`.
pub async fn metrics(base: &str) -> String {
    client()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The status `r` is answered with.
pub async fn status(r: reqwest::RequestBuilder) -> u16 {
    r.send().await.unwrap().status().as_u16()
}

/// `POST /ozon/v3/product/list` at `base` with `key` (Ozon's `client` bucket), no delay: its
/// status.
pub async fn ozon_list(c: &reqwest::Client, base: &str, key: &str) -> u16 {
    let r = c
        .post(format!("{base}/ozon/v3/product/list"))
        .header("Client-Id", "1")
        .header("Api-Key", key)
        .header("X-Mock-Delay", "0");
    status(r).await
}
