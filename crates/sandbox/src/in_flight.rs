//! A request's concurrency slots: taken after its tokens, renewed every third of their lease
//! while it is held (a delayed or `slow` answer may take a minute), and given back when its
//! answer has been sent — the slots ride on the response body, so they go when hyper drops it,
//! whether the body was written to the end or the client went away.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use apistend_catalog::Service;
use apistend_limiter::{Lease, LimiterError, Slots, Store};
use axum::body::{Body, Bytes};
use hyper::body::Frame;

use crate::buckets::{Owner, Spend};

/// Slots held by one request.
pub(crate) struct Held {
    store: Store,
    leases: Vec<(Lease, Slots)>,
    renewer: Option<tokio::task::JoinHandle<()>>,
}

/// The outcome of asking for a request's slots.
pub(crate) enum Taken {
    /// Every slot: hold them until the answer is sent.
    All(Held),
    /// One limit is full (the others were given back).
    Full,
}

/// Takes one slot of each of `service`'s concurrency limits for `owner`.
///
/// # Errors
/// [`LimiterError`] when the store cannot answer (the slots taken so far are given back).
pub(crate) async fn take(
    store: &Store,
    service: &Service,
    owner: &Owner,
    at: &Spend<'_>,
) -> Result<Taken, LimiterError> {
    let mut held = Held {
        store: store.clone(),
        leases: Vec::with_capacity(service.in_flight.len()),
        renewer: None,
    };
    for limit in &service.in_flight {
        let tenant = owner.tenant(service.id.as_str(), limit.scope);
        let key = limit.slots_key(&tenant, service.id, &at.site);
        // On an error or a full limit, dropping `held` gives back what it has.
        match store.lease(&key, &limit.slots).await? {
            Some(lease) => held.leases.push((lease, limit.slots)),
            None => return Ok(Taken::Full),
        }
    }
    if let Some(every) = held.leases.iter().map(|(_, s)| s.ttl() / 3).min() {
        let store = store.clone();
        let leases = held.leases.clone();
        held.renewer = Some(tokio::spawn(renew(store, leases, every)));
    }
    Ok(Taken::All(held))
}

async fn renew(store: Store, leases: Vec<(Lease, Slots)>, every: Duration) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
    tick.tick().await;
    loop {
        tick.tick().await;
        for (lease, slots) in &leases {
            if let Err(e) = store.renew(lease, slots).await {
                tracing::warn!(error = %e, key = lease.key(), "could not renew a concurrency slot");
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(r) = self.renewer.take() {
            r.abort();
        }
        if self.leases.is_empty() {
            return;
        }
        let store = self.store.clone();
        let leases = std::mem::take(&mut self.leases);
        // Drop cannot wait; the release is a task of its own. Should it fail, the lease runs
        // out by itself.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for (lease, slots) in &leases {
                    if let Err(e) = store.release(lease, slots).await {
                        tracing::warn!(error = %e, key = lease.key(), "could not release a concurrency slot");
                    }
                }
            });
        }
    }
}

/// A response body that holds its request's slots until it is dropped.
pub(crate) struct HeldBody {
    inner: Body,
    _held: Held,
}

impl HeldBody {
    pub(crate) fn wrap(inner: Body, held: Held) -> Body {
        Body::new(Self { inner, _held: held })
    }
}

impl hyper::body::Body for HeldBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}
