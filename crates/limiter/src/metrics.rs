//! The engine's metrics, through the `metrics` facade (a no-op until the application installs a
//! recorder).
//!
//! - `apistend_limiter_decisions_total{store, outcome}`: `allowed` / `denied`;
//! - `apistend_limiter_store_errors_total{store, kind}`: a store that could not answer;
//! - `apistend_limiter_fallbacks_total{store}`: decisions taken by the local fallback instead.
//!
//! The decision counters' handles are registered once and kept (the hot path does no lookup);
//! the rare error and fallback counters are looked up when they happen. A client process turns
//! the decision counters off ([`count_no_decisions`]): its refused decisions are its own waits.

#[derive(Debug, Clone, Copy)]
pub(crate) enum Outcome {
    Allowed,
    Denied,
}

impl Outcome {
    pub(crate) fn of(allowed: bool) -> Self {
        if allowed {
            Outcome::Allowed
        } else {
            Outcome::Denied
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Store {
    Memory,
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    Redis,
}

/// Whether decisions are counted: until a process says otherwise.
static COUNTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Stops counting decisions (`apistend_limiter_decisions_total`) in this process. For a client
/// process (`apistend proxy`): a decision it is refused is a wait of its own before it sends — the
/// client counts it as one (`apistend_client_local_wait_seconds`) —, not a request anyone was
/// refused, and an `outcome="denied"` beside requests that all succeeded would read as failures.
pub fn count_no_decisions() {
    COUNTED.store(false, std::sync::atomic::Ordering::Relaxed);
}

/// The four decision counters, registered with the global recorder on the first decision and
/// kept: a decision then costs one atomic increment, with no registry lookup. Install the
/// recorder before the first decision (the binary does, at start).
static DECISIONS: std::sync::OnceLock<[metrics::Counter; 4]> = std::sync::OnceLock::new();

#[inline]
pub(crate) fn record_decision(store: Store, outcome: Outcome) {
    const NAME: &str = "apistend_limiter_decisions_total";
    if !COUNTED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let counters = DECISIONS.get_or_init(|| {
        metrics::describe_counter!(NAME, "Rate-limit decisions, by store and outcome.");
        [
            metrics::counter!(NAME, "store" => "memory", "outcome" => "allowed"),
            metrics::counter!(NAME, "store" => "memory", "outcome" => "denied"),
            metrics::counter!(NAME, "store" => "redis", "outcome" => "allowed"),
            metrics::counter!(NAME, "store" => "redis", "outcome" => "denied"),
        ]
    });
    let i = match store {
        Store::Memory => 0,
        Store::Redis => 2,
    } + match outcome {
        Outcome::Allowed => 0,
        Outcome::Denied => 1,
    };
    if let Some(c) = counters.get(i) {
        c.increment(1);
    }
}

#[cfg(feature = "redis")]
pub(crate) fn record_store_error(store: &'static str, kind: &'static str) {
    metrics::describe_counter!(
        "apistend_limiter_store_errors_total",
        "Store calls that failed, by store and kind."
    );
    metrics::counter!("apistend_limiter_store_errors_total", "store" => store, "kind" => kind)
        .increment(1);
}

#[cfg(feature = "redis")]
pub(crate) fn record_fallback(store: &'static str) {
    metrics::describe_counter!(
        "apistend_limiter_fallbacks_total",
        "Decisions taken by the local fallback while the store did not answer."
    );
    metrics::counter!("apistend_limiter_fallbacks_total", "store" => store).increment(1);
}
