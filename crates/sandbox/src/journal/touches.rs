//! What a sandbox's buckets went through lately, read from its journal: the level each request
//! left its bucket at. The dashboard's live feed orders buckets by it (the most drained of those
//! touched lately first) and draws a bucket's past from it when its row first appears, so that
//! the history was kept by the server while no page watched.

use std::sync::Arc;

use apistend_catalog::{Catalog, ServiceId};

use super::entry::Entry;
use super::record::Record;

/// A request's mark on its bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Touch {
    /// The key, or `app:ID`.
    pub(crate) key: Arc<str>,
    pub(crate) service: ServiceId,
    /// The operation's own limit group (an index into the service's groups).
    pub(crate) group: usize,
    /// When it arrived, in milliseconds since the Unix epoch.
    pub(crate) at_ms: u64,
    /// The bucket's tokens left after it, and its capacity.
    pub(crate) remaining: u32,
    pub(crate) limit: u32,
}

/// The mark of memory journal entry `e` if it came since `since_ms` and reached a bucket: read
/// from the entry as it came, nothing rendered.
pub(super) fn of_entry(e: &Entry, since_ms: u64) -> Option<Touch> {
    if e.at_us / 1000 < since_ms {
        return None;
    }
    let (remaining, limit) = e.fill?;
    Some(Touch {
        key: Arc::clone(&e.key),
        service: e.service,
        group: e.group?,
        at_ms: e.at_us / 1000,
        remaining,
        limit,
    })
}

/// The marks of shared journal `records` (oldest first) since `since_ms`.
pub(super) fn of_records(records: &[Record], catalog: &Catalog, since_ms: u64) -> Vec<Touch> {
    records
        .iter()
        .filter(|r| r.at_ms >= since_ms)
        .filter_map(|r| {
            let service = catalog.service_id(&r.service).ok()?;
            let svc = catalog.service(service)?;
            let group = r.group.as_ref()?;
            Some(Touch {
                key: Arc::from(r.key.as_str()),
                service,
                group: svc.groups.iter().position(|g| g.id == *group)?,
                at_ms: r.at_ms,
                remaining: r.decision.remaining?,
                limit: r.decision.limit?,
            })
        })
        .collect()
}
