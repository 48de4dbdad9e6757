//! Stage 6, the slots: a slot of each of the service's concurrency limits, held until the
//! answer has been sent.

use apistend_catalog::ErrorKind;
use axum::body::Body;
use http::Response;

use super::limit::{Admitted, unavailable};
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
) -> Result<Option<Held>, Response<Body>> {
    let service = admitted.service;
    if service.in_flight.is_empty() {
        return Ok(None);
    }
    match in_flight::take(&state.store, service, owner, at).await {
        Ok(Taken::All(h)) => Ok(Some(h)),
        Ok(Taken::Full) => Err(admitted.refuse(&ErrorKind::TooManyInFlight)),
        Err(e) => Err(unavailable(state, service, admitted.meta, &e)),
    }
}
