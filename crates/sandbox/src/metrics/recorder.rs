//! The sandbox's Prometheus recorder (metrics-exporter-prometheus), shareable: the sandbox
//! registers its own families on it, and the binary installs it as the process's global
//! recorder, so the engine's and any client's facade metrics land in the same registry and on
//! the same `/metrics`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

/// How often histogram samples are folded into their buckets when nobody scrapes.
const UPKEEP: Duration = Duration::from_secs(5);

/// A Prometheus recorder that can be shared: the sandbox keeps one, the binary installs a
/// clone as the global recorder ([`metrics::set_global_recorder`]).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> anyhow::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let sandbox = apistend_sandbox::Sandbox::new(apistend_sandbox::SandboxConfig::new(dir.path())).await?;
/// // Once per process, before the first decision: engine metrics then reach `/metrics`.
/// metrics::set_global_recorder(sandbox.recorder())?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SharedRecorder(Arc<PrometheusRecorder>);

impl SharedRecorder {
    /// A new recorder.
    pub(crate) fn new() -> Self {
        Self(Arc::new(PrometheusBuilder::new().build_recorder()))
    }

    /// The handle that renders the registry.
    pub(crate) fn handle(&self) -> PrometheusHandle {
        self.0.handle()
    }

    /// Folds histogram samples (a client's in the same process) into their summaries every few
    /// seconds while the recorder lives, so that an instance nobody scrapes keeps no samples.
    pub(crate) fn keep_up(&self) {
        let weak: Weak<PrometheusRecorder> = Arc::downgrade(&self.0);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(UPKEEP);
            tick.tick().await;
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(r) => r.handle().run_upkeep(),
                    None => break,
                }
            }
        });
    }
}

impl Recorder for SharedRecorder {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.0.describe_counter(key, unit, description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.0.describe_gauge(key, unit, description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.0.describe_histogram(key, unit, description);
    }

    fn register_counter(&self, key: &Key, metadata: &Metadata<'_>) -> Counter {
        self.0.register_counter(key, metadata)
    }

    fn register_gauge(&self, key: &Key, metadata: &Metadata<'_>) -> Gauge {
        self.0.register_gauge(key, metadata)
    }

    fn register_histogram(&self, key: &Key, metadata: &Metadata<'_>) -> Histogram {
        self.0.register_histogram(key, metadata)
    }
}
