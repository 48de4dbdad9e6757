//! The job-level ladder: when a scheduled job's call still ends rate-limited, run the job again
//! later, each time later, until a run succeeds.

use std::time::Duration;

use crate::error::ClientError;

/// Next-run delays that step up on each rate-limited run and reset on success.
///
/// ```
/// use std::time::Duration;
/// use apistend_client::{ClientError, Ladder, RefusedBy};
/// let mut ladder = Ladder::new(vec![Duration::from_secs(60), Duration::from_secs(300)]);
/// let limited = ClientError::RateLimited { retry_after: Duration::from_secs(1), refused_by: RefusedBy::Server };
/// assert_eq!(ladder.next_run::<()>(&Err(limited)), Some(Duration::from_secs(60)));
/// let limited = ClientError::RateLimited { retry_after: Duration::from_secs(1), refused_by: RefusedBy::Server };
/// assert_eq!(ladder.next_run::<()>(&Err(limited)), Some(Duration::from_secs(300)));
/// assert_eq!(ladder.next_run(&Ok(())), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ladder {
    steps: Vec<Duration>,
    level: usize,
}

impl Default for Ladder {
    /// 1, 5, 15 and 60 minutes.
    fn default() -> Self {
        Self::new(
            [1, 5, 15, 60]
                .into_iter()
                .map(|m| Duration::from_secs(m * 60))
                .collect(),
        )
    }
}

impl Ladder {
    /// A ladder of `steps`; the last one repeats.
    pub fn new(steps: Vec<Duration>) -> Self {
        Self { steps, level: 0 }
    }

    /// After a run: `Some(delay)` when it ended rate-limited (the delay also never undercuts the
    /// error's `retry_after`), `None` otherwise; success resets the ladder.
    pub fn next_run<T>(&mut self, result: &Result<T, ClientError>) -> Option<Duration> {
        match result {
            Ok(_) => {
                self.level = 0;
                None
            }
            Err(e) if e.is_rate_limited() => {
                let step = self
                    .steps
                    .get(self.level)
                    .or_else(|| self.steps.last())
                    .copied()
                    .unwrap_or_default();
                self.level = (self.level + 1).min(self.steps.len().saturating_sub(1));
                Some(step.max(e.retry_after().unwrap_or_default()))
            }
            Err(_) => None,
        }
    }

    /// The current rung (0 after a success).
    pub fn level(&self) -> usize {
        self.level
    }
}
