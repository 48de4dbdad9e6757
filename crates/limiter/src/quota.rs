//! What a bucket allows: a burst and an emission interval, and how it is enforced.

use std::fmt;
use std::time::Duration;

/// The largest burst a quota may have. Larger buckets are a configuration mistake here (the
/// fixed-window state packs its count into 20 bits).
pub const MAX_BURST: u32 = (1 << 20) - 1;

/// The longest `burst × interval` a quota may span, in microseconds (about 142 years), so that
/// every time computation stays exact in a Lua double inside Redis.
pub(crate) const MAX_SPAN_US: u64 = 1 << 52;

/// How a quota is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Algorithm {
    /// Generic cell rate algorithm: a token bucket with continuous refill (the default).
    #[default]
    Gcra,
    /// A fixed window of `burst` requests per `burst × interval`, opened by the first request —
    /// the design the WB decision record started with. Allows up to twice the burst around a
    /// window edge; offered for emulation and comparison.
    FixedWindow,
}

impl Algorithm {
    /// The stable name used in catalogs and metrics (`gcra`, `fixed_window`).
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Gcra => "gcra",
            Algorithm::FixedWindow => "fixed_window",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = QuotaError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gcra" => Ok(Algorithm::Gcra),
            "fixed_window" | "fixed-window" => Ok(Algorithm::FixedWindow),
            other => Err(QuotaError::UnknownAlgorithm(other.to_owned())),
        }
    }
}

/// Why a quota could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuotaError {
    /// A burst (or a limit) of zero admits nothing.
    #[error("a quota needs a burst of at least 1 request; use a positive number")]
    ZeroBurst,
    /// An interval or period of zero would mean an infinite rate.
    #[error("a quota needs an interval of at least 1 µs; use a positive duration")]
    ZeroInterval,
    /// The burst is larger than the engine supports.
    #[error("burst {0} is larger than the supported maximum of {MAX_BURST}")]
    BurstTooLarge(u64),
    /// `burst × interval` does not fit the engine's time arithmetic.
    #[error(
        "burst × interval spans more than 142 years; use a shorter interval or a smaller burst"
    )]
    Overflow,
    /// WB's four numbers disagree: the interval should be the period divided by the limit.
    #[error(
        "interval {interval:?} is not period {period:?} / limit {limit}; check the numbers of the limit table"
    )]
    Inconsistent {
        /// The stated period.
        period: Duration,
        /// The stated number of requests per period.
        limit: u32,
        /// The stated interval.
        interval: Duration,
    },
    /// An algorithm name that is neither `gcra` nor `fixed_window`.
    #[error("unknown algorithm {0:?}; expected \"gcra\" or \"fixed_window\"")]
    UnknownAlgorithm(String),
}

/// A bucket's capacity and refill: at most `burst` tokens, one more every `interval`.
///
/// ```
/// use std::time::Duration;
/// use apistend_limiter::Quota;
///
/// // Bitrix24: a leaky bucket of 50 requests draining at 2 per second.
/// let b24 = Quota::leaky_bucket(50, 2)?;
/// assert_eq!((b24.burst(), b24.interval()), (50, Duration::from_millis(500)));
/// // "Максимум 3 запроса за 30 секунд"
/// let ping = Quota::per_period(3, Duration::from_secs(30))?;
/// assert_eq!(ping.interval(), Duration::from_secs(10));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Quota {
    burst: u32,
    interval_us: u64,
    algorithm: Algorithm,
}

impl Quota {
    /// A bucket of `burst` tokens that regains one every `interval`.
    ///
    /// # Errors
    /// [`QuotaError`] for a zero burst or interval, a burst above [`MAX_BURST`], or a span
    /// (`burst × interval`) the engine cannot represent. Sub-microsecond parts of the interval are
    /// rounded up, never down, so the quota is never looser than stated.
    pub fn new(burst: u32, interval: Duration) -> Result<Self, QuotaError> {
        if burst == 0 {
            return Err(QuotaError::ZeroBurst);
        }
        if burst > MAX_BURST {
            return Err(QuotaError::BurstTooLarge(u64::from(burst)));
        }
        let interval_us = ceil_micros(interval).ok_or(QuotaError::Overflow)?;
        if interval_us == 0 {
            return Err(QuotaError::ZeroInterval);
        }
        match interval_us.checked_mul(u64::from(burst)) {
            Some(span) if span <= MAX_SPAN_US => Ok(Self {
                burst,
                interval_us,
                algorithm: Algorithm::Gcra,
            }),
            _ => Err(QuotaError::Overflow),
        }
    }

    /// `count` requests per `period`, all of which may be sent at once (burst = count).
    ///
    /// # Errors
    /// As [`Quota::new`].
    pub fn per_period(count: u32, period: Duration) -> Result<Self, QuotaError> {
        if count == 0 {
            return Err(QuotaError::ZeroBurst);
        }
        let period_us = ceil_micros(period).ok_or(QuotaError::Overflow)?;
        if period_us == 0 {
            return Err(QuotaError::ZeroInterval);
        }
        Self::new(
            count,
            Duration::from_micros(period_us.div_ceil(u64::from(count))),
        )
    }

    /// WB's four numbers, "period | limit | interval | burst": a bucket of `burst` tokens
    /// regaining one every `interval`.
    ///
    /// # Errors
    /// As [`Quota::new`], and [`QuotaError::Inconsistent`] when `interval` is more than 1 % away
    /// from `period / limit`.
    pub fn wb(
        period: Duration,
        limit: u32,
        interval: Duration,
        burst: u32,
    ) -> Result<Self, QuotaError> {
        if limit == 0 {
            return Err(QuotaError::ZeroBurst);
        }
        let expected = period.as_secs_f64() / f64::from(limit);
        let stated = interval.as_secs_f64();
        if expected <= 0.0 || ((stated - expected) / expected).abs() > 0.01 {
            return Err(QuotaError::Inconsistent {
                period,
                limit,
                interval,
            });
        }
        Self::new(burst, interval)
    }

    /// A leaky bucket "X requests, Y per second": burst X, interval 1/Y s.
    ///
    /// # Errors
    /// As [`Quota::new`].
    pub fn leaky_bucket(capacity: u32, per_second: u32) -> Result<Self, QuotaError> {
        if per_second == 0 {
            return Err(QuotaError::ZeroInterval);
        }
        Self::new(
            capacity,
            Duration::from_micros(1_000_000u64.div_ceil(u64::from(per_second))),
        )
    }

    /// The same numbers, enforced by `algorithm`.
    #[must_use]
    pub fn with_algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// The bucket capacity: how many requests may be sent at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The emission interval: one token comes back every `interval`.
    pub fn interval(&self) -> Duration {
        Duration::from_micros(self.interval_us)
    }

    /// The interval in whole microseconds.
    pub fn interval_micros(&self) -> u64 {
        self.interval_us
    }

    /// How the quota is enforced.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// `burst × interval`: the time an empty bucket takes to fill (and a fixed window's length).
    pub fn span(&self) -> Duration {
        Duration::from_micros(self.span_micros())
    }

    pub(crate) fn span_micros(&self) -> u64 {
        self.interval_us * u64::from(self.burst)
    }

    /// Requests per second this quota sustains in the long run.
    pub fn rate_per_second(&self) -> f64 {
        1_000_000.0 / self.interval_us as f64
    }
}

fn ceil_micros(d: Duration) -> Option<u64> {
    let us = u64::try_from(d.as_micros()).ok()?;
    if d.subsec_nanos().is_multiple_of(1_000) {
        Some(us)
    } else {
        us.checked_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_from_each_notation() {
        let wb = Quota::wb(Duration::from_secs(60), 300, Duration::from_millis(200), 20).unwrap();
        assert_eq!((wb.burst(), wb.interval_micros()), (20, 200_000));
        let fb = Quota::wb(Duration::from_secs(1), 3, Duration::from_millis(333), 6).unwrap();
        assert_eq!(fb.burst(), 6);
        assert_eq!(
            Quota::per_period(3, Duration::from_secs(1))
                .unwrap()
                .interval_micros(),
            333_334
        );
        assert_eq!(
            Quota::leaky_bucket(250, 5).unwrap().interval(),
            Duration::from_millis(200)
        );
    }

    #[test]
    fn rejects_nonsense_without_panicking() {
        assert_eq!(
            Quota::new(0, Duration::from_secs(1)),
            Err(QuotaError::ZeroBurst)
        );
        assert_eq!(Quota::new(1, Duration::ZERO), Err(QuotaError::ZeroInterval));
        assert_eq!(
            Quota::new(1, Duration::from_nanos(1))
                .unwrap()
                .interval_micros(),
            1
        );
        assert_eq!(
            Quota::new(MAX_BURST + 1, Duration::from_secs(1)),
            Err(QuotaError::BurstTooLarge(1 << 20))
        );
        assert_eq!(Quota::new(1000, Duration::MAX), Err(QuotaError::Overflow));
        assert_eq!(
            Quota::new(1_000_000, Duration::from_secs(1 << 40)),
            Err(QuotaError::Overflow)
        );
        assert_eq!(
            Quota::per_period(0, Duration::from_secs(1)),
            Err(QuotaError::ZeroBurst)
        );
        assert_eq!(Quota::leaky_bucket(5, 0), Err(QuotaError::ZeroInterval));
        assert!(matches!(
            Quota::wb(Duration::from_secs(60), 300, Duration::from_secs(1), 20),
            Err(QuotaError::Inconsistent { .. })
        ));
        assert_eq!(
            Quota::wb(Duration::from_secs(60), 0, Duration::from_secs(1), 20),
            Err(QuotaError::ZeroBurst)
        );
        assert!("sliding".parse::<Algorithm>().is_err());
        assert_eq!(
            "fixed_window".parse::<Algorithm>(),
            Ok(Algorithm::FixedWindow)
        );
    }
}
