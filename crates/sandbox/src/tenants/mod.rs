//! Sandboxes, their keys, Bitrix24 local applications, per-sandbox limits and defaults: kept in
//! the data file of the data directory and, with Redis, merged record by record with the other
//! instances. A change is applied only once it is durably written (a failed write answers the
//! error and changes nothing); a revoked key stops working at once.
//!
//! - [`records`]: what is persisted;
//! - [`view`]: what the request path needs of a sandbox;
//! - [`index`]: credentials → owner and view;
//! - [`file`]: the locked directory and the durable write;
//! - [`store`]: [`Tenants`], and its changes;
//! - [`replication`]: the merge of other instances' records, and what to share of ours.

mod file;
mod index;
mod limits;
mod records;
mod replication;
mod store;
mod view;

pub use file::DATA_FILE;
pub(crate) use index::Principal;
pub use records::{
    AppRecord, ChaosRecord, JobRecord, LimitRecord, SandboxRecord, ScopeChoice, SettingsRecord,
    Validation,
};
pub(crate) use records::{Shared, Touched};
pub(crate) use store::WeakTenants;
pub use store::{Tenants, new_key};
pub(crate) use view::View;

#[cfg(fuzzing)]
pub(crate) use replication::fuzz_read;

#[cfg(test)]
mod tests;
