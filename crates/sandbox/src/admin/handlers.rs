//! One function per management route.

use std::sync::Arc;

use apistend_catalog::{BucketScope, CredentialChannel, GroupOverride, ServiceId};
use apistend_limiter::Quota;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use http::{Response, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use axum::response::IntoResponse;

use super::problem::{ApiError, bad_query, json_response, no_content};
use crate::AppState;
use crate::buckets::{self, Owner};

fn sandbox_json(s: &crate::tenants::SandboxRecord) -> Value {
    json!({"id": s.id, "name": s.name, "keys": s.keys, "b24_apps": s.b24_apps.iter().map(|a| json!({"id": a.id, "token": a.token})).collect::<Vec<_>>(),
           "limits": s.limits.iter().map(|l| json!({"service": l.service, "group": l.group, "burst": l.burst, "interval_ms": l.interval_us as f64 / 1000.0, "algorithm": l.algorithm})).collect::<Vec<_>>(),
           "settings": s.settings, "created_at": s.created_at})
}

/// The answer of a failed tenants operation, by its kind (a sandbox gone meanwhile is a 404).
fn failed(e: crate::SandboxError) -> Response<Body> {
    ApiError::from(e).into_response()
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
        Ok(false) => ApiError::NotFound(missing()).into_response(),
        Err(e) => failed(e),
    }
}

fn not_found(id: &str) -> Response<Body> {
    ApiError::NotFound(format!("no sandbox {id:?}")).into_response()
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

pub(super) async fn create(State(state): State<Arc<AppState>>, body: Bytes) -> Response<Body> {
    let b: CreateBody = match parse_body(&body) {
        Ok(b) => b,
        Err(why) => return ApiError::BadRequest(why).into_response(),
    };
    let name = b.name.unwrap_or_else(|| "sandbox".to_owned());
    if name.len() > 200 {
        return ApiError::BadRequest("name: at most 200 bytes".to_owned()).into_response();
    }
    match state.tenants.create(&name) {
        Ok(s) => json_response(StatusCode::CREATED, &sandbox_json(&s)),
        Err(e) => failed(e),
    }
}

/// The query of `GET /api/v1/sandboxes`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
    /// Only sandboxes whose name or id contains this (case-insensitive).
    q: Option<String>,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

/// The sandboxes, oldest first, filtered and paged on the server; `X-Total-Count` says how many
/// matched in all.
pub(super) async fn list(
    State(state): State<Arc<AppState>>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response<Body> {
    let q = match query {
        Ok(Query(q)) => q,
        Err(e) => return bad_query(&e),
    };
    let needle = q.q.as_deref().map(str::to_lowercase);
    let all = state.tenants.list();
    let matched: Vec<_> = all
        .iter()
        .filter(|s| {
            needle.as_deref().is_none_or(|n| {
                s.name.to_lowercase().contains(n) || s.id.to_lowercase().contains(n)
            })
        })
        .collect();
    let total = matched.len();
    let page: Vec<Value> = matched
        .into_iter()
        .skip(q.offset)
        .take(q.limit.unwrap_or(usize::MAX))
        .map(sandbox_json)
        .collect();
    let mut r = json_response(StatusCode::OK, &Value::Array(page));
    r.headers_mut()
        .insert("x-total-count", http::HeaderValue::from(total));
    r
}

/// The scenarios a request (`X-Mock-Scenario`) or a sandbox's defaults may name.
pub(super) async fn scenarios() -> Response<Body> {
    let names: Vec<&str> = crate::scenario::SCENARIOS.iter().map(|(n, _)| *n).collect();
    json_response(StatusCode::OK, &json!(names))
}

/// The emulated services and their limit groups, as the catalog has them.
pub(super) async fn services(State(state): State<Arc<AppState>>) -> Response<Body> {
    let rows: Vec<Value> = state
        .catalog
        .services()
        .iter()
        .map(|svc| {
            let groups: Vec<Value> = svc
                .groups
                .iter()
                .map(|g| {
                    json!({"id": g.id, "burst": g.quota.burst(),
                           "interval_ms": g.quota.interval_micros() as f64 / 1000.0,
                           "algorithm": g.quota.algorithm().as_str(),
                           "per_host": g.scope == BucketScope::Host})
                })
                .collect();
            json!({"id": svc.id.as_str(), "prefix": svc.prefix, "groups": groups})
        })
        .collect();
    json_response(StatusCode::OK, &Value::Array(rows))
}

pub(super) async fn get_one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, sandbox_json)
}

pub(super) async fn delete_one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    removed(state.tenants.delete(&id), || format!("no sandbox {id:?}"))
}

pub(super) async fn issue_key(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    let key = match crate::tenants::new_key() {
        Ok(k) => k,
        Err(e) => return failed(e),
    };
    match state.tenants.add_key(&id, &key) {
        Ok(()) => json_response(StatusCode::CREATED, &json!({"key": key, "sandbox": id})),
        Err(e) => failed(e),
    }
}

pub(super) async fn list_keys(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| json!(s.keys))
}

pub(super) async fn revoke_key(
    State(state): State<Arc<AppState>>,
    Path((id, key)): Path<(String, String)>,
) -> Response<Body> {
    removed(state.tenants.revoke_key(&id, &key), || {
        format!("sandbox {id:?} has no key {key:?}")
    })
}

pub(super) async fn set_limit(
    State(state): State<Arc<AppState>>,
    Path((id, service, group)): Path<(String, String, String)>,
    body: Bytes,
) -> Response<Body> {
    let svc = match state.catalog.service_id(&service) {
        Ok(sid) => state.catalog.service(sid),
        Err(e) => return ApiError::NotFound(e.to_string()).into_response(),
    };
    let Some(g) = svc.and_then(|s| s.group(&group)) else {
        return ApiError::NotFound(format!(
            "{service} has no limit group {group:?}; `apistend catalog --service {service}` lists them"
        ))
        .into_response();
    };
    let o: GroupOverride = match serde_json::from_slice(&body) {
        Ok(o) => o,
        Err(e) => {
            return ApiError::BadRequest(format!(
                "expected {{\"burst\": N, \"interval_ms\": N | \"per_second\": N, \"algorithm\": \"gcra\"}}: {e}"
            ))
            .into_response();
        }
    };
    let quota = match o.apply(g.quota, &format!("{service} group {group}")) {
        Ok(q) => q,
        Err(e) => {
            return ApiError::Unprocessable(e.to_string()).into_response();
        }
    };
    match state.tenants.set_limit(&id, &service, &group, quota) {
        Ok(()) => json_response(
            StatusCode::OK,
            &json!({"service": service, "group": group, "burst": quota.burst(), "interval_ms": quota.interval_micros() as f64 / 1000.0, "algorithm": quota.algorithm().as_str()}),
        ),
        Err(e) => failed(e),
    }
}

fn app_json(a: &crate::tenants::AppRecord) -> Value {
    json!({"id": a.id, "token": a.token})
}

pub(super) async fn add_app(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    match state.tenants.add_app(&id) {
        Ok(app) => json_response(StatusCode::CREATED, &app_json(&app)),
        Err(e) => failed(e),
    }
}

pub(super) async fn list_apps(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| s.b24_apps.iter().map(app_json).collect())
}

pub(super) async fn remove_app(
    State(state): State<Arc<AppState>>,
    Path((id, app)): Path<(String, String)>,
) -> Response<Body> {
    removed(state.tenants.remove_app(&id, &app), || {
        format!("sandbox {id:?} has no Bitrix24 application {app:?}")
    })
}

pub(super) async fn get_settings(
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
    #[serde(default)]
    bucket_scope: std::collections::BTreeMap<String, crate::tenants::ScopeChoice>,
    #[serde(default)]
    plans: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChaosBody {
    name: String,
    probability: f64,
    #[serde(default)]
    seed: Option<u64>,
}

pub(super) async fn put_settings(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response<Body> {
    let b: SettingsBody = match parse_body(&body) {
        Ok(b) => b,
        Err(why) => {
            let hint = "expected {\"latency_ms\": N, \"scenario\": {\"name\": \"server_error\", \"probability\": 0.1, \"seed\": 42}, \"bucket_scope\": {\"wb\": \"account\" | \"key\"}, \"plans\": {\"ymarket\": \"medium\"}}";
            return ApiError::BadRequest(format!("{why}; {hint}")).into_response();
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
        bucket_scope: b.bucket_scope,
        plans: b.plans,
    };
    if let Err(e) = settings.validate(state.limits.max_delay_ms) {
        return ApiError::Unprocessable(e.to_string()).into_response();
    }
    if let Some(Err(e)) = settings
        .bucket_scope
        .keys()
        .map(|sid| state.catalog.service_id(sid))
        .find(Result::is_err)
    {
        return ApiError::Unprocessable(format!("bucket_scope: {e}")).into_response();
    }
    for (sid, plan) in &settings.plans {
        let svc = match state.catalog.service_id(sid) {
            Ok(id) => state.catalog.service(id),
            Err(e) => return ApiError::Unprocessable(format!("plans: {e}")).into_response(),
        };
        if let Some(svc) = svc
            && !svc.plans.iter().any(|p| &p.name == plan)
        {
            let known: Vec<&str> = svc.plans.iter().map(|p| p.name.as_str()).collect();
            return ApiError::Unprocessable(format!(
                "plans.{sid}: no plan {plan:?}; {sid} has {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ))
            .into_response();
        }
    }
    match state.tenants.set_settings(&id, settings.clone()) {
        Ok(()) => json_response(StatusCode::OK, &json!(settings)),
        Err(e) => failed(e),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BucketFilter {
    pub(super) key: Option<String>,
    pub(super) service: Option<String>,
    pub(super) group: Option<String>,
    /// Include full buckets too.
    all: Option<bool>,
    /// Rows to skip (paging).
    #[serde(default)]
    offset: usize,
    /// Rows to answer at most (paging); all when absent.
    limit: Option<usize>,
}

impl BucketFilter {
    /// Every bucket (full ones too) matching `key`, `service` and `group`, unpaged.
    pub(super) fn page(
        key: Option<String>,
        service: Option<String>,
        group: Option<String>,
    ) -> Self {
        Self {
            key,
            service,
            group,
            all: Some(true),
            offset: 0,
            limit: None,
        }
    }
}

/// One bucket of a sandbox: whose, of which group, its key in the store and its quota.
pub(super) struct BucketRow {
    pub(super) key: String,
    pub(super) service: ServiceId,
    pub(super) group: String,
    pub(super) bucket: String,
    pub(super) quota: Quota,
}

/// The sandbox's buckets matching `f`, in a stable order (keys, then applications; services and
/// groups in catalog order), built as they are read: a page of them costs that page.
pub(super) fn buckets_of<'a>(
    state: &'a AppState,
    s: &'a crate::tenants::SandboxRecord,
    f: &'a BucketFilter,
) -> impl Iterator<Item = BucketRow> + 'a {
    // Keys, then Bitrix24 local applications (as `app:ID`: their requests spend from buckets of
    // their own, for the groups scoped per application, and from the app's key otherwise).
    let view = state.tenants.view(&s.id);
    let keys = s.keys.iter().map({
        let view = view.clone();
        move |k| Owner {
            key: k.as_str().into(),
            app: None,
            view: view.clone(),
            part: None,
        }
    });
    let apps = s.b24_apps.iter().map(move |a| Owner {
        key: format!("app:{}", a.id).into(),
        app: Some(a.id.as_str().into()),
        view: view.clone(),
        part: None,
    });
    keys.chain(apps)
        .filter(|o| f.key.as_ref().is_none_or(|want| **want == *o.key))
        .flat_map(move |owner| {
            let owner = Arc::new(owner);
            state
                .catalog
                .services()
                .iter()
                .filter({
                    let owner = Arc::clone(&owner);
                    move |svc| {
                        // An application's token is a credential of the services that take one
                        // (`auth=`).
                        (owner.app.is_none()
                            || svc.credentials.contains(&CredentialChannel::AuthParam))
                            && f.service
                                .as_ref()
                                .is_none_or(|want| want == svc.id.as_str())
                    }
                })
                .flat_map(move |svc| {
                    let owner = Arc::clone(&owner);
                    svc.groups
                        .iter()
                        // Buckets per host are made on first use; not listed here. For a group
                        // per resource, this is the bucket of its operations that name no
                        // resource.
                        .filter(|g| g.scope != BucketScope::Host)
                        .filter(|g| f.group.as_ref().is_none_or(|want| *want == g.id))
                        .map(move |g| BucketRow {
                            key: owner.key.to_string(),
                            service: svc.id,
                            group: g.id.clone(),
                            bucket: buckets::key(
                                svc.id.as_str(),
                                g,
                                &owner,
                                &buckets::Target::default(),
                            ),
                            quota: buckets::quota(svc, g, &owner),
                        })
                })
        })
}

/// A bucket as the management API shows it.
pub(super) fn bucket_json(b: &BucketRow, d: &apistend_limiter::Decision) -> Value {
    json!({"key": b.key, "service": b.service.as_str(), "group": b.group, "limit": d.limit, "remaining": d.remaining,
           "retry_after_ms": d.retry_after.as_millis(), "reset_after_ms": d.reset_after.as_millis()})
}

pub(super) async fn inspect(
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
    let mut skip = f.offset;
    let take = f.limit.unwrap_or(usize::MAX);
    for b in buckets_of(&state, &s, &f) {
        if rows.len() >= take {
            break;
        }
        let d = match state.store.peek(&b.bucket, &b.quota).await {
            Ok(d) => d,
            Err(e) => {
                return ApiError::Unavailable(e.to_string()).into_response();
            }
        };
        if !(f.all.unwrap_or(false) || d.remaining < d.limit) {
            continue;
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        rows.push(bucket_json(&b, &d));
    }
    json_response(StatusCode::OK, &Value::Array(rows))
}

pub(super) async fn reset(
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
    for b in buckets_of(&state, &s, &f) {
        if let Err(e) = state.store.reset(&b.bucket).await {
            return ApiError::Unavailable(e.to_string()).into_response();
        }
    }
    no_content()
}
