//! What a service is, as data: its operations, limit groups, credentials, rejection and headers.

use std::collections::BTreeMap;
use std::fmt;

use apistend_limiter::Quota;

/// A service's id, as its definition names it (`wb`, `b24`, `apify`, `ozon`, or a user's own).
///
/// Ids are interned: a definition's id is leaked once per distinct id (a handful per process),
/// so the id stays `Copy` and compares as cheaply as the enum it replaced.
///
/// ```
/// use apistend_catalog::ServiceId;
/// assert_eq!(ServiceId::new("wb"), ServiceId::WB);
/// assert_eq!(ServiceId::new("mine").as_str(), "mine");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServiceId(&'static str);

impl ServiceId {
    /// The built-in Wildberries seller API.
    pub const WB: ServiceId = ServiceId("wb");
    /// The built-in Bitrix24 REST.
    pub const B24: ServiceId = ServiceId("b24");
    /// The built-in Apify API v2.
    pub const APIFY: ServiceId = ServiceId("apify");
    /// The built-in Ozon Seller API.
    pub const OZON: ServiceId = ServiceId("ozon");

    /// The id `id`. Whether a catalog has such a service is [`crate::Catalog::service_id`]'s
    /// question.
    #[must_use]
    pub fn new(id: &str) -> Self {
        Self(crate::intern::intern(id))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for ServiceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// An HTTP method, as operations are keyed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options,
}

impl Method {
    /// Upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
        }
    }

    /// Parses a method name, case-insensitively; `None` for anything else.
    ///
    /// Compared in place: every request's method is parsed, and an upper-case copy of it was an
    /// allocation per request.
    ///
    /// ```
    /// use apistend_catalog::Method;
    /// assert_eq!(Method::parse("GET"), Some(Method::Get));
    /// assert_eq!(Method::parse("patch"), Some(Method::Patch));
    /// assert_eq!(Method::parse("TRACE"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        const ALL: [Method; 7] = [
            Method::Get,
            Method::Post,
            Method::Put,
            Method::Patch,
            Method::Delete,
            Method::Head,
            Method::Options,
        ];
        ALL.into_iter().find(|m| m.as_str().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a real client sends its credential to a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CredentialChannel {
    /// `X-Mock-Key: KEY` — the sandbox's own header, accepted by every service.
    MockKey,
    /// `Authorization: KEY` or `Authorization: Bearer KEY` (WB).
    Authorization,
    /// `Authorization: Bearer KEY` (Apify).
    BearerToken,
    /// `?token=KEY` (Apify).
    TokenQuery,
    /// `Client-Id: ID` and `Api-Key: KEY` (Ozon).
    ClientIdApiKey,
    /// `Api-Key: KEY` alone (Yandex Market).
    ApiKey,
    /// `/rest/{user}/{code}/{method}` (a Bitrix24 inbound webhook).
    WebhookPath,
    /// `?auth=TOKEN` or an `auth` body field (a Bitrix24 application).
    AuthParam,
}

impl CredentialChannel {
    /// The headers a client sends to present `key` on this channel; none for the channels in
    /// the path or the query (a client names those in its URL).
    ///
    /// ```
    /// use apistend_catalog::CredentialChannel;
    /// assert_eq!(
    ///     CredentialChannel::BearerToken.headers("k"),
    ///     vec![("Authorization", "Bearer k".to_owned())]
    /// );
    /// ```
    #[must_use]
    pub fn headers(self, key: &str) -> Vec<(&'static str, String)> {
        match self {
            CredentialChannel::MockKey => vec![("X-Mock-Key", key.to_owned())],
            CredentialChannel::Authorization => vec![("Authorization", key.to_owned())],
            CredentialChannel::BearerToken => vec![("Authorization", format!("Bearer {key}"))],
            // Any client id: the Api-Key is the credential.
            CredentialChannel::ClientIdApiKey => {
                vec![("Client-Id", "1".to_owned()), ("Api-Key", key.to_owned())]
            }
            CredentialChannel::ApiKey => vec![("Api-Key", key.to_owned())],
            CredentialChannel::TokenQuery
            | CredentialChannel::WebhookPath
            | CredentialChannel::AuthParam => Vec::new(),
        }
    }
}

/// Which requests share one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BucketScope {
    /// One bucket per credential (seller account, Client-Id, portal key): the seeds' rule and
    /// the default.
    Key,
    /// One bucket per account: every key of a sandbox shares it (WB and Ozon limit per seller
    /// account, Bitrix24 per portal). A Bitrix24 local application keeps buckets of its own.
    Account,
    /// One bucket per credential part within a sandbox: the `Client-Id` of Ozon's pair, whatever
    /// key comes with it (per key when the request has no such part).
    CredentialPart,
    /// One bucket per application when the request comes from a registered application (Bitrix24
    /// local apps), otherwise per key.
    Application,
    /// One bucket per key and path class (Apify: records, runs and datasets, the user profile…).
    PathClass,
    /// One bucket per key and host: the limit applies on each domain separately (WB `/ping`).
    Host,
}

impl BucketScope {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            BucketScope::Key => "key",
            BucketScope::Account => "account",
            BucketScope::CredentialPart => "credential_part",
            BucketScope::Application => "application",
            BucketScope::PathClass => "path_class",
            BucketScope::Host => "host",
        }
    }
}

/// A bucket that some operations draw from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LimitGroup {
    /// Stable id, unique within the service (`content-api.kontent`, `portal`, `kv-records`).
    pub id: String,
    /// The name the service's documentation gives it, if any.
    pub label: Option<String>,
    /// The quota (and its algorithm).
    pub quota: Quota,
    /// Which requests share it.
    pub scope: BucketScope,
    /// The documented period and limit, when the source states them (WB tables), for display.
    pub documented: Option<(u64, u32)>,
    /// Path parameters that split the group into one bucket per resource (Apify limits per
    /// dataset, per actor, per key-value store): `datasetId`, `actorId`… The first one an
    /// operation's path has names the resource; an operation with none shares one bucket.
    pub per_resource: Vec<String>,
}

impl LimitGroup {
    /// What splits this group's bucket beyond its owner, for a request to `path` (matched by
    /// `operation`) on `host`: the host's short name for a group per host, `name=value` of the
    /// resource for a group per resource, nothing otherwise. The sandbox and the client build
    /// their bucket keys with it.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let path = "/v2/datasets/abc/items";
    /// let hit = catalog
    ///     .resolve(apistend_catalog::ServiceId::APIFY, apistend_catalog::Method::Get, path, None)
    ///     .unwrap();
    /// let group = &hit.service.groups[hit.groups[0]];
    /// assert_eq!(group.split(hit.operation, path, None).as_deref(), Some("datasetId=abc"));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn split(
        &self,
        operation: Option<&Operation>,
        path: &str,
        host: Option<&str>,
    ) -> Option<String> {
        if self.scope == BucketScope::Host {
            return Some(short_host(host.unwrap_or("-")).to_owned());
        }
        let (name, value) = operation?.resource(path, &self.per_resource)?;
        Some(format!("{name}={value}"))
    }
}

/// One operation: a method on a path template.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Operation {
    /// The host the real service serves it on (WB has 17), if the service has several.
    pub host: Option<String>,
    /// Other hosts serving a variant of it (WB `/ping`).
    pub also_hosts: Vec<String>,
    /// The method.
    pub method: Method,
    /// The path template, parameters in braces: `/api/v3/stocks/{warehouseId}`.
    pub path: String,
    /// The path its service's description names it by: the first of its definition's `paths`
    /// (Apify's `/v2/actors/…` for the deprecated `/v2/acts/…`).
    pub spec_path: String,
    /// Indices into [`Service::groups`], most specific first. Every group takes its tokens.
    pub groups: Vec<usize>,
    /// Tokens an answer with a given status costs in all (WB: a `409` costs 10, or 33).
    pub cost: BTreeMap<u16, u32>,
    /// Whether the service has deprecated it (WB operations without a limit block).
    pub deprecated: bool,
    /// The service's category of the operation (WB `x-category`).
    pub category: Option<String>,
    /// A short human description.
    pub summary: Option<String>,
    /// Tokens a request takes from each of its groups up front (MoySklad weighs a request 4;
    /// 1 elsewhere).
    pub weight: u32,
    /// A field of the request's JSON body whose items are the request's weight instead (Yandex
    /// Market's data-volume limits: `offers`); dotted for nested fields.
    pub weight_from: Option<String>,
    /// Its answer, when the definition writes one.
    pub fixture: Option<Fixture>,
    /// Answered without a credential and without spending any bucket (amoCRM's OAuth token
    /// exchange: a client calls it before it has a token, outside the API's limits).
    pub anonymous: bool,
    /// Whether a request of it may be sent again when it is not known whether the service
    /// applied it (a timeout after sending, a reset mid-answer, a 5xx): the definition's
    /// `repeatable`, else the rule of [`crate::repeat::repeatable_by_rule`] (RFC 9110 §9.2.2).
    pub repeatable: bool,
}

impl Operation {
    /// Tokens an answer with `status` costs in all, given the `taken` up front: what a cost rule
    /// says (0 for Yandex Market's 5xx), else what was taken.
    pub fn cost_of(&self, status: u16, taken: u32) -> u32 {
        self.cost.get(&status).copied().unwrap_or(taken)
    }

    /// Tokens `body` (the request's JSON) takes up front: the number of items of `weight_from`
    /// when the operation names such a field (at least 1), else `weight`.
    ///
    /// ```
    /// # use apistend_catalog::{Catalog, Method, ServiceId};
    /// let catalog = Catalog::builtin()?;
    /// let path = "/v2/campaigns/1/offer-prices/updates";
    /// let id = catalog.service_id("ymarket")?;
    /// let op = catalog.resolve(id, Method::Post, path, None).unwrap().operation.unwrap();
    /// let body = serde_json::json!({"offers": [{"offerId": "a"}, {"offerId": "b"}]});
    /// assert_eq!(op.weight_for(Some(&body)), 2);
    /// assert_eq!(op.weight_for(None), 1);
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn weight_for(&self, body: Option<&serde_json::Value>) -> u32 {
        let Some(field) = &self.weight_from else {
            return self.weight;
        };
        let items = body
            .and_then(|b| field.split('.').try_fold(b, |v, k| v.get(k)))
            .and_then(serde_json::Value::as_array)
            .map_or(1, Vec::len);
        u32::try_from(items.max(1)).unwrap_or(u32::MAX)
    }

    /// The value of path parameter `name` in `path`, a path this operation's template matches.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let path = "/v2/datasets/abc/items";
    /// let hit = catalog
    ///     .resolve(apistend_catalog::ServiceId::APIFY, apistend_catalog::Method::Get, path, None)
    ///     .unwrap();
    /// assert_eq!(hit.operation.unwrap().param(path, "datasetId"), Some("abc"));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn param<'p>(&self, path: &'p str, name: &str) -> Option<&'p str> {
        self.param_at(name)
            .and_then(|at| path.split('/').nth(at).filter(|v| !v.is_empty()))
    }

    /// The resource `path` addresses: the first of `names` this operation's template has, and
    /// its value in `path`.
    #[must_use]
    pub fn resource<'n, 'p>(
        &self,
        path: &'p str,
        names: &'n [String],
    ) -> Option<(&'n str, &'p str)> {
        names
            .iter()
            .find_map(|n| Some((n.as_str(), self.param(path, n)?)))
    }

    fn param_at(&self, name: &str) -> Option<usize> {
        self.path
            .split('/')
            .position(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) == Some(name))
    }
}

/// How a service says "over the limit".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejection {
    /// HTTP status (429; Bitrix24 503).
    pub status: u16,
    /// `Content-Type` of the body.
    pub content_type: &'static str,
    /// The body's shape.
    pub style: ErrorStyle,
}

/// Where a service's successful answers come from: an algorithm of the sandbox, named by the
/// definition (the sandbox has one implementation per source).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnswerSource {
    /// The examples and schemas of the service's OpenAPI descriptions (WB), when loaded.
    OpenApiExamples,
    /// Bitrix24's REST methods, with `batch`.
    B24Methods,
    /// Apify's resources (actors, runs, datasets, key-value stores).
    ApifyResources,
    /// Ozon's product and warehouse answers.
    OzonFixtures,
    /// Each operation's `answer` in the definition.
    Fixtures,
}

impl ErrorStyle {
    /// The error code its rate-limit body carries, for styles whose rejection status is not 429
    /// alone (Bitrix24's 503 is also its plain server error).
    #[must_use]
    pub fn rate_limit_code(self) -> Option<&'static str> {
        match self {
            ErrorStyle::B24 => Some(crate::error_kind::B24_RATE_LIMIT_CODE),
            _ => None,
        }
    }

    /// The error code of its answer to a method whose operating-time budget is spent, for
    /// styles of services that have one (Bitrix24's `OPERATION_TIME_LIMIT`).
    #[must_use]
    pub fn operating_time_code(self) -> Option<&'static str> {
        match self {
            ErrorStyle::B24 => Some(crate::error_kind::B24_OPERATING_TIME_CODE),
            _ => None,
        }
    }
}

/// The shape of a service's error bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorStyle {
    /// WB: `{title, detail, code, requestId, origin, status, statusText, timestamp}`.
    Wb,
    /// Bitrix24: `{"error": CODE, "error_description": TEXT}`.
    B24,
    /// Apify: `{"error": {"type": TYPE, "message": TEXT}}`.
    Apify,
    /// Ozon (gRPC gateway `rpcStatus`): `{"code": INT, "message": TEXT, "details": []}`.
    Ozon,
    /// The definition's own templates (`[errors.templates]`).
    Template,
}

/// A lockout: after `after` rejections within `within_secs`, every request of that owner gets
/// the service's `locked` answer for `for_secs` (amoCRM blocks an integration that keeps
/// violating its limit with 403s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Lockout {
    /// Rejections that trigger it…
    pub after: u32,
    /// …within this many seconds.
    pub within_secs: u32,
    /// How long it lasts.
    pub for_secs: u32,
}

impl Lockout {
    /// `after` rejections within `within_secs` lock out for `for_secs`.
    #[must_use]
    pub fn new(after: u32, within_secs: u32, for_secs: u32) -> Self {
        Self {
            after,
            within_secs,
            for_secs,
        }
    }
}

/// A concurrency limit: at most `slots.max()` requests of one owner in flight (MoySklad: 5 per
/// user, 20 per account). It applies to every request of the service.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InFlightLimit {
    /// Stable id, unique within the service's limits (`user`, `account`).
    pub id: String,
    /// How many, and the lease of each slot.
    pub slots: apistend_limiter::Slots,
    /// Whose requests share it: [`BucketScope::Key`] or [`BucketScope::Account`].
    pub scope: BucketScope,
    /// Path parameters that split it per resource (Yandex Market: 4 in flight per campaign).
    pub per_resource: Vec<String>,
}

/// A fixed answer of an operation, written in its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fixture {
    /// Its status.
    pub status: u16,
    /// Its body (`null` for no content).
    pub body: serde_json::Value,
}

/// A default latency: every answer waits `base_ms` unless the request says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatencyProfile {
    /// Milliseconds added to every answer.
    pub base_ms: u32,
}

/// Bitrix24's budget of method "operating" time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OperatingBudget {
    /// Seconds of execution time one method may accumulate per application or webhook…
    pub limit_secs: u32,
    /// …within this sliding window, kept as one-minute baskets.
    pub window_secs: u32,
}

impl OperatingBudget {
    /// `limit_secs` of operating time per `window_secs`.
    pub fn new(limit_secs: u32, window_secs: u32) -> Self {
        Self {
            limit_secs,
            window_secs,
        }
    }
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
}

/// A named set of quotas (Bitrix24's Enterprise plan, Yandex Market's `medium` tier): an override
/// file selects one for the whole catalog, a sandbox's settings for its own requests.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// Its name.
    pub name: String,
    /// Group id → the group's quota under it.
    pub quotas: BTreeMap<String, Quota>,
}

impl Service {
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
        self.headers
            .iter()
            .filter(|h| h.value == Ok(value))
            .find_map(|h| header(h.name)?.trim().parse().ok())
    }

    /// Whether the service names a header for `value` (a service that reports no tokens left
    /// tells its client nothing but its rejections).
    #[must_use]
    pub fn reports(&self, value: crate::rate_headers::RateValue) -> bool {
        self.headers.iter().any(|h| h.value == Ok(value))
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

    /// A path whose first segment is the short name ([`short_host`]) of one of the service's
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
}

/// The short name of a host: `content-api` for `content-api.wildberries.ru`.
pub fn short_host(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}
