//! The sandbox's own request headers — `X-Mock-Scenario`, `X-Mock-Delay`, `X-Mock-Validation`,
//! `X-Mock-State`, `X-Mock-Job` and `X-Request-Id` —
//! read in one pass over a request's headers.
//!
//! Looked up one by one, each hashed its name and probed the map on every request, though
//! nearly every request sends none of them (callgrind, WB's allowed path: some 500 instructions
//! of about 19 000). One pass over the few headers a request has compares names instead.

use http::{HeaderMap, HeaderName};

use crate::scenario::X_MOCK_SCENARIO;

/// `X-Mock-Delay`: milliseconds to wait before answering (`0`: none).
pub(crate) const X_MOCK_DELAY: HeaderName = HeaderName::from_static("x-mock-delay");

/// `X-Mock-Validation`: `strict`, `report` or `off`, for this request instead of its sandbox's.
pub(crate) const X_MOCK_VALIDATION: HeaderName = HeaderName::from_static("x-mock-validation");

/// `X-Mock-State`: `off` answers an operation bound to a collection with its example, as if the
/// sandbox kept nothing (`on`, the default: what the sandbox keeps).
pub(crate) const X_MOCK_STATE: HeaderName = HeaderName::from_static("x-mock-state");

/// `X-Mock-Job`: `fail` or `succeed`, for the job the request starts instead of its sandbox's
/// choice for that kind of job.
pub(crate) const X_MOCK_JOB: HeaderName = HeaderName::from_static("x-mock-job");

/// `X-Request-Id`: a caller's id for its request, used in logs and error bodies instead of ours.
pub(crate) const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// What a request asked of the sandbox itself. Each value is the first of its header, trimmed
/// and non-empty (as [`apistend_answers::call::header`] reads a header); copies are made only of headers
/// that were sent.
#[derive(Debug, Default)]
pub(crate) struct Controls {
    /// `X-Mock-Scenario` was sent at all (even empty or not text): the answer's scenario counts.
    pub(crate) asked_scenario: bool,
    /// `X-Mock-Scenario`.
    pub(crate) scenario: Option<String>,
    /// `X-Mock-Delay`.
    pub(crate) delay: Option<String>,
    /// `X-Request-Id`, unchecked.
    pub(crate) request_id: Option<String>,
    /// `X-Mock-Validation`, unchecked.
    pub(crate) validation: Option<String>,
    /// `X-Mock-State`, unchecked.
    pub(crate) state: Option<String>,
    /// `X-Mock-Job`, unchecked.
    pub(crate) job: Option<String>,
}

impl Controls {
    /// Whether the request wants what the sandbox keeps: `X-Mock-State` absent or `on`, not
    /// `off` (the operation's example, as if nothing were kept).
    ///
    /// # Errors
    /// Another value, and why.
    pub(crate) fn stateful(&self) -> Result<bool, String> {
        match self.state.as_deref() {
            None | Some("on") => Ok(true),
            Some("off") => Ok(false),
            Some(v) => Err(format!("unknown X-Mock-State {v:?}; valid: on, off")),
        }
    }

    /// Whether the job the request starts fails (`X-Mock-Job: fail`) or succeeds (`succeed`);
    /// `None` leaves it to the sandbox.
    ///
    /// # Errors
    /// Another value, and why.
    pub(crate) fn job_fails(&self) -> Result<Option<bool>, String> {
        match self.job.as_deref() {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("fail") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("succeed") => Ok(Some(false)),
            Some(v) => Err(format!("unknown X-Mock-Job {v:?}; valid: fail, succeed")),
        }
    }

    /// The controls among `headers`. Only a header's first value counts, as `HeaderMap::get`
    /// reads it.
    pub(crate) fn read(headers: &HeaderMap) -> Self {
        let text = |v| apistend_answers::call::text(v).map(str::to_owned);
        let mut c = Controls::default();
        let (mut delay_seen, mut id_seen, mut validation_seen) = (false, false, false);
        let (mut state_seen, mut job_seen) = (false, false);
        for (name, value) in headers {
            if *name == X_MOCK_SCENARIO && !c.asked_scenario {
                c.asked_scenario = true;
                c.scenario = text(value);
            } else if *name == X_MOCK_DELAY && !delay_seen {
                delay_seen = true;
                c.delay = text(value);
            } else if *name == X_REQUEST_ID && !id_seen {
                id_seen = true;
                c.request_id = text(value);
            } else if *name == X_MOCK_VALIDATION && !validation_seen {
                validation_seen = true;
                c.validation = text(value);
            } else if *name == X_MOCK_STATE && !state_seen {
                state_seen = true;
                c.state = text(value);
            } else if *name == X_MOCK_JOB && !job_seen {
                job_seen = true;
                c.job = text(value);
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn controls_are_read_as_single_lookups_read_them() {
        let mut h = HeaderMap::new();
        h.insert(http::header::HOST, HeaderValue::from_static("127.0.0.1"));
        h.append(X_MOCK_SCENARIO, HeaderValue::from_static(" rate_limit "));
        h.append(X_MOCK_SCENARIO, HeaderValue::from_static("timeout"));
        h.insert(X_MOCK_DELAY, HeaderValue::from_static("  "));
        h.insert(X_REQUEST_ID, HeaderValue::from_static("abc-1"));
        let c = Controls::read(&h);
        assert!(c.asked_scenario);
        assert_eq!(c.scenario.as_deref(), Some("rate_limit"));
        assert_eq!(c.delay, None, "blank is absent");
        assert_eq!(c.request_id.as_deref(), Some("abc-1"));
        for (name, expected) in [
            (&X_MOCK_SCENARIO, c.scenario.as_deref()),
            (&X_MOCK_DELAY, c.delay.as_deref()),
        ] {
            assert_eq!(apistend_answers::call::header(&h, name), expected);
        }
    }

    #[test]
    fn a_request_without_controls_has_none() {
        let mut h = HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, HeaderValue::from_static("k"));
        let c = Controls::read(&h);
        assert!(!c.asked_scenario);
        assert!(c.scenario.is_none() && c.delay.is_none() && c.request_id.is_none());
    }

    #[test]
    fn a_first_value_that_is_not_text_is_absent_but_still_asks() {
        let mut h = HeaderMap::new();
        h.insert(
            X_MOCK_SCENARIO,
            HeaderValue::from_bytes(b"\xff").expect("opaque value"),
        );
        h.append(X_MOCK_SCENARIO, HeaderValue::from_static("timeout"));
        let c = Controls::read(&h);
        assert!(c.asked_scenario);
        assert_eq!(c.scenario, None);
        assert_eq!(apistend_answers::call::header(&h, X_MOCK_SCENARIO), None);
    }
}
