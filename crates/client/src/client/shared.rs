//! What the processes of an account learn, shared through their store: each writes what it
//! learned of a bucket beside it (merged there: the strictest bounds, the newer quota) and reads
//! what the others wrote at most every 200 ms before it acquires — so a fleet of workers
//! narrows at the first rejection any of them meets, and probes headroom as one.
//!
//! Sharing is advice: a store that cannot answer leaves each process with what it learned
//! itself (logged at debug level), as before.

use std::time::Instant;

use super::budget::Draws;
use super::core::Core;
use crate::learn::Bucket;

impl Core {
    /// Follows what the account's other processes learned of `plan`'s first bucket, if its
    /// record is due to be read.
    pub(crate) async fn follow_learned(&self, plan: &Draws<'_>) {
        let Some(b) = plan.first_bucket() else { return };
        if !self.learner.due(b, Instant::now()) {
            return;
        }
        match self.store.learned(b.key).await {
            Ok(Some(record)) => self.adopt_shared(b, &record),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(error = %e, key = b.key, "could not read the shared learned quota");
            }
        }
    }

    /// Writes what this process learned of `b` to the store, and follows the merged record
    /// (another process's newer quota or stricter bounds).
    pub(crate) async fn publish_learned(&self, b: Bucket<'_>) {
        let Some(record) = self.learner.record(b.key) else {
            return;
        };
        match self
            .store
            .merge_learned(b.key, &record, self.learner.ttl())
            .await
        {
            Ok(merged) => self.adopt_shared(b, &merged),
            Err(e) => {
                tracing::debug!(error = %e, key = b.key, "could not share the learned quota");
            }
        }
    }

    fn adopt_shared(&self, b: Bucket<'_>, record: &apistend_limiter::LearnedRecord) {
        if let Some(q) = self.learner.shared(b, record, Instant::now()) {
            self.handles.learned(b.group, &q);
        }
    }
}
