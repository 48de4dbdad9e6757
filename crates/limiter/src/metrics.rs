//! The engine's metrics, through the `metrics` facade (a no-op until the application installs a
//! recorder).
//!
//! - `apistend_limiter_decisions_total{store, outcome}`: `allowed` / `denied`;
//! - `apistend_limiter_store_errors_total{store, kind}`: a store that could not answer;
//! - `apistend_limiter_fallbacks_total{store}`: decisions taken by the local fallback instead.
//!
//! Labels are literals on purpose: with literals the macro builds its key statically, with
//! variables it allocates a label vector on every call, which on the hot path was most of the cost
//! of a decision.

#[derive(Debug, Clone, Copy)]
pub(crate) enum Outcome {
    Allowed,
    Denied,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Store {
    Memory,
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    Redis,
}

#[inline]
pub(crate) fn record_decision(store: Store, outcome: Outcome) {
    use Outcome::{Allowed, Denied};
    const NAME: &str = "apistend_limiter_decisions_total";
    let counter = match (store, outcome) {
        (Store::Memory, Allowed) => {
            metrics::counter!(NAME, "store" => "memory", "outcome" => "allowed")
        }
        (Store::Memory, Denied) => {
            metrics::counter!(NAME, "store" => "memory", "outcome" => "denied")
        }
        (Store::Redis, Allowed) => {
            metrics::counter!(NAME, "store" => "redis", "outcome" => "allowed")
        }
        (Store::Redis, Denied) => {
            metrics::counter!(NAME, "store" => "redis", "outcome" => "denied")
        }
    };
    counter.increment(1);
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
