//! One operation of a service: a method on a path template, its groups, weight and cost.

use std::collections::BTreeMap;

use super::ids::Method;

/// One operation: a method on a path template.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Operation {
    /// The host the real service serves it on (WB has 17), if the service has several.
    pub host: Option<String>,
    /// Other hosts serving a variant of it (WB `/ping`).
    pub also_hosts: Vec<String>,
    /// The method.
    pub method: Method,
    /// The path template, parameters in braces: `/api/v3/stocks/{warehouseId}`.
    pub path: String,
    /// The path its service's description names it by: the first of its definition's `paths`
    /// (Apify's `/v2/actors/…` for the deprecated `/v2/acts/…`).
    pub spec_path: String,
    /// Indices into [`Service::groups`](super::service::Service::groups), most specific first. Every group takes its tokens.
    pub groups: Vec<usize>,
    /// Tokens an answer with a given status costs in all (WB: a `409` costs 10, or 33).
    pub cost: BTreeMap<u16, u32>,
    /// Whether the service has deprecated it (WB operations without a limit block).
    pub deprecated: bool,
    /// The service's category of the operation (WB `x-category`).
    pub category: Option<String>,
    /// A short human description.
    pub summary: Option<String>,
    /// Tokens a request takes from each of its groups up front (MoySklad weighs a request 4;
    /// 1 elsewhere).
    pub weight: u32,
    /// A field of the request's JSON body whose items are the request's weight instead (Yandex
    /// Market's data-volume limits: `offers`); dotted for nested fields.
    pub weight_from: Option<String>,
    /// Its answer, when the definition writes one.
    pub fixture: Option<Fixture>,
    /// Answered without a credential and without spending any bucket (amoCRM's OAuth token
    /// exchange: a client calls it before it has a token, outside the API's limits).
    pub anonymous: bool,
    /// Whether a request of it may be sent again when it is not known whether the service
    /// applied it (a timeout after sending, a reset mid-answer, a 5xx): the definition's
    /// `repeatable`, else the rule of [`crate::repeat::repeatable_by_rule`] (RFC 9110 §9.2.2).
    pub repeatable: bool,
    /// The collection it acts on, when its service keeps one (its definition's `resources`).
    pub binding: Option<Binding>,
}

/// An operation's place in its service's [`resources`](super::service::Service::resources): the
/// collection and the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Binding {
    /// Index into the service's resources.
    pub resource: usize,
    /// Index into that resource's actions.
    pub action: usize,
}

impl Operation {
    /// Tokens an answer with `status` costs in all, given the `taken` up front: what a cost rule
    /// says (0 for Yandex Market's 5xx), else what was taken.
    pub fn cost_of(&self, status: u16, taken: u32) -> u32 {
        self.cost.get(&status).copied().unwrap_or(taken)
    }

    /// Tokens `body` (the request's JSON) takes up front: the number of items of `weight_from`
    /// when the operation names such a field (at least 1), else `weight`.
    ///
    /// ```
    /// # use apistend_catalog::{Catalog, Method, ServiceId};
    /// let catalog = Catalog::builtin()?;
    /// let path = "/v2/campaigns/1/offer-prices/updates";
    /// let id = catalog.service_id("ymarket")?;
    /// let op = catalog.resolve(id, Method::Post, path, None).unwrap().operation.unwrap();
    /// let body = serde_json::json!({"offers": [{"offerId": "a"}, {"offerId": "b"}]});
    /// assert_eq!(op.weight_for(Some(&body)), 2);
    /// assert_eq!(op.weight_for(None), 1);
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn weight_for(&self, body: Option<&serde_json::Value>) -> u32 {
        let Some(field) = &self.weight_from else {
            return self.weight;
        };
        let items = body
            .and_then(|b| field.split('.').try_fold(b, |v, k| v.get(k)))
            .and_then(serde_json::Value::as_array)
            .map_or(1, Vec::len);
        u32::try_from(items.max(1)).unwrap_or(u32::MAX)
    }

    /// The value of path parameter `name` in `path`, a path this operation's template matches.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let path = "/v2/datasets/abc/items";
    /// let hit = catalog
    ///     .resolve(apistend_catalog::ServiceId::APIFY, apistend_catalog::Method::Get, path, None)
    ///     .unwrap();
    /// assert_eq!(hit.operation.unwrap().param(path, "datasetId"), Some("abc"));
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn param<'p>(&self, path: &'p str, name: &str) -> Option<&'p str> {
        self.param_at(name)
            .and_then(|at| path.split('/').nth(at).filter(|v| !v.is_empty()))
    }

    /// The resource `path` addresses: the first of `names` this operation's template has, and
    /// its value in `path`.
    #[must_use]
    pub fn resource<'n, 'p>(
        &self,
        path: &'p str,
        names: &'n [String],
    ) -> Option<(&'n str, &'p str)> {
        names
            .iter()
            .find_map(|n| Some((n.as_str(), self.param(path, n)?)))
    }

    fn param_at(&self, name: &str) -> Option<usize> {
        self.path
            .split('/')
            .position(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) == Some(name))
    }
}

/// A fixed answer of an operation, written in its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fixture {
    /// Its status.
    pub status: u16,
    /// Its body (`null` for no content).
    pub body: serde_json::Value,
    /// Its media type when it is a file, not JSON.
    pub media: Option<String>,
}
