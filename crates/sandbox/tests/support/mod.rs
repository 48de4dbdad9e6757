//! A sandbox started in the test, on a free loopback port, with its own data directory.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use apistend_sandbox::{Sandbox, SandboxConfig};

pub struct TestServer {
    pub base: String,
    pub key: String,
    pub app_token: String,
    pub dir: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn temp_dir() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "apistend-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts a sandbox; `tune` adjusts the configuration first.
pub async fn start(tune: impl FnOnce(SandboxConfig) -> SandboxConfig) -> TestServer {
    start_in(temp_dir(), tune).await
}

/// Starts a sandbox on the data directory `dir` (prepared by the test).
pub async fn start_in(
    dir: PathBuf,
    tune: impl FnOnce(SandboxConfig) -> SandboxConfig,
) -> TestServer {
    let config = tune(SandboxConfig::new(&dir).with_demo_key("test-key"));
    let sandbox = Sandbox::new(config).await.expect("sandbox starts");
    let key = sandbox.demo().key.clone();
    let app_token = sandbox.demo().app_token.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(sandbox.serve(listener, async {
        let _ = rx.await;
    }));
    TestServer {
        base,
        key,
        app_token,
        dir,
        stop: Some(tx),
    }
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
