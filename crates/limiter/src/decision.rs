//! What a bucket answers.

use std::time::Duration;

/// The answer of a bucket to one request: the figures a rate-limit header needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decision {
    /// Whether the tokens were taken.
    pub allowed: bool,
    /// The bucket capacity (the quota's burst).
    pub limit: u32,
    /// Whole tokens left now (after this request, when allowed).
    pub remaining: u32,
    /// Time until this request would be allowed; zero when it was.
    pub retry_after: Duration,
    /// Time until the bucket is full again.
    pub reset_after: Duration,
}

impl Decision {
    pub(crate) fn from_micros(
        allowed: bool,
        limit: u32,
        remaining: u64,
        retry_us: u64,
        reset_us: u64,
    ) -> Self {
        Self {
            allowed,
            limit,
            remaining: u32::try_from(remaining).unwrap_or(u32::MAX).min(limit),
            retry_after: Duration::from_micros(if allowed { 0 } else { retry_us }),
            reset_after: Duration::from_micros(reset_us),
        }
    }

    /// [`retry_after`](Self::retry_after) in whole seconds, rounded **up**: a client that waits this
    /// long is then allowed.
    pub fn retry_after_secs(&self) -> u64 {
        ceil_secs(self.retry_after)
    }

    /// [`reset_after`](Self::reset_after) in whole seconds, rounded up.
    pub fn reset_after_secs(&self) -> u64 {
        ceil_secs(self.reset_after)
    }

    /// The denial an exceedance of `quota` would have given at this decision's moment, for `n`
    /// tokens: the bucket empty. GCRA: the next `n` tokens in `n` intervals, full again in
    /// `burst × interval`; a fixed window: both at the window's end (this decision's reset).
    /// The sandbox answers its forced `rate_limit` scenario with it, so that the scenario's
    /// headers are those of a real 429.
    ///
    /// ```
    /// use std::time::Duration;
    /// use apistend_limiter::{ManualClock, MemoryStore, Quota};
    /// let q = Quota::new(20, Duration::from_millis(200))?;
    /// let store = MemoryStore::with_clock(ManualClock::new());
    /// let allowed = store.acquire("k", &q, 1)?;
    /// let denied = allowed.exceeded(&q, 1);
    /// assert!(allowed.allowed && !denied.allowed);
    /// assert_eq!(
    ///     (denied.remaining, denied.retry_after, denied.reset_after),
    ///     (0, Duration::from_millis(200), Duration::from_secs(4))
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn exceeded(&self, quota: &crate::quota::Quota, n: u32) -> Decision {
        let (retry_after, reset_after) = match quota.algorithm() {
            crate::quota::Algorithm::FixedWindow => (self.reset_after, self.reset_after),
            _ => (quota.interval() * n.max(1), quota.span()),
        };
        Decision {
            allowed: false,
            limit: self.limit,
            remaining: 0,
            retry_after,
            reset_after,
        }
    }

    /// `Ok(self)` when allowed, otherwise the denial as an error.
    ///
    /// # Errors
    /// [`RateLimited`] when the request was not allowed.
    pub fn into_result(self) -> Result<Decision, RateLimited> {
        if self.allowed {
            Ok(self)
        } else {
            Err(RateLimited(self))
        }
    }
}

/// A denied [`Decision`], as an error for `?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("rate limited: retry in {:?} (bucket of {} tokens)", .0.retry_after, .0.limit)]
pub struct RateLimited(pub Decision);

impl RateLimited {
    /// How long to wait before the request can be allowed.
    pub fn retry_after(&self) -> Duration {
        self.0.retry_after
    }
}

/// Whole seconds, rounded up.
pub(crate) fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_seconds_round_up() {
        let d = Decision::from_micros(false, 5, 0, 1_000_001, 2_000_000);
        assert_eq!(d.retry_after_secs(), 2);
        assert_eq!(d.reset_after_secs(), 2);
        assert_eq!(
            Decision::from_micros(true, 5, 4, 9, 1).retry_after_secs(),
            0
        );
        let err = d.into_result().unwrap_err();
        assert_eq!(err.retry_after(), Duration::from_micros(1_000_001));
    }
}
