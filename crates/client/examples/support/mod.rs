//! A sandbox in-process for the examples: no files, no Redis, a known key.

use apistend_sandbox::{Sandbox, SandboxConfig};

/// A running sandbox; stops and removes its data directory on [`Running::stop`].
pub(crate) struct Running {
    /// `http://127.0.0.1:PORT`.
    pub(crate) origin: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    dir: std::path::PathBuf,
}

/// The demo key the sandbox knows.
pub(crate) const KEY: &str = "example-key";

/// Starts a sandbox on a free loopback port.
pub(crate) async fn start(name: &str) -> anyhow::Result<Running> {
    let dir = std::env::temp_dir().join(format!("apistend-example-{name}-{}", std::process::id()));
    let sandbox = Sandbox::new(SandboxConfig::new(&dir).with_demo_key(KEY)).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let origin = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(sandbox.serve(listener, async {
        let _ = stopped.await;
    }));
    Ok(Running {
        origin,
        stop,
        server,
        dir,
    })
}

impl Running {
    /// Stops the sandbox and removes its data.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.server.await??;
        let _ = std::fs::remove_dir_all(self.dir);
        Ok(())
    }
}
