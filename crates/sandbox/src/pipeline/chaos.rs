//! Stage 8, scenario and latency: the failure a request asked for (`X-Mock-Scenario`) or its
//! sandbox draws, and how long the answer waits (`X-Mock-Delay`, the sandbox's or the
//! service's latency).

use std::time::Duration;

use apistend_catalog::ErrorKind;
use axum::body::Body;
use http::Response;

use super::answer::{Answer, BodyMode};
use super::limit::Admitted;
use super::noted::Noted;
use crate::buckets::Owner;
use crate::controls::Controls;
use crate::scenario::Scenario;
use crate::state::AppState;
use crate::tenants::View;

/// What shapes the answer besides the service.
pub(super) struct Chaos {
    pub(super) scenario: Option<Scenario>,
    pub(super) delay: Duration,
}

/// The request's scenario and delay; a bad `X-Mock-Scenario` or `X-Mock-Delay` is the
/// service's 400.
pub(super) fn read(
    state: &AppState,
    controls: &Controls,
    owner: &Owner,
    admitted: &Admitted<'_>,
    seen: &mut Noted,
) -> Result<Chaos, Response<Body>> {
    let view = owner.view.as_deref();
    let scenario = match controls.scenario.as_deref() {
        None => {
            let drawn = view.and_then(View::draw);
            seen.chaos = drawn.is_some();
            drawn
        }
        Some(s) => Some(Scenario::parse(s).ok_or_else(|| {
            let why = format!(
                "unknown X-Mock-Scenario {s:?}; valid: {}",
                Scenario::valid_list()
            );
            admitted.refuse(&ErrorKind::BadRequest(why))
        })?),
    };
    let max = state.limits.max_delay_ms;
    let ms = match controls.delay.as_deref() {
        None => view
            .and_then(|v| v.latency_ms)
            .unwrap_or_else(|| u64::from(admitted.service.latency.base_ms)),
        Some(v) => match v.parse::<u64>() {
            Ok(ms) if ms <= max => ms,
            _ => {
                let why = format!(
                    "X-Mock-Delay must be a whole number of milliseconds from 0 to {max}, got {v:?}"
                );
                return Err(admitted.refuse(&ErrorKind::BadRequest(why)));
            }
        },
    };
    Ok(Chaos {
        scenario,
        delay: Duration::from_millis(ms),
    })
}

impl Chaos {
    /// Whether the scenario is the rate-limit answer (answered before anything else runs).
    pub(super) fn rate_limited(&self) -> bool {
        self.scenario == Some(Scenario::RateLimit)
    }

    /// The error the scenario answers instead of the service's answer, if it is one.
    pub(super) fn instead(&self) -> Option<ErrorKind> {
        Some(match self.scenario? {
            Scenario::Timeout => ErrorKind::GatewayTimeout,
            Scenario::ServerError => ErrorKind::ServerError,
            Scenario::Unavailable => ErrorKind::Unavailable,
            Scenario::Unauthorized => ErrorKind::Unauthorized,
            Scenario::Forbidden => ErrorKind::Forbidden,
            Scenario::NotFound => ErrorKind::NotFound,
            Scenario::Conflict => ErrorKind::Conflict,
            _ => return None,
        })
    }

    /// The service's error of `kind` for the scenario, after holding the request as long as
    /// the server may for the `timeout` scenario.
    pub(super) async fn error(
        &self,
        state: &AppState,
        admitted: &Admitted<'_>,
        kind: &ErrorKind,
    ) -> Answer {
        if self.scenario == Some(Scenario::Timeout) {
            tokio::time::sleep(Duration::from_millis(state.limits.max_timeout_ms)).await;
        }
        // The error body's context (request id, timestamp) is made only for an error answer.
        let ctx = admitted.meta.ctx(admitted.limit());
        Answer::error(admitted.service, kind, &ctx)
    }

    /// Breaks the answer's body as the scenario asks (the pipeline then waits the delay).
    pub(super) fn shape(&self, answer: &mut Answer) {
        match self.scenario {
            Some(Scenario::Malformed) if answer.status < 300 => answer.mode = BodyMode::Truncated,
            Some(Scenario::Reset) => answer.mode = BodyMode::Reset,
            Some(Scenario::Slow) => answer.mode = BodyMode::Slow,
            _ => {}
        }
    }
}
