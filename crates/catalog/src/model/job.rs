//! A collection whose objects are jobs (Ozon's import tasks, Apify's runs, Yandex Market's
//! reports): a client starts one and polls it while its status moves through the service's
//! statuses in the time the job takes, and some jobs make objects of another collection (the
//! products an import adds). The statuses are computed when a job is read, from the time it
//! was started and the time it takes; nothing runs in the background.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a collection's jobs move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Job {
    /// Where a job's status is written: JSON pointers into the object, where a `*` step stands
    /// for each item of a list (Ozon's `/items/*/status`).
    pub status: Vec<String>,
    /// Its statuses in order: each but the last for an equal share of the time the job takes,
    /// the last once it is done (`["READY", "RUNNING", "SUCCEEDED"]`).
    pub states: Vec<Value>,
    /// Its status when it fails.
    pub failed: Value,
    /// Values written when it fails, by pointer (`*` steps too): Ozon's `errors`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure: BTreeMap<String, Value>,
    /// Values written once it has succeeded, by pointer: templates with `{base}`, `{id}` and
    /// `{finished}` (when it finished, RFC 3339 in UTC with milliseconds: Apify's `finishedAt`;
    /// Yandex Market's report `file`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub done: BTreeMap<String, String>,
    /// The request parameter of a read (or a create) asking to wait until the job is done, in
    /// seconds (Apify's `waitForFinish`); it is held up to that long, at most `wait_max` seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    /// The longest a request waits for a job, in seconds (Apify's 60).
    #[serde(default = "sixty")]
    pub wait_max: u64,
    /// Fields shown only once the job has ended so (`done` or `failed`), removed from the
    /// answer before: Yandex Market's `file` and `generationFinishedAt` once done, `subStatus`
    /// once failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shown_when: BTreeMap<String, JobEnd>,
    /// Where a new job writes how long it takes, in milliseconds (Yandex Market's
    /// `estimatedGenerationTime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub takes: Option<String>,
    /// What a job stopped before its end shows (its `abort` action: Apify's runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Aborted>,
    /// How long a job takes, in milliseconds, unless its sandbox says otherwise.
    pub ms: u64,
    /// Where that time comes from: the service's documentation, or why this figure.
    pub source: String,
}

/// What a job stopped before its end shows from then on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Aborted {
    /// Its status (Apify's `ABORTED`).
    pub status: Value,
    /// Values it writes, by pointer: templates with `{base}`, `{id}` and `{finished}` (when it
    /// was stopped), as `done`'s.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub writes: BTreeMap<String, String>,
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobEnd {
    /// It succeeded: its last state.
    Done,
    /// It failed.
    Failed,
}

fn sixty() -> u64 {
    60
}

/// Objects a job's create writes into another collection of the service, and the job's list
/// of them (an Ozon import's products, listed in its task with their `product_id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Makes {
    /// The collection they go to (a resource of the same service, created by `create`);
    /// without it, the job only lists the request's items (WB's price upload lists its goods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Where they are in the request's parameters (a JSON pointer: `/items`).
    pub input: String,
    /// The field by which one of them updates the object of the same value instead of adding
    /// one (Ozon's `offer_id`: an import of a known offer updates its product).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Where the job lists them (`/items`).
    pub into: String,
    /// What each entry of that list holds: its field → the made object's field
    /// (`product_id = "id"`).
    pub fields: BTreeMap<String, String>,
    /// Values each entry carries besides (Ozon's `errors = []`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub with: BTreeMap<String, Value>,
    /// Where the job writes how many it made (Ozon's `/total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<String>,
}
