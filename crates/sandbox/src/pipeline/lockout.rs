//! Stage 4, the lockout: an owner locked out after repeated rejections (where the service's
//! definition has a `lockout` rule) gets the lockout's answer and spends nothing.

use apistend_catalog::{ErrorKind, Service};
use axum::body::Body;
use http::Response;

use super::answer::Answer;
use super::meta::Meta;
use super::noted::Noted;
use crate::buckets::Owner;
use crate::state::AppState;

/// Refuses a locked-out `owner` (noted in `seen`).
pub(super) fn check(
    state: &AppState,
    service: &Service,
    owner: &Owner,
    meta: &Meta,
    seen: &mut Noted,
) -> Result<(), Response<Body>> {
    if service.lockout.is_some() && state.lockouts.locked(service.id, &owner.key, meta.started) {
        seen.refused = Some(crate::journal::Refused::Lockout);
        return Err(Answer::error(service, &ErrorKind::Locked, &meta.ctx(0)).into_response());
    }
    Ok(())
}
