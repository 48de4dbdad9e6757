//! A sandbox started in the test for the client to talk to.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use apistend_catalog::{Catalog, Method, Overrides, ServiceId};
use apistend_client::ClientConfig;
use apistend_sandbox::{Sandbox, SandboxConfig};

pub struct TestSandbox {
    pub base: String,
    pub key: String,
    dir: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for TestSandbox {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts a sandbox with `overrides` (TOML).
pub async fn sandbox(overrides: &str) -> TestSandbox {
    let overrides = Overrides::from_toml(overrides).unwrap();
    sandbox_with(|c| c.with_overrides(overrides)).await
}

/// Starts a sandbox with the demo key `client-key` and what `configure` adds.
pub async fn sandbox_with(configure: impl FnOnce(SandboxConfig) -> SandboxConfig) -> TestSandbox {
    let dir = apistend_testkit::temp_dir("client-test");
    let config = configure(SandboxConfig::new(&dir).with_demo_key("client-key"));
    let sandbox = Sandbox::new(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(sandbox.serve(listener, async {
        let _ = rx.await;
    }));
    TestSandbox {
        base,
        key: "client-key".into(),
        dir,
        stop: Some(tx),
    }
}

/// The id of the (first) limit group of a WB operation.
pub fn wb_group(method: Method, path: &str) -> String {
    let c = Catalog::builtin().unwrap();
    let r = c.resolve(ServiceId::WB, method, path, None).unwrap();
    r.service.groups[r.groups[0]].id.clone()
}

/// TOML giving `group` of WB `burst` tokens, one back every `interval_ms`.
pub fn wb_quota(group: &str, burst: u32, interval_ms: u64) -> String {
    format!("[wb.groups.\"{group}\"]\nburst = {burst}\ninterval_ms = {interval_ms}\n")
}

/// Quick settings for tests: small backoff, short configured ceiling.
pub fn quick() -> ClientConfig {
    let mut c = ClientConfig::default();
    c.attempts = 3;
    c.retry_base = Duration::from_millis(50);
    c.max_wait = Duration::from_millis(1000);
    c
}
