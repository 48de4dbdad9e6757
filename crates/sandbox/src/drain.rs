//! Graceful shutdown for every kind of connection the sandbox serves. hyper-util's
//! `GracefulShutdown` watches only plain connections, not the upgradeable ones that `CONNECT`
//! needs, so the sandbox keeps its own: a signal each connection watches, and the sender's
//! `closed()` as the sign that the last connection has finished.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::watch;

/// The sending side: signals, then waits for the connections.
#[derive(Debug)]
pub(crate) struct Drain(watch::Sender<bool>);

/// A connection's side.
#[derive(Debug, Clone)]
pub(crate) struct Watch(watch::Receiver<bool>);

pub(crate) fn channel() -> (Drain, Watch) {
    let (tx, rx) = watch::channel(false);
    (Drain(tx), Watch(rx))
}

impl Drain {
    /// Tells every connection to finish its request in flight and close, then waits until all
    /// have (and every [`Watch`] is gone), for at most `max`.
    pub(crate) async fn drain(self, max: Duration) {
        let _ = self.0.send(true);
        tokio::select! {
            () = self.0.closed() => {}
            () = tokio::time::sleep(max) => tracing::warn!("gave up waiting for requests in flight"),
        }
    }
}

impl Watch {
    /// Once the drain has begun.
    pub(crate) async fn signaled(&mut self) {
        let _ = self.0.wait_for(|draining| *draining).await;
    }

    /// Drives `conn` to its end, shutting it down gracefully once the drain begins.
    pub(crate) async fn run<C: Graceful>(mut self, conn: C) {
        let mut conn = std::pin::pin!(conn);
        tokio::select! {
            // The connection first, and no random pick per wake-up: this is polled per request.
            biased;
            _ = conn.as_mut() => return,
            () = self.signaled() => conn.as_mut().graceful_shutdown(),
        }
        let _ = conn.await;
    }
}

/// A connection that can stop taking requests and close once its current one is answered.
pub(crate) trait Graceful: Future {
    fn graceful_shutdown(self: Pin<&mut Self>);
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<I, S, B> Graceful for hyper::server::conn::http1::Connection<I, S>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<BoxError>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: hyper::body::Body + 'static,
    B::Error: Into<BoxError>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http1::Connection::graceful_shutdown(self);
    }
}

impl<I, S, B> Graceful for hyper::server::conn::http1::UpgradeableConnection<I, S>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<BoxError>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    B: hyper::body::Body + 'static,
    B::Error: Into<BoxError>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http1::UpgradeableConnection::graceful_shutdown(self);
    }
}
