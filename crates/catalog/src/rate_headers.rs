//! The rate-limit headers a service sends, as data: each is a name, a value taken from the
//! bucket's decision, and when it is sent (WB's `X-Ratelimit-Remaining` on every answer but a
//! 429; MoySklad's `X-Lognex-Retry-After` on a rejection).

use serde::{Deserialize, Serialize};

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
    pub(crate) fn push(&mut self, name: &'static str, value: u64, date: bool) {
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
