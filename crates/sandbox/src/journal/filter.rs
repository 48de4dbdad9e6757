//! Which requests of a journal a question is about: by operation, path, key, status, kind of
//! refusal, time, and a JSONPath match on the request's body (RFC 9535, the
//! `serde_json_path` crate) — what a tester used to WireMock's request matching asks.

use serde_json::Value;
use serde_json_path::JsonPath;

use super::entry::Refused;
use super::record::Record;

/// A filter, parsed once; every field left out matches everything.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    /// `METHOD /path/template`, or the template alone.
    pub(crate) operation: Option<String>,
    /// The path as sent; a trailing `*` matches any rest.
    pub(crate) path: Option<String>,
    pub(crate) key: Option<String>,
    pub(crate) service: Option<String>,
    pub(crate) status: Option<Status>,
    pub(crate) refused: Option<RefusedFilter>,
    /// Arrived at or after this moment (Unix milliseconds).
    pub(crate) since_ms: Option<u64>,
    /// The request's JSON body has a node at this path (equal to `body_value`, if given).
    pub(crate) body_path: Option<JsonPath>,
    pub(crate) body_value: Option<Value>,
}

/// A status, or a class of them (`4xx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Exact(u16),
    Class(u16),
}

/// Refused for this reason, for any, or not refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefusedFilter {
    Kind(Refused),
    Any,
    None,
}

/// Why a filter does not parse.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FilterError {
    #[error("status: a status (429) or a class of them (4xx), got {0:?}")]
    Status(String),
    #[error(
        "refused: limit, validation, lockout, in_flight, operating, scenario, any or none, got {0:?}"
    )]
    Refused(String),
    #[error("body_path: not a JSONPath (RFC 9535): {0}")]
    BodyPath(String),
}

impl Status {
    pub(crate) fn parse(s: &str) -> Result<Self, FilterError> {
        let bad = || FilterError::Status(s.to_owned());
        if let Some(class) = s.strip_suffix("xx").or_else(|| s.strip_suffix("XX")) {
            return match class.parse::<u16>() {
                Ok(c @ 1..=5) if class.len() == 1 => Ok(Status::Class(c)),
                _ => Err(bad()),
            };
        }
        match s.parse::<u16>() {
            Ok(n @ 100..=599) => Ok(Status::Exact(n)),
            _ => Err(bad()),
        }
    }

    fn matches(self, status: u16) -> bool {
        match self {
            Status::Exact(n) => status == n,
            Status::Class(c) => status / 100 == c,
        }
    }
}

impl RefusedFilter {
    pub(crate) fn parse(s: &str) -> Result<Self, FilterError> {
        Ok(match s {
            "any" => RefusedFilter::Any,
            "none" => RefusedFilter::None,
            _ => RefusedFilter::Kind(
                serde_json::from_value(Value::String(s.to_owned()))
                    .map_err(|_| FilterError::Refused(s.to_owned()))?,
            ),
        })
    }
}

/// A JSONPath query.
pub(crate) fn body_path(s: &str) -> Result<JsonPath, FilterError> {
    JsonPath::parse(s).map_err(|e| FilterError::BodyPath(e.to_string()))
}

/// A JSON value to compare with; what is not JSON is taken as a string (`My deal`).
pub(crate) fn body_value(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_owned()))
}

impl Filter {
    /// Whether `r` is one of the requests asked about.
    pub(crate) fn matches(&self, r: &Record) -> bool {
        self.operation.as_deref().is_none_or(|want| {
            r.operation.as_deref().is_some_and(|op| {
                op == want || op.split_once(' ').is_some_and(|(_, path)| path == want)
            })
        }) && self
            .path
            .as_deref()
            .is_none_or(|want| match want.strip_suffix('*') {
                Some(stem) => r.request.path.starts_with(stem),
                None => r.request.path == want,
            })
            && self.key.as_deref().is_none_or(|k| r.key == k)
            && self.service.as_deref().is_none_or(|s| r.service == s)
            && self.status.is_none_or(|s| s.matches(r.response.status))
            && self.refused.is_none_or(|f| match f {
                RefusedFilter::Any => r.decision.refused.is_some(),
                RefusedFilter::None => r.decision.refused.is_none(),
                RefusedFilter::Kind(k) => r.decision.refused == Some(k),
            })
            && self.since_ms.is_none_or(|t| r.at_ms >= t)
            && self.body_matches(r)
    }

    fn body_matches(&self, r: &Record) -> bool {
        let Some(path) = &self.body_path else {
            return true;
        };
        let Some(body) = r.request_json() else {
            return false;
        };
        let nodes = path.query(&body);
        match &self.body_value {
            Some(want) => nodes.iter().any(|n| *n == want),
            None => !nodes.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_refusals_parse_as_documented() {
        assert_eq!(Status::parse("429").unwrap(), Status::Exact(429));
        assert_eq!(Status::parse("4xx").unwrap(), Status::Class(4));
        for bad in ["42", "6xx", "44xx", "abc", "700"] {
            assert!(Status::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            RefusedFilter::parse("in_flight").unwrap(),
            RefusedFilter::Kind(Refused::InFlight)
        );
        assert!(RefusedFilter::parse("late").is_err());
        assert_eq!(body_value("My deal"), Value::from("My deal"));
        assert_eq!(body_value("42"), Value::from(42));
        assert_eq!(body_value("{oops"), Value::from("{oops"));
        assert!(body_path("$.a[").is_err());
    }
}
