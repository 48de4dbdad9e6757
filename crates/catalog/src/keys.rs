//! The one place a call's bucket keys are made — for the sandbox, the client and the proxy alike:
//! a limit group's key is its namespace, whose bucket it is (the tenant), the service, the
//! group, and the part of the call the group splits by (a host, a resource).

use std::borrow::Cow;

use apistend_limiter::bucket_key;

use crate::catalog::Resolved;
use crate::model::{InFlightLimit, LimitGroup, Operation, ServiceId};

/// The namespaces of bucket keys: who keeps the buckets.
pub mod namespace {
    /// The sandbox's buckets (the emulated service's own).
    pub const SANDBOX: &str = "apistend";
    /// An integration's buckets (the client, the proxy).
    pub const CLIENT: &str = "apistend:client";
    /// The sandbox's concurrency slots.
    pub const IN_FLIGHT: &str = "apistend:inflight";
    /// An integration's concurrency slots (the client, the proxy).
    pub const CLIENT_IN_FLIGHT: &str = "apistend:client:inflight";
}

/// What of a call its bucket keys depend on besides the tenant: its operation, the path it
/// called (for groups per resource) and the host it named (for groups per host).
#[derive(Debug, Clone, Copy, Default)]
pub struct CallSite<'a> {
    /// The operation, if the call matched one.
    pub operation: Option<&'a Operation>,
    /// The service-relative path.
    pub path: &'a str,
    /// The host the call named, if any.
    pub host: Option<&'a str>,
}

impl LimitGroup {
    /// The key of this group's bucket in `namespace`, for a call at `site` of `service` by
    /// `tenant`.
    ///
    /// ```
    /// use apistend_catalog::{CallSite, Catalog, Method, ServiceId, namespace};
    /// let catalog = Catalog::builtin()?;
    /// let path = "/v2/datasets/abc/items";
    /// let hit = catalog.resolve(ServiceId::APIFY, Method::Get, path, None).unwrap();
    /// let group = &hit.service.groups[hit.groups[0]];
    /// let site = CallSite { operation: hit.operation, path, host: None };
    /// let key = group.bucket_key(namespace::CLIENT, "acct", ServiceId::APIFY, &site);
    /// assert!(key.starts_with("apistend:client:{acct}:apify:") && key.ends_with(":datasetId=abc"));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn bucket_key(
        &self,
        namespace: &str,
        tenant: &str,
        service: ServiceId,
        site: &CallSite<'_>,
    ) -> String {
        let part = self.split(site.operation, site.path, site.host);
        key_of(namespace, tenant, service, &self.id, part.as_deref())
    }
}

impl InFlightLimit {
    /// The key of this limit's slots in `namespace` ([`namespace::IN_FLIGHT`] for the
    /// sandbox's, [`namespace::CLIENT_IN_FLIGHT`] for an integration's) for a call at `site` of
    /// `service` by `tenant`.
    #[must_use]
    pub fn slots_key(
        &self,
        namespace: &str,
        tenant: &str,
        service: ServiceId,
        site: &CallSite<'_>,
    ) -> String {
        let resource = site
            .operation
            .and_then(|op| op.resource(site.path, &self.per_resource))
            .map(|(name, value)| format!("{name}={value}"));
        key_of(namespace, tenant, service, &self.id, resource.as_deref())
    }
}

/// The key of limit `id` of `service` for `tenant` in `namespace`, split by `part` if any.
fn key_of(
    namespace: &str,
    tenant: &str,
    service: ServiceId,
    id: &str,
    part: Option<&str>,
) -> String {
    let sid = service.as_str();
    match part {
        Some(part) => bucket_key(namespace, tenant, &[sid, id, part]),
        None => bucket_key(namespace, tenant, &[sid, id]),
    }
}

impl<'a> Resolved<'a> {
    /// Each limit group the call draws from, most specific first, with its bucket's key in
    /// `namespace`: `tenant` says whose bucket a group is (a group's scope may make it the
    /// account's rather than the key's).
    pub fn bucket_keys<'t, F>(
        &'t self,
        namespace: &'t str,
        site: CallSite<'t>,
        tenant: F,
    ) -> impl Iterator<Item = (&'a LimitGroup, String)> + 't
    where
        F: Fn(&LimitGroup) -> Cow<'t, str> + 't,
    {
        let service = self.service;
        self.groups
            .iter()
            .filter_map(move |&i| service.groups.get(i))
            .map(move |g| {
                let key = g.bucket_key(namespace, &tenant(g), service.id, &site);
                (g, key)
            })
    }
}
