//! A request's concurrency slots: taken after its tokens, renewed while it is held (a delayed or
//! `slow` answer may take a minute; [`HeldSlots`]), and given back when its answer has been
//! sent — the slots ride on the response body, so they go when hyper drops it, whether the body
//! was written to the end or the client went away.

use std::pin::Pin;
use std::task::{Context, Poll};

use apistend_catalog::{Service, namespace};
use apistend_limiter::{HeldSlots, LimiterError, Store};
use axum::body::{Body, Bytes};
use hyper::body::Frame;

use crate::buckets::{Owner, Spend};

/// Slots held by one request.
pub(crate) type Held = HeldSlots;

/// The outcome of asking for a request's slots.
pub(crate) enum Taken {
    /// Every slot: hold them until the answer is sent.
    All(Held),
    /// The limit at this place of those that hold the call is full (the slots of the others
    /// were given back).
    Full(usize),
}

/// Takes one slot of each of `service`'s concurrency limits that hold the call `at` for
/// `owner`.
///
/// # Errors
/// [`LimiterError`] when the store cannot answer (the slots taken so far are given back).
pub(crate) async fn take(
    store: &Store,
    service: &Service,
    owner: &Owner,
    at: &Spend<'_>,
) -> Result<Taken, LimiterError> {
    let wanted: Vec<_> = service
        .in_flight_for(at.site.operation)
        .map(|limit| {
            let tenant = owner.tenant(service.id.as_str(), limit.scope);
            let key = limit.slots_key(namespace::IN_FLIGHT, &tenant, service.id, &at.site);
            (key, limit.slots)
        })
        .collect();
    Ok(match store.lease_all(&wanted).await? {
        Ok(held) => Taken::All(held),
        Err(full) => Taken::Full(full),
    })
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
