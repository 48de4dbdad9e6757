//! The management API under `/api/v1`: sandboxes, keys, Bitrix24 local applications, per-sandbox
//! limits and defaults (latency, reproducible chaos) and buckets, behind an admin token,
//! answering errors as `application/problem+json`, with a rate limit of its own (separate from
//! the emulated ones) announced in the IETF `RateLimit`/`RateLimit-Policy` headers.
//!
//! - this file: the routes and the OpenAPI document;
//! - [`auth`]: the token, the API's own limit, and sharing changes with other instances;
//! - [`body`]: bodies read whole before any answer;
//! - [`problem`]: problem details and the typed [`ApiError`](problem::ApiError);
//! - [`handlers`]: one function per route.

mod auth;
mod body;
mod events;
mod handlers;
mod problem;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::middleware;
use axum::routing::{delete, get, post, put};
use http::{Response, StatusCode};
use serde_json::{Value, json};

pub(crate) use auth::{admin_quota, authorized};
pub(crate) use body::buffer_body;
pub(crate) use problem::problem;

use crate::AppState;
use handlers::{
    add_app, create, delete_one, get_one, get_settings, inspect, issue_key, list, list_apps,
    list_keys, put_settings, remove_app, reset, revoke_key, scenarios, services, set_limit,
};
use problem::json_response;

/// The routes, as the OpenAPI document describes them: method, path, summary, success status.
pub(crate) const ROUTES: [(&str, &str, &str, u16); 19] = [
    ("get", "/api/v1/openapi.json", "This document", 200),
    (
        "get",
        "/api/v1/services",
        "The emulated services and their limit groups",
        200,
    ),
    (
        "get",
        "/api/v1/scenarios",
        "The scenarios X-Mock-Scenario and a sandbox's defaults may name",
        200,
    ),
    (
        "post",
        "/api/v1/sandboxes",
        "Create a sandbox; answers it with its first key",
        201,
    ),
    (
        "get",
        "/api/v1/sandboxes",
        "List sandboxes (`q` filters by name or id, `offset`/`limit` page; X-Total-Count)",
        200,
    ),
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
    (
        "get",
        "/api/v1/sandboxes/{id}/events",
        "Live feed (server-sent events): bucket levels, request rates per group, refusals",
        200,
    ),
];

pub(crate) fn router(state: &Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
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
        .route("/api/v1/sandboxes/{id}/events", get(events::events))
        .route("/api/v1/services", get(services))
        .route("/api/v1/scenarios", get(scenarios))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(state),
            auth::guard,
        ))
        // Documentation, with no secrets in it: readable without the token.
        .route("/api/v1/openapi.json", get(openapi))
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
            let mut op = json!({
                "summary": summary,
                "parameters": params,
                "responses": {
                    status.to_string(): {"description": "success"},
                    "401": {"description": "no or wrong admin token", "content": {"application/problem+json": {}}},
                    "429": {"description": "the management API's own rate limit", "content": {"application/problem+json": {}}}
                }
            });
            if path == "/api/v1/openapi.json" {
                // The document itself needs no token.
                op = json!({"summary": summary, "security": [], "responses": {"200": {"description": "success"}}});
            }
            obj.insert(method.to_owned(), op);
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
