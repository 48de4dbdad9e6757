//! A Redis that comes back empty gets back what this instance wrote (`mirror.rs` says how):
//! each instance follows the instances' epoch and writes its mirror back when it moves.

use super::error::ObjectsError;
use super::redis::{RedisObjects, unavailable};

impl RedisObjects {
    /// Writes `sandbox`'s mirror back (a Redis that came back empty), or only that of its
    /// collection `only` (found untouched): per object, the later revision stays.
    ///
    /// # Errors
    /// When Redis does not answer.
    pub(super) async fn restore(
        &self,
        sandbox: &str,
        only: Option<&str>,
    ) -> Result<(), ObjectsError> {
        let Some(mirrored) = self.mirror.of(sandbox) else {
            return Ok(());
        };
        let mut a = vec!["restore".to_owned(), String::new()];
        a.extend(mirrored.restore_args(only));
        self.call(sandbox, &a).await.map(drop)
    }

    /// Writes every sandbox's mirror back each time the instances' epoch moves (Redis lost
    /// its keys), while `tenants` is in use; the mirrors of sandboxes deleted meanwhile are
    /// dropped first.
    pub(super) fn follow(&self, tenants: crate::tenants::WeakTenants) {
        let me = self.clone();
        tokio::spawn(async move {
            let mut seen: Option<Option<String>> = None;
            let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
            loop {
                tick.tick().await;
                let Some(t) = crate::tenants::Tenants::upgrade(&tenants) else {
                    break;
                };
                let Ok(epoch) = me.epoch().await else {
                    continue;
                };
                if seen.as_ref().is_some_and(|s| *s != epoch) {
                    me.mirror.retain(&|id| t.view(id).is_some());
                    if !me.restore_all().await {
                        continue; // the epoch not taken as seen: tried again at the next tick
                    }
                }
                seen = Some(epoch);
            }
        });
    }

    /// Writes every mirror back; `false` when one could not be.
    async fn restore_all(&self) -> bool {
        let mut all = true;
        for (sandbox, _) in self.mirror.snapshot() {
            if let Err(e) = self.restore(&sandbox, None).await {
                tracing::warn!(sandbox, error = %e, "could not give Redis back this instance's objects; trying again");
                all = false;
            }
        }
        all
    }

    async fn epoch(&self) -> Result<Option<String>, ObjectsError> {
        self.conn
            .clone()
            .query(&redis::cmd("GET").arg(crate::sync::EPOCH_KEY).clone())
            .await
            .map_err(unavailable)
    }
}
