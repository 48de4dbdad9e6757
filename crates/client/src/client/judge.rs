//! What an answer means for a call: the one place the client judges the answers the limiter let
//! through, by the catalog's classifier ([`apistend_catalog::Service::classify`]) — for
//! [`Client::send`](crate::client::RequestBuilder::send), the tower layer and `apistend proxy` alike.

use std::sync::PoisonError;
use std::time::{Duration, SystemTime};

use apistend_catalog::AnswerKind;
use http::HeaderMap;

use super::budget::{Draws, until_unix};
use super::core::Core;
use crate::error::ClientError;
use crate::hint::server_hint;

/// What the layer made of an answer, carried on the response (as an extension) to the retry
/// policy and to `send`, so that neither classifies it again. An answer without one is judged by
/// its status alone (success, client error, server error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Over the limit of the shared bucket, which now pauses for `pause`.
    RateLimited {
        /// The penalty written to the shared bucket.
        pause: Duration,
    },
    /// Too many requests in flight (MoySklad's code 1073): a slot frees when one of them is
    /// answered; the call tries again after `wait`. Nothing is said of the rate: the bucket is
    /// not penalized and the learner is not taught.
    TooManyInFlight {
        /// The server's hint, else the retry base doubled per attempt.
        wait: Duration,
    },
    /// The method's operating-time budget is spent: it frees up after `wait`.
    OperatingTimeSpent {
        /// Until the budget frees up (the last report of the method, the server's hint, or the
        /// retry base).
        wait: Duration,
        /// Whether `wait` is longer than the call may wait (its ceiling): then it is final.
        past_ceiling: bool,
    },
}

/// One answer, as the transport gave it.
pub(crate) struct Answer<'a> {
    pub(crate) status: u16,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) body: &'a [u8],
}

impl Core {
    /// Judges an answer to `plan`'s request on its `attempt`-th try: the server's report of its
    /// bucket tightens the shared one (and teaches the learner); a rate limit penalizes every
    /// group of the plan; a success of a service with an operating budget notes when the
    /// method's budget frees up; a spent budget says how long until then.
    ///
    /// # Errors
    /// A fail-closed store that cannot answer.
    pub(crate) async fn judge(
        &self,
        plan: &Draws<'_>,
        answer: &Answer<'_>,
        attempt: u32,
    ) -> Result<Option<Judged>, ClientError> {
        self.observe(plan, answer.status, answer.headers).await?;
        let def = self.definition();
        match def.classify(answer.status, answer.body) {
            AnswerKind::RateLimited => {
                let pause = self
                    .penalize(plan, answer.status, answer.headers, attempt)
                    .await?;
                Ok(Some(Judged::RateLimited { pause }))
            }
            AnswerKind::TooManyInFlight => {
                let wait = server_hint(def, answer.headers, SystemTime::now())
                    .unwrap_or_else(|| super::budget::backoff(self.config().retry_base, attempt));
                Ok(Some(Judged::TooManyInFlight { wait }))
            }
            AnswerKind::OperatingTimeSpent => {
                let reset = self
                    .operating_reset
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&plan.op_path)
                    .copied();
                let wait = reset
                    .map(until_unix)
                    .or_else(|| server_hint(def, answer.headers, SystemTime::now()))
                    .unwrap_or(self.config().retry_base);
                Ok(Some(Judged::OperatingTimeSpent {
                    wait,
                    past_ceiling: wait > plan.ceiling,
                }))
            }
            _ => {
                if (200..400).contains(&answer.status)
                    && let Some(at) = def.operating_reset_at(answer.body)
                {
                    let mut resets = self
                        .operating_reset
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    // The method's key is allocated once, not on every answer.
                    match resets.get_mut(&plan.op_path) {
                        Some(known) => *known = at,
                        None => {
                            resets.insert(plan.op_path.clone(), at);
                        }
                    }
                }
                Ok(None)
            }
        }
    }
}
