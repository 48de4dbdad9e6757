//! Whether a request may be sent again after a failure that leaves open whether the service
//! applied it (a timeout after it was sent, a reset mid-answer, a 5xx): the one rule the client,
//! its tower stack and `apistend proxy` ask before retrying.
//!
//! RFC 9110 §9.2.2: a client or proxy MUST NOT automatically retry a request whose method is not
//! idempotent unless it knows the request's semantics are idempotent. So:
//! - `GET`, `HEAD`, `OPTIONS`, `PUT` and `DELETE` are idempotent by their method;
//! - `POST` and `PATCH` are not — except the reads these services make with `POST` (Ozon's
//!   `/v3/product/list`, WB's `/content/v2/get/cards/list`, Bitrix24's `crm.deal.get`), which the
//!   operation's own name says: its last word is one of [`READ_WORDS`].
//!
//! A definition states it per operation (`repeatable = true | false`), which wins over the
//! rule; a path no operation matches gets the rule alone. A write misjudged as a read would be
//! duplicated, a read misjudged as a write only loses a retry, so the words are few and plain.

use crate::model::{Method, Operation};

/// The last words of an operation's path that name a read, whatever its method.
pub const READ_WORDS: [&str; 14] = [
    "list",
    "get",
    "info",
    "search",
    "tree",
    "count",
    "status",
    "fields",
    "values",
    "attribute",
    "attributes",
    "current",
    "time",
    "profile",
];

/// The last words of a path that name a write even under `GET` (Bitrix24 takes any method of
/// its REST API by `GET` as well as `POST`: `GET /rest/crm.deal.add?fields[TITLE]=…`).
const WRITE_WORDS: [&str; 12] = [
    "add", "create", "update", "delete", "remove", "set", "import", "upload", "send", "cancel",
    "bind", "unbind",
];

/// The last word of `path`'s last segment that is not a parameter: `list` of
/// `/v1/actions/discounts-task/list`, `get` of `/rest/crm.deal.get`, `cancel` of
/// `/api/v3/orders/{orderId}/cancel`. Lower-cased by the caller's comparison.
fn last_word(path: &str) -> Option<&str> {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let segment = path
        .rsplit('/')
        .find(|s| !(s.is_empty() || (s.starts_with('{') && s.ends_with('}'))))?;
    segment.rsplit(['.', '-', '_']).find(|w| !w.is_empty())
}

/// Whether `method path` may be repeated by the rule alone (no definition's word on it).
///
/// ```
/// use apistend_catalog::{Method, repeatable_by_rule};
/// assert!(repeatable_by_rule(Method::Get, "/api/v3/warehouses"));
/// assert!(repeatable_by_rule(Method::Put, "/api/v3/stocks/{warehouseId}"));
/// assert!(repeatable_by_rule(Method::Post, "/v3/product/list"));
/// assert!(repeatable_by_rule(Method::Post, "/rest/crm.deal.get"));
/// assert!(!repeatable_by_rule(Method::Post, "/rest/crm.deal.add"));
/// assert!(!repeatable_by_rule(Method::Post, "/v3/product/import"));
/// assert!(!repeatable_by_rule(Method::Patch, "/api/v4/leads"));
/// assert!(!repeatable_by_rule(Method::Get, "/rest/crm.deal.add"));
/// ```
#[must_use]
pub fn repeatable_by_rule(method: Method, path: &str) -> bool {
    let word = last_word(path);
    let is = |words: &[&str]| word.is_some_and(|w| words.iter().any(|r| r.eq_ignore_ascii_case(w)));
    match method {
        Method::Get | Method::Head | Method::Options => !is(&WRITE_WORDS),
        Method::Put | Method::Delete => true,
        Method::Post | Method::Patch => is(&READ_WORDS),
    }
}

/// Whether a request of `method` to `path`, which resolved to `operation` (or to none), may be
/// sent again when it is not known whether the service applied it: the operation's own word
/// when it has one, else [`repeatable_by_rule`].
#[must_use]
pub fn repeatable(operation: Option<&Operation>, method: Method, path: &str) -> bool {
    operation.map_or_else(|| repeatable_by_rule(method, path), |o| o.repeatable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_word_skips_parameters_and_splits_names() {
        assert_eq!(last_word("/api/v3/orders/{orderId}/cancel"), Some("cancel"));
        assert_eq!(last_word("/rest/crm.deal.list"), Some("list"));
        assert_eq!(last_word("/v1/actions/discounts-task/list/"), Some("list"));
        assert_eq!(last_word("/v1/pricing_items-list?x=1"), Some("list"));
        assert_eq!(last_word("/{id}"), None);
        assert_eq!(last_word("/"), None);
    }

    #[test]
    fn writes_by_post_are_not_repeatable_reads_are() {
        for p in [
            "/content/v2/cards/upload",
            "/v2/products/stocks",
            "/v2/acts/{actorId}/runs",
            "/api/remap/1.2/entity/customerorder",
        ] {
            assert!(!repeatable_by_rule(Method::Post, p), "{p}");
        }
        for p in [
            "/content/v2/get/cards/list",
            "/v1/product/import/info",
            "/v1/description-category/attribute/values/search",
            "/rest/CRM.DEAL.GET",
        ] {
            assert!(repeatable_by_rule(Method::Post, p), "{p}");
        }
    }
}
