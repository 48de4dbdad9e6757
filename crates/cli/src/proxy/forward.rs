//! One proxied request: read within the limits, sent through the service's stack, answered as
//! the upstream answered (plus `X-APIStend-Waited-Ms`), or with a clear error of the proxy's own:
//! a local refusal (429 with `Retry-After`), an oversize, slow or malformed body (413, 408,
//! 400), an unknown path (404), an unreachable or failing upstream (502, 504), a full proxy
//! (503). The request's deadline (`--upstream-timeout-s`) counts the whole of it: every try,
//! every wait for a token, every backoff. A request that may have reached the service is not
//! sent again unless the catalog calls it repeatable (`RetryPolicy`).

use std::sync::Arc;

use apistend_catalog::Method;
use apistend_client::{ClientError, Deadline, RefusedBy, Waited};
use axum::body::{Body, Bytes};
use axum::extract::State as AxumState;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode};
use metrics_exporter_prometheus::PrometheusHandle;
use serde_json::json;
use tower::ServiceExt as _;

use super::limits::Limits;
use super::route::Routes;
use super::upstream::UpstreamError;

/// `X-APIStend-Waited-Ms`: how long the request waited at the proxy for its tokens.
const WAITED: HeaderName = HeaderName::from_static("x-apistend-waited-ms");

/// Headers of one hop only (RFC 9110 §7.6.1), never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// What every request needs.
pub(crate) struct State {
    pub(crate) routes: Routes,
    pub(crate) limits: Limits,
    pub(crate) in_flight: Arc<tokio::sync::Semaphore>,
    pub(crate) metrics: PrometheusHandle,
}

/// `GET /metrics`: the clients' and the engine's families.
pub(crate) async fn metrics(AxumState(state): AxumState<Arc<State>>) -> Response<Body> {
    let mut r = Response::new(Body::from(state.metrics.render()));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

/// What `/learned` says beside its rows: when a quota is learned, and for how long.
const LEARNED_NOTE: &str = "The quotas the proxy enforces instead of the catalog's, learned from \
    the upstream's answers: a row appears after the first rate-limit answer of a group (or, for a \
    service that reports its limit and window, the first answer that reports them), and goes \
    after 10 minutes without new evidence. No row: the catalog's quotas hold (no rate-limit \
    answer yet).";

/// `GET /learned`: `{"learned": [...], "note": ...}` — the quotas the clients learned from the
/// upstream's answers and enforce instead of the catalog's, and when there are any.
pub(crate) async fn learned(AxumState(state): AxumState<Arc<State>>) -> Response<Body> {
    let rows: Vec<_> = state
        .routes
        .learned()
        .into_iter()
        .map(|(service, l)| {
            json!({
                "service": service.as_str(),
                "group": l.group,
                "key": l.key,
                "from": l.from.as_str(),
                "burst": l.quota.burst(),
                "interval_ms": l.quota.interval().as_secs_f64() * 1e3,
                "catalog_burst": l.catalog.burst(),
                "catalog_interval_ms": l.catalog.interval().as_secs_f64() * 1e3,
                "expires_in_s": l.expires_in.as_secs_f64(),
            })
        })
        .collect();
    let body = json!({"learned": rows, "note": LEARNED_NOTE});
    let mut r = Response::new(Body::from(body.to_string()));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// `DELETE /learned`: every learned quota forgotten (the catalog's hold again until the
/// upstream's answers teach otherwise); `{"forgotten": n}`.
pub(crate) async fn forget_learned(AxumState(state): AxumState<Arc<State>>) -> Response<Body> {
    let n = state.routes.forget_learned();
    let mut r = Response::new(Body::from(json!({"forgotten": n}).to_string()));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// A proxy error: a JSON body saying what happened and that the proxy said it.
fn refusal(status: StatusCode, error: &str, detail: &str) -> Response<Body> {
    let body = json!({"error": error, "detail": detail, "by": "apistend proxy"});
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn without_hop_by_hop(headers: &mut HeaderMap) {
    // A `Connection` header names more hop-by-hop headers.
    let named: Vec<String> = headers
        .get_all(http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|t| t.trim().to_ascii_lowercase()))
        .collect();
    for h in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(h);
    }
}

/// Every request that is not `/metrics` or `/learned`.
pub(crate) async fn handle(
    AxumState(state): AxumState<Arc<State>>,
    req: http::Request<Body>,
) -> Response<Body> {
    let Ok(_slot) = Arc::clone(&state.in_flight).try_acquire_owned() else {
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "proxy full",
            "too many requests in flight at the proxy (--max-in-flight); retry shortly",
        );
    };
    let (mut parts, body) = req.into_parts();
    let Some(method) = Method::parse(parts.method.as_str()) else {
        return refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not proxied",
            &format!("{} is not a method of the services", parts.method),
        );
    };
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let pq = parts
        .uri
        .path_and_query()
        .map_or("/", http::uri::PathAndQuery::as_str)
        .to_owned();
    let Some(target) = state.routes.target(method, host.as_deref(), &pq) else {
        return refusal(
            StatusCode::NOT_FOUND,
            "no service",
            &format!("{pq}: no proxied service has this path (see the proxy's start banner)"),
        );
    };
    let mut limits = state.limits;
    // A service's documented largest body is let through: the service judges it, not the proxy.
    let documented = target
        .entry
        .largest_body
        .and_then(|b| usize::try_from(b).ok());
    limits.max_body_bytes = limits.max_body_bytes.max(documented.unwrap_or(0));
    let deadline = Deadline(std::time::Instant::now() + limits.upstream_timeout);
    let body = match read_body(body, limits).await {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    without_hop_by_hop(&mut parts.headers);
    parts.headers.remove(http::header::HOST);
    parts.headers.remove(http::header::CONTENT_LENGTH);
    if let Some(h) = target
        .host
        .as_deref()
        .and_then(|h| HeaderValue::from_str(h).ok())
    {
        parts.headers.insert(http::header::HOST, h);
    }
    let Ok(uri) = target.url.parse::<http::Uri>() else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "bad path",
            &format!("{}: not a usable path", target.path_and_query),
        );
    };
    let mut out = http::Request::new(body);
    *out.method_mut() = parts.method;
    *out.uri_mut() = uri;
    *out.headers_mut() = parts.headers;
    let waited = Waited::default();
    out.extensions_mut().insert(waited.clone());
    out.extensions_mut().insert(deadline);
    let answer = target.entry.stack.clone().oneshot(out).await;
    let waited_ms = waited.get().as_millis();
    let mut resp = match answer {
        Ok(r) => {
            let (mut p, b) = r.into_parts();
            without_hop_by_hop(&mut p.headers);
            Response::from_parts(p, b.into_body())
        }
        Err(e) => failure(&*e, &target.url),
    };
    if let Ok(v) = HeaderValue::from_str(&waited_ms.to_string()) {
        resp.headers_mut().insert(WAITED, v);
    }
    apistend_sandbox::transport::name_status(&mut resp);
    resp
}

/// The request body, read within the limits; or the refusal: 413 over `--max-body-bytes`, 400
/// for malformed framing (a bad chunk size, a bare LF), 408 past `--read-timeout-s`.
async fn read_body(body: Body, limits: Limits) -> Result<Bytes, Response<Body>> {
    match tokio::time::timeout(
        limits.read_timeout,
        axum::body::to_bytes(body, limits.max_body_bytes),
    )
    .await
    {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(e)) if over_length(&e) => Err(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body too large",
            &format!(
                "the request body is over {} bytes (--max-body-bytes)",
                limits.max_body_bytes
            ),
        )),
        Ok(Err(e)) => Err(refusal(
            StatusCode::BAD_REQUEST,
            "malformed body",
            &format!("the request body could not be read: {e}"),
        )),
        Err(_) => Err(refusal(
            StatusCode::REQUEST_TIMEOUT,
            "body too slow",
            &format!(
                "the request body did not arrive within {:?} (--read-timeout-s)",
                limits.read_timeout
            ),
        )),
    }
}

/// Whether reading a body failed on its length limit (413) rather than on its framing (400).
fn over_length(e: &axum::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cur = err.source();
    }
    false
}

/// The answer to a request the stack could not complete.
fn failure(e: &(dyn std::error::Error + 'static), url: &str) -> Response<Body> {
    if let Some(c) = e.downcast_ref::<ClientError>() {
        return match c {
            ClientError::RateLimited {
                retry_after,
                refused_by,
            } => {
                let secs = retry_after.as_secs_f64().ceil().max(1.0);
                let why = match refused_by {
                    RefusedBy::Local => format!(
                        "refused locally, not sent: the account's bucket would need {retry_after:?} \
                         to have a token, longer than the wait ceiling"
                    ),
                    _ => format!("the upstream kept refusing; retry in {retry_after:?}"),
                };
                let mut r = refusal(StatusCode::TOO_MANY_REQUESTS, "rate limited", &why);
                if let Ok(v) = HeaderValue::from_str(&format!("{secs:.0}")) {
                    r.headers_mut().insert(http::header::RETRY_AFTER, v);
                }
                r
            }
            ClientError::Limiter(l) => refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "limiter unavailable",
                &format!("the shared bucket store did not answer: {l}"),
            ),
            other => refusal(
                StatusCode::BAD_GATEWAY,
                "upstream failed",
                &other.to_string(),
            ),
        };
    }
    // The transport's and reqwest's errors, inside tower's retry: the cause chain says which.
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(u) = err.downcast_ref::<UpstreamError>() {
            let (status, what) = match u {
                UpstreamError::TimedOut(_) | UpstreamError::Stalled(_) => {
                    (StatusCode::GATEWAY_TIMEOUT, "upstream timed out")
                }
                UpstreamError::TooLargeToJudge(_) => (StatusCode::BAD_GATEWAY, "upstream failed"),
            };
            return refusal(status, what, &format!("{url}: {u}"));
        }
        if let Some(r) = err.downcast_ref::<reqwest::Error>() {
            let (status, what) = if r.is_timeout() {
                (StatusCode::GATEWAY_TIMEOUT, "upstream timed out")
            } else if r.is_connect() {
                (StatusCode::BAD_GATEWAY, "upstream unreachable")
            } else {
                (StatusCode::BAD_GATEWAY, "upstream failed")
            };
            return refusal(status, what, &format!("{url}: {r}"));
        }
        cur = err.source();
    }
    refusal(
        StatusCode::BAD_GATEWAY,
        "upstream failed",
        &format!("{url}: {e}"),
    )
}
