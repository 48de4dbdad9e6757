//! One function per management route.

use std::sync::Arc;

use apistend_catalog::{BucketScope, CallSite, CredentialChannel, GroupOverride, ServiceId};
use apistend_limiter::Quota;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use http::{Response, StatusCode};

use super::problem::{ApiError, bad_query, json_response, no_content};
pub(super) use super::schema::BucketFilter;
use super::schema::Errors;
use super::schema::{
    App, Bucket, ChaosBody, CreateBody, GroupInfo, IssuedKey, LimitBody, ListQuery, Sandbox,
    ServiceInfo, SettingsBody, millis,
};
use crate::buckets::{self, Owner};
use crate::state::AppState;

/// The answer of a failed tenants operation, by its kind (a sandbox gone meanwhile is a 404).
fn failed(e: crate::error::SandboxError) -> Response<Body> {
    ApiError::from(e).into_response()
}

/// Part of sandbox `id` as JSON, or its 404.
fn read<T: serde::Serialize>(
    state: &AppState,
    id: &str,
    part: impl FnOnce(&crate::tenants::SandboxRecord) -> T,
) -> Response<Body> {
    match state.tenants.get(id) {
        Some(s) => json_response(StatusCode::OK, &part(&s)),
        None => not_found(id),
    }
}

/// The answer of a removal: 204, or a 404 saying what was not there.
fn removed(
    result: Result<bool, crate::error::SandboxError>,
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

/// A JSON object body, or `None` for no body or `null`. (serde would also read a struct from an
/// array of its fields: that is not a body this API takes; nor is whitespace alone.)
fn parse_object<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<Option<T>, String> {
    let text = body.trim_ascii();
    if body.is_empty() || text == b"null" {
        return Ok(None);
    }
    if text.first() != Some(&b'{') {
        return Err("invalid JSON body: expected an object".to_owned());
    }
    serde_json::from_slice(text)
        .map(Some)
        .map_err(|e| format!("invalid JSON body: {e}"))
}

/// A body that may be left out: its default then.
fn parse_body<T: serde::de::DeserializeOwned + Default>(body: &Bytes) -> Result<T, String> {
    parse_object(body).map(Option::unwrap_or_default)
}

#[utoipa::path(post, path = "/api/v1/sandboxes", tag = "sandboxes",
    request_body(content = Option<CreateBody>, description = "may be empty"),
    responses((status = 201, description = "the sandbox, with its first key", body = Sandbox), Errors))]
/// Creates a sandbox; answers it with its first key.
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
        Ok(s) => json_response(StatusCode::CREATED, &Sandbox::from(&s)),
        Err(e) => failed(e),
    }
}

#[utoipa::path(get, path = "/api/v1/sandboxes", tag = "sandboxes", params(ListQuery),
    responses((status = 200, body = Vec<Sandbox>, headers(("x-total-count" = usize, description = "how many matched in all"))), Errors))]
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
                s.name.to_lowercase().contains(n)
                    || s.id.to_lowercase().contains(n)
                    || s.keys.iter().any(|k| k.eq_ignore_ascii_case(n))
            })
        })
        .collect();
    let total = matched.len();
    let page: Vec<Sandbox> = matched
        .into_iter()
        .skip(q.offset)
        .take(q.limit.unwrap_or(usize::MAX))
        .map(Sandbox::from)
        .collect();
    let mut r = json_response(StatusCode::OK, &page);
    r.headers_mut()
        .insert("x-total-count", http::HeaderValue::from(total));
    r
}

#[utoipa::path(get, path = "/api/v1/scenarios", tag = "catalog",
    responses((status = 200, body = Vec<String>), Errors))]
/// The scenarios a request (`X-Mock-Scenario`) or a sandbox's defaults may name.
pub(super) async fn scenarios() -> Response<Body> {
    json_response(StatusCode::OK, &crate::scenario::Scenario::names())
}

#[utoipa::path(get, path = "/api/v1/services", tag = "catalog",
    responses((status = 200, body = Vec<ServiceInfo>), Errors))]
/// The emulated services and their limit groups, as the catalog has them.
pub(super) async fn services(State(state): State<Arc<AppState>>) -> Response<Body> {
    let rows: Vec<ServiceInfo> = state
        .catalog
        .services()
        .iter()
        .map(|svc| ServiceInfo {
            id: svc.id.as_str().to_owned(),
            prefix: svc.prefix.to_owned(),
            groups: svc
                .groups
                .iter()
                .map(|g| GroupInfo {
                    id: g.id.clone(),
                    burst: g.quota.burst(),
                    interval_ms: millis(g.quota.interval_micros()),
                    algorithm: g.quota.algorithm().as_str().to_owned(),
                    per_host: g.scope == BucketScope::Host,
                })
                .collect(),
        })
        .collect();
    json_response(StatusCode::OK, &rows)
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}", tag = "sandboxes", params(("id" = String, Path)),
    responses((status = 200, body = Sandbox), Errors))]
/// A sandbox.
pub(super) async fn get_one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| Sandbox::from(s))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}", tag = "sandboxes", params(("id" = String, Path)),
    responses((status = 204, description = "deleted, with its keys and buckets"), Errors))]
/// Deletes a sandbox.
pub(super) async fn delete_one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    removed(state.tenants.delete(&id), || format!("no sandbox {id:?}"))
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/keys", tag = "keys", params(("id" = String, Path)),
    responses((status = 201, body = IssuedKey), Errors))]
/// Issues a key; it works at once.
pub(super) async fn issue_key(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    let key = match crate::tenants::new_key() {
        Ok(k) => k,
        Err(e) => return failed(e),
    };
    match state.tenants.add_key(&id, &key) {
        Ok(()) => json_response(StatusCode::CREATED, &IssuedKey { key, sandbox: id }),
        Err(e) => failed(e),
    }
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/keys", tag = "keys", params(("id" = String, Path)),
    responses((status = 200, body = Vec<String>), Errors))]
/// The sandbox's keys.
pub(super) async fn list_keys(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| s.keys.clone())
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/keys/{key}", tag = "keys",
    params(("id" = String, Path), ("key" = String, Path)),
    responses((status = 204, description = "revoked: refused from the next request on"), Errors))]
/// Revokes a key, at once.
pub(super) async fn revoke_key(
    State(state): State<Arc<AppState>>,
    Path((id, key)): Path<(String, String)>,
) -> Response<Body> {
    removed(state.tenants.revoke_key(&id, &key), || {
        format!("sandbox {id:?} has no key {key:?}")
    })
}

#[utoipa::path(put, path = "/api/v1/sandboxes/{id}/limits/{service}/{group}", tag = "limits",
    params(("id" = String, Path), ("service" = String, Path), ("group" = String, Path)),
    request_body = LimitBody,
    responses((status = 200, description = "the sandbox's quota of the group now", body = super::schema::Limit), Errors))]
/// Sets this sandbox's quota of a limit group.
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
    // The body is required here: a PUT of nothing would pin the catalog's numbers as this
    // sandbox's own.
    let parsed = parse_object::<LimitBody>(&body).and_then(|b| b.ok_or_else(|| "no body".into()));
    let o: GroupOverride = match parsed {
        Ok(o) => match o.check() {
            Ok(()) => o.into(),
            Err(why) => return ApiError::Unprocessable(why).into_response(),
        },
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
            &super::schema::Limit {
                service,
                group,
                burst: quota.burst(),
                interval_ms: millis(quota.interval_micros()),
                algorithm: quota.algorithm().as_str().to_owned(),
            },
        ),
        Err(e) => failed(e),
    }
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/b24-apps", tag = "bitrix24", params(("id" = String, Path)),
    responses((status = 201, body = App), Errors))]
/// Registers a Bitrix24 local application: its token (`auth=`) has buckets of its own.
pub(super) async fn add_app(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    match state.tenants.add_app(&id) {
        Ok(app) => json_response(StatusCode::CREATED, &App::from(&app)),
        Err(e) => failed(e),
    }
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/b24-apps", tag = "bitrix24", params(("id" = String, Path)),
    responses((status = 200, body = Vec<App>), Errors))]
/// The sandbox's Bitrix24 local applications.
pub(super) async fn list_apps(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| {
        s.b24_apps.iter().map(App::from).collect::<Vec<_>>()
    })
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/b24-apps/{app}", tag = "bitrix24",
    params(("id" = String, Path), ("app" = String, Path)),
    responses((status = 204, description = "removed: its token stops working at once"), Errors))]
/// Removes a Bitrix24 local application.
pub(super) async fn remove_app(
    State(state): State<Arc<AppState>>,
    Path((id, app)): Path<(String, String)>,
) -> Response<Body> {
    removed(state.tenants.remove_app(&id, &app), || {
        format!("sandbox {id:?} has no Bitrix24 application {app:?}")
    })
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/settings", tag = "sandboxes", params(("id" = String, Path)),
    responses((status = 200, body = crate::tenants::SettingsRecord), Errors))]
/// This sandbox's defaults: latency, a scenario with a probability and a seed, bucket scopes,
/// plans.
pub(super) async fn get_settings(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response<Body> {
    read(&state, &id, |s| s.settings.clone())
}

#[utoipa::path(put, path = "/api/v1/sandboxes/{id}/settings", tag = "sandboxes", params(("id" = String, Path)),
    request_body(content = Option<SettingsBody>, description = "absent fields are cleared; may be empty"),
    responses((status = 200, description = "the defaults now (with the seed chosen, if none was given)", body = crate::tenants::SettingsRecord), Errors))]
/// Sets this sandbox's defaults.
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
    if let Err(why) = super::schema::whole::within(
        "scenario.seed",
        b.scenario.as_ref().and_then(|c| c.seed),
        0,
        super::schema::whole::MAX_SAFE,
    ) {
        return ApiError::Unprocessable(why).into_response();
    }
    let settings = crate::tenants::SettingsRecord {
        latency_ms: b.latency_ms,
        scenario: b.scenario.map(|c: ChaosBody| crate::tenants::ChaosRecord {
            name: c.name.trim().to_ascii_lowercase(),
            probability: c.probability,
            // Without a seed, one is chosen and answered, so the run can be replayed.
            seed: c.seed.unwrap_or_else(|| {
                crate::secret::u64().unwrap_or_else(|_| fastrand::u64(..))
                    & super::schema::whole::MAX_SAFE
            }),
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
        Ok(()) => json_response(StatusCode::OK, &settings),
        Err(e) => failed(e),
    }
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
                            bucket: buckets::key(svc.id, g, &owner, &CallSite::default()),
                            quota: buckets::quota(svc, g, &owner),
                        })
                })
        })
}

/// A bucket as the management API shows it, with its key's lockout if there is one.
pub(super) fn bucket_json(
    state: &AppState,
    b: &BucketRow,
    d: &apistend_limiter::Decision,
) -> Bucket {
    let ms = |t: std::time::Duration| u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
    let locked_for = state
        .lockouts
        .locked_for(b.service, &b.key, apistend_answers::clock::unix_now())
        .map(|secs| ms(std::time::Duration::from_secs_f64(secs)));
    Bucket {
        key: b.key.clone(),
        service: b.service.as_str().to_owned(),
        group: b.group.clone(),
        limit: d.limit,
        remaining: d.remaining,
        retry_after_ms: ms(d.retry_after),
        reset_after_ms: ms(d.reset_after),
        locked_for_ms: locked_for,
    }
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/buckets", tag = "buckets", params(("id" = String, Path), BucketFilter),
    responses((status = 200, description = "tokens left, retry and reset times", body = Vec<Bucket>), Errors))]
/// Inspects buckets: those that spent something, or all.
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
        let row = bucket_json(&state, &b, &d);
        if !(f.all.unwrap_or(false) || d.remaining < d.limit || row.locked_for_ms.is_some()) {
            continue;
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        rows.push(row);
    }
    json_response(StatusCode::OK, &rows)
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/buckets/reset", tag = "buckets", params(("id" = String, Path), BucketFilter),
    responses((status = 204, description = "the buckets are full and their keys' lockouts cleared"), Errors))]
/// Resets buckets to full, and clears their keys' lockouts.
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
    let mut locked_owners = std::collections::BTreeSet::new();
    for b in buckets_of(&state, &s, &f) {
        if let Err(e) = state.store.reset(&b.bucket).await {
            return ApiError::Unavailable(e.to_string()).into_response();
        }
        if state
            .catalog
            .service(b.service)
            .is_some_and(|svc| svc.lockout.is_some())
        {
            locked_owners.insert((b.service, b.key));
        }
    }
    for (service, key) in locked_owners {
        state.lockouts.clear(service, &key).await;
    }
    no_content()
}
