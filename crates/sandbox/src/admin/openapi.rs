//! The management API's OpenAPI document, generated from the handlers' types (utoipa): every
//! route, its parameters, request and response bodies and every error it answers.

use std::sync::Arc;

use apistend_catalog::Catalog;
use axum::body::Body;
use axum::extract::State;
use http::{Response, StatusCode};
use serde_json::{Value, json};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::state::AppState;

use super::buckets::{__path_inspect, __path_reset};
use super::events::__path_events;
use super::handlers::{
    __path_add_app, __path_create, __path_delete_one, __path_get_one, __path_get_settings,
    __path_issue_key, __path_list, __path_list_apps, __path_list_keys, __path_put_settings,
    __path_remove_app, __path_remove_limit, __path_revoke_key, __path_scenarios, __path_services,
    __path_set_limit,
};
use super::schema::Problem;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "APIStend management API",
        description = "Sandboxes, keys, Bitrix24 local applications, per-sandbox limits and \
            defaults, buckets and their live feed. Send the admin token as \
            `Authorization: Bearer TOKEN`."
    ),
    paths(
        document, services, scenarios, create, list, get_one, delete_one, issue_key, list_keys,
        revoke_key, add_app, list_apps, remove_app, get_settings, put_settings, set_limit, remove_limit,
        inspect, reset, events, super::objects::export, super::objects::counts,
        super::objects::replace, super::objects::clear, super::objects::finish,
        super::requests::list, super::requests::count, super::requests::wait,
        super::requests::clear, super::requests::conduct
    ),
    components(schemas(Problem)),
    modifiers(&AdminToken),
    security(("admin" = [])),
    tags(
        (name = "sandboxes"), (name = "keys"), (name = "bitrix24"), (name = "limits"),
        (name = "buckets"), (name = "objects"), (name = "requests"), (name = "catalog"), (name = "meta")
    )
)]
struct ApiDoc;

/// The bearer scheme every route but the document asks for.
struct AdminToken;

impl Modify for AdminToken {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "admin",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document of a sandbox with `catalog` and delays up to `max_delay_ms`, made once at start.
/// The types give its shape; what the sandbox checks against its catalog is added to it (the
/// scenario names, the services and plans a sandbox's settings may name, the longest latency,
/// "`interval_ms` or `per_second`"), so that a body the document allows is one the sandbox
/// takes.
// serde_json's `IndexMut` inserts into an object (or null); it panics only on another kind of
// value, and every place indexed here is an object of utoipa's document, made the same at
// every start (the admin tests read it).
#[allow(clippy::indexing_slicing)]
pub(crate) fn document_for(catalog: &Catalog, max_delay_ms: u64) -> String {
    let mut doc = match serde_json::to_value(ApiDoc::openapi()) {
        Ok(v) => v,
        Err(e) => return json!({"error": e.to_string()}).to_string(),
    };
    let schemas = &mut doc["components"]["schemas"];
    schemas["ChaosBody"]["properties"]["name"]["enum"] = json!(crate::scenario::Scenario::names());
    let services: Vec<&str> = catalog.services().iter().map(|s| s.id.as_str()).collect();
    let settings = &mut schemas["SettingsBody"]["properties"];
    settings["latency_ms"]["maximum"] = json!(max_delay_ms);
    settings["bucket_scope"]["propertyNames"] = json!({"enum": services});
    settings["validation_by_service"]["propertyNames"] = json!({"enum": services});
    settings["jobs"]["propertyNames"] = json!({"enum": super::handlers::job_collections(catalog)});
    let plans: serde_json::Map<String, Value> = catalog
        .services()
        .iter()
        .filter(|s| !s.plans.is_empty())
        .map(|s| {
            let names: Vec<&str> = s.plans.iter().map(|p| p.name.as_str()).collect();
            (
                s.id.as_str().to_owned(),
                json!({"type": "string", "enum": names}),
            )
        })
        .collect();
    settings["plans"] = json!({"type": "object", "properties": plans, "additionalProperties": false,
        "description": "Service id → the plan of its definition (Yandex Market's `medium`)."});
    schemas["Objects"] = objects_schema(catalog);
    // Not both given (a null is not given).
    schemas["LimitBody"]["not"] = json!({"required": ["interval_ms", "per_second"],
        "properties": {"interval_ms": {"type": "integer"}, "per_second": {"type": "integer"}}});
    doc.to_string()
}

/// A sandbox's objects as the catalog allows them: the services that keep objects, their
/// collections, each object with its id.
fn objects_schema(catalog: &Catalog) -> Value {
    let services: serde_json::Map<String, Value> = catalog
        .services()
        .iter()
        .filter(|s| !s.resources.is_empty())
        .map(|s| {
            let colls: serde_json::Map<String, Value> = s
                .resources
                .iter()
                .map(|r| {
                    // An id is a number or a text that is not empty (`IdStyle::key`); a
                    // collection whose objects may be named by a second field takes either.
                    let id =
                        json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "number"}]});
                    let named = |f: &str| json!({"required": [f], "properties": {f: id}});
                    let item = match &r.id.or {
                        Some(or) => {
                            json!({"type": "object", "anyOf": [named(&r.id.field), named(or)]})
                        }
                        None => json!({"type": "object", "allOf": [named(&r.id.field)]}),
                    };
                    (r.name.clone(), json!({"type": "array", "items": item}))
                })
                .collect();
            let colls =
                json!({"type": "object", "properties": colls, "additionalProperties": false});
            (s.id.as_str().to_owned(), colls)
        })
        .collect();
    json!({"type": "object", "properties": services, "additionalProperties": false,
        "description": "Service → collection → its objects, each with its id (a later object \
            of an id replaces an earlier one).",
        "example": {"amocrm": {"leads": [{"id": 20_000_003, "name": "My deal 42"}]}}})
}

#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "meta", security(()),
    responses((status = 200, description = "this document (no token needed: it holds no secrets)",
        content_type = "application/json", body = Object)))]
/// This document.
pub(super) async fn document(State(state): State<Arc<AppState>>) -> Response<Body> {
    let mut r = Response::new(Body::from(state.openapi.clone()));
    *r.status_mut() = StatusCode::OK;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}
