//! Stage 7, validation: first the headers the service requires of every request (its
//! definition's `requires`: MoySklad's `Accept-Encoding: gzip`, else 415 with no body), the
//! length of the body's lists (its `max_array_items`: MoySklad's 1 000, else 413), then the
//! request against its operation's official description (its path and query parameters,
//! `Content-Type`, body syntax and schema: `apistend_answers::RequestRules`).
//! After the limit and the slots, as the real services count an invalid request too; refused in
//! the service's own words, the precise reason in `X-APIStend-Invalid`.

use apistend_answers::call::Call;
use apistend_answers::requests::longer_than;
use apistend_catalog::{ErrorContext, ErrorKind, Resolved, Service};
use axum::body::Body;
use http::{HeaderMap, HeaderValue, Response};

use super::answer::Answer;
use super::limit::Admitted;
use super::noted::Noted;
use crate::buckets::Owner;
use crate::controls::Controls;
use crate::state::AppState;
use crate::tenants::Validation;

pub(super) use crate::heads::X_APISTEND_INVALID;

/// The longest reason sent in the header (a schema's enum can be long).
const MAX_REASON: usize = 512;

/// The validation mode of a request: its `X-Mock-Validation`, else its sandbox's setting for the
/// service, else strict. A bad `X-Mock-Validation` is the service's 400.
pub(super) fn mode(
    controls: &Controls,
    owner: &Owner,
    admitted: &Admitted<'_>,
) -> Result<Validation, Response<Body>> {
    match controls.validation.as_deref() {
        None => Ok(owner.view.as_deref().map_or(Validation::Strict, |v| {
            v.validation(admitted.service.id.as_str())
        })),
        Some(v) => Validation::parse(v).ok_or_else(|| {
            let why = format!("unknown X-Mock-Validation {v:?}; valid: strict, report, off");
            admitted.refuse(&ErrorKind::BadRequest(why))
        }),
    }
}

/// Checks `call` under `mode`: `Ok(None)` when valid or not checked, `Ok(Some(reason))` when
/// invalid and only reported, `Err` the service's refusal. First the headers the service
/// requires of every request (MoySklad's `Accept-Encoding: gzip`: its status, no body), then
/// the operation's rules.
pub(super) fn check(
    state: &AppState,
    resolved: &Resolved<'_>,
    call: &Call,
    headers: &HeaderMap,
    mode: Validation,
    admitted: &Admitted<'_>,
    seen: &mut Noted,
) -> Result<Option<HeaderValue>, Response<Body>> {
    let service = admitted.service;
    if mode == Validation::Off {
        return Ok(None);
    }
    let lacking = service.requires.iter().find(|r| {
        let values = headers.get_all(r.header.as_str()).iter();
        !r.met(values.filter_map(|v| v.to_str().ok()))
    });
    if let Some(r) = lacking {
        return invalid_answer(state, mode, admitted, seen, &r.reason(), |_| {
            Answer::raw(r.status, "", String::new())
        });
    }
    if let Some(reason) = too_long(service, call) {
        return invalid_answer(state, mode, admitted, seen, &reason, |ctx| {
            Answer::error(service, &ErrorKind::TooLarge(reason.clone()), ctx)
        });
    }
    let (Some(op), Some(emulated)) = (resolved.operation, state.emulated(resolved.index)) else {
        return Ok(None);
    };
    let Some(rules) = &emulated.requests else {
        return Ok(None);
    };
    // An RPC-style call (Bitrix24's `/rest/{method}`) is checked by its method's own rules.
    let (method, path) = match call.rpc_method {
        Some(_) => (call.method, call.path.as_str()),
        None => (op.method, op.spec_path.as_str()),
    };
    let own_path = op.spec_path.ends_with(op.path.as_str());
    let Err(invalid) = rules.check(
        method,
        path,
        call,
        service.empty_body_is_empty_object,
        own_path,
    ) else {
        return Ok(None);
    };
    let reason = invalid.to_string();
    let documented = || {
        let examples = emulated.examples.as_ref()?;
        examples.documented_refusal(method, path, reason.clone())
    };
    invalid_answer(
        state,
        mode,
        admitted,
        seen,
        &reason,
        |ctx| match documented() {
            Some(refusal) => Answer::refusal(service, refusal, ctx),
            None => Answer::error(service, &invalid.kind(), ctx),
        },
    )
}

/// Why `call`'s body is refused for a list longer than its service takes (MoySklad's 1 000 items
/// in any list), if it is.
fn too_long(service: &Service, call: &Call) -> Option<String> {
    let max = usize::try_from(service.max_array_items?).ok()?;
    let (at, n) = longer_than(call.body.as_ref()?, max)?;
    Some(format!("{at}: {n} items, at most {max}"))
}

/// An invalid request: counted; under `report`, its reason to send with the answer; else the
/// refusal `make` makes, with the reason in `X-APIStend-Invalid`.
fn invalid_answer(
    state: &AppState,
    mode: Validation,
    admitted: &Admitted<'_>,
    seen: &mut Noted,
    reason: &str,
    make: impl FnOnce(&ErrorContext<'_>) -> Answer,
) -> Result<Option<HeaderValue>, Response<Body>> {
    let header = header_value(reason);
    state.metrics.invalid(admitted.service.id, mode.as_str());
    if mode == Validation::Report {
        return Ok(Some(header));
    }
    seen.invalid = true;
    let mut answer = admitted.answer(make);
    answer.headers.push((X_APISTEND_INVALID, header));
    Err(answer.into_response())
}

/// `reason` as a header value: at most [`MAX_REASON`] bytes, cut at a character; control
/// characters (none is in a reason, but a client's value may be quoted in it) as spaces.
pub(super) fn header_value(reason: &str) -> HeaderValue {
    let mut end = reason.len().min(MAX_REASON);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let cut: String = reason
        .get(..end)
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    HeaderValue::from_bytes(cut.as_bytes()).unwrap_or_else(|_| HeaderValue::from_static("invalid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_a_header_whatever_it_holds() {
        let v = header_value("body.name: 'Привет\n' is not one of 'a'");
        assert_eq!(
            v.as_bytes(),
            "body.name: 'Привет ' is not one of 'a'".as_bytes()
        );
        let long = "я".repeat(400);
        assert!(header_value(&long).len() <= MAX_REASON);
    }
}
