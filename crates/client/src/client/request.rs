//! [`RequestBuilder`]: one call, sent through the client's own tower stack.

use std::time::{Duration, Instant};

use apistend_catalog::Method;
use bytes::Bytes;
use serde_json::Value;
use tower::ServiceExt;

use super::handle::Client;
use super::judge::Judged;
use super::response::Response;
use crate::error::BoxError;
use crate::error::{ClientError, RefusedBy};
use crate::layer::Attempts;
use crate::layer::Waited;
use crate::transport::AttemptTimeout;
use crate::transport::Deadline;

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

    /// Sends with acquisition, retries and penalties: through [`RetryPolicy`](crate::layer::RetryPolicy)
    /// over [`RateLimitLayer`](crate::layer::RateLimitLayer) over
    /// [`reqwest_transport`](crate::transport::reqwest_transport), the stack `apistend proxy` uses too.
    ///
    /// # Errors
    /// A [`ClientError`]: rate-limited (locally or by the server) with `retry_after`, a server or
    /// network error after the configured attempts, or the service's client error.
    ///
    /// # Cancel safety
    /// Dropping the future while it waits for a token takes nothing; dropping it after a token was
    /// taken spends that token, as the request may already be on the wire.
    pub async fn send(self) -> Result<Response, ClientError> {
        let client = self.client;
        let waited = Waited::default();
        let attempts = Attempts::default();
        let req = self.http_request(&waited, &attempts)?;
        let stack = tower::ServiceBuilder::new()
            .retry(client.retry_policy())
            .layer(client.layer())
            .service(crate::transport::reqwest_transport(
                client.inner.http.clone(),
            ));
        let tries = || attempts.get().max(1);
        match stack.oneshot(req).await {
            Ok(answer) => ended(answer, waited.get(), tries()),
            Err(e) => Err(failure(e, tries())),
        }
    }

    /// The request as the stack takes it: the base URL and path, the client's and this call's
    /// query, this call's headers (the client's own are reqwest's defaults) and body, the call's
    /// deadline, wait and tries.
    fn http_request(
        self,
        waited: &Waited,
        attempts: &Attempts,
    ) -> Result<http::Request<Bytes>, ClientError> {
        let c = &self.client.inner;
        let mut url = format!("{}{}", c.base, self.path);
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(c.query.iter().chain(&self.query));
        let query = query.finish();
        if !query.is_empty() {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&query);
        }
        // Parsed as a URL first: it percent-encodes what a path may carry unencoded (spaces,
        // Cyrillic), which an `http::Uri` would refuse.
        let url = reqwest::Url::parse(&url)
            .map_err(|e| ClientError::Config(format!("request URL {url:?}: {e}")))?;
        let bad = |e: http::Error| ClientError::Config(format!("request {url}: {e}"));
        let mut req = http::Request::builder()
            .method(crate::transport::http_method(self.method))
            .uri(url.as_str());
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let body = match self.body {
            Some((body, ct)) => {
                req = req.header(http::header::CONTENT_TYPE, ct);
                Bytes::from(body)
            }
            None => Bytes::new(),
        };
        let mut req = req.body(body).map_err(bad)?;
        let ext = req.extensions_mut();
        ext.insert(waited.clone());
        ext.insert(attempts.clone());
        ext.insert(AttemptTimeout(c.config.request_timeout));
        if let Some(d) = self.deadline {
            ext.insert(Deadline(d));
        }
        Ok(req)
    }
}

/// What the last answer of a call makes of it.
fn ended(
    answer: http::Response<Bytes>,
    waited: Duration,
    attempts: u32,
) -> Result<Response, ClientError> {
    let status = answer.status().as_u16();
    match answer.extensions().get::<Judged>() {
        Some(Judged::RateLimited { pause }) => {
            return Err(ClientError::RateLimited {
                retry_after: *pause,
                refused_by: RefusedBy::Server,
            });
        }
        Some(Judged::OperatingTimeSpent { wait, .. } | Judged::TooManyInFlight { wait }) => {
            return Err(ClientError::RateLimited {
                retry_after: *wait,
                refused_by: RefusedBy::Server,
            });
        }
        None => {}
    }
    let (parts, body) = answer.into_parts();
    if (200..400).contains(&status) {
        return Ok(Response {
            status,
            headers: parts.headers,
            body: body.into(),
            waited,
        });
    }
    // The service's error body, as JSON (a JSON string when it is not).
    let json = || {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    Err(match status {
        401 => ClientError::Unauthorized { body: json() },
        403 => ClientError::Forbidden { body: json() },
        404 => ClientError::NotFound { body: json() },
        500.. => ClientError::Server {
            status,
            attempts,
            body: String::from_utf8_lossy(&body).into_owned(),
        },
        _ => ClientError::Api {
            status,
            body: json(),
        },
    })
}

/// The error a call ended in: the limiter's own (a local refusal, a store that is down), or the
/// transport's after `attempts` tries.
fn failure(e: BoxError, attempts: u32) -> ClientError {
    let e = match e.downcast::<ClientError>() {
        Ok(own) => return *own,
        Err(e) => e,
    };
    match e.downcast::<reqwest::Error>() {
        Ok(source) => ClientError::Network {
            attempts,
            source: *source,
        },
        Err(source) => ClientError::Transport { attempts, source },
    }
}

impl Client {
    /// A request of `method` to `path` (relative to the base URL).
    pub fn request(&self, method: Method, path: impl Into<String>) -> RequestBuilder<'_> {
        RequestBuilder {
            client: self,
            method,
            path: path.into(),
            query: Vec::new(),
            body: None,
            headers: Vec::new(),
            deadline: None,
        }
    }

    /// `GET path`.
    pub fn get(&self, path: impl Into<String>) -> RequestBuilder<'_> {
        self.request(Method::Get, path)
    }

    /// `POST path`.
    pub fn post(&self, path: impl Into<String>) -> RequestBuilder<'_> {
        self.request(Method::Post, path)
    }
}

#[cfg(test)]
mod tests {
    use apistend_catalog::ServiceId;

    use super::*;

    #[test]
    fn the_request_carries_the_query_encoded_and_the_calls_state() {
        let c = Client::builder()
            .service(ServiceId::WB)
            .account("a")
            .base_url("http://127.0.0.1:9/wb")
            .query_param("locale", "ru")
            .config(crate::config::ClientConfig::default())
            .build()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let req = c
            .get("/content/v2/cards?name=Кружка кофе")
            .query(&[("q", "a b&c")])
            .header("X-Mock-Delay", "0")
            .deadline(deadline)
            .http_request(&Waited::default(), &Attempts::default())
            .unwrap();
        assert_eq!(
            req.uri().to_string(),
            "http://127.0.0.1:9/wb/content/v2/cards?name=%D0%9A%D1%80%D1%83%D0%B6%D0%BA%D0%B0%20%D0%BA%D0%BE%D1%84%D0%B5&locale=ru&q=a+b%26c"
        );
        assert_eq!(req.headers()["x-mock-delay"], "0");
        assert_eq!(
            req.extensions().get::<Deadline>(),
            Some(&Deadline(deadline))
        );
        assert!(req.extensions().get::<AttemptTimeout>().is_some());
        let bad = c.get("/x").header("bad header", "v");
        assert!(matches!(
            bad.http_request(&Waited::default(), &Attempts::default()),
            Err(ClientError::Config(_))
        ));
    }
}
