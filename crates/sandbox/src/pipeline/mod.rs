//! The emulation pipeline: a request through the stages docs/architecture.md lists, in their
//! order, one file each. A stage passes the request on (`Ok`) or answers it itself (`Err`, the
//! response); a new stage is a new file and one line in [`stages`].

// A stage's early answer is the response itself, moved one frame up to `stages`: boxing it
// would add an allocation to every refusal (the rejected path of the gateway bench).
#![allow(clippy::result_large_err)]

mod answer;
mod batch;
mod body;
mod chaos;
mod cost;
mod credential;
mod jobs;
mod journal;
mod limit;
mod lockout;
mod meta;
mod noted;
mod objects;
mod observe;
mod operating;
mod respond;
mod route;
mod slots;
mod token;
mod validate;

use std::sync::Arc;

use apistend_catalog::Service;
use axum::body::Body;
use http::{Request, Response};

pub(crate) use route::Route;

use crate::buckets::Spend;
use crate::controls::Controls;
use crate::journal::Refused;
use crate::state::AppState;
use meta::Meta;
use noted::Noted;

/// Answers one request of the service `route` names, and counts it: by limit group, status,
/// rejection and scenario. Every request is logged at debug level
/// (`RUST_LOG=apistend_sandbox=debug`) with its request id: the caller's `X-Request-Id`, or the
/// id of its error body.
pub(crate) async fn handle(
    state: Arc<AppState>,
    route: Route,
    req: Request<Body>,
) -> Response<Body> {
    let mut controls = Controls::read(req.headers());
    let meta = Meta::new(controls.request_id.take());
    let mut seen = Noted {
        group: usize::MAX,
        conn: route.conn,
        ..Noted::default()
    };
    // A route is made from the catalog, so its service is there.
    let Some(service) = state.catalog.services().get(route.index) else {
        return axum::response::IntoResponse::into_response(http::StatusCode::NOT_FOUND);
    };
    let seeing = observe::Seeing::new(&state, service.id, &req, controls.asked_scenario);
    let mut resp = match stages(&state, service, route, req, &controls, &meta, &mut seen).await {
        Ok(resp) | Err(resp) => resp,
    };
    let refused = seeing.record(&state, &meta, &seen, &resp);
    if seen.journaled() {
        if seen.body_unread() {
            let sent;
            (resp, sent) = journal::take_body(resp).await;
            seen.sent = sent;
        }
        journal::keep(&state, service.id, &mut seen, &meta, &resp);
    }
    match seen.whose.take() {
        Some(w) => {
            seeing
                .publish(&state, (w.sandbox, w.key), seen.group, refused, resp)
                .await
        }
        None => resp,
    }
}

/// The stages, in their order.
async fn stages(
    state: &AppState,
    service: &Service,
    route: Route,
    req: Request<Body>,
    controls: &Controls,
    meta: &Meta,
    seen: &mut Noted,
) -> Result<Response<Body>, Response<Body>> {
    let (parts, body) = req.into_parts();
    let body = body::read(state, service, body, meta).await?;
    let (prefix, by_host) = (route.prefix_len(), route.came_by_host());
    let (mut call, resolved) = route::resolve(state, service, route, &parts, &body)?;
    seen.operation = resolved.operation_index;
    body::within(state, service, resolved.operation, &body, meta)?;
    // A call outside the API's limits (amoCRM's OAuth token exchange, made before the client
    // has a token): its answer, without a credential and without spending a bucket.
    if let Some(op) = resolved.operation.filter(|o| o.anonymous) {
        // The token endpoint of a service that issues tokens (amoCRM's OAuth), unless the
        // request asks for the example (`X-Mock-State: off`; a bad value is refused by
        // the service's own 400 only on a limited call: here it does not change the answer).
        if let Some(t) = token::endpoint(service, op).filter(|_| controls.stateful() != Ok(false)) {
            return Ok(token::answer(state, service, resolved.index, op, t, &call).into_response());
        }
        return Ok(respond::answer(state, service, &resolved, &call, meta, 0).into_response());
    }
    let caller = credential::identify(state, service, &call, &resolved, seen);
    journal::heard(state, &parts, &body, seen);
    let owner = &caller.owner;
    let at = Spend::of(
        &resolved,
        call.host.as_deref(),
        &call.path,
        call.body.as_ref(),
    );
    lockout::check(state, service, owner, meta, seen)?;
    let mut admitted = limit::take(state, service, &resolved, owner, &at, meta, seen).await?;
    caller.require(&admitted)?;
    let held = slots::take(state, &admitted, owner, &at, seen).await?;
    let mode = validate::mode(controls, owner, &admitted);
    let mode = seen.refusing(Refused::Validation, mode)?;
    let heads = &parts.headers;
    let checked = validate::check(state, &resolved, &call, heads, mode, &admitted, seen);
    let invalid = seen.refusing(Refused::Validation, checked)?;
    let stateful = seen.refusing(Refused::Validation, objects::wanted(controls, &admitted))?;
    let chaos = chaos::read(state, controls, owner, &admitted, seen);
    let chaos = seen.refusing(Refused::Validation, chaos)?;
    if chaos.rate_limited() {
        seen.refused = Some(Refused::Scenario);
        return Err(admitted.exceeded(at.weight));
    }
    let budget = operating::before(state, &resolved, &call, owner, &admitted);
    let mut budget = seen.refusing(Refused::Operating, budget)?;
    let blocked = budget.as_mut().map(operating::Budget::take_blocked);
    call.blocked = blocked.unwrap_or_default();
    let mut answer = match chaos.instead() {
        Some(kind) => {
            seen.refused = Some(Refused::Scenario);
            chaos.error(state, &admitted, &kind).await
        }
        None => {
            let origin = objects::Origin {
                parts: &parts,
                prefix,
                by_host,
            };
            let (index, view) = (resolved.index, owner.view.as_deref());
            let kept = objects::Kept::of(state, service, index, view, origin, stateful);
            let at = (meta, admitted.limit());
            reply(state, service, &resolved, &call, kept.as_ref(), mode, at).await
        }
    };
    chaos.shape(&mut answer);
    if !chaos.delay.is_zero() {
        tokio::time::sleep(chaos.delay).await;
    }
    if let Some(b) = budget {
        b.after(&mut answer, owner, &call.blocked, meta.started, chaos.delay);
    }
    if let Some(op) = cost::difference(&resolved, &at, &answer) {
        admitted.decision =
            cost::settle(state, &resolved, owner, &at, op, admitted.decision, meta).await;
    }
    let mut answer = answer.rate(service.rate_headers(&admitted.decision, &admitted.quota, false));
    answer.scenario = chaos.scenario.map(crate::scenario::Scenario::name);
    answer
        .headers
        .extend(invalid.map(|r| (validate::X_APISTEND_INVALID, r)));
    let resp = journal::response(state, answer, seen);
    Ok(slots::hold(resp, held, seen).await)
}

/// Stage 10's answer to `call`: a batch's commands one by one, else over the objects the
/// sandbox keeps (`kept`), else without state.
async fn reply(
    state: &AppState,
    service: &Service,
    resolved: &apistend_catalog::Resolved<'_>,
    call: &apistend_answers::call::Call,
    kept: Option<&objects::Kept<'_>>,
    mode: crate::tenants::Validation,
    (meta, limit): (&Meta, u32),
) -> answer::Answer {
    let batching = resolved
        .operation
        .and_then(|_| state.emulated(resolved.index)?.answers.batching(call));
    if let Some(batching) = batching {
        let batch = batch::Batch::new(state, service, resolved.index, mode, kept, (meta, limit));
        // Boxed: a batch is rare, and its future would otherwise grow every request's.
        return Box::pin(batch.answer(batching, call)).await;
    }
    match kept {
        Some(kept) => kept.answer(resolved, call, meta, limit).await,
        None => respond::answer(state, service, resolved, call, meta, limit),
    }
}
