//! Time, injected: the engine never reads a clock of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch.
pub type Timestamp = u64;

/// A source of the current time in microseconds since the Unix epoch.
///
/// Tests use [`ManualClock`] and advance it instead of sleeping; production uses [`SystemClock`].
pub trait Clock: Send + Sync + 'static {
    /// The current time in microseconds since the Unix epoch. Must never go backwards.
    fn now(&self) -> Timestamp;
}

/// Wall-clock time that never goes backwards: the Unix time read once at creation, advanced by a
/// monotonic [`Instant`]. Processes on one machine (or machines with synchronized clocks) agree on
/// it, which the Redis store's client-time mode relies on.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    base_unix_us: u64,
    base: Instant,
}

impl SystemClock {
    /// A clock anchored at the current system time.
    pub fn new() -> Self {
        let base_unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 2))
            .unwrap_or(0);
        Self {
            base_unix_us,
            base: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Timestamp {
        let elapsed = u64::try_from(self.base.elapsed().as_micros()).unwrap_or(u64::MAX / 2);
        self.base_unix_us.saturating_add(elapsed)
    }
}

/// A clock that moves only when told to. Clones share one time.
///
/// ```
/// use std::time::Duration;
/// use apistend_limiter::{Clock, ManualClock};
/// let clock = ManualClock::new();
/// let t0 = clock.now();
/// clock.advance(Duration::from_millis(5));
/// assert_eq!(clock.now() - t0, 5_000);
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// Starts at 2026-01-01T00:00:00Z, so timestamps look like real ones.
    pub fn new() -> Self {
        Self::starting_at(1_767_225_600_000_000)
    }

    /// Starts at `now` microseconds since the Unix epoch.
    pub fn starting_at(now: Timestamp) -> Self {
        Self(Arc::new(AtomicU64::new(now)))
    }

    /// Moves time forward by `d`.
    pub fn advance(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 2);
        self.0.fetch_add(us, Ordering::SeqCst);
    }

    /// Moves time forward by `us` microseconds.
    pub fn advance_micros(&self, us: u64) {
        self.0.fetch_add(us, Ordering::SeqCst);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Timestamp {
        self.0.load(Ordering::SeqCst)
    }
}

impl Clock for Arc<dyn Clock> {
    #[inline]
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

/// Whole microseconds of `d` (a quarter of `u64` beyond: no sum of two overflows).
pub(crate) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_is_unix_time_and_monotonic() {
        let c = SystemClock::new();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        assert!(
            a > 1_700_000_000_000_000,
            "{a} should be microseconds since 1970"
        );
    }
}
