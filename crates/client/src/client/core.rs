//! [`Core`]: what the clones of a [`Client`](super::Client) share: the service, the account, the store,
//! the catalog's definition, the HTTP client, the counters and what was learned. Its methods are
//! in the files of what they do (`budget`, `judge`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use apistend_catalog::{Catalog, ServiceId};
use apistend_limiter::Store;

use crate::config::ClientConfig;
use crate::learn::Learner;
use crate::metrics::{Counters, Handles};

pub(crate) struct Core {
    pub(super) service: ServiceId,
    pub(super) account: String,
    pub(super) store: Store,
    pub(super) base: String,
    /// The path of the base URL (`/wb` in `http://127.0.0.1:8080/wb`).
    pub(super) base_path: String,
    /// What of `base_path` is the start of the operations' own paths (MoySklad's
    /// `/api/remap/1.2`: `Service::mount`).
    pub(super) mount: String,
    pub(super) query: Vec<(String, String)>,
    pub(super) catalog: Catalog,
    /// The service's definition, as `catalog` has it (checked at build).
    pub(super) definition: apistend_catalog::Service,
    pub(super) config: ClientConfig,
    pub(super) http: reqwest::Client,
    pub(super) counters: Counters,
    /// The quotas learned from the server's answers (see [`crate::learn`]).
    pub(super) learner: Learner,
    /// The metric handles of this account's groups.
    pub(super) handles: Handles,
    /// Services with an operating budget (Bitrix24): when each operation's budget frees up, by
    /// its catalog path (from the `time` blocks of its answers).
    pub(super) operating_reset: Mutex<HashMap<String, f64>>,
    /// A decaying maximum of recent request latencies (send to response head), in µs: no request
    /// reaches the server later than its answer comes back, so this bounds how late a previous
    /// request may have arrived (see [`margin`]).
    pub(super) latency_ceiling_us: AtomicU64,
    /// The buckets whose first call is out (see `scout`).
    pub(super) scouting: Scouting,
}

/// The buckets a scout is out for (see `scout`: first contact).
#[derive(Debug, Default)]
pub(crate) struct Scouting(pub(super) Mutex<std::collections::HashSet<String>>);
