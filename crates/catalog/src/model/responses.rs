//! How a service answers: its rejection, its error bodies' shape, where its successes come
//! from.

/// How a service says "over the limit".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejection {
    /// HTTP status (429; Bitrix24 503).
    pub status: u16,
    /// `Content-Type` of the body.
    pub content_type: &'static str,
    /// The body's shape.
    pub style: ErrorStyle,
    /// How its refusal of too many requests in flight is told from a rate limit when both
    /// have this status (MoySklad's 429 with code 1073 beside code 1049).
    pub in_flight: Option<InFlightRefusal>,
}

/// Where a refusal of too many requests in flight says so: the value at a JSON pointer of its
/// body (`/errors/0/code` = 1073), or a text the string there contains (Yandex Market's 420s
/// share their code and differ in their message: `… 4 parallel requests …`). A client waits
/// for a slot after it; it says nothing of the rate, so it neither penalizes the bucket nor
/// teaches the learner.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InFlightRefusal {
    /// An RFC 6901 JSON pointer into the body.
    pub pointer: String,
    /// The value there…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<MarkerValue>,
    /// …or a text the string there contains (one of the two is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
}

/// A value an error body holds: a number or a text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum MarkerValue {
    /// A whole number (`1073`).
    Number(i64),
    /// A text (`"TOO_MANY_PARALLEL_REQUESTS"`).
    Text(String),
}

impl InFlightRefusal {
    /// Whether `body` (JSON) is this refusal.
    #[must_use]
    pub fn matches(&self, body: &[u8]) -> bool {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
            return false;
        };
        match (v.pointer(&self.pointer), &self.value) {
            (Some(serde_json::Value::Number(n)), Some(MarkerValue::Number(want))) => {
                n.as_i64() == Some(*want)
            }
            (Some(serde_json::Value::String(s)), Some(MarkerValue::Text(want))) => s == want,
            (Some(serde_json::Value::String(s)), None) => self
                .contains
                .as_deref()
                .is_some_and(|part| s.contains(part)),
            _ => false,
        }
    }
}

/// Where a service's successful answers come from: an algorithm of the sandbox, named by the
/// definition (the sandbox has one implementation per source).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnswerSource {
    /// The examples and schemas of the service's OpenAPI descriptions (WB), when loaded.
    OpenApiExamples,
    /// Bitrix24's REST methods, with `batch`.
    B24Methods,
    /// Apify's resources (actors, runs, datasets, key-value stores).
    ApifyResources,
    /// Ozon's product and warehouse answers.
    OzonFixtures,
    /// Each operation's `answer` in the definition.
    Fixtures,
}

impl ErrorStyle {
    /// The error code its rate-limit body carries, for styles whose rejection status is not 429
    /// alone (Bitrix24's 503 is also its plain server error).
    #[must_use]
    pub fn rate_limit_code(self) -> Option<&'static str> {
        match self {
            ErrorStyle::B24 => Some(crate::error_kind::B24_RATE_LIMIT_CODE),
            _ => None,
        }
    }

    /// The error code of its answer to a method whose operating-time budget is spent, for
    /// styles of services that have one (Bitrix24's `OPERATION_TIME_LIMIT`).
    #[must_use]
    pub fn operating_time_code(self) -> Option<&'static str> {
        match self {
            ErrorStyle::B24 => Some(crate::error_kind::B24_OPERATING_TIME_CODE),
            _ => None,
        }
    }
}

/// The shape of a service's error bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorStyle {
    /// WB: `{title, detail, code, requestId, origin, status, statusText, timestamp}`.
    Wb,
    /// Bitrix24: `{"error": CODE, "error_description": TEXT}`.
    B24,
    /// Apify: `{"error": {"type": TYPE, "message": TEXT}}`.
    Apify,
    /// Ozon (gRPC gateway `rpcStatus`): `{"code": INT, "message": TEXT, "details": []}`.
    Ozon,
    /// The definition's own templates (`[errors.templates]`).
    Template,
}
