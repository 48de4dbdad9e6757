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
    /// The IETF `RateLimit-Policy` field (draft-ietf-httpapi-ratelimit-headers, draft 12): the
    /// bucket's quota and window, `"default";q=LIMIT;w=WINDOW_SECONDS`.
    IetfPolicy,
    /// The IETF `RateLimit` field: tokens left and seconds until full,
    /// `"default";r=REMAINING;t=RESET_SECONDS`.
    IetfLimit,
}

/// The form of a rate-limit header's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Form {
    #[default]
    Number,
    /// Seconds from now, written as an HTTP date.
    Date,
    /// An IETF structured field of two numbers: `RateLimit-Policy`'s `q` and `w`.
    Policy,
    /// `RateLimit`'s `r` and `t`.
    Limit,
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

/// Up to nine rate-limit headers: names and whole numbers, dates as seconds from now, or the IETF
/// fields' two numbers (no allocation: this is on every answer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateHeaders {
    items: [(&'static str, u64, u64, Form); 9],
    len: usize,
}

impl RateHeaders {
    fn put(&mut self, name: &'static str, a: u64, b: u64, form: Form) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = (name, a, b, form);
            self.len += 1;
        }
    }

    pub(crate) fn push(&mut self, name: &'static str, value: u64, date: bool) {
        let form = if date { Form::Date } else { Form::Number };
        self.put(name, value, 0, form);
    }

    /// An IETF field: `RateLimit-Policy` (`policy`: quota and window seconds) or `RateLimit`
    /// (tokens left and seconds until full).
    pub(crate) fn push_ietf(&mut self, name: &'static str, a: u64, b: u64, policy: bool) {
        let form = if policy { Form::Policy } else { Form::Limit };
        self.put(name, a, b, form);
    }

    fn of(&self, form: Form) -> impl Iterator<Item = (&'static str, u64, u64)> + '_ {
        self.items
            .iter()
            .take(self.len)
            .filter(move |i| i.3 == form)
            .map(|(n, a, b, _)| (*n, *a, *b))
    }

    /// The numeric headers, in the order the service sends them.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.of(Form::Number).map(|(n, v, _)| (n, v))
    }

    /// The date headers: names and whole seconds from now (the sender writes the HTTP date).
    pub fn dates(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.of(Form::Date).map(|(n, v, _)| (n, v))
    }

    /// The IETF fields, each with its value as the draft writes it (a policy named `default`):
    /// `"default";q=10;w=1` and `"default";r=3;t=1`.
    pub fn structured(&self) -> impl Iterator<Item = (&'static str, String)> + '_ {
        let policy = self
            .of(Form::Policy)
            .map(|(n, q, w)| (n, format!("\"default\";q={q};w={w}")));
        let limit = self
            .of(Form::Limit)
            .map(|(n, r, t)| (n, format!("\"default\";r={r};t={t}")));
        policy.chain(limit)
    }

    /// The value of numeric header `name`, if sent.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// The most headers a definition may name (the size of [`RateHeaders`], less the sandbox's own).
pub(crate) const MAX_RATE_HEADERS: usize = 8;

/// The sandbox's own hint of a pause, for services that give none.
pub const X_APISTEND_RETRY_AFTER: &str = "x-apistend-retry-after";

/// The integer parameter `key` of an IETF structured field's first list member
/// (`"default";q=100;w=10` → `q` = 100). Hand-read: the draft's numbers are integer parameters of
/// one item, and nothing else of the field (the quota unit, the partition key) is read — a full
/// RFC 8941 parser (the sfv crate) would be a dependency for two integers.
///
/// ```
/// use apistend_catalog::ietf_param;
/// assert_eq!(ietf_param(r#""default";q=100;w=10"#, "w"), Some(10));
/// assert_eq!(ietf_param(r#""a";r=5;t=2, "b";r=1"#, "r"), Some(5));
/// assert_eq!(ietf_param(r#""a";qu="requests";q=7"#, "q"), Some(7));
/// assert_eq!(ietf_param("q=-1", "q"), None);
/// ```
#[must_use]
pub fn ietf_param(field: &str, key: &str) -> Option<u64> {
    let first = field.split(',').next()?;
    first.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim() == key).then(|| v.trim().parse().ok()).flatten()
    })
}
