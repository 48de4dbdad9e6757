//! One emulated service, as its definition makes it.

use apistend_limiter::Quota;

use super::credential::CredentialChannel;
use super::ids::ServiceId;
use super::limits::{InFlightLimit, LimitGroup, Lockout, OperatingBudget, Plan};
use super::operation::Operation;
use super::responses::{AnswerSource, ErrorStyle, Rejection};

/// A default latency: every answer waits `base_ms` unless the request says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatencyProfile {
    /// Milliseconds added to every answer.
    pub base_ms: u32,
}

/// One emulated service.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Service {
    /// Its id.
    pub id: ServiceId,
    /// Its human name.
    pub name: String,
    /// Path prefix in the sandbox (`/wb`).
    pub prefix: &'static str,
    /// `Content-Type` of its successful JSON answers.
    pub content_type: &'static str,
    /// Channels a real client uses for its credential, besides [`CredentialChannel::MockKey`].
    pub credentials: Vec<CredentialChannel>,
    /// The answer over the limit.
    pub rejection: Rejection,
    /// Its error body shape (for 401, 404 and scenarios too).
    pub errors: ErrorStyle,
    /// The rate-limit headers it sends.
    pub headers: Vec<crate::rate_headers::RateHeader>,
    /// Whether its rejection carries `X-APIStend-Retry-After` (for services that send no pause).
    pub apistend_retry_after: bool,
    /// Error bodies by kind, for [`ErrorStyle::Template`].
    pub error_templates: crate::templates::Templates,
    /// Its lockout after repeated violations.
    pub lockout: Option<Lockout>,
    /// Its concurrency limits.
    pub in_flight: Vec<InFlightLimit>,
    /// Whether operation paths match whatever their case (Bitrix24: `crm.deal.Get` is
    /// `crm.deal.get`); the sandbox lower-cases them.
    pub case_insensitive_paths: bool,
    /// Default latency.
    pub latency: LatencyProfile,
    /// Its limit groups.
    pub groups: Vec<LimitGroup>,
    /// Its operations.
    pub operations: Vec<Operation>,
    /// Groups that requests matching no operation draw from (the token of a 404 is spent too).
    pub fallback_groups: Vec<usize>,
    /// Bitrix24's operating-time budget.
    pub operating_budget: Option<OperatingBudget>,
    /// Bitrix24's most nested calls per `batch`.
    pub batch_max: Option<u32>,
    /// Where its successful answers come from.
    pub answers: AnswerSource,
    /// The embedded OpenAPI examples that answer what `answers` does not (by name).
    pub examples: Option<String>,
    /// The embedded request rules its requests are checked by (by name): its definition's
    /// `requests`, else its `examples`.
    pub requests: Option<String>,
    /// A user's OpenAPI document (its definition's `openapi`, resolved): the examples and
    /// schemas that answer its operations and the rules that check their requests, read by the
    /// sandbox at start, where a built-in names embedded ones.
    pub openapi: Option<std::path::PathBuf>,
    /// Whether a missing required body counts as `{}` (Ozon) rather than a 400.
    pub empty_body_is_empty_object: bool,
    /// The hosts of the real service, for services with several (WB), short names first: the
    /// sandbox accepts `/{prefix}/{short}/…` as the base URL of that host.
    pub hosts: Vec<String>,
    /// Names a client may address it by besides `hosts`: exact or `*.suffix` (see
    /// [`crate::Catalog::by_hostname`]).
    pub hostnames: Vec<String>,
    /// Named quotas an override file selects (`plan = "enterprise"`).
    pub plans: Vec<Plan>,
    /// The collections it keeps per sandbox, which its operations' [`Binding`]s point into.
    ///
    /// [`Binding`]: super::operation::Binding
    pub resources: Vec<super::resource::Resource>,
    /// The tokens it issues, when it has a token endpoint (amoCRM's OAuth 2.0).
    pub token: Option<super::token::TokenEndpoint>,
    /// Headers every request must carry (MoySklad's `Accept-Encoding: gzip`).
    pub requires: Vec<super::requirement::HeaderRequirement>,
    /// The largest request body it takes, in bytes, where its operations do not say (MoySklad's
    /// 20 MB); the sandbox's own limit when absent.
    pub max_body: Option<u64>,
    /// The largest of `max_body` and its operations' (made at load): a request's body is read
    /// up to it, and then held to its operation's own.
    pub largest_body: Option<u64>,
    /// The most items any list of a request's JSON body holds (MoySklad's 1 000), checked with
    /// the request's validation; more is its `too_large` (413).
    pub max_array_items: Option<u32>,
    /// How its server decodes a JSON body (WB's `null` anywhere, as Go's decoder reads it).
    pub json: super::json::JsonReading,
}

impl Service {
    /// The largest request body `op` takes (a request of no operation: the service's), in
    /// bytes, when the definition says.
    ///
    /// ```
    /// # use apistend_catalog::{Catalog, Method};
    /// let catalog = Catalog::builtin()?;
    /// let wb = catalog.service(catalog.service_id("wb")?).unwrap();
    /// let upload = catalog.resolve(wb.id, Method::Post, "/content/v2/cards/upload", None);
    /// assert_eq!(wb.body_limit(upload.unwrap().operation), Some(10 << 20));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn body_limit(&self, op: Option<&super::operation::Operation>) -> Option<u64> {
        op.and_then(|o| o.max_body).or(self.max_body)
    }

    /// Whether the real service answers at `host` (a name of its `hosts`, or of its
    /// `hostnames`, exact or `*.suffix`; any case).
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let amo = catalog.service(apistend_catalog::ServiceId::new("amocrm")).unwrap();
    /// assert!(amo.names_host("example.amocrm.ru"));
    /// assert!(!amo.names_host("amocrm.ru.example.org"));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn names_host(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.hosts
            .iter()
            .chain(&self.hostnames)
            .any(|p| match p.strip_prefix('*') {
                Some(suffix) => host.len() > suffix.len() && host.ends_with(suffix),
                None => *p == host,
            })
    }

    /// The headers a real client of this service sends to present `key`: its first credential
    /// channel's ([`CredentialChannel::headers`]); none when that channel is in the path or
    /// the query.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let ozon = catalog.service(apistend_catalog::ServiceId::OZON).unwrap();
    /// assert_eq!(ozon.credential_headers("k")[1], ("Api-Key", "k".to_owned()));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn credential_headers(&self, key: &str) -> Vec<(&'static str, String)> {
        self.credentials
            .first()
            .map_or_else(Vec::new, |c| c.headers(key))
    }

    /// Whether an answer is this service's "over the limit": a 429, or its own rejection's
    /// status with its rejection's error code. `error` is the body's error code when the caller
    /// read the body; `None` judges by the status alone (a layer that reads no bodies).
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let b24 = catalog.service(apistend_catalog::ServiceId::B24).unwrap();
    /// assert!(b24.is_rate_limited(503, Some("QUERY_LIMIT_EXCEEDED")));
    /// assert!(!b24.is_rate_limited(503, Some("INTERNAL_SERVER_ERROR")));
    /// assert!(b24.is_rate_limited(503, None));
    /// assert!(!catalog.service(apistend_catalog::ServiceId::WB).unwrap().is_rate_limited(503, None));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn is_rate_limited(&self, status: u16, error: Option<&str>) -> bool {
        status == 429
            || (status == self.rejection.status
                && match (self.rejection.style.rate_limit_code(), error) {
                    (Some(code), Some(e)) => e == code,
                    _ => true,
                })
    }

    /// The tokens left that an answer reports in the header the definition names for them
    /// (WB's `X-Ratelimit-Remaining`, MoySklad's `X-RateLimit-Remaining`), read with `header`
    /// (a lookup by lower-case name); `None` when the service sends none or it is not a number.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
    /// let headers = |name: &str| (name == "x-ratelimit-remaining").then_some("3");
    /// assert_eq!(wb.reported_remaining(headers), Some(3));
    /// let b24 = catalog.service(apistend_catalog::ServiceId::B24).unwrap();
    /// assert_eq!(b24.reported_remaining(headers), None, "Bitrix24 sends no such header");
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    pub fn reported_remaining<'h>(&self, header: impl Fn(&str) -> Option<&'h str>) -> Option<u32> {
        self.reported(crate::rate_headers::RateValue::Remaining, header)
    }

    /// The number an answer reports in the header the definition names for `value` (WB's
    /// `X-Ratelimit-Limit` for [`RateValue::Limit`](crate::rate_headers::RateValue::Limit), on a 429), read
    /// with `header` (a lookup by lower-case name); `None` when the service sends none or it is
    /// not a whole number.
    ///
    /// ```
    /// use apistend_catalog::RateValue;
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
    /// let headers = |name: &str| (name == "x-ratelimit-limit").then_some("2");
    /// assert_eq!(wb.reported(RateValue::Limit, headers), Some(2));
    /// assert!(wb.reports(RateValue::Remaining));
    /// assert!(!catalog.service(apistend_catalog::ServiceId::B24).unwrap().reports(RateValue::Remaining));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    pub fn reported<'h>(
        &self,
        value: crate::rate_headers::RateValue,
        header: impl Fn(&str) -> Option<&'h str>,
    ) -> Option<u32> {
        let own = self
            .headers
            .iter()
            .filter(|h| h.value == Ok(value))
            .find_map(|h| header(h.name)?.trim().parse().ok());
        own.or_else(|| {
            let (field, key, scale) = ietf_source(value)?;
            self.headers
                .iter()
                .filter(|h| h.value == Ok(field))
                .find_map(|h| crate::rate_headers::ietf_param(header(h.name)?, key))
                .and_then(|n| u32::try_from(n.saturating_mul(scale)).ok())
        })
    }

    /// Whether the service names a header for `value` (a service that reports no tokens left
    /// tells its client nothing but its rejections): its own, or an IETF field that holds it.
    #[must_use]
    pub fn reports(&self, value: crate::rate_headers::RateValue) -> bool {
        let field = ietf_source(value).map(|(f, _, _)| f);
        self.headers
            .iter()
            .any(|h| h.value == Ok(value) || field.is_some_and(|f| h.value == Ok(f)))
    }

    /// Whether an answer says that the called method's operating-time budget is spent (the
    /// service's `operating_budget`): a wait for that method alone, not a rate limit of the
    /// bucket. `error` is the code of the answer's body.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let b24 = catalog.service(apistend_catalog::ServiceId::B24).unwrap();
    /// assert!(b24.is_operating_time_spent(429, Some("OPERATION_TIME_LIMIT")));
    /// assert!(!b24.is_operating_time_spent(429, Some("QUERY_LIMIT_EXCEEDED")));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn is_operating_time_spent(&self, status: u16, error: Option<&str>) -> bool {
        self.operating_budget.is_some()
            && status == 429
            && error.is_some_and(|e| self.rejection.style.operating_time_code() == Some(e))
    }

    /// Whether operations are named by a webhook-style path (`/rest/{user}/{code}/{method}`),
    /// whose catalog path is `/rest/{method}`.
    #[must_use]
    pub fn has_webhook_paths(&self) -> bool {
        self.credentials.contains(&CredentialChannel::WebhookPath)
    }

    /// A path whose first segment is the short name ([`short_host`](super::ids::short_host)) of one of the service's
    /// hosts, split into that host and the rest (`/content-api/content/v2/x` →
    /// `content-api.wildberries.ru` and `/content/v2/x`; the rest is `""` when nothing follows).
    /// Splits no host: it runs on every request that names one.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
    /// assert_eq!(
    ///     wb.split_host("/content-api/content/v2/x"),
    ///     Some(("content-api.wildberries.ru", "/content/v2/x"))
    /// );
    /// assert_eq!(wb.split_host("/content-api"), Some(("content-api.wildberries.ru", "")));
    /// assert_eq!(wb.split_host("/content"), None, "a short name is a whole segment");
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn split_host<'p>(&self, path: &'p str) -> Option<(&str, &'p str)> {
        let path = path.trim_start_matches('/');
        let first = path.split('/').next().unwrap_or("");
        if first.is_empty() {
            return None;
        }
        // The byte after the name is looked at first: it rules out almost every host without a
        // comparison of the name (WB has dozens, and this runs on every request by path).
        let host = self.hosts.iter().find(|h| {
            matches!(h.as_bytes().get(first.len()), None | Some(b'.')) && h.starts_with(first)
        })?;
        Some((host, path.get(first.len()..).unwrap_or("")))
    }

    /// `path` below the sandbox's prefix of this service (`/wb/api/v3` → `/api/v3`), if it starts
    /// with that whole segment.
    #[must_use]
    pub fn strip_prefix<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.prefix)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// What of a base URL's path belongs to the service's operations: what is left after the
    /// sandbox's prefix and a short host name, where the path starts with them. MoySklad's
    /// `https://api.moysklad.ru/api/remap/1.2` and a sandbox's
    /// `http://127.0.0.1:8080/moysklad/api/remap/1.2` both mount `/api/remap/1.2`.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let ms = catalog.service(catalog.service_id("moysklad")?).unwrap();
    /// assert_eq!(ms.mount("/moysklad/api/remap/1.2"), "/api/remap/1.2");
    /// assert_eq!(ms.mount("/api/remap/1.2"), "/api/remap/1.2");
    /// let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
    /// assert_eq!(wb.mount("/wb/content-api"), "");
    /// assert_eq!(wb.mount("/wbx"), "/wbx", "a prefix is a whole segment");
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn mount<'p>(&self, base_path: &'p str) -> &'p str {
        let rest = self.strip_prefix(base_path).unwrap_or(base_path);
        self.split_host(rest).map_or(rest, |(_, after)| after)
    }

    /// The group with id `id`.
    pub fn group(&self, id: &str) -> Option<&LimitGroup> {
        self.groups.iter().find(|g| g.id == id)
    }

    /// The quota of group `group` under plan `plan`, if the plan sets it.
    #[must_use]
    pub fn plan_quota(&self, plan: &str, group: &str) -> Option<Quota> {
        self.plans
            .iter()
            .find(|p| p.name == plan)?
            .quotas
            .get(group)
            .copied()
    }

    /// Index of the group with id `id`.
    pub fn group_index(&self, id: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.id == id)
    }

    /// The concurrency limits a call of `operation` holds a slot of (a call of no operation
    /// draws from the fallback groups): those of every call, but one a limit of the call's
    /// groups replaces, and those of its groups. The sandbox, the client and the proxy ask this.
    ///
    /// ```
    /// # use apistend_catalog::{Catalog, Method};
    /// let catalog = Catalog::builtin()?;
    /// let ym = catalog.service(catalog.service_id("ymarket")?).unwrap();
    /// let of = |m, path| {
    ///     let op = catalog.resolve(ym.id, m, path, None).unwrap().operation;
    ///     ym.in_flight_for(op).map(|l| l.slots.max()).collect::<Vec<_>>()
    /// };
    /// assert_eq!(of(Method::Put, "/v2/campaigns/1/offers/stocks"), [4]);
    /// assert_eq!(of(Method::Post, "/v2/campaigns/1/offer-prices/updates"), [12]);
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    pub fn in_flight_for<'s>(
        &'s self,
        operation: Option<&'s Operation>,
    ) -> impl Iterator<Item = &'s InFlightLimit> + 's {
        let groups = operation.map_or(self.fallback_groups.as_slice(), |o| o.groups.as_slice());
        let holds = move |l: &InFlightLimit| {
            l.groups.is_empty() || l.groups.iter().any(|g| groups.contains(g))
        };
        let replaced = move |i: usize| {
            self.in_flight
                .iter()
                .any(|l| l.instead_of == Some(i) && !l.groups.is_empty() && holds(l))
        };
        self.in_flight
            .iter()
            .enumerate()
            .filter(move |&(i, l)| holds(l) && !replaced(i))
            .map(|(_, l)| l)
    }
}

/// The IETF field, its parameter and its scale that carry `value`: the limit is
/// `RateLimit-Policy`'s `q`, the window its `w` (seconds, read as milliseconds), tokens left
/// `RateLimit`'s `r`.
fn ietf_source(
    value: crate::rate_headers::RateValue,
) -> Option<(crate::rate_headers::RateValue, &'static str, u64)> {
    use crate::rate_headers::RateValue as V;
    match value {
        V::Limit => Some((V::IetfPolicy, "q", 1)),
        V::WindowMs => Some((V::IetfPolicy, "w", 1000)),
        V::Remaining => Some((V::IetfLimit, "r", 1)),
        _ => None,
    }
}
