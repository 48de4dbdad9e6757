//! What the dashboard watches: every answered request of a sandbox, published to the live feeds
//! that are open (`GET /api/v1/sandboxes/{id}/events`). With no feed open, the request path pays
//! one relaxed atomic load ([`Watch::watched`]) and publishes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use apistend_catalog::ServiceId;
use tokio::sync::broadcast;

/// Requests a feed may fall behind by before it is told how many it missed.
const BACKLOG: usize = 4096;

/// The largest part of a refusal's body a feed carries.
pub(crate) const MAX_BODY: usize = 4096;

/// One answered request of a sandbox.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// The sandbox whose key (or application) made it.
    pub(crate) sandbox: Arc<str>,
    /// The key, or `app:ID`.
    pub(crate) key: Arc<str>,
    pub(crate) service: ServiceId,
    /// The operation's own limit group (an index into the service's groups).
    pub(crate) group: usize,
    pub(crate) method: http::Method,
    pub(crate) path: String,
    pub(crate) status: u16,
    /// Milliseconds since the Unix epoch.
    pub(crate) at_ms: u64,
    /// For a rate-limit answer: the answer as it was sent.
    pub(crate) refusal: Option<Arc<Refusal>>,
}

/// A rate-limit answer as it was sent: its headers and (the start of) its body.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

/// Reads a rate-limit answer's body to show it, and gives back one to send that holds the same
/// bytes. Refusals are short and whole in memory; a longer body is shown cut at [`MAX_BODY`].
pub(crate) async fn capture(
    headers: &http::HeaderMap,
    body: axum::body::Body,
) -> (Refusal, axum::body::Body) {
    use http_body_util::BodyExt;
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => axum::body::Bytes::new(),
    };
    let shown = String::from_utf8_lossy(bytes.get(..MAX_BODY).unwrap_or(&bytes)).into_owned();
    let headers = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    (
        Refusal {
            headers,
            body: shown,
        },
        axum::body::Body::from(bytes),
    )
}

/// The feeds: a count of the open ones and the channel they read.
#[derive(Debug)]
pub(crate) struct Watch {
    watchers: Arc<AtomicUsize>,
    tx: broadcast::Sender<Arc<Seen>>,
    /// Set when the sandbox shuts down: open feeds end, so they hold up no drain.
    stopping: tokio::sync::watch::Sender<bool>,
}

impl Default for Watch {
    fn default() -> Self {
        Self {
            watchers: Arc::new(AtomicUsize::new(0)),
            tx: broadcast::channel(BACKLOG).0,
            stopping: tokio::sync::watch::channel(false).0,
        }
    }
}

impl Watch {
    /// Whether any feed is open: the only cost of watching on the request path when none is.
    pub(crate) fn watched(&self) -> bool {
        self.watchers.load(Ordering::Relaxed) > 0
    }

    /// Sends `seen` to the open feeds (none open: dropped).
    pub(crate) fn publish(&self, seen: Seen) {
        let _ = self.tx.send(Arc::new(seen));
    }

    /// Opens a feed; it counts as watching until dropped.
    pub(crate) fn subscribe(&self) -> Feed {
        self.watchers.fetch_add(1, Ordering::Relaxed);
        Feed {
            rx: self.tx.subscribe(),
            stopping: self.stopping.subscribe(),
            watchers: Arc::clone(&self.watchers),
        }
    }

    /// Ends every open feed (and those opened after): the sandbox is shutting down.
    pub(crate) fn stop(&self) {
        self.stopping.send_replace(true);
    }
}

/// An open feed.
#[derive(Debug)]
pub(crate) struct Feed {
    pub(crate) rx: broadcast::Receiver<Arc<Seen>>,
    /// True once the sandbox shuts down.
    pub(crate) stopping: tokio::sync::watch::Receiver<bool>,
    watchers: Arc<AtomicUsize>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.watchers.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(sandbox: &str) -> Seen {
        Seen {
            sandbox: sandbox.into(),
            key: "k".into(),
            service: Default::default(),
            group: 0,
            method: http::Method::GET,
            path: "/".into(),
            status: 200,
            at_ms: 0,
            refusal: None,
        }
    }

    #[test]
    fn a_feed_counts_as_watching_until_it_is_dropped_and_reads_what_is_published() {
        let w = Watch::default();
        assert!(!w.watched());
        w.publish(seen("before"));
        let mut f = w.subscribe();
        assert!(w.watched());
        w.publish(seen("sb"));
        assert_eq!(&*f.rx.try_recv().map(|s| s.sandbox.clone()).unwrap(), "sb");
        drop(f);
        assert!(!w.watched());
    }

    #[tokio::test]
    async fn stopping_ends_the_open_feeds() {
        let w = Watch::default();
        let mut f = w.subscribe();
        w.stop();
        tokio::time::timeout(
            std::time::Duration::from_secs(1),
            f.stopping.wait_for(|s| *s),
        )
        .await
        .expect("a stopped feed ends")
        .expect("the sender is alive");
    }
}
