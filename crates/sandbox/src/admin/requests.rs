//! A sandbox's request journal (`…/requests`: list, count, wait for, clear) and the conduct
//! report on its keys (`…/conduct`), as a tester used to WireMock's journal and verification
//! asks them. Every question takes the same filters ([`FilterQuery`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use http::StatusCode;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use super::handlers::sandbox;
use super::problem::ApiError;
use super::schema::Errors;
use crate::journal::conduct::{Report, report};
use crate::journal::filter::{self, Filter, RefusedFilter, Status};
use crate::journal::{JournalError, Record};
use crate::state::AppState;

impl From<JournalError> for ApiError {
    fn from(e: JournalError) -> Self {
        ApiError::Unavailable(e.to_string())
    }
}

/// Which requests: every filter left out matches all.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a description of the query, read by [`parse`]
pub(super) struct FilterQuery {
    /// The operation, `METHOD /path/template` as the catalog names it
    /// (`PUT /api/v3/stocks/{warehouseId}`), or its template alone.
    operation: Option<String>,
    /// The path as sent; a trailing `*` matches any rest (`/wb/api/v3/*`).
    path: Option<String>,
    /// The key that sent it.
    key: Option<String>,
    /// The service (`wb`, `ozon`…).
    service: Option<String>,
    /// The answer's status (`429`) or its class (`4xx`).
    #[param(pattern = "^([1-5][0-9][0-9]|[1-5]xx)$")]
    status: Option<String>,
    /// Why the sandbox refused it; `any` refusal, or `none`.
    #[param(inline)]
    refused: Option<RefusedParam>,
    /// Arrived at or after this moment, in milliseconds since the Unix epoch.
    #[param(minimum = 0, maximum = 9_007_199_254_740_991_u64)]
    since_ms: Option<u64>,
    /// A JSONPath (RFC 9535) the request's JSON body has a node at (`$.cards[0].vendorCode`).
    body_path: Option<String>,
    /// The JSON value that node equals (a bare word is a string); with no `body_path`, the
    /// whole body.
    body_value: Option<String>,
}

/// A kind of refusal, `any` or `none`.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // a description of a parameter
pub(super) enum RefusedParam {
    Limit,
    Validation,
    Lockout,
    InFlight,
    Operating,
    Scenario,
    Any,
    None,
}

/// Which page of the list.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a description of the query, read by [`parse`]
pub(super) struct PageQuery {
    /// Requests to skip (0).
    #[param(minimum = 0, maximum = 1_000_000_000)]
    offset: Option<usize>,
    /// Requests in the page, 1 to 1000 (100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<usize>,
    /// `oldest` first (the default) or `newest`.
    #[param(inline)]
    order: Option<Order>,
}

/// The order of a list.
#[derive(ToSchema, Clone, Copy, PartialEq, Eq)]
#[schema(rename_all = "snake_case")]
pub(super) enum Order {
    Oldest,
    Newest,
}

/// How long to wait, and for how many.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a description of the query, read by [`parse`]
pub(super) struct WaitQuery {
    /// Requests to wait for (1).
    #[param(minimum = 1, maximum = 1_000_000)]
    count: Option<usize>,
    /// The longest wait, in milliseconds, up to 10 s (5 s): a longer wait is a loop of them.
    #[param(minimum = 0, maximum = 10_000)]
    timeout_ms: Option<u64>,
}

/// A page of a sandbox's requests.
#[derive(Serialize, ToSchema)]
pub(super) struct RequestPage {
    /// Requests the filters match, in all.
    total: usize,
    offset: usize,
    requests: Vec<Record>,
}

/// How many requests match.
#[derive(Serialize, ToSchema)]
pub(super) struct Counted {
    count: usize,
}

/// The end of a wait.
#[derive(Serialize, ToSchema)]
pub(super) struct Waited {
    /// Whether as many requests as asked for arrived in time.
    reached: bool,
    /// How many match now.
    count: usize,
}

/// Everything a query string may hold, parsed.
#[derive(Default)]
struct Asked {
    filter: Filter,
    offset: usize,
    limit: usize,
    order: Option<Order>,
    count: usize,
    timeout_ms: u64,
}

/// What a route reads beside the filters.
#[derive(Clone, Copy)]
enum Extra {
    None,
    Page,
    Wait,
}

fn bad(name: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::BadRequest(format!("query string: {name}: {why}"))
}

fn number<T>(name: &str, v: &str, min: T, max: T) -> Result<T, ApiError>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    match v.parse::<T>() {
        Ok(n) if n >= min && n <= max => Ok(n),
        _ => Err(bad(
            name,
            format!("a whole number from {min} to {max}, got {v:?}"),
        )),
    }
}

/// The query string `raw`, with the filters and what `extra` adds; anything else is a 400.
fn parse(raw: Option<&str>, extra: Extra) -> Result<Asked, ApiError> {
    let mut a = Asked {
        limit: 100,
        count: 1,
        timeout_ms: 5000,
        ..Asked::default()
    };
    let mut body_path = None;
    for (k, v) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        let f = &mut a.filter;
        let v = v.into_owned();
        match (k.as_ref(), extra) {
            ("operation", _) => f.operation = Some(v),
            ("path", _) => f.path = Some(v),
            ("key", _) => f.key = Some(v),
            ("service", _) => f.service = Some(v),
            ("status", _) => f.status = Some(Status::parse(&v).map_err(|e| bad("status", e))?),
            ("refused", _) => {
                f.refused = Some(RefusedFilter::parse(&v).map_err(|e| bad("refused", e))?);
            }
            ("since_ms", _) => f.since_ms = Some(number("since_ms", &v, 0, 1 << 53)?),
            ("body_path", _) => {
                body_path = Some(filter::body_path(&v).map_err(|e| bad("body_path", e))?);
            }
            ("body_value", _) => f.body_value = Some(filter::body_value(&v)),
            ("offset", Extra::Page) => a.offset = number("offset", &v, 0, 1_000_000_000)?,
            ("limit", Extra::Page) => a.limit = number("limit", &v, 1, 1000)?,
            ("order", Extra::Page) => {
                a.order = Some(match v.as_str() {
                    "oldest" => Order::Oldest,
                    "newest" => Order::Newest,
                    _ => return Err(bad("order", format!("oldest or newest, got {v:?}"))),
                });
            }
            ("count", Extra::Wait) => a.count = number("count", &v, 1, 1_000_000)?,
            ("timeout_ms", Extra::Wait) => a.timeout_ms = number("timeout_ms", &v, 0, 10_000)?,
            (other, _) => return Err(bad(other, "not a parameter of this route")),
        }
    }
    if body_path.is_none() && a.filter.body_value.is_some() {
        body_path = Some(filter::body_path("$").map_err(|e| bad("body_path", e))?);
    }
    a.filter.body_path = body_path;
    Ok(a)
}

/// The requests of sandbox `id` that `filter` matches.
async fn matching(state: &AppState, id: &str, filter: &Filter) -> Result<Vec<Record>, ApiError> {
    let mut all = state.journal.records(id).await?;
    all.retain(|r| filter.matches(r));
    Ok(all)
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/requests", tag = "requests",
    params(("id" = String, Path), FilterQuery, PageQuery),
    responses((status = 200, description = "the requests the filters match, with their answers and the sandbox's decisions; secrets masked", body = RequestPage), Errors))]
/// Lists the sandbox's requests (the latest 1 000 unless configured).
pub(super) async fn list(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Json<RequestPage>, ApiError> {
    sandbox(&state, &id)?;
    let a = parse(q.as_deref(), Extra::Page)?;
    let mut all = matching(&state, &id, &a.filter).await?;
    if a.order == Some(Order::Newest) {
        all.reverse();
    }
    let total = all.len();
    let requests = all.into_iter().skip(a.offset).take(a.limit).collect();
    Ok(Json(RequestPage {
        total,
        offset: a.offset,
        requests,
    }))
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/requests/count", tag = "requests",
    params(("id" = String, Path), FilterQuery),
    responses((status = 200, description = "how many of the sandbox's requests the filters match", body = Counted), Errors))]
/// Counts the sandbox's requests the filters match: a test's verification.
pub(super) async fn count(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Json<Counted>, ApiError> {
    sandbox(&state, &id)?;
    let a = parse(q.as_deref(), Extra::None)?;
    let count = state.journal.count(&id, &a.filter).await?;
    Ok(Json(Counted { count }))
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/requests/wait", tag = "requests",
    params(("id" = String, Path), FilterQuery, WaitQuery),
    responses((status = 200, description = "`reached` once `count` matching requests have arrived, or not when `timeout_ms` passed first", body = Waited), Errors))]
/// Waits until `count` requests the filters match have arrived (or `timeout_ms` passed).
pub(super) async fn wait(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Json<Waited>, ApiError> {
    sandbox(&state, &id)?;
    let a = parse(q.as_deref(), Extra::Wait)?;
    let timeout = Duration::from_millis(a.timeout_ms);
    let count = state.journal.wait(&id, &a.filter, a.count, timeout).await?;
    Ok(Json(Waited {
        reached: count >= a.count,
        count,
    }))
}

#[utoipa::path(delete, path = "/api/v1/sandboxes/{id}/requests", tag = "requests",
    params(("id" = String, Path)),
    responses((status = 204, description = "the sandbox's journal is empty (every instance's)"), Errors))]
/// Clears the sandbox's journal.
pub(super) async fn clear(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    sandbox(&state, &id)?;
    state.journal.clear(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/conduct", tag = "requests",
    params(("id" = String, Path), FilterQuery),
    responses((status = 200, description = "how each key treated the limits, from the journal: refusals, early retries, retried dead ends, and a verdict with its reasons", body = Report), Errors))]
/// The conduct report on the sandbox's keys (of the requests the filters match).
pub(super) async fn conduct(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Json<Report>, ApiError> {
    sandbox(&state, &id)?;
    let a = parse(q.as_deref(), Extra::None)?;
    Ok(Json(report(&matching(&state, &id, &a.filter).await?)))
}
