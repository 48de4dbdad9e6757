//! What is recorded of every answered request: its metrics, its debug log line and, when a
//! dashboard watches, its event (with the body of a refusal).

use std::sync::Arc;

use apistend_catalog::ServiceId;
use axum::body::Body;
use http::{Method, Request, Response};

use super::meta::Meta;
use super::noted::Noted;
use crate::scenario::{Scenario, X_APISTEND_SCENARIO};
use crate::state::AppState;

/// What is kept of the request until its answer is recorded.
pub(super) struct Seeing {
    service: ServiceId,
    method: Method,
    /// The path, only when a log line or a dashboard feed needs it.
    path: Option<String>,
    debug: bool,
    /// `X-Mock-Scenario` was sent: the answer's scenario is counted.
    asked_scenario: bool,
}

impl Seeing {
    /// The request `req` of `service`, before it is answered.
    pub(super) fn new(
        state: &AppState,
        service: ServiceId,
        req: &Request<Body>,
        asked_scenario: bool,
    ) -> Self {
        let debug = tracing::enabled!(tracing::Level::DEBUG);
        Self {
            service,
            method: req.method().clone(),
            path: (debug || state.watch.watched()).then(|| req.uri().path().to_owned()),
            debug,
            asked_scenario,
        }
    }

    /// Records `resp` in the metrics and the debug log; whether it was a refusal for the
    /// dashboard's feed: a rate-limit answer, or a request refused as its description does not
    /// allow it (its reason in `X-APIStend-Invalid`, which the feed shows).
    pub(super) fn record(
        &self,
        state: &AppState,
        meta: &Meta,
        seen: &Noted,
        resp: &Response<Body>,
    ) -> bool {
        let id = self.service;
        let status = resp.status().as_u16();
        let scenario = resp
            .headers()
            .get(X_APISTEND_SCENARIO)
            .and_then(|v| v.to_str().ok());
        let refused = scenario == Some(Scenario::RateLimit.name());
        state.metrics.request(id, seen.group, status, refused);
        if let Some((remaining, limit)) = seen.fill {
            state.metrics.fill(id, seen.group, remaining, limit);
        }
        if (self.asked_scenario || seen.chaos)
            && let Some(sc) = scenario
        {
            state.metrics.scenario(id, sc);
        }
        if self.debug {
            tracing::debug!(request_id = meta.id(), service = %id, method = %self.method, path = self.path.as_deref().unwrap_or(""), status, scenario, "answered");
        }
        refused || seen.invalid
    }

    /// Publishes the request to the dashboard's feed of `sandbox`, `key`'s (with the body of a
    /// refusal, captured as it is sent); gives the response back.
    pub(super) async fn publish(
        self,
        state: &AppState,
        (sandbox, key): (Arc<str>, Arc<str>),
        group: usize,
        refused: bool,
        mut resp: Response<Body>,
    ) -> Response<Body> {
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
            service: self.service,
            group,
            method: self.method,
            path: self.path.unwrap_or_default(),
            status: resp.status().as_u16(),
            at_ms: apistend_answers::clock::unix_now_us() / 1000,
            refusal,
        });
        resp
    }
}
