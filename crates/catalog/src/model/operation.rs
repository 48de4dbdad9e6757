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
    /// A field of the answer's JSON body whose items the answer costs in all (Yandex Market's
    /// data-volume limits counted on the response: `result.offers`): one token up front, the
    /// rest charged once the answer is made. Dotted for nested fields, through arrays
    /// (`result.warehouses.offers.offerId` counts every offer of every warehouse).
    pub cost_from: Option<String>,
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
    /// The largest request body it takes, in bytes, when it says (WB's card uploads: 10 MB);
    /// else its service's [`max_body`](super::service::Service::max_body).
    pub max_body: Option<u64>,
    /// What its requests must be, as its definition writes it (`[operations.request]`): an
    /// OpenAPI operation's `parameters` and `requestBody`, for the sandbox's validation.
    pub request: Option<serde_json::Value>,
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
    /// Tokens an answer with `status` and `answer` (its body) costs in all, given the `taken` up
    /// front: what a cost rule says (0 for Yandex Market's 5xx), else the items of
    /// [`cost_from`](Self::cost_from) in the answer's JSON (at least 1), else what was taken.
    /// The body is parsed only for an operation counted on its answer.
    ///
    /// ```
    /// # use apistend_catalog::{Catalog, Method, ServiceId};
    /// let catalog = Catalog::builtin()?;
    /// let id = catalog.service_id("ymarket")?;
    /// let path = "/v2/campaigns/1/offer-prices";
    /// let op = catalog.resolve(id, Method::Get, path, None).unwrap().operation.unwrap();
    /// let answer = br#"{"status":"OK","result":{"offers":[{"offerId":"a"},{"offerId":"b"}]}}"#;
    /// assert_eq!(op.cost_of(200, 1, answer), 2);
    /// assert_eq!(op.cost_of(500, 1, answer), 0);
    /// assert_eq!(op.cost_of(404, 1, b"{}"), 1);
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    #[must_use]
    pub fn cost_of(&self, status: u16, taken: u32, answer: &[u8]) -> u32 {
        if let Some(cost) = self.cost.get(&status) {
            return *cost;
        }
        match &self.cost_from {
            Some(field) => items(serde_json::from_slice(answer).ok().as_ref(), field),
            None => taken,
        }
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
        match &self.weight_from {
            Some(field) => items(body, field),
            None => self.weight,
        }
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

/// The items of the dotted `field` of `value`, at least 1: an array's elements; a field under
/// an array is looked up in each of its elements and their items added up (Yandex Market counts
/// `result.warehouses.offers.offerId` over every warehouse); a value that is not an array is one.
fn items(value: Option<&serde_json::Value>, field: &str) -> u32 {
    fn count(v: &serde_json::Value, mut path: std::str::Split<'_, char>) -> usize {
        if let serde_json::Value::Array(list) = v {
            return match path.clone().next() {
                // The named collection itself: its elements.
                None => list.len(),
                Some(_) => list.iter().map(|e| count(e, path.clone())).sum(),
            };
        }
        match path.next() {
            None => usize::from(!v.is_null()),
            Some(k) => v.get(k).map_or(0, |next| count(next, path)),
        }
    }
    let n = value.map_or(0, |v| count(v, field.split('.')));
    u32::try_from(n.max(1)).unwrap_or(u32::MAX)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::items;

    #[test]
    fn a_dotted_field_counts_through_arrays_and_is_at_least_one() {
        let stocks = json!({"result": {"warehouses": [
            {"offers": [{"offerId": "a"}, {"offerId": "b"}]},
            {"offers": [{"offerId": "c"}, {"other": 1}]},
        ]}});
        assert_eq!(items(Some(&stocks), "result.warehouses.offers.offerId"), 3);
        assert_eq!(items(Some(&stocks), "result.warehouses.offers"), 4);
        assert_eq!(items(Some(&stocks), "result.warehouses"), 2);
        let regions = json!({"regions": [{"children": [1, 2, 3]}, {"children": []}, {}]});
        assert_eq!(items(Some(&regions), "regions.children"), 3);
        assert_eq!(items(Some(&json!({"offers": []})), "offers"), 1);
        assert_eq!(items(Some(&json!({"offers": "x"})), "offers"), 1);
        assert_eq!(items(None, "offers"), 1);
    }
}
