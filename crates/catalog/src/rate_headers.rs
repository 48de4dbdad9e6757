//! The rate-limit headers a service sends, as data: each is a name, a value taken from the
//! bucket's decision, and when it is sent (WB's `X-Ratelimit-Remaining` on every answer but a
//! 429; MoySklad's `X-Lognex-Retry-After` on a rejection).

use apistend_limiter::{Decision, Quota};
use serde::{Deserialize, Serialize};

use crate::model::Service;

/// Which number of the bucket's decision a header carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RateValue {
    /// Tokens left.
    Remaining,
    /// The bucket's capacity.
    Limit,
    /// Whole seconds until the next request is allowed (at least 1).
    RetryAfterSecs,
    /// Milliseconds until the next request is allowed.
    RetryAfterMs,
    /// Whole seconds until the bucket is full again.
    ResetSecs,
    /// Milliseconds until the bucket is full again.
    ResetMs,
    /// The moment the bucket is full again, as an HTTP date (Yandex Market's
    /// `X-RateLimit-Resource-Until`).
    ResetDate,
    /// The bucket's window in milliseconds: how long its capacity takes to come back from empty
    /// (MoySklad's `X-Lognex-Retry-TimeInterval`). With the limit, it tells a client the rate.
    WindowMs,
}

/// When a header is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum When {
    /// On every answer.
    #[default]
    Always,
    /// On every answer but the rejection.
    Allowed,
    /// On the rejection only.
    Rejected,
}

/// One rate-limit header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateHeader {
    /// Its name, lower-case.
    pub name: &'static str,
    /// A number of the decision, or a fixed value (MoySklad's 3000 ms window).
    pub value: Result<RateValue, u64>,
    /// When it is sent.
    pub on: When,
}

/// Up to six rate-limit headers: names and whole numbers, or dates as seconds from now (no
/// allocation: this is on every answer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateHeaders {
    items: [(&'static str, u64, bool); 6],
    len: usize,
}

impl RateHeaders {
    fn push(&mut self, name: &'static str, value: u64, date: bool) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = (name, value, date);
            self.len += 1;
        }
    }

    /// The numeric headers, in the order the service sends them.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.items
            .iter()
            .take(self.len)
            .filter(|(_, _, date)| !date)
            .map(|(n, v, _)| (*n, *v))
    }

    /// The date headers: names and whole seconds from now (the sender writes the HTTP date).
    pub fn dates(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.items
            .iter()
            .take(self.len)
            .filter(|(_, _, date)| *date)
            .map(|(n, v, _)| (*n, *v))
    }

    /// The value of numeric header `name`, if sent.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// The most headers a definition may name (the size of [`RateHeaders`], less the sandbox's own).
pub(crate) const MAX_RATE_HEADERS: usize = 5;

/// The sandbox's own hint of a pause, for services that give none.
pub const X_APISTEND_RETRY_AFTER: &str = "x-apistend-retry-after";

impl Service {
    /// The rate-limit headers the real service sends with an answer, given the bucket's decision
    /// and its quota: `rejected` for the over-the-limit answer. Where the definition asks for it
    /// (services that give no pause on their rejection), [`X_APISTEND_RETRY_AFTER`] carries the
    /// pause.
    pub fn rate_headers(&self, decision: &Decision, quota: &Quota, rejected: bool) -> RateHeaders {
        let mut h = RateHeaders::default();
        for rule in &self.headers {
            let sent = match rule.on {
                When::Always => true,
                When::Allowed => !rejected,
                When::Rejected => rejected,
            };
            if sent {
                match rule.value {
                    Ok(RateValue::ResetDate) => {
                        h.push(rule.name, decision.reset_after_secs(), true);
                    }
                    Ok(RateValue::WindowMs) => h.push(rule.name, window_ms(quota), false),
                    Ok(v) => h.push(rule.name, value(v, decision), false),
                    Err(fixed) => h.push(rule.name, fixed, false),
                }
            }
        }
        if rejected && self.apistend_retry_after {
            h.push(
                X_APISTEND_RETRY_AFTER,
                decision.retry_after_secs().max(1),
                false,
            );
        }
        h
    }
}

fn value(v: RateValue, d: &Decision) -> u64 {
    let ms = |t: std::time::Duration| u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
    match v {
        RateValue::Remaining => u64::from(d.remaining),
        RateValue::Limit => u64::from(d.limit),
        RateValue::RetryAfterSecs => d.retry_after_secs().max(1),
        RateValue::RetryAfterMs => ms(d.retry_after),
        RateValue::ResetSecs | RateValue::ResetDate => d.reset_after_secs(),
        RateValue::ResetMs => ms(d.reset_after),
        // Not a number of the decision: `rate_headers` writes it from the quota.
        RateValue::WindowMs => 0,
    }
}

/// A quota's window (burst × interval) in whole milliseconds, rounded: 45 per 3 s is 3000.
fn window_ms(q: &Quota) -> u64 {
    let window = q.interval().saturating_mul(q.burst());
    u64::try_from(window.as_micros().saturating_add(500) / 1000).unwrap_or(u64::MAX)
}
