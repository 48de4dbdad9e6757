//! The management API under `/api/v1`: sandboxes, keys, Bitrix24 local applications, per-sandbox
//! limits and defaults (latency, reproducible chaos) and buckets, behind an admin token,
//! answering errors as `application/problem+json`, with a rate limit of its own (separate from
//! the emulated ones) announced in the IETF `RateLimit`/`RateLimit-Policy` headers.
//!
//! - this file: the routes;
//! - [`openapi`]: the OpenAPI document, generated from [`schema`], the bodies as types;
//! - [`events`]: a sandbox's live feed (the dashboard's);
//! - [`objects`]: a sandbox's objects: export, counts, seed, reset;
//! - [`requests`]: a sandbox's request journal and the conduct report on its keys;
//! - [`auth`]: the token, the API's own limit, and sharing changes with other instances;
//! - [`body`]: bodies read whole before any answer;
//! - [`problem`]: problem details and the typed [`ApiError`](problem::ApiError);
//! - [`handlers`]: one function per route.

mod activity;
mod auth;
mod body;
mod buckets;
mod events;
mod extract;
mod feed;
mod handlers;
mod objects;
mod openapi;
mod problem;
mod requests;
mod schema;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::middleware;
use axum::routing::{delete, get, post, put};
use http::{Response, StatusCode};

pub(crate) use auth::{Peer, admin_quota, login};
pub(crate) use body::buffer_body;
pub(crate) use openapi::document_for;
pub(crate) use problem::problem;

use crate::state::AppState;
use buckets::{inspect, reset};
use handlers::{
    add_app, create, delete_one, get_one, get_settings, issue_key, list, list_apps, list_keys,
    put_settings, remove_app, remove_limit, revoke_key, scenarios, services, set_limit,
};

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
            put(set_limit).delete(remove_limit),
        )
        .route("/api/v1/sandboxes/{id}/buckets", get(inspect))
        // An action, not a removal: the buckets are there again at once, full.
        .route("/api/v1/sandboxes/{id}/buckets/reset", post(reset))
        .route("/api/v1/sandboxes/{id}/events", get(events::events))
        .route(
            "/api/v1/sandboxes/{id}/objects",
            get(objects::export)
                .put(objects::replace)
                .delete(objects::clear),
        )
        .route("/api/v1/sandboxes/{id}/objects/counts", get(objects::counts))
        .route("/api/v1/sandboxes/{id}/jobs/finish", post(objects::finish))
        .route(
            "/api/v1/sandboxes/{id}/requests",
            get(requests::list).delete(requests::clear),
        )
        .route("/api/v1/sandboxes/{id}/requests/count", get(requests::count))
        .route("/api/v1/sandboxes/{id}/requests/wait", get(requests::wait))
        .route("/api/v1/sandboxes/{id}/conduct", get(requests::conduct))
        .route("/api/v1/services", get(services))
        .route("/api/v1/scenarios", get(scenarios))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(state),
            auth::guard,
        ))
        // Documentation, with no secrets in it: readable without the token.
        .route("/api/v1/openapi.json", get(openapi::document))
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
