//! [`RequestBuilder`]: one call, and its attempt loop.

use std::sync::PoisonError;
use std::time::{Duration, Instant, SystemTime};

use apistend_catalog::Method;
use serde_json::Value;

use super::budget::{operation_path, until_unix};
use super::{Client, Response, backoff};
use crate::error::{ClientError, RefusedBy};
use crate::hint::server_hint;
use crate::metrics::{RetryCause, inc};

/// One request being built.
#[derive(Debug)]
pub struct RequestBuilder<'a> {
    pub(super) client: &'a Client,
    pub(super) method: Method,
    pub(super) path: String,
    pub(super) query: Vec<(String, String)>,
    pub(super) body: Option<(Vec<u8>, &'static str)>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) deadline: Option<Instant>,
}

impl RequestBuilder<'_> {
    /// Adds query parameters.
    #[must_use]
    pub fn query(mut self, pairs: &[(&str, &str)]) -> Self {
        self.query.extend(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        self
    }

    /// A header of this request only (e.g. the sandbox's `X-Mock-Scenario`).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// A JSON body.
    #[must_use]
    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some((body.to_string().into_bytes(), "application/json"));
        self
    }

    /// Gives up (with a rate-limited error, without sending) when a wait would pass `deadline`.
    #[must_use]
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Sends with acquisition, retries and penalties.
    ///
    /// # Errors
    /// A [`ClientError`]: rate-limited (locally or by the server) with `retry_after`, a server or
    /// network error after the configured attempts, or the service's client error.
    ///
    /// # Cancel safety
    /// Dropping the future while it waits for a token takes nothing; dropping it after a token was
    /// taken spends that token, as the request may already be on the wire.
    pub async fn send(self) -> Result<Response, ClientError> {
        let c = &self.client.inner;
        let op_path = operation_path(c.definition(), &self.path);
        let plan = c.plan(self.method, &self.path);
        let ceiling = plan.ceiling;
        let url = format!("{}{}", c.base, self.path);
        let b24_method = c
            .definition()
            .has_webhook_paths()
            .then(|| op_path.trim_start_matches("/rest/").to_owned());
        let attempts = c.config.attempts.max(1);
        let mut waited = Duration::ZERO;
        for attempt in 1..=attempts {
            waited += c.acquire(&plan, self.deadline).await?;
            inc(&c.counters.attempts);
            let mut req = c
                .http
                .request(crate::http_method(self.method), &url)
                .query(&c.query)
                .query(&self.query);
            let mut timeout = c.config.request_timeout;
            if let Some(d) = self.deadline {
                timeout = timeout.min(
                    d.saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1)),
                );
            }
            req = req.timeout(timeout);
            for (k, v) in &self.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            if let Some((body, ct)) = &self.body {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, *ct)
                    .body(body.clone());
            }
            let sending = Instant::now();
            let sent = match req.send().await {
                Ok(r) => {
                    c.record_latency(sending.elapsed());
                    let status = r.status().as_u16();
                    let headers = r.headers().clone();
                    r.bytes().await.map(|b| (status, headers, b.to_vec()))
                }
                Err(e) => Err(e),
            };
            let (status, headers, body) = match sent {
                Ok(x) => x,
                Err(e) => {
                    if attempt == attempts || !self.backoff(attempt).await {
                        return Err(ClientError::Network {
                            attempts: attempt,
                            source: e,
                        });
                    }
                    c.count_retry(RetryCause::Network);
                    continue;
                }
            };
            // The server's report of the tokens left tightens the shared bucket.
            c.observe(&plan, status, &headers).await?;
            let json: Value = serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
            // The body's error code, where the service's errors carry one (Bitrix24's `error`).
            let error_code = json.get("error").and_then(Value::as_str).unwrap_or("");
            if (200..400).contains(&status) {
                if let (Some(m), Some(at)) = (
                    &b24_method,
                    json.pointer("/time/operating_reset_at")
                        .and_then(Value::as_f64),
                ) {
                    c.operating_reset
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(m.clone(), at);
                }
                return Ok(Response {
                    status,
                    headers,
                    body,
                    waited,
                });
            }
            if c.definition()
                .is_operating_time_spent(status, Some(error_code))
            {
                // This method's operating time is spent until its oldest minute leaves.
                let reset = b24_method.as_ref().and_then(|m| {
                    c.operating_reset
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(m)
                        .copied()
                });
                let wait = reset
                    .map(until_unix)
                    .or_else(|| server_hint(&headers, SystemTime::now()))
                    .unwrap_or(c.config.retry_base);
                if attempt == attempts || wait > ceiling || !self.sleep_within_deadline(wait).await
                {
                    return Err(ClientError::RateLimited {
                        retry_after: wait,
                        refused_by: RefusedBy::Server,
                    });
                }
                continue;
            }
            let rate_limited = c.definition().is_rate_limited(status, Some(error_code));
            if rate_limited {
                let pause = c.penalize(&plan, status, &headers, attempt).await?;
                if attempt == attempts {
                    return Err(ClientError::RateLimited {
                        retry_after: pause,
                        refused_by: RefusedBy::Server,
                    });
                }
                c.count_retry(RetryCause::RateLimit);
                // No sleep here: the next acquire waits out the penalty, as every process does.
                continue;
            }
            match status {
                401 => return Err(ClientError::Unauthorized { body: json }),
                403 => return Err(ClientError::Forbidden { body: json }),
                404 => return Err(ClientError::NotFound { body: json }),
                500.. => {
                    if attempt == attempts || !self.backoff(attempt).await {
                        return Err(ClientError::Server {
                            status,
                            attempts: attempt,
                            body: String::from_utf8_lossy(&body).into_owned(),
                        });
                    }
                    c.count_retry(RetryCause::Server);
                }
                _ => return Err(ClientError::Api { status, body: json }),
            }
        }
        Err(ClientError::Config("no attempt was made".into()))
    }

    /// Sleeps the backoff of `attempt`; false when the deadline does not leave room for it.
    async fn backoff(&self, attempt: u32) -> bool {
        self.sleep_within_deadline(backoff(self.client.inner.config.retry_base, attempt))
            .await
    }

    async fn sleep_within_deadline(&self, d: Duration) -> bool {
        if self.deadline.is_some_and(|dl| Instant::now() + d > dl) {
            return false;
        }
        tokio::time::sleep(d).await;
        true
    }
}
