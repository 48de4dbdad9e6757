//! The management API under `/api/v1`: sandboxes, keys, Bitrix24 local applications, per-sandbox
//! limits and defaults (latency, reproducible chaos) and buckets, behind an
//! admin token, answering errors as `application/problem+json`, with a rate limit of its own
//! (separate from the emulated ones) announced in the IETF `RateLimit`/`RateLimit-Policy` headers.

use std::sync::Arc;

use apistend_catalog::{BucketScope, CredentialChannel, GroupOverride, ServiceId};
use apistend_limiter::Quota;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::middleware::{self, Next};
use axum::routing::{delete, get, post, put};
use http::{HeaderValue, Response, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::buckets::{self, Owner};

/// The routes, as the OpenAPI document describes them: method, path, summary, success status.
pub(crate) const ROUTES: [(&str, &str, &str, u16); 16] = [
    ("get", "/api/v1/openapi.json", "This document", 200),
    (
        "post",
        "/api/v1/sandboxes",
        "Create a sandbox; answers it with its first key",
        201,
    ),
    ("get", "/api/v1/sandboxes", "List sandboxes", 200),
    ("get", "/api/v1/sandboxes/{id}", "Get a sandbox", 200),
    ("delete", "/api/v1/sandboxes/{id}", "Delete a sandbox", 204),
    ("post", "/api/v1/sandboxes/{id}/keys", "Issue a key", 201),
    ("get", "/api/v1/sandboxes/{id}/keys", "List keys", 200),
    (
        "delete",
        "/api/v1/sandboxes/{id}/keys/{key}",
        "Revoke a key (at once)",
        204,
    ),
    (
        "post",
        "/api/v1/sandboxes/{id}/b24-apps",
        "Register a Bitrix24 local application: its token (`auth=`) has a bucket of its own",
        201,
    ),
    (
        "get",
        "/api/v1/sandboxes/{id}/b24-apps",
        "List Bitrix24 local applications",
        200,
    ),
    (
        "delete",
        "/api/v1/sandboxes/{id}/b24-apps/{app}",
        "Remove a Bitrix24 local application (its token stops working at once)",
        204,
    ),
    (
        "get",
        "/api/v1/sandboxes/{id}/settings",
        "This sandbox's defaults: latency, and a scenario with a probability and a seed",
        200,
    ),
    (
        "put",
        "/api/v1/sandboxes/{id}/settings",
        "Set this sandbox's defaults: {\"latency_ms\": N, \"scenario\": {\"name\", \"probability\", \"seed\"}}",
        200,
    ),
    (
        "put",
        "/api/v1/sandboxes/{id}/limits/{service}/{group}",
        "Set this sandbox's quota of a limit group",
        200,
    ),
    (
        "get",
        "/api/v1/sandboxes/{id}/buckets",
        "Inspect buckets (tokens left, retry and reset times)",
        200,
    ),
    (
        "delete",
        "/api/v1/sandboxes/{id}/buckets",
        "Reset buckets (to full)",
        204,
    ),
];

/// The admin API's own bucket: 50 requests at once, 20 per second.
const ADMIN_BURST: u32 = 50;
const ADMIN_PER_SECOND: u32 = 20;

/// The admin API's quota.
pub(crate) fn admin_quota() -> Result<Quota, apistend_limiter::QuotaError> {
    Quota::leaky_bucket(ADMIN_BURST, ADMIN_PER_SECOND)
}

pub(crate) fn router(state: &Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/openapi.json", get(openapi))
        .route("/api/v1/sandboxes", post(create).get(list))
        .route("/api/v1/sandboxes/{id}", get(get_one).delete(delete_one))
        .route(
            "/api/v1/sandboxes/{id}/keys",
            post(issue_key).get(list_keys),
        )
        .route("/api/v1/sandboxes/{id}/keys/{key}", delete(revoke_key))
        .route(
            "/api/v1/sandboxes/{id}/b24-apps",
            post(add_app).get(list_apps),
        )
        .route("/api/v1/sandboxes/{id}/b24-apps/{app}", delete(remove_app))
        .route(
            "/api/v1/sandboxes/{id}/settings",
            get(get_settings).put(put_settings),
        )
        .route(
            "/api/v1/sandboxes/{id}/limits/{service}/{group}",
            put(set_limit),
        )
        .route("/api/v1/sandboxes/{id}/buckets", get(inspect).delete(reset))
        .route_layer(middleware::from_fn_with_state(Arc::clone(state), guard))
        .method_not_allowed_fallback(method_not_allowed)
}

/// A known route asked with a method it does not have: 405 as problem details.
async fn method_not_allowed(method: http::Method, uri: http::Uri) -> Response<Body> {
    problem(
        StatusCode::METHOD_NOT_ALLOWED,
        "Method Not Allowed",
        &format!(
            "{} does not take {method}; see /api/v1/openapi.json",
            uri.path()
        ),
    )
}

/// A query string that does not parse: 400 as problem details.
fn bad_query(e: &QueryRejection) -> Response<Body> {
    problem(
        StatusCode::BAD_REQUEST,
        "Bad Request",
        &format!("query string: {}", e.body_text()),
    )
}

/// An error as RFC 9457 problem details.
pub(crate) fn problem(status: StatusCode, title: &str, detail: &str) -> Response<Body> {
    let body =
        json!({"type": "about:blank", "title": title, "status": status.as_u16(), "detail": detail});
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    r
}

fn json_response(status: StatusCode, v: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(v.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn no_content() -> Response<Body> {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    r
}

/// Reads a management request's whole body (up to the body limit, within the read timeout)
/// before any answer: an early answer (401, 429) then never leaves an unread body behind, which
/// would cost the client its connection. A body that cannot be read answers 413 or 408 with
/// `Connection: close`.
///
/// # Errors
/// The early answer, when the body is too large or too slow.
pub(crate) async fn buffer_body(
    req: Request<hyper::body::Incoming>,
    limits: crate::Limits,
) -> Result<Request<Body>, Response<Body>> {
    use http_body_util::BodyExt;
    let (parts, body) = req.into_parts();
    let close = |mut r: Response<Body>| {
        r.headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
        r
    };
    let too_large = || {
        close(problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Content Too Large",
            &format!("the request body is over {} bytes", limits.max_body_bytes),
        ))
    };
    let announced = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, limits.max_body_bytes);
    match tokio::time::timeout(limits.read_timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(Request::from_parts(parts, Body::from(collected.to_bytes()))),
        Ok(Err(_)) => Err(too_large()),
        Err(_) => Err(close(problem(
            StatusCode::REQUEST_TIMEOUT,
            "Request Timeout",
            &format!(
                "the request body did not arrive within {:?}",
                limits.read_timeout
            ),
        ))),
    }
}

/// Whether `req` carries the admin token (`Authorization: Bearer TOKEN`).
pub(crate) fn authorized(state: &AppState, headers: &http::HeaderMap) -> bool {
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

async fn guard(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response<Body> {
    if !authorized(&state, req.headers()) {
        return problem(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "send the admin token as `Authorization: Bearer TOKEN`",
        );
    }
    let quota = state.admin_quota;
    let d = state
        .admin_limiter
        .acquire("admin", &quota, 1)
        .unwrap_or_else(|_| state.admin_limiter.peek("admin", &quota));
    let policy = format!(
        "\"admin\";q={ADMIN_BURST};w={}",
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

async fn openapi() -> Response<Body> {
    let mut paths = serde_json::Map::new();
    for (method, path, summary, status) in ROUTES {
        let entry = paths.entry(path.to_owned()).or_insert_with(|| json!({}));
        if let Some(obj) = entry.as_object_mut() {
            let params: Vec<Value> = path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .map(|n| json!({"name": n, "in": "path", "required": true, "schema": {"type": "string"}}))
                .collect();
            obj.insert(
                method.to_owned(),
                json!({
                    "summary": summary,
                    "parameters": params,
                    "responses": {
                        status.to_string(): {"description": "success"},
                        "401": {"description": "no or wrong admin token", "content": {"application/problem+json": {}}},
                        "429": {"description": "the management API's own rate limit", "content": {"application/problem+json": {}}}
                    }
                }),
            );
        }
    }
    json_response(
        StatusCode::OK,
        &json!({
            "openapi": "3.1.0",
            "info": {"title": "APIStend management API", "version": env!("CARGO_PKG_VERSION")},
            "components": {"securitySchemes": {"admin": {"type": "http", "scheme": "bearer"}}},
            "security": [{"admin": []}],
            "paths": paths,
        }),
    )
}

fn sandbox_json(s: &crate::tenants::SandboxRecord) -> Value {
    json!({"id": s.id, "name": s.name, "keys": s.keys, "b24_apps": s.b24_apps.iter().map(|a| json!({"id": a.id, "token": a.token})).collect::<Vec<_>>(),
           "limits": s.limits.iter().map(|l| json!({"service": l.service, "group": l.group, "burst": l.burst, "interval_ms": l.interval_us as f64 / 1000.0, "algorithm": l.algorithm})).collect::<Vec<_>>(),
           "settings": s.settings, "created_at": s.created_at})
}

fn internal(e: &crate::SandboxError) -> Response<Body> {
    tracing::error!(error = %e, "management API");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error",
        &e.to_string(),
    )
}

/// Part of sandbox `id` as JSON, or its 404.
fn read(
    state: &AppState,
    id: &str,
    part: impl FnOnce(&crate::tenants::SandboxRecord) -> Value,
) -> Response<Body> {
    match state.tenants.get(id) {
        Some(s) => json_response(StatusCode::OK, &part(&s)),
        None => not_found(id),
    }
}

/// The answer of a removal: 204, or a 404 saying what was not there.
fn removed(
    result: Result<bool, crate::SandboxError>,
    missing: impl FnOnce() -> String,
) -> Response<Body> {
    match result {
        Ok(true) => no_content(),
        Ok(false) => problem(StatusCode::NOT_FOUND, "Not Found", &missing()),
        Err(e) => internal(&e),
    }
}

fn not_found(id: &str) -> Response<Body> {
    problem(
        StatusCode::NOT_FOUND,
        "Not Found",
        &format!("no sandbox {id:?}"),
    )
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    #[serde(default)]
    name: Option<String>,
}

fn parse_body<T: serde::de::DeserializeOwned + Default>(body: &Bytes) -> Result<T, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| format!("invalid JSON body: {e}"))
}

async fn create(State(state): State<Arc<AppState>>, body: Bytes) -> Response<Body> {
    let b: CreateBody = match parse_body(&body) {
        Ok(b) => b,
        Err(why) => return problem(StatusCode::BAD_REQUEST, "Bad Request", &why),
    };
    let name = b.name.unwrap_or_else(|| "sandbox".to_owned());
    if name.len() > 200 {
        return problem(
            StatusCode::BAD_REQUEST,
            "Bad Request",
            "name: at most 200 bytes",
        );
    }
    match state.tenants.create(&name) {
        Ok(s) => json_response(StatusCode::CREATED, &sandbox_json(&s)),
        Err(e) => internal(&e),
    }
}

async fn list(State(state): State<Arc<AppState>>) -> Response<Body> {
    json_response(
        StatusCode::OK,
        &Value::Array(state.tenants.list().iter().map(sandbox_json).collect()),
    )
}

async fn get_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    read(&state, &id, sandbox_json)
}

async fn delete_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    removed(state.tenants.delete(&id), || format!("no sandbox {id:?}"))
}

async fn issue_key(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    if state.tenants.get(&id).is_none() {
        return not_found(&id);
    }
    let key = match crate::tenants::new_key() {
        Ok(k) => k,
        Err(e) => return internal(&e),
    };
    match state.tenants.add_key(&id, &key) {
        Ok(()) => json_response(StatusCode::CREATED, &json!({"key": key, "sandbox": id})),
        Err(e) => internal(&e),
    }
}

async fn list_keys(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    read(&state, &id, |s| json!(s.keys))
}

async fn revoke_key(
    State(state): State<Arc<AppState>>,
    Path((id, key)): Path<(String, String)>,
) -> Response<Body> {
    removed(state.tenants.revoke_key(&id, &key), || {
        format!("sandbox {id:?} has no key {key:?}")
    })
}

async fn set_limit(
    State(state): State<Arc<AppState>>,
    Path((id, service, group)): Path<(String, String, String)>,
    body: Bytes,
) -> Response<Body> {
    if state.tenants.get(&id).is_none() {
        return not_found(&id);
    }
    let Ok(sid) = service.parse::<ServiceId>() else {
        return problem(
            StatusCode::NOT_FOUND,
            "Not Found",
            &format!("unknown service {service:?}; expected wb, b24, apify or ozon"),
        );
    };
    let Some(g) = state.catalog.service(sid).group(&group) else {
        return problem(
            StatusCode::NOT_FOUND,
            "Not Found",
            &format!(
                "{service} has no limit group {group:?}; `apistend catalog --service {service}` lists them"
            ),
        );
    };
    let o: GroupOverride = match serde_json::from_slice(&body) {
        Ok(o) => o,
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                "Bad Request",
                &format!(
                    "expected {{\"burst\": N, \"interval_ms\": N | \"per_second\": N, \"algorithm\": \"gcra\"}}: {e}"
                ),
            );
        }
    };
    let quota = match o.apply(g.quota, &format!("{service} group {group}")) {
        Ok(q) => q,
        Err(e) => {
            return problem(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Unprocessable Content",
                &e.to_string(),
            );
        }
    };
    match state.tenants.set_limit(&id, &service, &group, quota) {
        Ok(()) => json_response(
            StatusCode::OK,
            &json!({"service": service, "group": group, "burst": quota.burst(), "interval_ms": quota.interval_micros() as f64 / 1000.0, "algorithm": quota.algorithm().as_str()}),
        ),
        Err(e) => internal(&e),
    }
}

fn app_json(a: &crate::tenants::AppRecord) -> Value {
    json!({"id": a.id, "token": a.token})
}

async fn add_app(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    if state.tenants.get(&id).is_none() {
        return not_found(&id);
    }
    match state.tenants.add_app(&id) {
        Ok(app) => json_response(StatusCode::CREATED, &app_json(&app)),
        Err(e) => internal(&e),
    }
}

async fn list_apps(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    read(&state, &id, |s| s.b24_apps.iter().map(app_json).collect())
}

async fn remove_app(
    State(state): State<Arc<AppState>>,
    Path((id, app)): Path<(String, String)>,
) -> Response<Body> {
    removed(state.tenants.remove_app(&id, &app), || {
        format!("sandbox {id:?} has no Bitrix24 application {app:?}")
    })
}

async fn get_settings(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| json!(s.settings))
}

/// The body of `PUT …/settings`: absent fields are cleared.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SettingsBody {
    #[serde(default)]
    latency_ms: Option<u64>,
    #[serde(default)]
    scenario: Option<ChaosBody>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChaosBody {
    name: String,
    probability: f64,
    #[serde(default)]
    seed: Option<u64>,
}

async fn put_settings(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response<Body> {
    if state.tenants.get(&id).is_none() {
        return not_found(&id);
    }
    let b: SettingsBody = match parse_body(&body) {
        Ok(b) => b,
        Err(why) => {
            let hint = "expected {\"latency_ms\": N, \"scenario\": {\"name\": \"server_error\", \"probability\": 0.1, \"seed\": 42}}";
            return problem(
                StatusCode::BAD_REQUEST,
                "Bad Request",
                &format!("{why}; {hint}"),
            );
        }
    };
    let settings = crate::tenants::SettingsRecord {
        latency_ms: b.latency_ms,
        scenario: b.scenario.map(|c| crate::tenants::ChaosRecord {
            name: c.name.trim().to_ascii_lowercase(),
            probability: c.probability,
            // Without a seed, one is chosen and answered, so the run can be replayed.
            seed: c
                .seed
                .unwrap_or_else(|| crate::secret::u64().unwrap_or_else(|_| fastrand::u64(..))),
        }),
    };
    if let Err(e) = settings.validate(state.limits.max_delay_ms) {
        return problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Unprocessable Content",
            &e.to_string(),
        );
    }
    match state.tenants.set_settings(&id, settings.clone()) {
        Ok(()) => json_response(StatusCode::OK, &json!(settings)),
        Err(e) => internal(&e),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BucketFilter {
    key: Option<String>,
    service: Option<String>,
    group: Option<String>,
    /// Include full buckets too.
    all: Option<bool>,
}

/// The (key, service, group, bucket key, quota) of the sandbox's buckets matching `f`.
fn buckets_of(
    state: &AppState,
    s: &crate::tenants::SandboxRecord,
    f: &BucketFilter,
) -> Vec<(String, ServiceId, String, String, Quota)> {
    let mut out = Vec::new();
    // Keys, then Bitrix24 local applications (as `app:ID`: their requests spend from buckets of
    // their own, for the groups scoped per application, and from the app's key otherwise).
    let view = state.tenants.view(&s.id);
    let owners = s
        .keys
        .iter()
        .map(|k| Owner {
            key: k.as_str().into(),
            app: None,
            view: view.clone(),
        })
        .chain(s.b24_apps.iter().map(|a| Owner {
            key: format!("app:{}", a.id).into(),
            app: Some(a.id.as_str().into()),
            view: view.clone(),
        }));
    for owner in owners.filter(|o| f.key.as_ref().is_none_or(|want| **want == *o.key)) {
        let key = &owner.key;
        for svc in state.catalog.services().iter().filter(|svc| {
            // An application's token is a credential of the services that take one (`auth=`).
            (owner.app.is_none() || svc.credentials.contains(&CredentialChannel::AuthParam))
                && f.service
                    .as_ref()
                    .is_none_or(|want| want == svc.id.as_str())
        }) {
            for g in svc
                .groups
                .iter()
                .filter(|g| f.group.as_ref().is_none_or(|want| *want == g.id))
            {
                if g.scope == BucketScope::Host {
                    continue;
                }
                let bk = buckets::key(svc.id.as_str(), g, &owner, None);
                out.push((
                    key.to_string(),
                    svc.id,
                    g.id.clone(),
                    bk,
                    buckets::quota(svc.id.as_str(), g, &owner),
                ));
            }
        }
    }
    out
}

async fn inspect(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    query: Result<Query<BucketFilter>, QueryRejection>,
) -> Response<Body> {
    let f = match query {
        Ok(Query(f)) => f,
        Err(e) => return bad_query(&e),
    };
    let Some(s) = state.tenants.get(&id) else {
        return not_found(&id);
    };
    let mut rows = Vec::new();
    for (key, sid, group, bk, q) in buckets_of(&state, &s, &f) {
        let d = match state.store.peek(&bk, &q).await {
            Ok(d) => d,
            Err(e) => {
                return problem(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable",
                    &e.to_string(),
                );
            }
        };
        if f.all.unwrap_or(false) || d.remaining < d.limit {
            rows.push(json!({"key": key, "service": sid.as_str(), "group": group, "limit": d.limit, "remaining": d.remaining,
                             "retry_after_ms": d.retry_after.as_millis(), "reset_after_ms": d.reset_after.as_millis()}));
        }
    }
    json_response(StatusCode::OK, &Value::Array(rows))
}

async fn reset(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    query: Result<Query<BucketFilter>, QueryRejection>,
) -> Response<Body> {
    let f = match query {
        Ok(Query(f)) => f,
        Err(e) => return bad_query(&e),
    };
    let Some(s) = state.tenants.get(&id) else {
        return not_found(&id);
    };
    for (_, _, _, bk, _) in buckets_of(&state, &s, &f) {
        if let Err(e) = state.store.reset(&bk).await {
            return problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable",
                &e.to_string(),
            );
        }
    }
    no_content()
}
