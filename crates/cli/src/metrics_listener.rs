//! `--metrics-addr`: the process's facade metrics (the client's `apistend_client_*`, the
//! engine's `apistend_limiter_*`) as Prometheus text at `http://ADDR/metrics`, for the commands
//! that run clients (`apistend load`). metrics-exporter-prometheus is the recorder; the
//! listener is a one-route axum server.

use std::net::SocketAddr;

use anyhow::Context as _;
use metrics_exporter_prometheus::PrometheusBuilder;

/// Installs the Prometheus recorder as the global one and serves it on `addr`; returns the
/// bound address. Call before any client is built: clients register their handles then.
///
/// # Errors
/// A recorder already installed, or an address that cannot be bound.
pub(crate) async fn serve(addr: SocketAddr) -> anyhow::Result<SocketAddr> {
    let handle = PrometheusBuilder::new()
        .install_recorder()
        .context("installing the metrics recorder")?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("--metrics-addr {addr}"))?;
    let bound = listener.local_addr()?;
    // Histogram samples are folded into their summaries every few seconds, scraped or not.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let text = handle.render();
            async move {
                (
                    [(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("text/plain; version=0.0.4"),
                    )],
                    text,
                )
            }
        }),
    );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the metrics listener stopped");
        }
    });
    Ok(bound)
}
