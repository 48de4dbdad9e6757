//! The engine's metrics, through the `metrics` facade (a no-op until the application installs a
//! recorder).
//!
//! - `apistend_limiter_decisions_total{store, outcome}`: `allowed` / `denied`;
//! - `apistend_limiter_store_errors_total{store, kind}`: a store that could not answer;
//! - `apistend_limiter_fallbacks_total{store}`: decisions taken by the local fallback instead.

#[derive(Debug, Clone, Copy)]
pub(crate) enum Outcome {
    Allowed,
    Denied,
}

#[inline]
pub(crate) fn record_decision(store: &'static str, outcome: Outcome) {
    let outcome = match outcome {
        Outcome::Allowed => "allowed",
        Outcome::Denied => "denied",
    };
    metrics::counter!("apistend_limiter_decisions_total", "store" => store, "outcome" => outcome)
        .increment(1);
}

#[cfg(feature = "redis")]
pub(crate) fn record_store_error(store: &'static str, kind: &'static str) {
    metrics::counter!("apistend_limiter_store_errors_total", "store" => store, "kind" => kind)
        .increment(1);
}

#[cfg(feature = "redis")]
pub(crate) fn record_fallback(store: &'static str) {
    metrics::counter!("apistend_limiter_fallbacks_total", "store" => store).increment(1);
}
