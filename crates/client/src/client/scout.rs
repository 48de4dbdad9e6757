//! First contact: until a bucket's first answer has reported the server's level (its tokens left
//! or its limit), one call of the process goes at a time — the scout — and the others wait for
//! its answer. A catalog's burst may be larger than the server's (5 against 2): sent all at once,
//! the difference is refused before anything could be learned; sent after the scout's answer,
//! the shared bucket has been aligned down to the server's report. It costs one round trip, once
//! per bucket, and only for a service that reports its level (the definition's `remaining`).

use std::sync::PoisonError;
use std::time::{Duration, Instant};

use apistend_catalog::RateValue;

use super::budget::Draws;
use super::core::{Core, Scouting};
use crate::error::ClientError;

/// How often a waiting call looks whether the scout's answer came.
const LOOK: Duration = Duration::from_millis(5);

/// The scout of a bucket: while it lives, the other calls to the bucket wait (until its answer
/// is reported, or it is dropped: a call that failed or was cancelled hands the role on).
pub(crate) struct Scout<'a> {
    scouting: &'a Scouting,
    key: String,
}

impl Drop for Scout<'_> {
    fn drop(&mut self) {
        let mut out = self
            .scouting
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        out.remove(&self.key);
    }
}

impl Core {
    /// Waits, up to `plan`'s ceiling (and `deadline`), until its first bucket has been reported
    /// on or this call is its scout; `None` once reported (or when the service reports nothing).
    ///
    /// # Errors
    /// [`ClientError::RateLimited`] (`refused_by: Local`) when the scout's answer does not come
    /// in time.
    pub(crate) async fn first_contact(
        &self,
        plan: &Draws<'_>,
        deadline: Option<Instant>,
    ) -> Result<Option<Scout<'_>>, ClientError> {
        let Some(key) = plan.keys.first() else {
            return Ok(None);
        };
        if !self.definition().reports(RateValue::Remaining) {
            return Ok(None);
        }
        let start = Instant::now();
        loop {
            if self.learner.heard(key) {
                return Ok(None);
            }
            {
                let mut out = self
                    .scouting
                    .0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if out.insert(key.clone()) {
                    return Ok(Some(Scout {
                        scouting: &self.scouting,
                        key: key.clone(),
                    }));
                }
            }
            self.wait_within(start, plan, deadline, LOOK).await?;
        }
    }
}
