//! The token endpoint of a service that issues tokens (its definition's `[token]`: amoCRM's
//! `/oauth2/access_token`), answered before any credential: its example with the tokens issued,
//! or its refusal.

use apistend_answers::call::Call;
use apistend_catalog::{Missing, Operation, Service, TokenEndpoint};
use serde_json::Value;

use super::answer::Answer;
use super::respond::static_answer;
use crate::state::AppState;
use crate::tokens::{Refused, exchange};

/// The token endpoint of `service` when `op` is it.
pub(super) fn endpoint<'s>(service: &'s Service, op: &Operation) -> Option<&'s TokenEndpoint> {
    service.token.as_ref().filter(|t| t.path == op.path)
}

/// The answer of the token endpoint `t` (operation `op` of `service`, at `index`) to `call`.
pub(super) fn answer(
    state: &AppState,
    service: &Service,
    index: usize,
    op: &Operation,
    t: &TokenEndpoint,
    call: &Call,
) -> Answer {
    #[allow(clippy::cast_possible_truncation)] // seconds since 1970 fit an i64
    let now = apistend_answers::clock::unix_now() as i64;
    let issued = match exchange(&state.tenants, t, call, now) {
        Ok(i) => i,
        Err(Refused::Bad(why)) => return refusal(&t.refused, &why),
        Err(Refused::Revoked(why)) => return refusal(&t.revoked, &why),
        Err(Refused::Failed(why)) => {
            tracing::error!(error = %why, "a token could not be kept");
            return Answer::problem(500, "Internal Server Error", &why);
        }
    };
    let mut success = match static_answer(state, service, index, op, call) {
        Some(Ok(s)) => s,
        _ => apistend_answers::Success::ok(Value::Object(serde_json::Map::new())),
    };
    let mut body = success.take_json();
    let mut set = |at: &str, v: Value| apistend_answers::objects::set_pointer(&mut body, at, v);
    set(&t.access_at, Value::from(issued.access));
    set(&t.refresh_at, Value::from(issued.refresh));
    if let Some(at) = &t.expires_at {
        set(at, Value::from(t.lifetime_secs));
    }
    if let Some(at) = &t.time_at {
        set(at, Value::from(issued.now));
    }
    success.body = body;
    Answer::success(success, service.content_type)
}

/// The endpoint's refusal `m`, `{message}` in its body replaced by `why`.
fn refusal(m: &Missing, why: &str) -> Answer {
    let quoted = Value::from(why).to_string();
    let text = quoted.trim_matches('"');
    let body = m.body.as_deref().unwrap_or("").replace("{message}", text);
    Answer::raw(m.status, "application/problem+json", body)
}
