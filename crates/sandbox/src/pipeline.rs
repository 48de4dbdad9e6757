//! The emulation pipeline, in the order docs/architecture.md gives: route, credential,
//! bucket(s), limit first, scenario, latency, response, cost after the answer, then the service's
//! headers.

use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::{ErrorContext, ErrorKind, RateHeaders, Service, ServiceId};
use apistend_limiter::{Decision, Quota};
use axum::body::Body;
use futures_util::stream;
use http::{HeaderValue, Request, Response, StatusCode};

use crate::AppState;
use crate::buckets::{self, Owner};
use crate::call::Call;
use crate::clock::{rfc3339, unix_now};
use crate::controls::Controls;
use crate::heads::{self, Fields};
use crate::in_flight;
use crate::scenario::{Scenario, X_APISTEND_SCENARIO, X_APISTEND_SCENARIO_NAME};
use crate::services::{Refusal, Success};
use crate::tenants::View;

enum BodyMode {
    Full,
    Truncated,
    Reset,
    Slow,
}

/// `Content-Type`, as the answer's header list names it.
const CONTENT_TYPE: &str = "content-type";

struct Answer {
    status: u16,
    content_type: &'static str,
    body: String,
    /// The service's rate-limit headers (kept as numbers until the response is built).
    rate: RateHeaders,
    /// `x-apistend-scenario`.
    scenario: Option<&'static str>,
    /// Anything else the real service sends with this answer.
    headers: Vec<(&'static str, HeaderValue)>,
    mode: BodyMode,
    /// A body that is not text (a PDF, a PNG), and its media type, instead of `body`.
    file: Option<(HeaderValue, Vec<u8>)>,
    /// A JSON body rendered before the request (an OpenAPI example), instead of `body`.
    rendered: Option<axum::body::Bytes>,
}

/// The request id (of logs and error bodies) and the timestamp of error bodies, made only when
/// something needs them: most answers need neither.
struct Meta {
    started: f64,
    /// The caller's `X-Request-Id`, when it is a usable one.
    given: Option<String>,
    id: std::sync::OnceLock<String>,
    timestamp: std::sync::OnceLock<String>,
}

impl Meta {
    /// `given`: the request's `X-Request-Id`, kept when it is a usable one.
    fn new(given: Option<String>) -> Self {
        let given = given.filter(|v| v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()));
        Self {
            started: unix_now(),
            given,
            id: std::sync::OnceLock::new(),
            timestamp: std::sync::OnceLock::new(),
        }
    }

    fn id(&self) -> &str {
        self.id.get_or_init(|| {
            self.given
                .clone()
                .unwrap_or_else(|| crate::secret::hex(&fastrand::u128(..).to_be_bytes()))
        })
    }

    fn ctx(&self, limit: u32) -> ErrorContext<'_> {
        let ts = self.timestamp.get_or_init(|| rfc3339(self.started));
        ErrorContext::new(self.id(), ts, limit)
    }
}

impl Answer {
    fn error(service: &Service, kind: &ErrorKind, ctx: &ErrorContext<'_>) -> Self {
        let e = service.error(kind, ctx);
        Answer {
            status: e.status,
            content_type: e.content_type,
            body: e.body,
            rate: RateHeaders::default(),
            scenario: None,
            headers: Vec::new(),
            mode: BodyMode::Full,
            file: None,
            rendered: None,
        }
    }

    fn rate(mut self, headers: RateHeaders) -> Self {
        self.rate = headers;
        self
    }

    fn into_response(mut self) -> Response<Body> {
        let file = self.file.take();
        // A 204 or 304 has no body (RFC 9110 §15.3.5), so no Content-Type either.
        if matches!(self.status, 204 | 304) {
            self.body = String::new();
            return self.finish(Body::empty(), None);
        }
        // A rendered body is sent as it is in full mode; the other modes work on its text.
        if let Some(rendered) = self.rendered.take() {
            if matches!(self.mode, BodyMode::Full) {
                let media =
                    (!rendered.is_empty()).then(|| HeaderValue::from_static(self.content_type));
                return self.finish(Body::from(rendered), media);
            }
            self.body = String::from_utf8_lossy(&rendered).into_owned();
        }
        let media = match &file {
            Some((media, _)) => Some(media.clone()),
            // An answer without content has no Content-Type (a 204, WB's empty 200s).
            None if self.body.is_empty() => None,
            None => Some(HeaderValue::from_static(self.content_type)),
        };
        if let Some((_, bytes)) = file {
            // Files are sent whole whatever the mode but a reset: truncating one proves nothing.
            self.body = String::new();
            if !matches!(self.mode, BodyMode::Reset) {
                return self.finish(Body::from(bytes), media);
            }
        }
        let text = std::mem::take(&mut self.body);
        let body = match self.mode {
            BodyMode::Full => Body::from(text),
            BodyMode::Truncated => {
                let mut cut = text.len() / 2;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                Body::from(text.get(..cut).unwrap_or("").to_owned())
            }
            BodyMode::Reset => Body::from_stream(stream::once(async {
                Err::<Vec<u8>, _>(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "x-mock-scenario: reset",
                ))
            })),
            BodyMode::Slow => {
                let bytes = text.into_bytes();
                let chunk = (bytes.len() / 12).max(8);
                let pieces: Vec<Vec<u8>> = bytes.chunks(chunk).map(<[u8]>::to_vec).collect();
                Body::from_stream(stream::unfold(pieces.into_iter(), |mut it| async move {
                    let piece = it.next()?;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    Some((Ok::<_, std::io::Error>(piece), it))
                }))
            }
        };
        self.finish(body, media)
    }

    /// The response of this answer with `body`, and `media` as its `Content-Type`.
    fn finish(self, body: Body, media: Option<HeaderValue>) -> Response<Body> {
        let mut h = Fields::new();
        if let Some(media) = media {
            h.push(CONTENT_TYPE, media);
        }
        for (name, value) in self.rate.iter() {
            h.push(name, number(value));
        }
        for (name, secs) in self.rate.dates() {
            let at = std::time::SystemTime::now() + Duration::from_secs(secs);
            if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(at)) {
                h.push(name, v);
            }
        }
        if let Some(sc) = self.scenario {
            h.push(X_APISTEND_SCENARIO_NAME, HeaderValue::from_static(sc));
        }
        for (name, value) in self.headers {
            h.push(name, value);
        }
        let mut resp = Response::new(body);
        *resp.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        *resp.headers_mut() = heads::map(h);
        resp
    }
}

/// What the metrics need to know of a request besides its answer.
struct Seen {
    /// The operation's own limit group (an index into the service's groups).
    group: usize,
    /// Whether the scenario was drawn from the sandbox's default scenario.
    chaos: bool,
    /// The bucket's (remaining, limit) after the request's token.
    fill: Option<(u32, u32)>,
    /// The sandbox and key of the request, when a dashboard feed is open (else not looked at).
    watched: Option<(Arc<str>, Arc<str>)>,
}

/// A header value for a count or a number of seconds. Values up to 4095 come from a table made
/// once (a static `HeaderValue` clones without allocating): rate-limit headers are on every answer.
fn number(v: u64) -> HeaderValue {
    static SMALL: std::sync::OnceLock<Vec<HeaderValue>> = std::sync::OnceLock::new();
    let table = SMALL.get_or_init(|| {
        let text: &'static str = Box::leak(
            (0..4096)
                .map(|n: u32| n.to_string())
                .collect::<String>()
                .into_boxed_str(),
        );
        let mut at = 0;
        (0..4096u32)
            .map(|n| {
                let len = n.checked_ilog10().map_or(1, |d| d as usize + 1);
                let v = HeaderValue::from_static(text.get(at..at + len).unwrap_or("0"));
                at += len;
                v
            })
            .collect()
    });
    usize::try_from(v)
        .ok()
        .and_then(|i| table.get(i))
        .cloned()
        .unwrap_or_else(|| HeaderValue::from(v))
}

/// How a request reached its service.
#[derive(Debug)]
pub(crate) struct Route {
    id: ServiceId,
    /// Bytes of the path before the service's own path (its prefix; 0 by hostname).
    prefix: usize,
    /// The hostname the request addressed, when it came by hostname.
    host: Option<String>,
}

impl Route {
    /// By path prefix: `/wb/…` is WB with `prefix` = 3.
    pub(crate) fn by_prefix(id: ServiceId, prefix: usize) -> Self {
        Self {
            id,
            prefix,
            host: None,
        }
    }

    /// By hostname: the whole path is the service's.
    pub(crate) fn by_host(id: ServiceId, host: String) -> Self {
        Self {
            id,
            prefix: 0,
            host: Some(host),
        }
    }
}

/// Answers one request of service `id` and counts it: by limit group, status, rejection and
/// scenario. Every request is logged at debug level (`RUST_LOG=apistend_sandbox=debug`) with its
/// request id: the caller's `X-Request-Id`, or the id of its error body.
pub(crate) async fn handle(
    state: Arc<AppState>,
    route: Route,
    req: Request<Body>,
) -> Response<Body> {
    let id = route.id;
    let mut controls = Controls::read(req.headers());
    let meta = Meta::new(controls.request_id.take());
    let asked_scenario = controls.asked_scenario;
    let method = req.method().clone();
    let mut seen = Seen {
        group: usize::MAX,
        chaos: false,
        fill: None,
        watched: None,
    };
    let debug = tracing::enabled!(tracing::Level::DEBUG);
    let path = (debug || state.watch.watched()).then(|| req.uri().path().to_owned());
    let mut resp = handle_inner(&state, route, req, &controls, &meta, &mut seen).await;
    let status = resp.status().as_u16();
    let scenario = resp
        .headers()
        .get(X_APISTEND_SCENARIO)
        .and_then(|v| v.to_str().ok());
    state.metrics.request(
        id,
        seen.group,
        status,
        scenario == Some(Scenario::RateLimit.name()),
    );
    if let Some((remaining, limit)) = seen.fill {
        state.metrics.fill(id, seen.group, remaining, limit);
    }
    if (asked_scenario || seen.chaos)
        && let Some(sc) = scenario
    {
        state.metrics.scenario(id, sc);
    }
    if debug {
        tracing::debug!(request_id = meta.id(), service = %id, %method, path = path.as_deref().unwrap_or(""), status, scenario, "answered");
    }
    if let Some((sandbox, key)) = seen.watched.take() {
        let refused = scenario == Some(Scenario::RateLimit.name());
        let refusal = if refused {
            let (parts, body) = resp.into_parts();
            let (captured, body) = crate::watch::capture(&parts.headers, body).await;
            resp = Response::from_parts(parts, body);
            Some(Arc::new(captured))
        } else {
            None
        };
        state.watch.publish(crate::watch::Seen {
            sandbox,
            key,
            service: id,
            group: seen.group,
            method,
            path: path.unwrap_or_default(),
            status,
            at_ms: crate::clock::unix_now_us() / 1000,
            refusal,
        });
    }
    resp
}

async fn handle_inner(
    state: &AppState,
    route: Route,
    req: Request<Body>,
    controls: &Controls,
    meta: &Meta,
    seen: &mut Seen,
) -> Response<Body> {
    let id = route.id;
    // `handle` is reached through the catalog, so the service is there.
    let Some(service) = state.catalog.service(id) else {
        return axum::response::IntoResponse::into_response(StatusCode::NOT_FOUND);
    };
    let started = meta.started;
    let (parts, body) = req.into_parts();
    // A request whose body is known to be empty (hyper knows it from the headers: no
    // Transfer-Encoding, no Content-Length or 0) is not polled for one (that spares a round
    // through the connection task on every bodiless GET), nor timed (nor a clock read and a
    // timer entry).
    let read = if !axum::body::HttpBody::is_end_stream(&body) {
        tokio::time::timeout(
            state.limits.read_timeout,
            axum::body::to_bytes(body, state.limits.max_body_bytes),
        )
        .await
    } else {
        Ok(Ok(axum::body::Bytes::new()))
    };
    let body = match read {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => {
            let why = format!("request body over {} bytes", state.limits.max_body_bytes);
            return closing(
                Answer::error(service, &ErrorKind::TooLarge(why), &meta.ctx(0)).into_response(),
            );
        }
        Err(_) => {
            let why = format!(
                "the request body did not arrive within {:?}",
                state.limits.read_timeout
            );
            return closing(
                Answer::error(service, &ErrorKind::RequestTimeout(why), &meta.ctx(0))
                    .into_response(),
            );
        }
    };
    let rest = parts.uri.path().get(route.prefix..).unwrap_or("");
    let mut call = Call::parse(service, &parts, rest, &body, route.host);
    let Some(resolved) = state
        .catalog
        .resolve(id, call.method, &call.path, call.host.as_deref())
    else {
        return axum::response::IntoResponse::into_response(StatusCode::NOT_FOUND);
    };
    // A call outside the API's limits (amoCRM's OAuth token exchange, made before the client
    // has a token): its answer, without a credential and without spending a bucket.
    if resolved.operation.is_some_and(|o| o.anonymous) {
        return success(state, service, &resolved, &call, meta, 0).into_response();
    }
    let principal = call
        .credential
        .as_deref()
        .and_then(|c| state.tenants.lookup(c));
    let owner = Owner::new(
        principal.as_ref(),
        call.credential.as_deref(),
        call.credential_part.as_deref(),
    );
    let at = buckets::Target {
        host: call.host.as_deref(),
        operation: resolved.operation,
        path: &call.path,
        weight: resolved
            .operation
            .map_or(1, |o| o.weight_for(call.body.as_ref())),
    };
    seen.group = resolved.groups.first().copied().unwrap_or(usize::MAX);
    if state.watch.watched() {
        seen.watched = owner
            .view
            .as_ref()
            .map(|v| (Arc::clone(&v.sandbox), Arc::clone(&owner.key)));
    }

    // A locked-out owner gets the lockout's answer and spends nothing.
    if service.lockout.is_some() && state.lockouts.locked(id, &owner.key, started) {
        return Answer::error(service, &ErrorKind::Locked, &meta.ctx(0)).into_response();
    }

    // Limit first: every request spends a token, whatever follows.
    let charge = match buckets::take(&state.store, &resolved, &owner, &at).await {
        Ok(c) => c,
        Err(e) => {
            state.metrics.store_error();
            tracing::error!(request_id = meta.id(), error = %e, "rate-limit store failed");
            return Answer::error(service, &ErrorKind::Unavailable, &meta.ctx(0)).into_response();
        }
    };
    let (mut decision, quota) = (charge.decision, charge.quota);
    let limit = decision.limit;
    seen.fill = Some((decision.remaining, limit));
    if !decision.allowed {
        if let Some(rule) = &service.lockout
            && crate::lockout::count_rejection(state, id, &owner.key, rule, started).await
        {
            state.metrics.lockout(id);
        }
        return rejection(service, &decision, &quota, &meta.ctx(limit)).into_response();
    }
    let plain = |kind: ErrorKind, d: &Decision| {
        Answer::error(service, &kind, &meta.ctx(limit))
            .rate(service.rate_headers(d, &quota, false))
            .into_response()
    };
    if principal.is_none() {
        return plain(ErrorKind::Unauthorized, &decision);
    }
    // Then the concurrency slots, held until the answer has been sent.
    let held = if service.in_flight.is_empty() {
        None
    } else {
        match in_flight::take(&state.store, service, &owner, &at).await {
            Ok(in_flight::Taken::All(h)) => Some(h),
            Ok(in_flight::Taken::Full) => return plain(ErrorKind::TooManyInFlight, &decision),
            Err(e) => {
                state.metrics.store_error();
                tracing::error!(request_id = meta.id(), error = %e, "rate-limit store failed");
                return Answer::error(service, &ErrorKind::Unavailable, &meta.ctx(0))
                    .into_response();
            }
        }
    };
    let view = owner.view.as_deref();
    let scenario = match controls.scenario.as_deref() {
        None => {
            let drawn = view.and_then(View::draw);
            seen.chaos = drawn.is_some();
            drawn
        }
        Some(s) => match Scenario::parse(s) {
            Some(sc) => Some(sc),
            None => {
                let why = format!(
                    "unknown X-Mock-Scenario {s:?}; valid: {}",
                    Scenario::valid_list()
                );
                return plain(ErrorKind::BadRequest(why), &decision);
            }
        },
    };
    let delay = match controls.delay.as_deref() {
        None => Duration::from_millis(
            view.and_then(|v| v.latency_ms)
                .unwrap_or_else(|| u64::from(state.latency_ms(id))),
        ),
        Some(v) => match v.parse::<u64>() {
            Ok(ms) if ms <= state.limits.max_delay_ms => Duration::from_millis(ms),
            _ => {
                let why = format!(
                    "X-Mock-Delay must be a whole number of milliseconds from 0 to {}, got {v:?}",
                    state.limits.max_delay_ms
                );
                return plain(ErrorKind::BadRequest(why), &decision);
            }
        },
    };
    if scenario == Some(Scenario::RateLimit) {
        // What a real exceedance of this bucket answers: its headers as for an empty bucket.
        let exceeded = decision.exceeded(&quota, at.weight);
        return rejection(service, &exceeded, &quota, &meta.ctx(limit)).into_response();
    }

    // An operating-time budget (Bitrix24's, where the definition has one): the method's,
    // checked before the call.
    let budget = state.operating(id).zip(
        call.rpc_method
            .as_deref()
            .filter(|_| resolved.operation.is_some()),
    );
    if let Some((op, m)) = budget
        && let Err(blocked) = op.check(&format!("{}:{m}", owner.key), started)
    {
        // Bitrix24 names no pause; the sandbox's hint is the time until the method unblocks.
        let secs = unblock_secs(&blocked, started);
        let mut a = Answer::error(
            service,
            &ErrorKind::OperatingTime,
            &meta.ctx(limit).with_retry_after(secs),
        )
        .rate(service.rate_headers(&decision, &quota, false));
        a.headers.push((
            apistend_catalog::X_APISTEND_RETRY_AFTER,
            HeaderValue::from(secs),
        ));
        return a.into_response();
    }
    // Inside a `batch`, each nested method is checked too: a blocked one is reported in the
    // batch's `result_error`, the others run.
    let nested = match budget {
        Some(_) => state
            .answers_of(id)
            .map(|a| a.nested(&call))
            .unwrap_or_default(),
        None => Vec::new(),
    };
    if let Some((op, _)) = budget {
        call.blocked = nested
            .iter()
            .filter(|m| op.check(&format!("{}:{m}", owner.key), started).is_err())
            .cloned()
            .collect();
    }

    let mut answer = match scenario {
        Some(Scenario::Timeout) => {
            tokio::time::sleep(Duration::from_millis(state.limits.max_timeout_ms)).await;
            Answer::error(service, &ErrorKind::GatewayTimeout, &meta.ctx(limit))
        }
        Some(Scenario::ServerError) => {
            Answer::error(service, &ErrorKind::ServerError, &meta.ctx(limit))
        }
        Some(Scenario::Unavailable) => {
            Answer::error(service, &ErrorKind::Unavailable, &meta.ctx(limit))
        }
        Some(Scenario::Unauthorized) => {
            Answer::error(service, &ErrorKind::Unauthorized, &meta.ctx(limit))
        }
        Some(Scenario::Forbidden) => {
            Answer::error(service, &ErrorKind::Forbidden, &meta.ctx(limit))
        }
        Some(Scenario::NotFound) => Answer::error(service, &ErrorKind::NotFound, &meta.ctx(limit)),
        Some(Scenario::Conflict) => Answer::error(service, &ErrorKind::Conflict, &meta.ctx(limit)),
        _ => success(state, service, &resolved, &call, meta, limit),
    };
    match scenario {
        Some(Scenario::Malformed) if answer.status < 300 => answer.mode = BodyMode::Truncated,
        Some(Scenario::Reset) => answer.mode = BodyMode::Reset,
        Some(Scenario::Slow) => answer.mode = BodyMode::Slow,
        _ => {}
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if let Some((op, m)) = budget {
        let ran: Vec<String> = nested
            .into_iter()
            .filter(|n| !call.blocked.contains(n))
            .collect();
        if let Some(rendered) = answer.rendered.take() {
            answer.body = String::from_utf8_lossy(&rendered).into_owned();
        }
        answer.body = op.time_block(&answer.body, &owner.key, m, &ran, started, delay);
    }

    // Cost after the answer: a WB 409 counts as 10 (or 33), a Yandex Market 5xx as nothing.
    let taken = at.weight;
    let cost = resolved
        .operation
        .map_or(taken, |o| o.cost_of(answer.status, taken));
    let settled = if cost > taken {
        buckets::charge_extra(&state.store, &resolved, &owner, &at, cost - taken).await
    } else if cost < taken {
        buckets::refund(&state.store, &resolved, &owner, &at, taken - cost).await
    } else {
        Ok(None)
    };
    match settled {
        Ok(Some(after)) => decision = after,
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(request_id = meta.id(), error = %e, "could not settle the answer's cost");
        }
    }
    let mut answer = answer.rate(service.rate_headers(&decision, &quota, false));
    answer.scenario = scenario.map(Scenario::name);
    let resp = answer.into_response();
    match held {
        Some(h) => resp.map(|body| in_flight::HeldBody::wrap(body, h)),
        None => resp,
    }
}

/// An answer after which the connection closes: its request body was not read to the end (too
/// large or too slow), so the next request on it could not be found.
fn closing(mut resp: Response<Body>) -> Response<Body> {
    resp.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    resp
}

/// Whole seconds from `now` until a blocked method may be called again (at least 1).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few hundred seconds
fn unblock_secs(blocked: &crate::operating::OperatingState, now: f64) -> u64 {
    (blocked.unblock_at - now).ceil().max(1.0) as u64
}

fn rejection(
    service: &Service,
    decision: &Decision,
    quota: &Quota,
    ctx: &ErrorContext<'_>,
) -> Answer {
    let ctx = ctx.with_retry_after(decision.retry_after_secs().max(1));
    let mut a = Answer::error(service, &ErrorKind::RateLimited, &ctx)
        .rate(service.rate_headers(decision, quota, true));
    a.scenario = Some(Scenario::RateLimit.name());
    a
}

/// The body of an answer of `media` type (not the service's JSON), with its `Content-Type`.
fn file(media: Option<&str>, body: &serde_json::Value) -> Option<(HeaderValue, Vec<u8>)> {
    let m = media?;
    Some((
        HeaderValue::from_str(m).ok()?,
        crate::services::samples::file(m, body),
    ))
}

fn success(
    state: &AppState,
    service: &Service,
    resolved: &apistend_catalog::Resolved<'_>,
    call: &Call,
    meta: &Meta,
    limit: u32,
) -> Answer {
    let ctx = || meta.ctx(limit);
    let Some(op) = resolved.operation else {
        return Answer::error(service, &ErrorKind::NotFound, &ctx());
    };
    // The source's own answer first, then the service's OpenAPI examples.
    let result: Option<Result<Success, Refusal>> = state
        .answers_of(service.id)
        .and_then(|source| source.answer(service, op, call))
        .or_else(|| {
            state.examples_of(service.id).and_then(|e| {
                e.answer(
                    op.method,
                    &op.spec_path,
                    call,
                    service.empty_body_is_empty_object,
                )
            })
        });
    let content_type = service.content_type;
    match result {
        None => Answer::error(service, &ErrorKind::NotFound, &ctx()),
        Some(Ok(s)) => Answer {
            status: s.status,
            content_type,
            file: file(s.media.as_deref(), &s.body),
            body: if s.body.is_null() || s.media.is_some() || s.rendered.is_some() {
                String::new()
            } else {
                s.body.to_string()
            },
            rendered: s.rendered.filter(|_| s.media.is_none()),
            headers: s
                .headers
                .into_iter()
                .filter_map(|(n, v)| Some((n, HeaderValue::from_str(&v).ok()?)))
                .collect(),
            rate: RateHeaders::default(),
            scenario: None,
            mode: BodyMode::Full,
        },
        Some(Err(Refusal::BadRequest(why))) => {
            Answer::error(service, &ErrorKind::BadRequest(why), &ctx())
        }
        Some(Err(Refusal::Body {
            status,
            body,
            media,
        })) => Answer {
            status,
            content_type,
            file: file(media.as_deref(), &body),
            body: if media.is_some() {
                String::new()
            } else {
                body.to_string()
            },
            rate: RateHeaders::default(),
            scenario: None,
            headers: Vec::new(),
            mode: BodyMode::Full,
            rendered: None,
        },
    }
}
