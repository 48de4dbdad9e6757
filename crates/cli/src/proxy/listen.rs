//! The proxy's listener: HTTP/1.1 connections on the sandbox's clock
//! ([`apistend_sandbox::transport`]) — an idle keep-alive connection closes after the idle
//! timeout, a request head once started must arrive within the head timeout, a head is at most
//! `max_head_bytes` — and a graceful end: on `shutdown`, requests in flight finish (for at most
//! 30 s) and no new one is taken.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apistend_sandbox::transport::{Phase, TimedIo, Timeouts, accept};
use axum::Router;
use axum::body::Body;
use futures_util::FutureExt as _;
use tokio::net::TcpListener;
use tower::ServiceExt as _;

/// Serves `app` on `listener` until `shutdown`.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    timeouts: Timeouts,
    max_head_bytes: usize,
    shutdown: impl Future<Output = ()> + Send,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            s = accept(&listener) => s,
            () = &mut shutdown => break,
        };
        let phase = Arc::new(Phase::default());
        let io = hyper_util::rt::TokioIo::new(TimedIo::new(stream, Arc::clone(&phase), timeouts));
        let app = app.clone();
        let service =
            hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                phase.busy();
                let done = Arc::clone(&phase);
                app.clone().oneshot(req.map(Body::new)).map(move |r| {
                    done.answered();
                    r.map_err(|never: Infallible| match never {})
                })
            });
        let mut http = hyper::server::conn::http1::Builder::new();
        http.max_buf_size(max_head_bytes.max(8192));
        let conn = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "proxy connection ended");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(30)) => {
            tracing::warn!("gave up waiting for requests in flight");
        }
    }
}
