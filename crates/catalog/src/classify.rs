//! What an answer of a service means for a client's budget: the one classifier the Rust client,
//! its tower layer and `apistend proxy` share.
//!
//! Most services say "over the limit" with the status alone (429). Where the status is ambiguous
//! (Bitrix24's 503 is also its plain server error; its 429 is also a method's spent operating
//! time), the definition's error style names the body's error code, and only those answers have
//! their body read. Successful bodies are read only for a field the definition needs (the
//! operating-time report of a service with an operating budget).

use crate::model::{ErrorStyle, Service};

/// What an answer is, as far as the service's limits are concerned ([`Service::classify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerKind {
    /// Over the limit of a bucket: the shared bucket pauses, the call may try again after it.
    RateLimited,
    /// Too many requests in flight (MoySklad's code 1073): the call may try again once a slot
    /// frees; nothing is said of the rate.
    TooManyInFlight,
    /// The called method's operating-time budget is spent (Bitrix24's `OPERATION_TIME_LIMIT`):
    /// a wait for that method alone, not a penalty of the bucket.
    OperatingTimeSpent,
    /// Anything else: judged by its status (success, client error, server error).
    Other,
}

/// The one field read of a successful answer of a service with an operating budget: when the
/// method's budget frees up (Bitrix24's `time.operating_reset_at`, Unix seconds). Typed, so the
/// rest of the body (a page of deals) is skipped, not built.
#[derive(serde::Deserialize)]
struct OperatingReport {
    time: Option<OperatingTime>,
}

#[derive(serde::Deserialize)]
struct OperatingTime {
    operating_reset_at: Option<f64>,
}

/// The error code of an error body (Bitrix24's `error`), read alone.
#[derive(serde::Deserialize)]
struct ErrorCode {
    error: Option<serde_json::Value>,
}

impl Service {
    /// Whether [`Service::classify`] reads the body of an answer with `status`: only where the
    /// status alone is ambiguous for this service.
    fn classify_needs_body(&self, status: u16) -> bool {
        let style = self.rejection.style;
        (status == self.rejection.status
            && (style.rate_limit_code().is_some() || self.rejection.in_flight.is_some()))
            || (status == 429
                && self.operating_budget.is_some()
                && style.operating_time_code().is_some())
    }

    /// Whether judging an answer with `status` reads its body: where [`Service::classify`] does
    /// (an ambiguous status), and every success of a service with an operating budget (its
    /// [`Service::operating_reset_at`]). A proxy streams every other answer through unread.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let b24 = catalog.service(apistend_catalog::ServiceId::B24).unwrap();
    /// assert!(b24.reads_body(503) && b24.reads_body(200) && !b24.reads_body(404));
    /// let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
    /// assert!(!wb.reads_body(200) && !wb.reads_body(429));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn reads_body(&self, status: u16) -> bool {
        self.classify_needs_body(status)
            || (self.operating_budget.is_some() && (200..400).contains(&status))
    }

    /// What an answer of this service is. `body` is read only where the status alone is
    /// ambiguous for this service (Bitrix24's 503 and 429); an ambiguous status whose body
    /// carries no rate-limit code is not a rate limit (Bitrix24's 503 without
    /// `QUERY_LIMIT_EXCEEDED` is a server error).
    ///
    /// ```
    /// use apistend_catalog::{AnswerKind, Catalog, ServiceId};
    /// let catalog = Catalog::builtin()?;
    /// let b24 = catalog.service(ServiceId::B24).unwrap();
    /// let limited = br#"{"error":"QUERY_LIMIT_EXCEEDED","error_description":"Too many requests"}"#;
    /// assert_eq!(b24.classify(503, limited), AnswerKind::RateLimited);
    /// assert_eq!(b24.classify(503, br#"{"error":"INTERNAL_SERVER_ERROR"}"#), AnswerKind::Other);
    /// assert_eq!(b24.classify(429, br#"{"error":"OPERATION_TIME_LIMIT"}"#), AnswerKind::OperatingTimeSpent);
    /// let wb = catalog.service(ServiceId::WB).unwrap();
    /// assert_eq!(wb.classify(429, b""), AnswerKind::RateLimited);
    /// assert_eq!(wb.classify(503, b""), AnswerKind::Other);
    /// let ms = catalog.service(catalog.service_id("moysklad")?).unwrap();
    /// assert_eq!(ms.classify(429, br#"{"errors":[{"code":1073}]}"#), AnswerKind::TooManyInFlight);
    /// assert_eq!(ms.classify(429, br#"{"errors":[{"code":1049}]}"#), AnswerKind::RateLimited);
    /// let ym = catalog.service(catalog.service_id("ymarket")?).unwrap();
    /// let parallel = br#"{"errors":[{"message":"Hit rate limit of 4 parallel requests"}]}"#;
    /// assert_eq!(ym.classify(420, parallel), AnswerKind::TooManyInFlight);
    /// let rate = br#"{"errors":[{"message":"Hit rate limit of 1 requests per 2 minutes"}]}"#;
    /// assert_eq!(ym.classify(420, rate), AnswerKind::RateLimited);
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn classify(&self, status: u16, body: &[u8]) -> AnswerKind {
        if status == self.rejection.status
            && self
                .rejection
                .in_flight
                .as_ref()
                .is_some_and(|m| m.matches(body))
        {
            return AnswerKind::TooManyInFlight;
        }
        let code = if self.classify_needs_body(status) {
            Some(self.rejection.style.code_of(body).unwrap_or_default())
        } else {
            None
        };
        if self.is_operating_time_spent(status, code.as_deref()) {
            AnswerKind::OperatingTimeSpent
        } else if self.is_rate_limited(status, code.as_deref()) {
            AnswerKind::RateLimited
        } else {
            AnswerKind::Other
        }
    }

    /// When the called method's operating-time budget frees up (Unix seconds), as a successful
    /// answer reports it; `None` for a service without an operating budget (its body is not
    /// read) or an answer without the report.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let b24 = catalog.service(apistend_catalog::ServiceId::B24).unwrap();
    /// let body = br#"{"result":[],"time":{"operating":1.5,"operating_reset_at":1764600000}}"#;
    /// assert_eq!(b24.operating_reset_at(body), Some(1_764_600_000.0));
    /// assert_eq!(catalog.service(apistend_catalog::ServiceId::WB).unwrap().operating_reset_at(body), None);
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn operating_reset_at(&self, body: &[u8]) -> Option<f64> {
        self.operating_budget.as_ref()?;
        serde_json::from_slice::<OperatingReport>(body)
            .ok()?
            .time?
            .operating_reset_at
    }
}

impl ErrorStyle {
    /// The error code of an error body written in this style (Bitrix24's `error`), for the
    /// styles whose codes tell answers of one status apart.
    #[must_use]
    pub fn code_of(self, body: &[u8]) -> Option<String> {
        self.rate_limit_code()?;
        match serde_json::from_slice::<ErrorCode>(body).ok()?.error? {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Catalog, classify::AnswerKind, model::ServiceId};

    #[test]
    fn only_ambiguous_statuses_have_their_body_read() {
        let c = Catalog::builtin().unwrap();
        let b24 = c.service(ServiceId::B24).unwrap();
        assert!(b24.classify_needs_body(503));
        assert!(b24.classify_needs_body(429));
        assert!(!b24.classify_needs_body(200));
        // MoySklad's 429 is read for its code: 1073 (too many in flight) or a rate limit.
        let ms = c.service(c.service_id("moysklad").unwrap()).unwrap();
        assert!(ms.classify_needs_body(429) && !ms.classify_needs_body(200));
        for svc in c.services().iter().filter(|s| s.id != ServiceId::B24) {
            for status in [200, 400, 429, 500, 503] {
                assert!(
                    !svc.classify_needs_body(status) || (svc.id == ms.id && status == 429),
                    "{} {status}",
                    svc.id.as_str()
                );
            }
            // Without a body to read, a 429 is every other service's rate limit.
            assert_eq!(svc.classify(429, b"not json"), AnswerKind::RateLimited);
        }
        // A body that is no JSON, or whose code is not a string: not a rate limit.
        assert_eq!(b24.classify(503, b"<html>"), AnswerKind::Other);
        assert_eq!(b24.classify(503, br#"{"error":7}"#), AnswerKind::Other);
        assert_eq!(b24.classify(429, b""), AnswerKind::RateLimited);
    }
}
