//! One function per management route.

use std::sync::Arc;

use apistend_catalog::{BucketScope, GroupOverride};
use axum::Json;
use axum::extract::{Path, State};
use http::StatusCode;

use super::extract::{ApiQuery, BodyRejection, JsonObject};
use super::problem::ApiError;
use super::schema::Errors;
use super::schema::{
    App, ChaosBody, CreateBody, GroupInfo, IssuedKey, KeyBody, LimitBody, ListQuery, Sandbox,
    ServiceInfo, SettingsBody, millis,
};
use crate::state::AppState;

/// The sandbox `id`, or its 404.
pub(super) fn sandbox(
    state: &AppState,
    id: &str,
) -> Result<crate::tenants::SandboxRecord, ApiError> {
    state
        .tenants
        .get(id)
        .ok_or_else(|| ApiError::NotFound(format!("no sandbox {id:?}")))
}

/// The answer of a removal: 204, or a 404 saying what was not there.
fn removed(
    result: Result<bool, crate::error::SandboxError>,
    missing: impl FnOnce() -> String,
) -> Result<StatusCode, ApiError> {
    if result? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(missing()))
    }
}

#[utoipa::path(post, path = "/api/v1/sandboxes", tag = "sandboxes",
    request_body(content = Option<CreateBody>, description = "may be empty"),
    responses((status = 201, description = "the sandbox, with its first key", body = Sandbox), Errors))]
/// Creates a sandbox; answers it with its first key.
pub(super) async fn create(
    State(state): State<Arc<AppState>>,
    JsonObject(body): JsonObject<CreateBody>,
) -> Result<(StatusCode, Json<Sandbox>), ApiError> {
    let name = body
        .unwrap_or_default()
        .name
        .unwrap_or_else(|| "sandbox".to_owned());
    if name.len() > 200 {
        return Err(ApiError::BadRequest("name: at most 200 bytes".to_owned()));
    }
    let s = state.tenants.create(&name)?;
    Ok((StatusCode::CREATED, Json(Sandbox::from(&s))))
}

#[utoipa::path(get, path = "/api/v1/sandboxes", tag = "sandboxes", params(ListQuery),
    responses((status = 200, body = Vec<Sandbox>, headers(("x-total-count" = usize, description = "how many matched in all"))), Errors))]
/// The sandboxes, oldest first, filtered and paged on the server; `X-Total-Count` says how many
/// matched in all.
pub(super) async fn list(
    State(state): State<Arc<AppState>>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ([(&'static str, String); 1], Json<Vec<Sandbox>>) {
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
    ([("x-total-count", total.to_string())], Json(page))
}

#[utoipa::path(get, path = "/api/v1/scenarios", tag = "catalog",
    responses((status = 200, body = Vec<String>), Errors))]
/// The scenarios a request (`X-Mock-Scenario`) or a sandbox's defaults may name.
pub(super) async fn scenarios() -> Json<Vec<&'static str>> {
    Json(crate::scenario::Scenario::names())
}

#[utoipa::path(get, path = "/api/v1/services", tag = "catalog",
    responses((status = 200, body = Vec<ServiceInfo>), Errors))]
/// The emulated services and their limit groups, as the catalog has them.
pub(super) async fn services(State(state): State<Arc<AppState>>) -> Json<Vec<ServiceInfo>> {
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
    Json(rows)
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}", tag = "sandboxes", params(("id" = String, Path)),
    responses((status = 200, body = Sandbox), Errors))]
/// A sandbox.
pub(super) async fn get_one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Sandbox>, ApiError> {
    Ok(Json(Sandbox::from(&sandbox(&state, &id)?)))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}", tag = "sandboxes", params(("id" = String, Path)),
    responses((status = 204, description = "deleted, with its keys and buckets"), Errors))]
/// Deletes a sandbox.
pub(super) async fn delete_one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let gone = removed(state.tenants.delete(&id), || format!("no sandbox {id:?}"))?;
    // Its objects go with it (a sandbox made later never has its id).
    if let Err(e) = state.objects.forget(&id).await {
        tracing::warn!(sandbox = %id, error = %e, "the objects of a deleted sandbox stay");
    }
    if let Err(e) = state.journal.clear(&id).await {
        tracing::warn!(sandbox = %id, error = %e, "the journal of a deleted sandbox stays");
    }
    Ok(gone)
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/keys", tag = "keys", params(("id" = String, Path)),
    request_body(content = Option<KeyBody>, description = "the key's value, when a test suite wants a fixed one; may be empty"),
    responses((status = 201, body = IssuedKey),
        (status = 409, description = "another sandbox (or this one) has this key", body = super::schema::Problem, content_type = "application/problem+json"),
        Errors))]
/// Issues a key (a random one, or the value asked for); it works at once.
pub(super) async fn issue_key(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<JsonObject<KeyBody>, BodyRejection>,
) -> Result<(StatusCode, Json<IssuedKey>), ApiError> {
    let hint = "expected {\"key\": \"VALUE\"} or no body";
    let chosen = body.map_err(|e| e.expected(hint))?.0.and_then(|b| b.key);
    let key = match chosen {
        Some(k) => k,
        None => crate::tenants::new_key()?,
    };
    state.tenants.add_key(&id, &key)?;
    Ok((StatusCode::CREATED, Json(IssuedKey { key, sandbox: id })))
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/keys", tag = "keys", params(("id" = String, Path)),
    responses((status = 200, body = Vec<String>), Errors))]
/// The sandbox's keys.
pub(super) async fn list_keys(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Vec<String>>, ApiError> {
    Ok(Json(sandbox(&state, &id)?.keys))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/keys/{key}", tag = "keys",
    params(("id" = String, Path), ("key" = String, Path)),
    responses((status = 204, description = "revoked: refused from the next request on"), Errors))]
/// Revokes a key, at once.
pub(super) async fn revoke_key(
    State(state): State<Arc<AppState>>,
    Path((id, key)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
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
    body: Result<JsonObject<LimitBody>, BodyRejection>,
) -> Result<Json<super::schema::Limit>, ApiError> {
    let sid = state
        .catalog
        .service_id(&service)
        .map_err(|e| ApiError::NotFound(e.to_string()))?;
    let Some(g) = state.catalog.service(sid).and_then(|s| s.group(&group)) else {
        return Err(ApiError::NotFound(format!(
            "{service} has no limit group {group:?}; `apistend catalog --service {service}` lists them"
        )));
    };
    // The body is required here: a PUT of nothing would pin the catalog's numbers as this
    // sandbox's own.
    let expected =
        "expected {\"burst\": N, \"interval_ms\": N | \"per_second\": N, \"algorithm\": \"gcra\"}";
    let o = match body {
        Ok(JsonObject(Some(o))) => o,
        Ok(JsonObject(None)) => return Err(ApiError::BadRequest(format!("{expected}: no body"))),
        Err(e) => return Err(e.after(expected)),
    };
    o.check().map_err(ApiError::Unprocessable)?;
    let o: GroupOverride = o.into();
    // What the body leaves out stays as it is: the sandbox's own quota of the group when it
    // has one, else the catalog's (`{"burst": 5}` keeps the interval).
    let name = format!("{service} group {group}");
    let quota = state
        .tenants
        .set_limit(&id, &service, &group, |current| {
            o.apply(current.unwrap_or(g.quota), &name)
        })?
        .map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    Ok(Json(super::schema::Limit {
        service,
        group,
        burst: quota.burst(),
        interval_ms: millis(quota.interval_micros()),
        algorithm: quota.algorithm().as_str().to_owned(),
    }))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/limits/{service}/{group}", tag = "limits",
    params(("id" = String, Path), ("service" = String, Path), ("group" = String, Path)),
    responses((status = 204, description = "removed: the plan's or the catalog's quota applies again"), Errors))]
/// Removes this sandbox's own quota of a limit group.
pub(super) async fn remove_limit(
    State(state): State<Arc<AppState>>,
    Path((id, service, group)): Path<(String, String, String)>,
) -> Result<StatusCode, ApiError> {
    if state.tenants.remove_limit(&id, &service, &group)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "sandbox {id} has no quota of its own for {service} group {group:?}"
        )))
    }
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/b24-apps", tag = "bitrix24", params(("id" = String, Path)),
    responses((status = 201, body = App), Errors))]
/// Registers a Bitrix24 local application: its token (`auth=`) has buckets of its own.
pub(super) async fn add_app(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<App>), ApiError> {
    let app = state.tenants.add_app(&id)?;
    Ok((StatusCode::CREATED, Json(App::from(&app))))
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/b24-apps", tag = "bitrix24", params(("id" = String, Path)),
    responses((status = 200, body = Vec<App>), Errors))]
/// The sandbox's Bitrix24 local applications.
pub(super) async fn list_apps(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Vec<App>>, ApiError> {
    Ok(Json(
        sandbox(&state, &id)?
            .b24_apps
            .iter()
            .map(App::from)
            .collect(),
    ))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/b24-apps/{app}", tag = "bitrix24",
    params(("id" = String, Path), ("app" = String, Path)),
    responses((status = 204, description = "removed: its token stops working at once"), Errors))]
/// Removes a Bitrix24 local application.
pub(super) async fn remove_app(
    State(state): State<Arc<AppState>>,
    Path((id, app)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
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
) -> Result<Json<crate::tenants::SettingsRecord>, ApiError> {
    Ok(Json(sandbox(&state, &id)?.settings))
}

#[utoipa::path(put, path = "/api/v1/sandboxes/{id}/settings", tag = "sandboxes", params(("id" = String, Path)),
    request_body(content = Option<SettingsBody>, description = "absent fields are cleared; may be empty"),
    responses((status = 200, description = "the defaults now (with the seed chosen, if none was given)", body = crate::tenants::SettingsRecord), Errors))]
/// Sets this sandbox's defaults.
pub(super) async fn put_settings(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<JsonObject<SettingsBody>, BodyRejection>,
) -> Result<Json<crate::tenants::SettingsRecord>, ApiError> {
    let hint = "expected {\"latency_ms\": N, \"scenario\": {\"name\": \"server_error\", \"probability\": 0.1, \"seed\": 42}, \"bucket_scope\": {\"wb\": \"account\" | \"key\"}, \"plans\": {\"ymarket\": \"medium\"}, \"validation\": \"strict\" | \"report\" | \"off\", \"validation_by_service\": {\"ozon\": \"report\"}, \"object_time\": 1767225600, \"jobs\": {\"ozon/import_tasks\": {\"ms\": 500, \"fails\": false}}, \"journal\": false}";
    let b = body.map_err(|e| e.expected(hint))?.0.unwrap_or_default();
    super::schema::whole::within(
        "scenario.seed",
        b.scenario.as_ref().and_then(|c| c.seed),
        0,
        super::schema::whole::MAX_SAFE,
    )
    .map_err(ApiError::Unprocessable)?;
    // Up to the last second of the year 9999, which every date format writes.
    super::schema::whole::within("object_time", b.object_time, 0, 253_402_300_799)
        .map_err(ApiError::Unprocessable)?;
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
        validation: b.validation,
        validation_by_service: b.validation_by_service,
        object_time: b.object_time.and_then(|t| i64::try_from(t).ok()),
        jobs: b
            .jobs
            .into_iter()
            .map(|(k, j)| {
                let r = crate::tenants::JobRecord {
                    ms: j.ms,
                    fails: j.fails,
                };
                (k, r)
            })
            .collect(),
        journal: b.journal,
    };
    settings
        .validate(state.limits.max_delay_ms)
        .map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    for (field, keys) in [
        (
            "bucket_scope",
            settings.bucket_scope.keys().collect::<Vec<_>>(),
        ),
        (
            "validation_by_service",
            settings.validation_by_service.keys().collect(),
        ),
    ] {
        if let Some(Err(e)) = keys
            .into_iter()
            .map(|sid| state.catalog.service_id(sid))
            .find(Result::is_err)
        {
            return Err(ApiError::Unprocessable(format!("{field}: {e}")));
        }
    }
    check_jobs(&state.catalog, &settings)?;
    for (sid, plan) in &settings.plans {
        let svc = match state.catalog.service_id(sid) {
            Ok(id) => state.catalog.service(id),
            Err(e) => return Err(ApiError::Unprocessable(format!("plans: {e}"))),
        };
        if let Some(svc) = svc
            && !svc.plans.iter().any(|p| &p.name == plan)
        {
            let known: Vec<&str> = svc.plans.iter().map(|p| p.name.as_str()).collect();
            return Err(ApiError::Unprocessable(format!(
                "plans.{sid}: no plan {plan:?}; {sid} has {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    state.tenants.set_settings(&id, settings.clone())?;
    Ok(Json(settings))
}

/// Every collection `settings.jobs` names is one of jobs of the catalog.
fn check_jobs(
    catalog: &apistend_catalog::Catalog,
    settings: &crate::tenants::SettingsRecord,
) -> Result<(), ApiError> {
    let known = job_collections(catalog);
    match settings.jobs.keys().find(|name| !known.contains(name)) {
        Some(name) => Err(ApiError::Unprocessable(format!(
            "jobs.{name}: no collection of jobs of that name (SERVICE/COLLECTION: {})",
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Every collection of jobs of the catalog, as `service/collection`.
pub(super) fn job_collections(catalog: &apistend_catalog::Catalog) -> Vec<String> {
    catalog
        .services()
        .iter()
        .flat_map(|s| {
            s.resources
                .iter()
                .filter(|r| r.job.is_some())
                .map(move |r| format!("{}/{}", s.id, r.name))
        })
        .collect()
}
