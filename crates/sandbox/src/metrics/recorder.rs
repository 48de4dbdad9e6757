//! The sandbox's Prometheus recorder (metrics-exporter-prometheus), shareable: the sandbox
//! registers its own families on it, and the binary installs it as the process's global
//! recorder, so the engine's and any client's facade metrics land in the same registry and on
//! the same `/metrics`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// Upper bounds of the bucket-fill histogram (the share of the bucket left after a request).
pub(crate) const FILL_BOUNDS: [f64; 6] = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9];

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
    /// A new recorder: counters, gauges, and true histograms (not summaries) for the bucket fill.
    pub(crate) fn new() -> Self {
        // A fixed, non-empty list of bounds: setting it cannot fail.
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("apistend_bucket_fill_ratio".into()),
                &FILL_BOUNDS,
            )
            .unwrap_or_else(|_| PrometheusBuilder::new());
        Self(Arc::new(builder.build_recorder()))
    }

    /// The handle that renders the registry.
    pub(crate) fn handle(&self) -> PrometheusHandle {
        self.0.handle()
    }

    /// Folds histogram samples into their buckets every few seconds while the recorder lives, so
    /// that an instance nobody scrapes does not keep every sample.
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
