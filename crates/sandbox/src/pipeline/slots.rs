//! Stage 6, the slots: a slot of each of the service's concurrency limits, held until the
//! answer has been sent.

use apistend_catalog::ErrorKind;
use axum::body::Body;
use http::Response;

use super::answer::Answer;
use super::limit::{Admitted, unavailable};
use super::noted::Noted;
use crate::buckets::{Owner, Spend};
use crate::in_flight::{self, Held, Taken};
use crate::state::AppState;

/// The slots held for the request (`None` for a service without concurrency limits: the
/// pipeline does not call this for one); a full limit is the service's answer to too many
/// requests in flight.
pub(super) async fn take(
    state: &AppState,
    admitted: &Admitted<'_>,
    owner: &Owner,
    at: &Spend<'_>,
    seen: &mut Noted,
) -> Result<Option<Held>, Response<Body>> {
    let service = admitted.service;
    if service.in_flight.is_empty() {
        return Ok(None);
    }
    match in_flight::take(&state.store, service, owner, at).await {
        Ok(Taken::All(h)) => Ok(Some(h)),
        Ok(Taken::Full(full)) => {
            seen.refused = Some(crate::journal::Refused::InFlight);
            // Its message names the limit that is full (Yandex Market: "Hit rate limit of 4
            // parallel requests"), not a bucket's: found again on this path only.
            let limit = service.in_flight_for(at.site.operation).nth(full);
            let answer = admitted.answer(|ctx| {
                let ctx = limit.map_or(*ctx, |l| ctx.with_limit(l.slots.max()));
                Answer::error(service, &ErrorKind::TooManyInFlight, &ctx)
            });
            Err(answer.into_response())
        }
        Err(e) => Err(unavailable(state, service, admitted.meta, &e)),
    }
}

/// `resp`, holding its slots (if it took any) until its body is sent; read first for the
/// journal when it keeps the request and the answer did not give its bytes.
pub(super) async fn hold(
    resp: Response<Body>,
    held: Option<Held>,
    seen: &mut Noted,
) -> Response<Body> {
    let Some(h) = held else {
        return resp;
    };
    // Read for the journal before the slot is tied to the body's sending (unless the answer
    // gave its bytes already).
    let resp = if seen.body_unread() {
        let (resp, sent) = super::journal::take_body(resp).await;
        seen.sent = sent;
        resp
    } else {
        resp
    };
    resp.map(|body| crate::in_flight::HeldBody::wrap(body, h))
}
