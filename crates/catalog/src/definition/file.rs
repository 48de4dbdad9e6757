//! The definition format: one TOML file per service, as serde reads it. `docs/services.md`
//! describes every field; [`super::build`] turns a file into a [`crate::model::Service`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::model::{AnswerSource, BucketScope, CredentialChannel, ErrorStyle};

/// One service's definition file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServiceFile {
    /// The id (`wb`): lower-case letters, digits, `-` and `_`.
    pub id: Spanned<String>,
    /// A human name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Base path in the sandbox (`/wb`).
    pub prefix: Spanned<String>,
    /// Hostnames of the real service; for a service with several, each is also a base path
    /// `{prefix}/{short name}` (WB's `/wb/content-api`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The names a real client addresses the service by, for clients that cannot change their
    /// base URL: exact (`api-seller.ozon.ru`) or `*.` and a suffix (`*.bitrix24.ru`, any name
    /// ending in `.bitrix24.ru`). The `hosts` count too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hostnames: Vec<Spanned<String>>,
    /// The channels a real client sends its credential on (`X-Mock-Key` always works too).
    pub credentials: Vec<CredentialChannel>,
    /// `Content-Type` of its successful answers; the rejection's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The shape of its error bodies.
    pub errors: ErrorStyle,
    /// The rate-limit headers it sends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_headers: Vec<RateHeaderDef>,
    /// Whether its rejection carries `X-APIStend-Retry-After`, the sandbox's hint of the pause
    /// (for services that send none of their own).
    #[serde(default = "yes")]
    pub apistend_retry_after: bool,
    /// Error bodies by kind, for `errors = "template"`: `rate_limited`, `unauthorized`,
    /// `forbidden`, `not_found`, `conflict`, `bad_request`, `server_error`, `unavailable`,
    /// `too_large`, `request_timeout`, `gateway_timeout`, `operating_time`, `locked`, and
    /// `default` for the others.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_templates: BTreeMap<String, Spanned<crate::templates::Template>>,
    /// Whether operation paths match whatever their case (Bitrix24's method names).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_insensitive_paths: bool,
    /// Concurrency limits: at most `max` requests of one owner in flight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<InFlightDef>,
    /// Tokens an answer costs in all by status, for every operation that says nothing else
    /// (Yandex Market: `{ 500 = 0 }`, a server error costs nothing).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cost: BTreeMap<String, u32>,
    /// Tokens each request takes up front, unless its operation says otherwise (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// A lockout after repeated rejections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockout: Option<crate::model::Lockout>,
    /// Where its successful answers come from.
    pub answers: AnswerSource,
    /// Whether a request without a body is taken as an empty JSON object where the description
    /// requires one (Ozon's grpc-gateway reads an empty body as an empty message); otherwise
    /// it is the service's 400.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_body_is_empty_object: bool,
    /// The examples of its official OpenAPI, embedded in the sandbox under this name (`wb`,
    /// `apify`, `ozon`, `ymarket`): they answer every operation that `answers` gives no answer
    /// of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<String>,
    /// The embedded request rules its requests are checked by (`b24`), when they are not
    /// named like its `examples`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<String>,
    /// An OpenAPI document (YAML or JSON), its path relative to this file: every operation of
    /// it the file does not write is the service's, in its first fallback group; its examples
    /// (or values built from its schemas) answer them and its schemas check their requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openapi: Option<Spanned<String>>,
    /// Milliseconds every answer waits unless the request says otherwise.
    #[serde(default)]
    pub latency_ms: u32,
    /// The answer over the limit.
    pub rejection: RejectionDef,
    /// Operations and groups generated by an importer, added to those in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<Import>,
    /// Groups that requests matching no operation draw from.
    pub fallback_groups: Vec<Spanned<String>>,
    /// Limit groups: the buckets.
    #[serde(default)]
    pub groups: Vec<GroupDef>,
    /// Operations and the groups they draw from.
    #[serde(default)]
    pub operations: Vec<OperationDef>,
    /// A budget of method execution time (Bitrix24's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operating_budget: Option<crate::model::OperatingBudget>,
    /// Batched calls (Bitrix24's `batch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchDef>,
    /// Named quotas a user selects in an override file (`plan = "enterprise"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plans: BTreeMap<String, PlanDef>,
    /// Collections it keeps per sandbox: what a client writes, it reads back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<crate::model::Resource>,
    /// Its token endpoint (amoCRM's OAuth 2.0 `/oauth2/access_token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<crate::model::TokenEndpoint>,
    /// Headers every request must carry, each with a token, else a status with no body
    /// (MoySklad: `Accept-Encoding` with `gzip`, else 415).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Spanned<crate::model::HeaderRequirement>>,
    /// The largest request body the service takes, in bytes (MoySklad's 20 MB), unless an
    /// operation says otherwise; larger is its `too_large` (413).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_body_bytes: Option<std::num::NonZeroU64>,
    /// The most items any list of a request's JSON body holds (MoySklad's 1 000); more is its
    /// `too_large` (413).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_array_items: Option<std::num::NonZeroU32>,
    /// How its server decodes a JSON body: `strict` (the default), `go`, `protobuf`.
    #[serde(default)]
    pub json: crate::model::JsonReading,
}

fn yes() -> bool {
    true
}

/// One rate-limit header: its name, what it carries (`value`, or a `fixed` number) and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RateHeaderDef {
    /// The header's name.
    pub name: Spanned<String>,
    /// A number of the bucket's decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<crate::rate_headers::RateValue>,
    /// Or a fixed number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<u64>,
    /// `always` (the default), `allowed` or `rejected`.
    #[serde(default)]
    pub on: crate::rate_headers::When,
}

/// An importer whose committed output supplies operations and groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Import {
    /// `apistend catalog import-wb-openapi`: WB's operations and limit tables (`data/wb.json`,
    /// or the file a user passes).
    WbOpenapi,
}

/// The answer over the limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RejectionDef {
    /// HTTP status (429; Bitrix24 503).
    pub status: Spanned<u16>,
    /// `Content-Type` of the body.
    pub content_type: String,
    /// How its refusal of too many requests in flight is told from a rate limit of the same
    /// status: `{ pointer = "/errors/0/code", value = 1073 }` (MoySklad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<crate::model::InFlightRefusal>,
}

/// One limit group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GroupDef {
    /// Unique within the service.
    pub id: Spanned<String>,
    /// The name the service's documentation gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Which requests share one bucket.
    #[serde(default = "per_key")]
    pub scope: BucketScope,
    /// Its numbers.
    pub quota: Spanned<QuotaDef>,
    /// The documented limit, for display: `limit` requests per `period_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documented: Option<Documented>,
    /// Path parameters of its operations that split it into one bucket per resource
    /// (`["datasetId", "actorId"]`): Apify limits per dataset, actor, key-value store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_resource: Vec<Spanned<String>>,
}

fn per_key() -> BucketScope {
    BucketScope::Key
}

/// A quota, in one of three spellings of one bucket: `burst` + `interval_ms` (a bucket regaining
/// one token per interval), `burst` + `per_second` (the interval is 1000/`per_second` ms), or
/// `count` + `period_ms` (a burst of `count`, the interval `period_ms`/`count`: under GCRA
/// `count` at once and then one per interval; under `fixed_window`, `count` per window of
/// `period_ms`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct QuotaDef {
    /// Bucket capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// One token back every this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<u64>,
    /// Tokens back per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_second: Option<u32>,
    /// Requests per period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// The period of `count`, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_ms: Option<u64>,
    /// `gcra` (the default) or `fixed_window`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
}

/// A documented limit, shown beside the quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Documented {
    /// The period, in milliseconds.
    pub period_ms: u64,
    /// Requests per period.
    pub limit: u32,
}

/// Operations: one or more paths with the same method, groups and costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OperationDef {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD` or `OPTIONS`.
    pub method: Spanned<String>,
    /// Path templates, parameters in braces: `/v2/datasets/{datasetId}/items`.
    pub paths: Vec<String>,
    /// Groups it draws from, most specific first; every one takes its tokens.
    pub groups: Vec<Spanned<String>>,
    /// Tokens an answer with a given status costs in all (`{ 409 = 10 }`); 1 otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cost: BTreeMap<String, u32>,
    /// A short description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The service's category of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Tokens it takes up front from each of its groups (the service's `weight` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// Or: the items of this field of the request's JSON body (`offers`; dotted when nested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_from: Option<String>,
    /// Or, counted on the answer: it costs in all the items of this field of its JSON body
    /// (Yandex Market's `resp.result.offers`; dotted when nested, through arrays), one taken up
    /// front and the rest charged when the answer is made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_from: Option<String>,
    /// Its answer, for `answers = "fixtures"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerDef>,
    /// Answered without a credential and without spending any bucket: a call that is not part
    /// of the API it limits (amoCRM's OAuth token exchange, which a client makes before it has
    /// a token).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anonymous: bool,
    /// Whether a request of it may be sent again when it is not known whether the service
    /// applied it; absent, the rule of [`crate::repeat::repeatable_by_rule`] (idempotent methods, and
    /// `POST` reads named `…/list`, `…get`, `…/info` and the like).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeatable: Option<bool>,
    /// The largest request body it takes, in bytes (WB's card uploads: 10 MB); the service's
    /// `max_body_bytes` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_body_bytes: Option<std::num::NonZeroU64>,
    /// What its requests must be, for a service with no description to check them by: its
    /// path and query parameters and its JSON body, as JSON Schemas (docs/services.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Spanned<RequestDef>>,
}

/// What an operation's requests must be (`[operations.request]`): JSON Schemas of its path
/// and query parameters (`required = true` in a query parameter's table makes it required)
/// and of its JSON body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RequestDef {
    /// Path parameter → the schema of its value (`{ type = "integer", minimum = 1 }`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub path: BTreeMap<String, serde_json::Value>,
    /// Query parameter → the schema of its value, `required = true` when it must be there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, serde_json::Value>,
    /// The schema of its JSON body: a request without one is refused, unless `body_optional`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// Whether a request may come without a body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_optional: bool,
    /// The media types its body may have (`["application/json"]` when absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<String>,
}

/// A concurrency limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InFlightDef {
    /// Unique among the service's concurrency limits.
    pub id: Spanned<String>,
    /// The most requests in flight.
    pub max: u32,
    /// `key` (the default) or `account`.
    #[serde(default = "per_key")]
    pub scope: BucketScope,
    /// The lease of a slot, renewed every third of it while the request is held (10 s when
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
    /// Path parameters that split it per resource (`["campaignId", "businessId"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_resource: Vec<String>,
    /// The groups whose calls it holds (every call of the service when empty): a limit of some
    /// operations only (Yandex Market's 6, 10 or 12 in flight for seven of its methods).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Spanned<String>>,
    /// The limit (its id) this one replaces for the calls it holds: those calls take no slot
    /// of that one (Yandex Market's per-method limits instead of its 4 per campaign).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instead_of: Option<Spanned<String>>,
}

/// A written answer: a status and a JSON body (none for no content).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AnswerDef {
    /// Its status (200 when absent).
    #[serde(default = "ok")]
    pub status: u16,
    /// Its body, as JSON text; none for no content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Spanned<String>>,
    /// Its media type when it is a file, not JSON (`text/csv`, an XLSX): the body is then a
    /// small valid file of that type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
}

fn ok() -> u16 {
    200
}

/// Batched calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct BatchDef {
    /// The most calls one batch may hold.
    pub max: u32,
}

/// A named set of quotas (a tariff): group id → its quota under the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PlanDef {
    /// The groups it sets, and their numbers.
    pub quotas: BTreeMap<String, Spanned<QuotaDef>>,
}
