//! Which buckets a request draws from, and drawing from them: one token per request from every
//! group of the operation (all or nothing), and the extra cost of an answer afterwards.

use std::sync::Arc;

use apistend_catalog::{
    BucketScope, CallSite, LimitGroup, Resolved, Service, ServiceId, namespace,
};
use apistend_limiter::{Decision, Draw, LimiterError, Op, Quota, Store};

use crate::tenants::{Principal, View};

/// Whose buckets: the tenant part of every bucket key of a request.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    /// The key (or the presented, unknown credential: its requests spend tokens too); `app:ID`
    /// for a Bitrix24 local application.
    pub(crate) key: Arc<str>,
    /// A Bitrix24 local application.
    pub(crate) app: Option<Arc<str>>,
    /// The sandbox's view, when the credential belongs to one (its own limits apply).
    pub(crate) view: Option<Arc<View>>,
    /// The other part of its credential pair (Ozon's `Client-Id`), if the request sent one.
    pub(crate) part: Option<Arc<str>>,
}

impl Owner {
    /// The owner of a request with `principal`, having presented `presented` (and `part`, the
    /// other part of a credential pair).
    pub(crate) fn new(
        principal: Option<&Principal>,
        presented: Option<&str>,
        part: Option<&str>,
    ) -> Self {
        let mut owner = Self::of(principal, presented);
        owner.part = part.map(Arc::from);
        owner
    }

    fn of(principal: Option<&Principal>, presented: Option<&str>) -> Self {
        match principal {
            Some(Principal::Key { key, view }) => Owner {
                key: Arc::clone(key),
                app: None,
                view: Some(Arc::clone(view)),
                part: None,
            },
            Some(Principal::App { app, view }) => Owner {
                key: format!("app:{app}").into(),
                app: Some(Arc::clone(app)),
                view: Some(Arc::clone(view)),
                part: None,
            },
            None => {
                // Bounded, so that a flood of long garbage credentials cannot grow keys.
                let p: String = presented.unwrap_or("").chars().take(128).collect();
                Owner {
                    key: format!("unknown:{p}").into(),
                    app: None,
                    view: None,
                    part: None,
                }
            }
        }
    }
}

/// Where a request goes, as far as its buckets care: what their keys split by (its operation,
/// path and host: [`CallSite`]) and how many tokens it takes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spend<'a> {
    pub(crate) site: CallSite<'a>,
    /// Tokens the request takes up front from each group (its operation's weight).
    pub(crate) weight: u32,
}

impl<'a> Spend<'a> {
    /// Where a call of `resolved` goes: to `host` (if it named one) and `path`, with the
    /// weight its operation takes for `body`.
    pub(crate) fn of(
        resolved: &Resolved<'a>,
        host: Option<&'a str>,
        path: &'a str,
        body: Option<&serde_json::Value>,
    ) -> Self {
        Self {
            site: CallSite {
                operation: resolved.operation,
                path,
                host,
            },
            weight: resolved.operation.map_or(1, |o| o.weight_for(body)),
        }
    }
}

impl Owner {
    /// Whose buckets a limit of `scope` in `service` fills: the key, or the sandbox (per
    /// account), or the sandbox and the credential part. An application's key is `app:ID`: its
    /// buckets are its own, whatever the scope.
    pub(crate) fn tenant(&self, service: &str, scope: BucketScope) -> std::borrow::Cow<'_, str> {
        let view = self.view.as_ref().filter(|_| self.app.is_none());
        match (view, self.part.as_deref()) {
            (Some(v), Some(part)) if scope == BucketScope::CredentialPart => {
                format!("{}:part:{part}", v.account).into()
            }
            (Some(v), _) if scope == BucketScope::Account || v.per_account(service) => {
                (&*v.account).into()
            }
            _ => (&*self.key).into(),
        }
    }
}

/// The sandbox's bucket of `group` of `service` for `owner`, for a call at `site` (the key is
/// made by the catalog, as for the client).
pub(crate) fn key(
    service: ServiceId,
    group: &LimitGroup,
    owner: &Owner,
    site: &CallSite<'_>,
) -> String {
    let tenant = owner.tenant(service.as_str(), group.scope);
    group.bucket_key(namespace::SANDBOX, &tenant, service, site)
}

/// The quota of `svc`'s `group` for `owner`: its sandbox's own, else its sandbox's plan's, else
/// the catalog's.
pub(crate) fn quota(svc: &Service, group: &LimitGroup, owner: &Owner) -> Quota {
    let sid = svc.id.as_str();
    owner
        .view
        .as_ref()
        .and_then(|v| {
            v.quota(sid, &group.id)
                .or_else(|| svc.plan_quota(v.plan(sid)?, &group.id))
        })
        .unwrap_or(group.quota)
}

/// The bucket key and quota of every group `resolved` draws from, most specific first. (A
/// loop, not an iterator chain: on the request path, LLVM inlined this one whole.)
fn buckets(resolved: &Resolved<'_>, owner: &Owner, at: &Spend<'_>) -> Vec<(String, Quota)> {
    let svc = resolved.service;
    let mut out = Vec::with_capacity(resolved.groups.len());
    for g in resolved.groups.iter().filter_map(|&i| svc.groups.get(i)) {
        out.push((key(svc.id, g, owner, &at.site), quota(svc, g, owner)));
    }
    out
}

/// The outcome of drawing one token from every group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Charge {
    /// The decision to report: the refusing group's, else the operation's own group's.
    pub(crate) decision: Decision,
    /// The quota behind it (for a forced `rate_limit` answer).
    pub(crate) quota: Quota,
}

/// Takes the operation's weight (one token unless its definition says more) from each group, all
/// or nothing (one script call on Redis); if one refuses, reports it.
pub(crate) async fn take(
    store: &Store,
    resolved: &Resolved<'_>,
    owner: &Owner,
    at: &Spend<'_>,
) -> Result<Charge, LimiterError> {
    let weight = at.weight.max(1);
    let buckets: Vec<(String, Quota)> = buckets(resolved, owner, at);
    if let Some((k, q)) = buckets.iter().find(|(_, q)| weight > q.burst()) {
        // More than the bucket ever holds (a request with more items than the quota): refused,
        // never an error, and nothing taken.
        let mut d = store.peek(k, q).await?;
        d.allowed = false;
        d.retry_after = d.retry_after.max(q.span());
        return Ok(Charge {
            decision: d,
            quota: *q,
        });
    }
    let draws: Vec<Draw<'_>> = buckets
        .iter()
        .map(|(k, q)| Draw::new(k, *q, weight))
        .collect();
    let drawn = match store.acquire_all(&draws).await {
        Err(LimiterError::NothingToDraw) => {
            return Err(LimiterError::Config(format!(
                "{} has no limit group for this request",
                resolved.service.id
            )));
        }
        other => other?,
    };
    let quota = draws
        .get(drawn.refused.unwrap_or(0))
        .map(|d| d.quota)
        .ok_or(LimiterError::NothingToDraw)?;
    Ok(Charge {
        decision: drawn.decision,
        quota,
    })
}

/// `op` on every group's bucket — [`Op::Charge`] for an answer that costs more than was taken
/// (a WB 409 costs 10 in all: taken when there, else owed), [`Op::Refund`] for one that costs
/// less (Yandex Market's 5xx costs nothing) — in one call of the store; the operation's own
/// group's bucket afterwards (`None` without groups).
pub(crate) async fn settle(
    store: &Store,
    resolved: &Resolved<'_>,
    owner: &Owner,
    at: &Spend<'_>,
    op: Op,
) -> Result<Option<Decision>, LimiterError> {
    let buckets: Vec<(String, Quota)> = buckets(resolved, owner, at);
    if buckets.is_empty() {
        return Ok(None);
    }
    let refs: Vec<(&str, Quota)> = buckets.iter().map(|(k, q)| (k.as_str(), *q)).collect();
    Ok(Some(store.apply_all(&refs, op).await?.decision))
}
