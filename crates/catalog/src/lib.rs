//! The services APIStend emulates — Wildberries, Bitrix24, Apify, Ozon, and any a user defines —
//! and how each limits requests, as data: one definition file per service (`services/*.toml`,
//! [`definition`]). The sandbox and the client resolve limits here and nowhere else.
//!
//! ```
//! use apistend_catalog::{Catalog, Method, ServiceId};
//! let catalog = Catalog::builtin()?;
//! let hit = catalog.resolve(ServiceId::WB, Method::Post, "/content/v2/cards/update", None).unwrap();
//! let op = hit.operation.expect("a WB Content method");
//! let group = &hit.service.groups[op.groups[0]];
//! assert_eq!((group.quota.burst(), group.quota.interval().as_millis()), (5, 6000));
//! // every Content method but the exceptions shares one bucket
//! let other = catalog.resolve(ServiceId::WB, Method::Get, "/content/v2/object/all", None).unwrap();
//! assert_eq!(other.service.groups[other.operation.unwrap().groups[0]].id, "content-api.kontent");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod catalog;
mod classify;
pub mod definition;
mod error;
mod error_kind;
mod export;
mod hostnames;
#[cfg(feature = "import")]
pub mod import;
mod intern;
mod keys;
mod model;
mod overrides;
mod rate_headers;
mod render;
mod repeat;
mod reserved;
mod resolve;
pub mod templates;
mod wait;
mod wb;
mod wb_catalog;
mod wb_ids;

pub use catalog::{Catalog, Resolved};
pub use classify::AnswerKind;
pub use error::CatalogError;
pub use error_kind::{ErrorAnswer, ErrorContext, ErrorKind, Problem, reason_phrase};
pub use export::CatalogRow;
pub use hostnames::server_path;
pub use keys::{CallSite, namespace};
pub use model::{
    Aborted, Action, ActionKind, Binding, IdKind, IdStyle, Job, JobEnd, Makes, Missing, PageField,
    Paging, Render, Resource, Stamp, StampFormat, StampOn, TokenEndpoint, View,
};
pub use model::{
    AnswerSource, BucketScope, CredentialChannel, ErrorStyle, Fixture, HeaderRequirement,
    InFlightLimit, InFlightRefusal, JsonReading, LatencyProfile, LimitGroup, Lockout, MarkerValue,
    Method, OperatingBudget, Operation, Plan, Rejection, Service, ServiceId, short_host,
};
pub use overrides::{GroupOverride, Overrides, ServiceOverride};
pub use rate_headers::{
    RateHeader, RateHeaders, RateValue, When, X_APISTEND_RETRY_AFTER, ietf_param,
};
pub use repeat::{READ_WORDS, repeatable, repeatable_by_rule};
pub use reserved::RESERVED_PREFIXES;
pub use wb::{WB_CATALOG_JSON, WB_FALLBACK_GROUP};
pub use wb_catalog::{WbCatalogFile, WbGroupRecord, WbOperationRecord};
