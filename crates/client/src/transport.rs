//! reqwest as a tower service, for [`RateLimitLayer`](crate::layer::RateLimitLayer) and
//! [`RetryPolicy`](crate::layer::RetryPolicy) to wrap: a request goes out as it is, its answer comes
//! back whole (status, headers, body), whatever its status — judging answers is the layers' job.

use std::time::{Duration, Instant};

use apistend_catalog::Method;
use bytes::Bytes;

use crate::error::BoxError;

/// A deadline for one request through [`RateLimit`](crate::layer::RateLimit), as a request extension: when the wait for a
/// token would pass it, the call fails at once with `ClientError::RateLimited { refused_by: Local,
/// retry_after }` instead of waiting (up to the ceiling) for a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(pub Instant);

/// The longest one try of `Client::send` may take, as a request extension: the transport gives
/// each try this much, or what is left to the request's [`Deadline`] if that is sooner.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptTimeout(pub(crate) Duration);

impl AttemptTimeout {
    /// This try's timeout, for a request with these extensions: the try's own, cut to what is
    /// left of the request's [`Deadline`] (which counts every try of the call).
    fn of(ext: &http::Extensions) -> Option<Duration> {
        let left = ext.get::<Deadline>().map(|d| {
            d.0.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        });
        match (ext.get::<AttemptTimeout>().map(|t| t.0), left) {
            (Some(t), Some(left)) => Some(t.min(left)),
            (t, left) => t.or(left),
        }
    }
}

/// The catalog's method as reqwest's, for code that sends an operation's request itself.
///
/// ```
/// use apistend_catalog::Method;
/// assert_eq!(apistend_client::http_method(Method::Patch), reqwest::Method::PATCH);
/// ```
pub fn http_method(m: Method) -> reqwest::Method {
    match m {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
        Method::Head => reqwest::Method::HEAD,
        Method::Options => reqwest::Method::OPTIONS,
    }
}

/// A tower service sending each `http::Request<Bytes>` with `http` and answering the whole
/// response; its error is reqwest's (connect, timeout, a body cut off mid-way).
///
/// ```no_run
/// # async fn demo() -> Result<(), apistend_client::BoxError> {
/// use apistend_catalog::ServiceId;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// let wb = apistend_client::Client::builder()
///     .service(ServiceId::WB)
///     .account("seller-42")
///     .base_url("http://127.0.0.1:8080/wb")
///     .build()?;
/// let stack = ServiceBuilder::new()
///     .retry(wb.retry_policy())
///     .layer(wb.layer())
///     .service(apistend_client::reqwest_transport(reqwest::Client::new()));
/// let req = http::Request::get("http://127.0.0.1:8080/wb/api/v3/warehouses")
///     .header("Authorization", "key")
///     .body(bytes::Bytes::new())?;
/// let answer = stack.oneshot(req).await?;
/// # Ok(()) }
/// ```
pub fn reqwest_transport(
    http: reqwest::Client,
) -> impl tower::Service<
    http::Request<Bytes>,
    Response = http::Response<Bytes>,
    Error = BoxError,
    Future = impl Future<Output = Result<http::Response<Bytes>, BoxError>> + Send,
> + Clone
+ Send
+ Sync
+ 'static {
    tower::service_fn(move |req: http::Request<Bytes>| {
        let http = http.clone();
        async move {
            let (parts, body) = req.into_parts();
            let mut out = http
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body);
            if let Some(t) = AttemptTimeout::of(&parts.extensions) {
                out = out.timeout(t);
            }
            let answer = out.send().await?;
            let mut out = http::Response::builder()
                .status(answer.status())
                .version(http::Version::HTTP_11);
            if let Some(h) = out.headers_mut() {
                *h = answer.headers().clone();
            }
            // The whole body, or the error of an upstream that reset mid-body.
            let body = answer.bytes().await?;
            Ok::<_, BoxError>(out.body(body)?)
        }
    })
}
