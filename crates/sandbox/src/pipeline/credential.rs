//! Stage 3, the credential: whose request it is, and so whose buckets it draws from. An unknown
//! credential spends tokens too (its own buckets); it is refused after the limit (stage 5).

use std::sync::Arc;

use apistend_catalog::{ErrorKind, Resolved, Service};
use axum::body::Body;
use http::Response;

use super::limit::Admitted;
use super::noted::{Noted, Whose};
use crate::buckets::Owner;
use crate::state::AppState;
use apistend_answers::call::Call;

/// The caller of a request.
pub(super) struct Caller {
    /// Whose buckets.
    pub(super) owner: Owner,
    /// Whether the credential is a sandbox's (a key or a Bitrix24 application's token).
    known: bool,
}

/// The caller of `call` (to `service`), noted in `seen` for the metrics and the dashboard.
pub(super) fn identify(
    state: &AppState,
    service: &Service,
    call: &Call,
    resolved: &Resolved<'_>,
    seen: &mut Noted,
) -> Caller {
    let presented = call.credential.as_deref();
    let principal = presented.and_then(|c| state.tenants.lookup(c)).filter(|_| {
        // A token the service issued is a key until its `exp`.
        service.token.is_none()
            || presented.is_none_or(|c| {
                #[allow(clippy::cast_possible_truncation)] // seconds since 1970 fit an i64
                let now = apistend_answers::clock::unix_now() as i64;
                !crate::tokens::expired(c, now)
            })
    });
    let owner = Owner::new(
        principal.as_ref(),
        presented,
        call.credential_part.as_deref(),
    );
    seen.group = resolved.groups.first().copied().unwrap_or(usize::MAX);
    if let Some(view) = &owner.view {
        if state.watch.watched() {
            seen.whose = Some(Whose {
                sandbox: Arc::clone(&view.sandbox),
                key: Arc::clone(&owner.key),
            });
        }
        if view.journal && state.journal.on() {
            // The key itself is masked by its value: only an application's token is kept.
            let other = presented.filter(|_| owner.app.is_some());
            seen.entry = Some(super::journal::whose(
                state,
                &view.sandbox,
                &owner.key,
                other,
            ));
        }
    }
    Caller {
        owner,
        known: principal.is_some(),
    }
}

impl Caller {
    /// The service's 401 for a credential no sandbox has, once its token is spent.
    pub(super) fn require(&self, admitted: &Admitted<'_>) -> Result<(), Response<Body>> {
        if self.known {
            Ok(())
        } else {
            Err(admitted.refuse(&ErrorKind::Unauthorized))
        }
    }
}
