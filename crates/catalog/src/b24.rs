//! Bitrix24 REST: a leaky bucket per portal (50, draining 2 per second; Enterprise 250 and 5), a
//! bucket of its own for each local application, and a budget of method operating time.

use apistend_limiter::Quota;

use crate::error::CatalogError;
use crate::model::{
    AnswerSource, BucketScope, CredentialChannel, ErrorStyle, HeaderStyle, LatencyProfile,
    LimitGroup, Method, OperatingBudget, Operation, Rejection, Service, ServiceId,
};

/// The one rate-limit group of Bitrix24.
pub const B24_GROUP: &str = "portal";

/// The REST methods the sandbox answers (`/rest/{method}`), with `batch` among them.
pub const B24_METHODS: [&str; 14] = [
    "crm.deal.fields",
    "crm.deal.list",
    "crm.deal.get",
    "crm.deal.add",
    "crm.deal.update",
    "crm.contact.list",
    "crm.contact.get",
    "crm.contact.add",
    "profile",
    "user.current",
    "app.info",
    "placement.bind",
    "server.time",
    "batch",
];

/// A Bitrix24 plan: it sets the bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum B24Plan {
    /// Every plan but Enterprise: 50 requests, 2 per second.
    #[default]
    Standard,
    /// Enterprise: 250 requests, 5 per second.
    Enterprise,
}

impl B24Plan {
    /// The plan's leaky bucket.
    ///
    /// # Errors
    /// Never for the built-in numbers; typed for symmetry with user quotas.
    pub fn quota(self) -> Result<Quota, CatalogError> {
        let (x, y) = match self {
            B24Plan::Standard => (50, 2),
            B24Plan::Enterprise => (250, 5),
        };
        Quota::leaky_bucket(x, y).map_err(|source| CatalogError::Quota {
            what: "b24 plan".into(),
            source,
        })
    }

    /// Parses `standard` or `enterprise`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(B24Plan::Standard),
            "enterprise" => Some(B24Plan::Enterprise),
            _ => None,
        }
    }
}

pub(crate) fn service() -> Result<Service, CatalogError> {
    let groups = vec![LimitGroup {
        id: B24_GROUP.into(),
        label: Some("portal (per local application when the request comes from one)".into()),
        quota: B24Plan::Standard.quota()?,
        scope: BucketScope::Application,
        documented: Some((500, 1)),
    }];
    let operations = B24_METHODS
        .iter()
        .map(|m| Operation {
            host: None,
            also_hosts: Vec::new(),
            method: Method::Post,
            path: format!("/rest/{m}"),
            groups: vec![0],
            cost: Default::default(),
            deprecated: false,
            category: Some(m.split('.').next().unwrap_or(m).to_owned()),
            summary: None,
        })
        .collect();
    Ok(Service {
        id: ServiceId::B24,
        prefix: "/b24",
        credentials: vec![CredentialChannel::WebhookPath, CredentialChannel::AuthParam],
        rejection: Rejection {
            status: 503,
            content_type: "application/json; charset=utf-8",
            style: ErrorStyle::B24,
        },
        errors: ErrorStyle::B24,
        headers: HeaderStyle::None,
        latency: LatencyProfile { base_ms: 50 },
        groups,
        operations,
        fallback_groups: vec![0],
        operating_budget: Some(OperatingBudget {
            limit_secs: 480,
            window_secs: 600,
        }),
        batch_max: Some(50),
        answers: AnswerSource::B24Methods,
        hosts: Vec::new(),
    })
}
