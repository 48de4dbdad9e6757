//! Stage 2, the route: which service and operation a request calls, and what it sent.

use apistend_catalog::{Resolved, Service};
use axum::body::{Body, Bytes};
use http::request::Parts;
use http::{Response, StatusCode};

use crate::state::AppState;
use apistend_answers::call::Call;

/// How a request reached its service.
#[derive(Debug)]
pub(crate) struct Route {
    /// The service's position in the catalog.
    pub(super) index: usize,
    /// Bytes of the path before the service's own path (its prefix; 0 by hostname).
    prefix: usize,
    /// The hostname the request addressed, when it came by hostname.
    host: Option<String>,
    /// The number of the connection it came on.
    pub(super) conn: u64,
}

impl Route {
    /// By path prefix: `/wb/…` is WB with `prefix` = 3.
    pub(crate) fn by_prefix(index: usize, prefix: usize) -> Self {
        Self {
            index,
            prefix,
            host: None,
            conn: 0,
        }
    }

    /// The same, on connection number `conn`.
    pub(crate) fn on(mut self, conn: u64) -> Self {
        self.conn = conn;
        self
    }

    /// Bytes of the path before the service's own path.
    pub(super) fn prefix_len(&self) -> usize {
        self.prefix
    }

    /// Whether it came by hostname.
    pub(super) fn came_by_host(&self) -> bool {
        self.host.is_some()
    }

    /// By hostname: the whole path is the service's.
    pub(crate) fn by_host(index: usize, host: String) -> Self {
        Self {
            index,
            prefix: 0,
            host: Some(host),
            conn: 0,
        }
    }
}

/// A bare 404: the service or its path is not the catalog's.
fn not_found() -> Response<Body> {
    axum::response::IntoResponse::into_response(StatusCode::NOT_FOUND)
}

/// The call `parts` and `body` make, and its operation and limit groups.
pub(super) fn resolve<'s>(
    state: &'s AppState,
    service: &Service,
    route: Route,
    parts: &Parts,
    body: &Bytes,
) -> Result<(Call, Resolved<'s>), Response<Body>> {
    let rest = parts.uri.path().get(route.prefix..).unwrap_or("");
    let mut call = Call::parse(service, parts, rest, body, route.host);
    call.keep_raw(body);
    let resolved = state
        .catalog
        .resolve_at(route.index, call.method, &call.path, call.host.as_deref())
        .ok_or_else(not_found)?;
    Ok((call, resolved))
}
