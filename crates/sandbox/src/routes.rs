//! Where a request goes: the sandbox's own paths (one table, [`own`]), the management API, or
//! an emulated service's pipeline.

use std::sync::Arc;

use apistend_limiter::Store;
use axum::body::Body;
use axum::extract::State;
use http::{HeaderValue, Request, Response, StatusCode};

use crate::intercept::{self, Target};
use crate::state::AppState;
use crate::{admin, pipeline};

/// What a connection may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    /// The plain listener: everything, and the proxy mode.
    Sandbox,
    /// The TLS listener and tunnels: the emulated services only.
    Emulation,
}

/// The sandbox's own paths, beside the emulated services (whose definitions may not take their
/// prefixes: the catalog's `RESERVED_PREFIXES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Own {
    /// `/api/…`: the management API.
    Management,
    /// `/ui` and `/ui/…`: the dashboard.
    Dashboard,
    /// `/healthz`.
    Health,
    /// `/metrics`.
    Metrics,
    /// `/readyz`.
    Ready,
}

/// The table of the sandbox's own paths: `(path, exact, what)`; not exact, a path is the
/// entry's or below it (`/ui/…`).
const OWN: [(&str, bool, Own); 6] = [
    ("/api/", false, Own::Management),
    ("/ui", true, Own::Dashboard),
    ("/ui/", false, Own::Dashboard),
    ("/healthz", true, Own::Health),
    ("/metrics", true, Own::Metrics),
    ("/readyz", true, Own::Ready),
];

/// Which of the sandbox's own paths `path` is, if it is one.
pub(crate) fn own(path: &str) -> Option<Own> {
    // Every request asks this: an entry is compared only when its first letter is the path's
    // (a service's path, `/wb/…`, is told apart by one byte per entry).
    let first = path.as_bytes().get(1);
    OWN.iter()
        .filter(|(p, _, _)| p.as_bytes().get(1) == first)
        .find(|(p, exact, _)| {
            if *exact {
                path == *p
            } else {
                path.starts_with(p)
            }
        })
        .map(|(_, _, o)| *o)
}

impl Own {
    /// Served by the router (the management API's handlers, the dashboard's pages) rather
    /// than by [`answer`].
    pub(crate) fn routed(self) -> bool {
        matches!(self, Own::Management | Own::Dashboard)
    }
}

/// The router's fallback: everything but the management routes.
pub(crate) async fn dispatch(
    State(state): State<Arc<AppState>>,
    req: Request<Body>,
) -> Response<Body> {
    let target = intercept::target(&state.catalog, req.uri(), req.headers(), None);
    // Through the router, the connection is not known (0).
    handle(state, req, target, (Surface::Sandbox, 0)).await
}

/// A request that is not for the management API's handlers, once its target is known.
pub(crate) async fn handle(
    state: Arc<AppState>,
    req: Request<Body>,
    target: Target,
    (surface, conn): (Surface, u64),
) -> Response<Body> {
    match target {
        Target::Service { index, host } => {
            return pipeline::handle(state, pipeline::Route::by_host(index, host).on(conn), req)
                .await;
        }
        Target::Elsewhere(host) => {
            return intercept::connect::refusal(
                StatusCode::BAD_GATEWAY,
                &intercept::connect::unknown_host(&state, &host),
            );
        }
        Target::Prefix => {}
    }
    let path = req.uri().path();
    if let Some(own) = own(path) {
        return own_path(state, req, own, surface).await;
    }
    match state.catalog.route_index(path) {
        Some((index, rest)) => {
            let prefix = path.len() - rest.len();
            pipeline::handle(
                state,
                pipeline::Route::by_prefix(index, prefix).on(conn),
                req,
            )
            .await
        }
        None => not_a_service(&state, path),
    }
}

/// One of the sandbox's own paths, asked on `surface`.
async fn own_path(
    state: Arc<AppState>,
    req: Request<Body>,
    own: Own,
    surface: Surface,
) -> Response<Body> {
    let path = req.uri().path();
    match own {
        Own::Management | Own::Metrics | Own::Ready if surface == Surface::Emulation => {
            admin::problem(
                StatusCode::NOT_FOUND,
                "Not Found",
                "the management API and metrics are on the plain HTTP listener",
            )
        }
        Own::Health => Response::new(Body::from("ok")),
        Own::Metrics => metrics(&state).await,
        Own::Ready => ready(&state).await,
        Own::Management if path == "/api/v1" || path.starts_with("/api/v1/") => {
            admin::login(&state, &req).unwrap_or_else(|| {
                admin::problem(
                    StatusCode::NOT_FOUND,
                    "Not Found",
                    &format!(
                        "no management route {} {path}; see /api/v1/openapi.json",
                        req.method()
                    ),
                )
            })
        }
        // `/api` beyond `/api/v1`, or the dashboard's paths on the TLS listener: no service
        // has them (the catalog refuses such prefixes).
        Own::Management | Own::Dashboard => not_a_service(&state, path),
    }
}

/// `/metrics`: the Prometheus text.
async fn metrics(state: &AppState) -> Response<Body> {
    // While degraded, ask Redis itself: the gauge must not wait for the next decision.
    if let Store::Redis(r) = &state.store
        && r.is_degraded()
    {
        let _ = r.ping().await;
    }
    let sandboxes = || state.tenants.list().into_iter().map(|s| s.id).collect();
    let tally = state.journal.tally(sandboxes).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the conduct tally: the shared journal did not answer");
        crate::journal::Tally::default()
    });
    let mut r = Response::new(Body::from(state.metrics.render(
        &state.store,
        state.journal.size(),
        &tally,
    )));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

/// `/readyz`: 200 when the buckets' store answers.
async fn ready(state: &AppState) -> Response<Body> {
    let ready = match &state.store {
        Store::Redis(r) => r.ping().await.is_ok(),
        _ => true,
    };
    let mut r = Response::new(Body::from(if ready {
        "ready"
    } else {
        "not ready: the Redis store does not answer"
    }));
    if !ready {
        *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    }
    r
}

/// The 404 of a path no service's prefix starts, listing the prefixes.
fn not_a_service(state: &AppState, path: &str) -> Response<Body> {
    let prefixes: Vec<&str> = state.catalog.services().iter().map(|s| s.prefix).collect();
    let body = serde_json::json!({
        "error": "not_found",
        "message": format!("{path} is not an emulated service; use {}", prefixes.join(", ")),
    });
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::NOT_FOUND;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_own_path_is_reserved_from_definitions() {
        for (path, _, _) in OWN {
            let first = path.trim_end_matches('/');
            assert!(
                apistend_catalog::RESERVED_PREFIXES.contains(&first),
                "{first} is the sandbox's but a definition may take it"
            );
        }
    }

    #[test]
    fn own_paths_are_whole_segments() {
        assert_eq!(own("/api/v1/sandboxes"), Some(Own::Management));
        assert_eq!(own("/api"), None);
        assert_eq!(own("/ui"), Some(Own::Dashboard));
        assert_eq!(own("/uix"), None);
        assert_eq!(own("/metrics"), Some(Own::Metrics));
        assert_eq!(own("/metrics/x"), None);
        assert_eq!(own("/wb/ping"), None);
        for (path, _, what) in OWN {
            assert_eq!(own(path), Some(what), "{path}");
        }
    }
}
