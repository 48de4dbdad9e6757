//! A journal entry as the management API shows it (and as the Redis journal keeps it): secrets
//! masked, the operation and the limit group named, bodies as text, the wait the answer
//! announced read the way the service's definition says.

use std::collections::BTreeMap;

use apistend_catalog::Catalog;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::entry::{Entry, Refused};
use super::head;
use super::mask::Mask;

/// One request of a sandbox and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Record {
    /// Unique in the sandbox: the instance that answered it and its number there.
    pub(crate) id: String,
    /// When it arrived, RFC 3339 UTC.
    pub(crate) at: String,
    /// When it arrived, in milliseconds since the Unix epoch.
    pub(crate) at_ms: u64,
    /// The same in microseconds.
    pub(crate) at_us: u64,
    /// Microseconds from its arrival to its answer.
    pub(crate) latency_us: u64,
    /// The number of the connection it came on, in this instance (0: not known): requests on
    /// one connection were sent one after the other's answer.
    pub(crate) connection: u64,
    /// The key (or `app:ID`, a Bitrix24 local application).
    pub(crate) key: String,
    pub(crate) service: String,
    /// `METHOD /path/template` of the operation it resolved to, if any.
    pub(crate) operation: Option<String>,
    /// The limit group it drew from.
    pub(crate) group: Option<String>,
    pub(crate) request: Sent,
    pub(crate) response: Answered,
    pub(crate) decision: Decided,
}

/// The request, as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Sent {
    pub(crate) method: String,
    /// The path as sent (the sandbox's service prefix included; a credential in it masked).
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    /// Lower-case name → value (repeated headers joined by `, `); credentials masked.
    pub(crate) headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub(crate) body: BodyShown,
}

/// The answer, as it was sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Answered {
    pub(crate) status: u16,
    pub(crate) headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub(crate) body: BodyShown,
}

/// A body: its text (or base64, when it is not UTF-8), up to the journal's bound.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub(crate) struct BodyShown {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) body_base64: Option<String>,
    /// Its whole length.
    pub(crate) body_bytes: usize,
    /// Whether only its start is kept.
    pub(crate) body_truncated: bool,
}

/// What the sandbox decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Decided {
    /// Tokens left in the bucket after it, when it reached the limit.
    pub(crate) remaining: Option<u32>,
    /// The bucket's capacity.
    pub(crate) limit: Option<u32>,
    /// Why it was refused, if it was.
    pub(crate) refused: Option<Refused>,
    /// The refusal's reason (a validation's: what is wrong with the request).
    pub(crate) reason: Option<String>,
    /// The scenario that answered (`X-APIStend-Scenario`), if any.
    pub(crate) scenario: Option<String>,
    /// Milliseconds the answer asked the client to wait before its next request to the
    /// bucket (its service's pause headers), if it asked.
    pub(crate) wait_ms: Option<u64>,
}

impl Record {
    /// `e` as shown, numbered `id`: [`Record::brief`] with what a reader sees besides, secrets
    /// masked.
    pub(crate) fn of(e: &Entry, id: String, catalog: &Catalog) -> Self {
        let mut r = Self::brief(e, catalog);
        let mask = Mask::new(
            Some(e.credential.as_deref().unwrap_or(&e.key)),
            &[e.body(), e.answer_bytes()],
        );
        let request_head = String::from_utf8_lossy(e.head());
        let answer_head = e.answer_head_lines();
        let (_, path, query, sent) = head::split_request(&request_head);
        let header = |name: &str| head::value(&answer_head, name);
        r.id = id;
        r.at = apistend_answers::clock::utc_ms(i64::try_from(r.at_ms).unwrap_or(i64::MAX));
        r.operation = catalog
            .service(e.service)
            .zip(e.operation)
            .and_then(|(s, i)| s.operations.get(i))
            .map(|o| format!("{} {}", o.method, o.path));
        r.request.path = mask.text(path).into_owned();
        r.request.query = query.map(|q| mask.text(q).into_owned());
        r.request.headers = headers(sent, &mask);
        r.request.body = shown(e.body(), e.body_len, &mask);
        r.response.headers = headers(head::header_lines(&answer_head), &mask);
        r.response.body = shown(e.answer_bytes(), e.answer_len, &mask);
        let d = &mut r.decision;
        (d.remaining, d.limit) = (e.fill.map(|f| f.0), e.fill.map(|f| f.1));
        d.scenario = header(crate::scenario::X_APISTEND_SCENARIO_NAME).map(str::to_owned);
        d.reason = e.refused.map(|k| {
            header(crate::heads::X_APISTEND_INVALID).map_or_else(
                || reason(k, r.group.as_deref(), d.scenario.as_deref()),
                str::to_owned,
            )
        });
        r
    }

    /// `e` as the conduct report follows it ([`super::conduct`]) and no more: its key, bucket,
    /// times, connection, the request as it identifies a repeated one, the status and the
    /// decision; no header, nothing masked (the metrics' tally reads it, nobody is shown it;
    /// [`Record::of`] adds the rest).
    pub(crate) fn brief(e: &Entry, catalog: &Catalog) -> Self {
        let service = catalog.service(e.service);
        let answer_head = e.answer_head_lines();
        let header = |name: &str| head::value(&answer_head, name);
        let request_head = String::from_utf8_lossy(e.head());
        let (method, path, query, _) = head::split_request(&request_head);
        let body = (!e.body().is_empty()).then(|| String::from_utf8_lossy(e.body()).into_owned());
        Record {
            id: String::new(),
            at: String::new(),
            at_ms: e.at_us / 1000,
            at_us: e.at_us,
            latency_us: e.latency_us,
            connection: e.conn,
            key: e.key.to_string(),
            service: e.service.as_str().to_owned(),
            operation: None,
            group: group_of(e, service),
            request: Sent {
                method: method.to_owned(),
                path: path.to_owned(),
                query: query.map(str::to_owned),
                headers: BTreeMap::new(),
                body: BodyShown {
                    body,
                    ..BodyShown::default()
                },
            },
            response: Answered {
                status: e.status,
                headers: BTreeMap::new(),
                body: BodyShown::default(),
            },
            decision: Decided {
                remaining: None,
                limit: None,
                refused: e.refused,
                reason: None,
                scenario: None,
                wait_ms: service.and_then(|s| s.announced_wait_ms(header, e.answered_ms())),
            },
        }
    }

    /// The request's body as JSON, if it is JSON.
    pub(crate) fn request_json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(self.request.body.body.as_deref()?).ok()
    }
}

/// The name of the limit group `e` drew from.
fn group_of(e: &Entry, service: Option<&apistend_catalog::Service>) -> Option<String> {
    service
        .zip(e.group)
        .and_then(|(s, g)| s.groups.get(g))
        .map(|g| g.id.clone())
}

/// The reason of a refusal that carries none of its own.
fn reason(r: Refused, group: Option<&str>, scenario: Option<&str>) -> String {
    let group = group.unwrap_or("its group");
    match r {
        Refused::Limit => format!("over the limit of {group}"),
        Refused::Validation => "not a request its operation takes".to_owned(),
        Refused::Lockout => "the key is locked out after repeated rejections".to_owned(),
        Refused::InFlight => format!("too many requests of {group} at once"),
        Refused::Operating => "the method's operating time is spent".to_owned(),
        Refused::Scenario => format!("the scenario {}", scenario.unwrap_or("asked for")),
    }
}

fn headers<'h>(
    lines: impl Iterator<Item = (&'h str, &'h str)>,
    mask: &Mask,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in lines {
        let v = mask.header(name, value);
        out.entry(name.to_owned())
            .and_modify(|old| {
                old.push_str(", ");
                old.push_str(&v);
            })
            .or_insert(v);
    }
    out
}

/// A kept body as text (a multi-byte character cut at the bound is left out), or as base64
/// when it is not text.
fn shown(kept: &[u8], len: usize, mask: &Mask) -> BodyShown {
    let truncated = kept.len() < len;
    let text = match std::str::from_utf8(kept) {
        Ok(t) => Some(t),
        Err(e) if truncated && e.error_len().is_none() => {
            std::str::from_utf8(kept.get(..e.valid_up_to()).unwrap_or_default()).ok()
        }
        Err(_) => None,
    };
    let (body, body_base64) = match text {
        Some("") if len == 0 => (None, None),
        Some(t) => (Some(mask.text(t).into_owned()), None),
        None => (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(kept)),
        ),
    };
    BodyShown {
        body,
        body_base64,
        body_bytes: len,
        body_truncated: truncated,
    }
}
