//! Failures a client must survive, asked for with `X-Mock-Scenario`.

/// `X-Mock-Scenario`: which failure to answer with.
pub(crate) const X_MOCK_SCENARIO: http::HeaderName =
    http::HeaderName::from_static("x-mock-scenario");
/// The name of [`X_APISTEND_SCENARIO`], as an answer's header list names it.
pub(crate) const X_APISTEND_SCENARIO_NAME: &str = "x-apistend-scenario";
/// Echo of the scenario that shaped the answer (also on a real rate-limit exceedance).
pub(crate) const X_APISTEND_SCENARIO: http::HeaderName =
    http::HeaderName::from_static(X_APISTEND_SCENARIO_NAME);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scenario {
    /// Exactly the answer of a real exceedance.
    RateLimit,
    ServerError,
    Unavailable,
    /// Holds the request until the client gives up (bounded by the server's maximum).
    Timeout,
    Unauthorized,
    Forbidden,
    NotFound,
    /// WB: costs 10 tokens, like a real 409.
    Conflict,
    /// A success status with a truncated body.
    Malformed,
    /// The connection is dropped mid-answer.
    Reset,
    /// The body trickles in small pieces.
    Slow,
}

pub(crate) const SCENARIOS: [(&str, Scenario); 11] = [
    ("rate_limit", Scenario::RateLimit),
    ("server_error", Scenario::ServerError),
    ("unavailable", Scenario::Unavailable),
    ("timeout", Scenario::Timeout),
    ("unauthorized", Scenario::Unauthorized),
    ("forbidden", Scenario::Forbidden),
    ("not_found", Scenario::NotFound),
    ("conflict", Scenario::Conflict),
    ("malformed", Scenario::Malformed),
    ("reset", Scenario::Reset),
    ("slow", Scenario::Slow),
];

impl Scenario {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        SCENARIOS.iter().find(|(n, _)| *n == s).map(|(_, sc)| *sc)
    }

    pub(crate) fn name(self) -> &'static str {
        SCENARIOS
            .iter()
            .find(|(_, sc)| *sc == self)
            .map_or("unknown", |(n, _)| n)
    }

    /// Every scenario's name, as `X-Mock-Scenario` takes it.
    pub(crate) fn names() -> Vec<&'static str> {
        SCENARIOS.iter().map(|(n, _)| *n).collect()
    }

    pub(crate) fn valid_list() -> String {
        Self::names().join(", ")
    }
}
