//! A sandbox's own quotas of limit groups: set (merged with what it had, in one step with the
//! write) and removed.

use apistend_limiter::Quota;

use super::records::LimitRecord;
use super::store::Tenants;
use crate::error::SandboxError;

impl Tenants {
    /// Sets the sandbox's own quota of a group to what `merge` makes of its current one (`None`
    /// while it has none), in one step with the write: two partial changes at once both land.
    /// The outer error is the store's; the inner one `merge`'s (nothing is written then).
    ///
    /// # Errors
    /// [`SandboxError::NoSandbox`] for an unknown sandbox; [`SandboxError::Data`] when the data
    /// file cannot be written.
    pub fn set_limit<E>(
        &self,
        id: &str,
        service: &str,
        group: &str,
        merge: impl FnOnce(Option<Quota>) -> Result<Quota, E>,
    ) -> Result<Result<Quota, E>, SandboxError> {
        let mut outcome = None;
        self.edit(id, |s, _| {
            let current = s
                .limits
                .iter()
                .find(|l| l.service == service && l.group == group)
                .and_then(LimitRecord::quota);
            let quota = match merge(current) {
                Ok(q) => q,
                Err(e) => {
                    outcome = Some(Err(e));
                    return Ok(None);
                }
            };
            s.limits
                .retain(|l| !(l.service == service && l.group == group));
            s.limits.push(LimitRecord {
                service: service.to_owned(),
                group: group.to_owned(),
                burst: quota.burst(),
                interval_us: quota.interval_micros(),
                algorithm: quota.algorithm().as_str().to_owned(),
            });
            outcome = Some(Ok(quota));
            Ok(Some(()))
        })?;
        // `edit` returned, so it found the sandbox and ran the closure.
        outcome.ok_or_else(|| SandboxError::NoSandbox { id: id.to_owned() })
    }

    /// Removes the sandbox's own quota of a group: the plan's or the catalog's applies again.
    /// `false` when it had none.
    ///
    /// # Errors
    /// [`SandboxError::NoSandbox`] for an unknown sandbox; [`SandboxError::Data`] when the data
    /// file cannot be written.
    pub fn remove_limit(&self, id: &str, service: &str, group: &str) -> Result<bool, SandboxError> {
        self.edit(id, |s, _| {
            let before = s.limits.len();
            s.limits
                .retain(|l| !(l.service == service && l.group == group));
            Ok((s.limits.len() != before).then_some(()))
        })
        .map(|done| done.is_some())
    }
}
