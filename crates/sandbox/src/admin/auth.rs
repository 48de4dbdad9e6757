//! Who may use the management API, how often, and sharing what it changed.

use std::sync::Arc;

use apistend_limiter::Quota;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use http::{HeaderValue, Response, StatusCode};

use super::problem::problem;
use crate::state::AppState;

/// The admin API's own bucket by default: 50 requests at once, and
/// [`crate::config::ADMIN_PER_SECOND`] a second.
const ADMIN_BURST: u32 = 50;

/// Failed logins from one client address: 10 at once, then one per 2 s (30 a minute), so a
/// guessed token costs a guesser minutes per hundred, and an operator who mistyped waits seconds.
const FAILED_LOGIN_BURST: u32 = 10;
const FAILED_LOGIN_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);

/// The address a management request came from, as a request extension (the plain listener's
/// peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peer(pub(crate) std::net::IpAddr);

/// The bucket of failed logins from the request's client address.
fn failed_logins<B>(req: &http::Request<B>, fallback: Quota) -> (String, Quota) {
    let who = req
        .extensions()
        .get::<Peer>()
        .map_or_else(|| "unknown".to_owned(), |p| p.0.to_string());
    let quota = Quota::new(FAILED_LOGIN_BURST, FAILED_LOGIN_INTERVAL).unwrap_or(fallback);
    (format!("admin-login-failures:{who}"), quota)
}

/// The admin API's quota at `per_second` (a burst of 50, or of `per_second` when more).
pub(crate) fn admin_quota(per_second: u32) -> Result<Quota, apistend_limiter::QuotaError> {
    Quota::leaky_bucket(ADMIN_BURST.max(per_second), per_second)
}

/// Whether `req` carries the admin token (`Authorization: Bearer TOKEN`).
fn authorized(state: &AppState, headers: &http::HeaderMap) -> bool {
    let Some(v) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let token = v
        .strip_prefix("Bearer ")
        .or_else(|| v.strip_prefix("bearer "))
        .unwrap_or("");
    state.tenants.admin_matches(token)
}

/// Lets a management request in, or answers why not: a request without `Authorization` is a
/// 401; one with a token from a client address whose failed logins are spent is refused (429,
/// `Retry-After`) before its token is even compared, so guessing costs time whatever is
/// guessed; a wrong token is a 401 and spends one failure.
pub(crate) fn login<B>(state: &AppState, req: &http::Request<B>) -> Option<Response<Body>> {
    let unauthorized = || {
        problem(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "send the admin token as `Authorization: Bearer TOKEN`",
        )
    };
    // No credential at all is no guess: nothing is compared, nothing is spent.
    if !req.headers().contains_key(http::header::AUTHORIZATION) {
        return Some(unauthorized());
    }
    let (who, fq) = failed_logins(req, state.admin_quota);
    // A peek, not a draw: a right token must cost nothing, or a client's burst of concurrent
    // management calls would be refused. The price is that requests racing one another may
    // compare a few more tokens than the burst — at most as many as are in flight at once.
    let spent = state.admin_limiter.peek(&who, &fq);
    if !spent.allowed {
        let mut r = problem(
            StatusCode::TOO_MANY_REQUESTS,
            "Too Many Requests",
            "too many failed logins from this address; wait for Retry-After",
        );
        r.headers_mut().insert(
            http::header::RETRY_AFTER,
            HeaderValue::from(spent.retry_after_secs().max(1)),
        );
        return Some(r);
    }
    if authorized(state, req.headers()) {
        return None;
    }
    let _ = state.admin_limiter.acquire(&who, &fq, 1);
    Some(unauthorized())
}

/// Runs a management request in step with the other instances on the same Redis, if any: a
/// request that may write first adopts their latest state (so that its change is made on top of
/// theirs, not lost), and a request that did change the sandboxes shares the result.
async fn shared(state: &AppState, req: Request, next: Next) -> Response<Body> {
    let Some(sync) = &state.sync else {
        return next.run(req).await;
    };
    let writes = !matches!(*req.method(), http::Method::GET | http::Method::HEAD);
    if writes {
        sync.pull(&state.tenants).await;
    }
    let resp = next.run(req).await;
    if writes {
        // Shares what this request changed, if anything (nothing to share is no Redis call).
        sync.publish(&state.tenants).await;
    }
    resp
}

pub(super) async fn guard(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response<Body> {
    if let Some(refused) = login(&state, &req) {
        return refused;
    }
    let quota = state.admin_quota;
    let d = state
        .admin_limiter
        .acquire("admin", &quota, 1)
        .unwrap_or_else(|_| state.admin_limiter.peek("admin", &quota));
    let policy = format!(
        "\"admin\";q={};w={}",
        quota.burst(),
        quota.span().as_secs().max(1)
    );
    let mut resp = if d.allowed {
        shared(&state, req, next).await
    } else {
        let mut r = problem(
            StatusCode::TOO_MANY_REQUESTS,
            "Too Many Requests",
            "the management API's own rate limit; see RateLimit-Policy",
        );
        r.headers_mut().insert(
            http::header::RETRY_AFTER,
            HeaderValue::from(d.retry_after_secs().max(1)),
        );
        r
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&policy) {
        h.insert("ratelimit-policy", v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!(
        "\"admin\";r={};t={}",
        d.remaining,
        d.reset_after_secs()
    )) {
        h.insert("ratelimit", v);
    }
    resp
}
