//! A sandbox's objects (the collections its services keep): exported (`GET …/objects`),
//! counted (`GET …/objects/counts`), replaced from JSON (`PUT …/objects`: seeded) and reset
//! (`DELETE …/objects`: every collection starts again with its examples).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use http::StatusCode;
use serde_json::Value;

use super::extract::{BodyRejection, JsonObject};
use super::handlers::sandbox;
use super::problem::ApiError;
use super::schema::{Errors, Objects};
use crate::objects::{Export, ObjectsError, seed};
use crate::state::AppState;

impl From<ObjectsError> for ApiError {
    fn from(e: ObjectsError) -> Self {
        match e {
            ObjectsError::Full { .. } => ApiError::Full(e.to_string()),
            ObjectsError::Unavailable(_) => ApiError::Unavailable(e.to_string()),
        }
    }
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/objects", tag = "objects", params(("id" = String, Path)),
    responses((status = 200, description = "every object of the collections the sandbox has touched, by service and collection, in the order they were created", body = Objects), Errors))]
/// Exports the sandbox's objects.
pub(super) async fn export(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Export>, ApiError> {
    sandbox(&state, &id)?;
    Ok(Json(state.objects.export(&id).await?))
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/objects/counts", tag = "objects", params(("id" = String, Path)),
    responses((status = 200, description = "objects per collection, by `service/collection`", body = BTreeMap<String, usize>), Errors))]
/// Counts the sandbox's objects per collection.
pub(super) async fn counts(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<BTreeMap<String, usize>>, ApiError> {
    sandbox(&state, &id)?;
    Ok(Json(state.objects.counts(&id).await?))
}

#[utoipa::path(put, path = "/api/v1/sandboxes/{id}/objects", tag = "objects", params(("id" = String, Path)),
    request_body(content = Objects, description = "the collections named hold exactly these objects (each with its id); the others start again with their examples"),
    responses((status = 200, description = "objects per collection now", body = BTreeMap<String, usize>),
        (status = 507, description = "over the sandbox's bound of objects or bytes; nothing changed", body = super::schema::Problem, content_type = "application/problem+json"),
        Errors))]
/// Seeds the sandbox's objects: checked whole, then loaded at once (nothing half-loaded).
pub(super) async fn replace(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<JsonObject<Value>, BodyRejection>,
) -> Result<Json<BTreeMap<String, usize>>, ApiError> {
    sandbox(&state, &id)?;
    let hint = "expected {\"SERVICE\": {\"COLLECTION\": [OBJECT, …]}}";
    let doc = body.map_err(|e| e.expected(hint))?.0.unwrap_or(Value::Null);
    let data = seed::check(&state.catalog, &doc).map_err(ApiError::Unprocessable)?;
    let catalog = &state.catalog;
    state
        .objects
        .replace(&id, &data, &|s, c| seed::id_style(catalog, s, c))
        .await?;
    Ok(Json(state.objects.counts(&id).await?))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/objects", tag = "objects", params(("id" = String, Path)),
    responses((status = 204, description = "every collection starts again with its examples when next touched"), Errors))]
/// Resets the sandbox's objects.
pub(super) async fn clear(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    sandbox(&state, &id)?;
    state
        .objects
        .replace(&id, &Export::new(), &|_, _| None)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// When a sandbox's pending jobs were finished.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct Finished {
    /// Every job the sandbox started until this moment (Unix milliseconds) is done.
    finished_ms: i64,
}

#[utoipa::path(post, path = "/api/v1/sandboxes/{id}/jobs/finish", tag = "objects", params(("id" = String, Path)),
    responses((status = 200, description = "every job started so far is done: read next, each has its last status (or its failure, for a job set to fail)", body = Finished), Errors))]
/// Finishes the sandbox's pending jobs at once (Ozon's imports, Apify's runs, Yandex Market's
/// reports), so that a test need not wait for them; on every instance sharing the Redis.
pub(super) async fn finish(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Finished>, ApiError> {
    let now = apistend_answers::clock::unix_now_ms();
    state.tenants.finish_jobs(&id, now)?;
    Ok(Json(Finished { finished_ms: now }))
}
