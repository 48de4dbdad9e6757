//! The proxy's transport: a request goes upstream as it is, and its answer comes back streamed —
//! never held whole in memory — except where the service's definition needs the body to judge
//! the answer (Bitrix24's 503 and 429, and the operating-time report of its successes), which is
//! read up to a bound.
//!
//! The request's [`Deadline`] bounds the time to the answer's head (and a judged body); a streamed
//! body is bounded by the time between its pieces instead (nginx's `proxy_read_timeout`), so a
//! large answer that keeps coming is not cut at the deadline.

use std::time::{Duration, Instant};

use apistend_catalog::Service;
use apistend_client::{BoxError, Deadline};
use axum::body::{Body, Bytes};

/// An upstream answer's body: whole (read to judge it) or still coming.
pub(crate) enum UpstreamBody {
    /// Read whole, for the judge.
    Whole(Bytes),
    /// Streamed to the client as it comes; its pieces may each take up to the idle timeout.
    Streamed(reqwest::Response, Duration),
}

impl AsRef<[u8]> for UpstreamBody {
    /// The bytes the judge sees: all of a whole body; none of a streamed one, whose status the
    /// service's definition judges without a body.
    fn as_ref(&self) -> &[u8] {
        match self {
            Self::Whole(b) => b,
            Self::Streamed(..) => &[],
        }
    }
}

impl UpstreamBody {
    /// The body for the client.
    pub(crate) fn into_body(self) -> Body {
        match self {
            Self::Whole(b) => Body::from(b),
            Self::Streamed(answer, idle) => Body::from_stream(futures_util::stream::try_unfold(
                answer,
                move |mut a| async move {
                    match tokio::time::timeout(idle, a.chunk()).await {
                        Ok(Ok(Some(piece))) => Ok(Some((piece, a))),
                        Ok(Ok(None)) => Ok(None),
                        Ok(Err(e)) => Err(BoxError::from(e)),
                        Err(_) => Err(BoxError::from(UpstreamError::Stalled(idle))),
                    }
                },
            )),
        }
    }
}

/// How an upstream failed, besides reqwest's own errors.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UpstreamError {
    /// No answer head (or judged body) before the request's deadline.
    #[error("no answer within the request's deadline ({0:?}, --upstream-timeout-s)")]
    TimedOut(Duration),
    /// A body the definition needs to judge was larger than the bound.
    #[error(
        "the answer's body is over {0} bytes, and this service's answers of this status are judged by their body (--max-judged-body-bytes)"
    )]
    TooLargeToJudge(usize),
    /// A streamed body stopped coming.
    #[error("the answer's body stopped coming for {0:?} (--upstream-timeout-s)")]
    Stalled(Duration),
}

/// What the transport needs.
#[derive(Clone)]
pub(crate) struct Transport {
    pub(crate) http: reqwest::Client,
    /// The service whose answers are judged (whose body it needs, by status).
    pub(crate) service: std::sync::Arc<Service>,
    /// The largest body read to judge it.
    pub(crate) max_judged: usize,
    /// How long a streamed body may pause between pieces.
    pub(crate) idle: Duration,
}

impl Transport {
    /// `self` as a tower service.
    pub(crate) fn service(
        self,
    ) -> impl tower::Service<
        http::Request<Bytes>,
        Response = http::Response<UpstreamBody>,
        Error = BoxError,
        Future = impl Future<Output = Result<http::Response<UpstreamBody>, BoxError>> + Send,
    > + Clone
    + Send
    + Sync
    + 'static {
        tower::service_fn(move |req: http::Request<Bytes>| {
            let t = self.clone();
            async move { t.send(req).await }
        })
    }

    async fn send(
        &self,
        req: http::Request<Bytes>,
    ) -> Result<http::Response<UpstreamBody>, BoxError> {
        let (parts, body) = req.into_parts();
        // One deadline for the head and a judged body together.
        let deadline = parts.extensions.get::<Deadline>().map(|d| {
            (
                tokio::time::Instant::from_std(d.0),
                d.0.saturating_duration_since(Instant::now()),
            )
        });
        let out = self
            .http
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send();
        let answer = match deadline {
            Some((at, left)) => tokio::time::timeout_at(at, out)
                .await
                .map_err(|_| UpstreamError::TimedOut(left))??,
            None => out.await?,
        };
        let mut head = http::Response::builder()
            .status(answer.status())
            .version(http::Version::HTTP_11);
        if let Some(h) = head.headers_mut() {
            *h = answer.headers().clone();
        }
        let body = if self.service.reads_body(answer.status().as_u16()) {
            let read = self.judged(answer);
            UpstreamBody::Whole(match deadline {
                Some((at, left)) => tokio::time::timeout_at(at, read)
                    .await
                    .map_err(|_| UpstreamError::TimedOut(left))??,
                None => read.await?,
            })
        } else {
            UpstreamBody::Streamed(answer, self.idle)
        };
        Ok(head.body(body)?)
    }

    /// The whole body of an answer the definition judges by its body, up to the bound.
    async fn judged(&self, mut answer: reqwest::Response) -> Result<Bytes, BoxError> {
        let mut whole = Vec::new();
        while let Some(piece) = answer.chunk().await? {
            if whole.len() + piece.len() > self.max_judged {
                return Err(UpstreamError::TooLargeToJudge(self.max_judged).into());
            }
            whole.extend_from_slice(&piece);
        }
        Ok(Bytes::from(whole))
    }
}
