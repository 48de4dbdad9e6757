//! Stage 5, the limit: every request spends its tokens first, whatever follows. A refusal is the
//! service's rate-limit answer, and counts toward a lockout.

use apistend_catalog::{ErrorContext, ErrorKind, Resolved, Service};
use apistend_limiter::{Decision, Quota};
use axum::body::Body;
use http::Response;

use super::answer::Answer;
use super::meta::Meta;
use super::noted::Noted;
use crate::buckets::{self, Owner, Spend};
use crate::state::AppState;

/// A request the limit let through: what later refusals report in their headers.
pub(super) struct Admitted<'a> {
    pub(super) service: &'a Service,
    pub(super) meta: &'a Meta,
    /// The decision to report (updated once the answer's cost is settled).
    pub(super) decision: Decision,
    /// The quota behind it.
    pub(super) quota: Quota,
}

impl Admitted<'_> {
    /// The bucket's limit, as error bodies name it.
    pub(super) fn limit(&self) -> u32 {
        self.decision.limit
    }

    /// The service's error of `kind`, with the bucket's headers.
    pub(super) fn refuse(&self, kind: &ErrorKind) -> Response<Body> {
        self.answer(|ctx| Answer::error(self.service, kind, ctx))
            .into_response()
    }

    /// The answer `make` makes of an error context, with the bucket's headers.
    pub(super) fn answer(&self, make: impl FnOnce(&ErrorContext<'_>) -> Answer) -> Answer {
        let headers = self
            .service
            .rate_headers(&self.decision, &self.quota, false);
        make(&self.meta.ctx(self.limit())).rate(headers)
    }

    /// What a real exceedance of this bucket answers (the `rate_limit` scenario): its
    /// headers as for an empty bucket after a request of `weight`.
    pub(super) fn exceeded(&self, weight: u32) -> Response<Body> {
        let exceeded = self.decision.exceeded(&self.quota, weight);
        Answer::rate_limited(
            self.service,
            &exceeded,
            &self.quota,
            &self.meta.ctx(self.limit()),
        )
        .into_response()
    }
}

/// Takes the request's tokens from every bucket of its groups, all or nothing.
pub(super) async fn take<'a>(
    state: &AppState,
    service: &'a Service,
    resolved: &Resolved<'_>,
    owner: &Owner,
    at: &Spend<'_>,
    meta: &'a Meta,
    seen: &mut Noted,
) -> Result<Admitted<'a>, Response<Body>> {
    let charge = match buckets::take(&state.store, resolved, owner, at).await {
        Ok(c) => c,
        Err(e) => return Err(unavailable(state, service, meta, &e)),
    };
    let (decision, quota) = (charge.decision, charge.quota);
    seen.fill = Some((decision.remaining, decision.limit));
    if !decision.allowed {
        seen.refused = Some(crate::journal::Refused::Limit);
        if let Some(rule) = &service.lockout
            && state
                .lockouts
                .count_rejection(service.id, &owner.key, rule, meta.started)
                .await
        {
            state.metrics.lockout(service.id);
        }
        let ctx = meta.ctx(decision.limit);
        // The most common refusal: its bytes given to the journal as it is made.
        let refusal = Answer::rate_limited(service, &decision, &quota, &ctx);
        return Err(super::journal::response(state, refusal, seen));
    }
    Ok(Admitted {
        service,
        meta,
        decision,
        quota,
    })
}

/// The service's 503 when the rate-limit store cannot answer (logged and counted).
pub(super) fn unavailable(
    state: &AppState,
    service: &Service,
    meta: &Meta,
    e: &apistend_limiter::LimiterError,
) -> Response<Body> {
    state.metrics.store_error();
    tracing::error!(request_id = meta.id(), error = %e, "rate-limit store failed");
    Answer::error(service, &ErrorKind::Unavailable, &meta.ctx(0)).into_response()
}
