//! The management API under `/api/v1`: sandboxes, keys, per-sandbox limits and buckets, behind an
//! admin token, answering errors as `application/problem+json`, with a rate limit of its own
//! (separate from the emulated ones) announced in the IETF `RateLimit`/`RateLimit-Policy` headers.

use std::sync::Arc;

use apistend_catalog::{BucketScope, GroupOverride, ServiceId};
use apistend_limiter::Quota;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::middleware::{self, Next};
use axum::routing::{delete, get, post, put};
use http::{HeaderValue, Response, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::buckets::{self, Owner};

/// The routes, as the OpenAPI document describes them: method, path, summary, success status.
pub(crate) const ROUTES: [(&str, &str, &str, u16); 11] = [
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
            "/api/v1/sandboxes/{id}/limits/{service}/{group}",
            put(set_limit),
        )
        .route("/api/v1/sandboxes/{id}/buckets", get(inspect).delete(reset))
        .route_layer(middleware::from_fn_with_state(Arc::clone(state), guard))
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
    // Length-independent comparison: no early exit on the first differing byte.
    let expected = state.admin_token.as_bytes();
    token.len() == expected.len()
        && token
            .bytes()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
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
        next.run(req).await
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
           "created_at": s.created_at})
}

fn internal(e: &crate::SandboxError) -> Response<Body> {
    tracing::error!(error = %e, "management API");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error",
        &e.to_string(),
    )
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
        Ok(s) => {
            publish(&state).await;
            json_response(StatusCode::CREATED, &sandbox_json(&s))
        }
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
    match state.tenants.get(&id) {
        Some(s) => json_response(StatusCode::OK, &sandbox_json(&s)),
        None => not_found(&id),
    }
}

async fn delete_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    match state.tenants.delete(&id) {
        Ok(true) => {
            publish(&state).await;
            no_content()
        }
        Ok(false) => not_found(&id),
        Err(e) => internal(&e),
    }
}

async fn issue_key(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    if state.tenants.get(&id).is_none() {
        return not_found(&id);
    }
    let key = crate::tenants::new_key();
    match state.tenants.add_key(&id, &key) {
        Ok(()) => {
            publish(&state).await;
            json_response(StatusCode::CREATED, &json!({"key": key, "sandbox": id}))
        }
        Err(e) => internal(&e),
    }
}

async fn list_keys(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response<Body> {
    match state.tenants.get(&id) {
        Some(s) => json_response(StatusCode::OK, &json!(s.keys)),
        None => not_found(&id),
    }
}

async fn revoke_key(
    State(state): State<Arc<AppState>>,
    Path((id, key)): Path<(String, String)>,
) -> Response<Body> {
    match state.tenants.revoke_key(&id, &key) {
        Ok(true) => {
            publish(&state).await;
            no_content()
        }
        Ok(false) => problem(
            StatusCode::NOT_FOUND,
            "Not Found",
            &format!("sandbox {id:?} has no key {key:?}"),
        ),
        Err(e) => internal(&e),
    }
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
        Ok(()) => {
            publish(&state).await;
            json_response(
                StatusCode::OK,
                &json!({"service": service, "group": group, "burst": quota.burst(), "interval_ms": quota.interval_micros() as f64 / 1000.0, "algorithm": quota.algorithm().as_str()}),
            )
        }
        Err(e) => internal(&e),
    }
}

/// Shares a change with the other instances on the same Redis, if any.
async fn publish(state: &AppState) {
    if let Some(sync) = &state.sync {
        sync.publish(&state.tenants).await;
    }
}

#[derive(Debug, Deserialize)]
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
    for key in s
        .keys
        .iter()
        .filter(|k| f.key.as_ref().is_none_or(|want| want == *k))
    {
        let owner = Owner {
            key: key.clone(),
            app: None,
            sandbox: Some(s.id.clone()),
        };
        for svc in state.catalog.services().iter().filter(|svc| {
            f.service
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
                    key.clone(),
                    svc.id,
                    g.id.clone(),
                    bk,
                    buckets::quota(&state.tenants, svc.id.as_str(), g, &owner),
                ));
            }
        }
    }
    out
}

async fn inspect(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(f): Query<BucketFilter>,
) -> Response<Body> {
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
    Query(f): Query<BucketFilter>,
) -> Response<Body> {
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
