//! A sandbox's buckets: listed with their levels (`GET …/buckets`) and reset (`POST
//! …/buckets/reset`), and read by the live feed.

use std::sync::Arc;

use apistend_catalog::{BucketScope, CallSite, CredentialChannel, ServiceId};
use apistend_limiter::Quota;
use axum::Json;
use axum::extract::{Path, State};
use http::StatusCode;

use super::extract::ApiQuery;
use super::handlers::sandbox;
use super::problem::ApiError;
use super::schema::{Bucket, BucketFilter, Errors};
use crate::buckets::{self, Owner};
use crate::state::AppState;

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
        last_request_ms: None,
        history: None,
    }
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/buckets", tag = "buckets", params(("id" = String, Path), BucketFilter),
    responses((status = 200, description = "tokens left, retry and reset times", body = Vec<Bucket>), Errors))]
/// Inspects buckets: those that spent something, or all.
pub(super) async fn inspect(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiQuery(f): ApiQuery<BucketFilter>,
) -> Result<Json<Vec<Bucket>>, ApiError> {
    let s = sandbox(&state, &id)?;
    let mut rows = Vec::new();
    let mut skip = f.offset;
    let take = f.limit.unwrap_or(usize::MAX);
    for b in buckets_of(&state, &s, &f) {
        if rows.len() >= take {
            break;
        }
        let d = state
            .store
            .peek(&b.bucket, &b.quota)
            .await
            .map_err(|e| ApiError::Unavailable(e.to_string()))?;
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
    Ok(Json(rows))
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/buckets/reset", tag = "buckets", params(("id" = String, Path), BucketFilter),
    responses((status = 204, description = "the buckets are full and their keys' lockouts cleared"), Errors))]
/// Resets buckets to full, and clears their keys' lockouts.
pub(super) async fn reset(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiQuery(f): ApiQuery<BucketFilter>,
) -> Result<StatusCode, ApiError> {
    let s = sandbox(&state, &id)?;
    let mut locked_owners = std::collections::BTreeSet::new();
    for b in buckets_of(&state, &s, &f) {
        state
            .store
            .reset(&b.bucket)
            .await
            .map_err(|e| ApiError::Unavailable(e.to_string()))?;
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
    Ok(StatusCode::NO_CONTENT)
}
