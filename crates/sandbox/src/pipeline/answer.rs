//! The answer: a value the stages make and adjust (its status, body, headers, how its body is
//! sent), turned into the response once, at the end.

use std::time::Duration;

use apistend_catalog::{ErrorContext, ErrorKind, RateHeaders, Service};
use apistend_limiter::{Decision, Quota};
use axum::body::{Body, Bytes};
use futures_util::stream;
use http::{HeaderValue, Response, StatusCode};

use crate::heads::{self, Fields};
use crate::journal::Filling;
use crate::scenario::{Scenario, X_APISTEND_SCENARIO_NAME};
use apistend_answers::{Refusal, Success};

/// How the body is sent: whole, or broken the way a scenario asks.
#[derive(Debug, Clone, Copy)]
pub(super) enum BodyMode {
    Full,
    Truncated,
    Reset,
    Slow,
}

/// `Content-Type`, as the answer's header list names it.
const CONTENT_TYPE: &str = "content-type";

/// One answer in the making.
pub(super) struct Answer {
    pub(super) status: u16,
    content_type: &'static str,
    pub(super) body: String,
    /// The service's rate-limit headers (kept as numbers until the response is built).
    rate: RateHeaders,
    /// `x-apistend-scenario`.
    pub(super) scenario: Option<&'static str>,
    /// Anything else the real service sends with this answer.
    pub(super) headers: Vec<(&'static str, HeaderValue)>,
    pub(super) mode: BodyMode,
    /// A body that is not text (a PDF, a PNG), and its media type, instead of `body`.
    file: Option<(HeaderValue, Vec<u8>)>,
    /// A JSON body rendered before the request (an OpenAPI example), instead of `body`.
    rendered: Option<Bytes>,
}

impl Answer {
    /// `service`'s error of `kind`, as its definition writes it.
    pub(super) fn error(service: &Service, kind: &ErrorKind, ctx: &ErrorContext<'_>) -> Self {
        let e = service.error(kind, ctx);
        Self::new(e.status, e.content_type, e.body)
    }

    /// `service`'s answer to a request over a limit: its error, and its headers as for an
    /// empty bucket (`decision`'s, of `quota`).
    pub(super) fn rate_limited(
        service: &Service,
        decision: &Decision,
        quota: &Quota,
        ctx: &ErrorContext<'_>,
    ) -> Self {
        let ctx = ctx.with_retry_after(decision.retry_after_secs().max(1));
        let mut a = Self::error(service, &ErrorKind::RateLimited, &ctx)
            .rate(service.rate_headers(decision, quota, true));
        a.scenario = Some(Scenario::RateLimit.name());
        a
    }

    /// Its JSON body's bytes (empty for a file).
    pub(super) fn json(&self) -> &[u8] {
        match (&self.file, &self.rendered) {
            (Some(_), _) => &[],
            (None, Some(rendered)) => rendered,
            (None, None) => self.body.as_bytes(),
        }
    }

    /// `body` as written, with its status and media type (a definition's own refusal).
    pub(super) fn raw(status: u16, content_type: &'static str, body: String) -> Self {
        Self::new(status, content_type, body)
    }

    /// The sandbox's own RFC 9457 problem, for what no service documents (a sandbox over its
    /// bound of objects: 507).
    pub(super) fn problem(status: u16, title: &str, detail: &str) -> Self {
        let body = serde_json::json!({
            "type": "about:blank", "title": title, "status": status, "detail": detail,
        });
        Self::new(status, "application/problem+json", body.to_string())
    }

    /// What an answer source answered (its body in the service's `content_type` unless it
    /// names another media type).
    pub(super) fn success(s: Success, content_type: &'static str) -> Self {
        let body = if s.body.is_null() || s.media.is_some() || s.rendered.is_some() {
            String::new()
        } else {
            s.body.to_string()
        };
        let mut a = Self::new(s.status, content_type, body);
        a.file = match (&s.media, &s.bytes) {
            // Bytes of their own media type (a value kept as it was sent).
            (Some(m), Some(bytes)) => HeaderValue::from_str(m).ok().map(|m| (m, bytes.to_vec())),
            _ => file(s.media.as_deref(), &s.body),
        };
        a.rendered = s.rendered.filter(|_| s.media.is_none());
        a.headers = s
            .headers
            .into_iter()
            .filter_map(|(n, v)| Some((n, HeaderValue::from_str(&v).ok()?)))
            .collect();
        a
    }

    /// An answer source's refusal of the call: `service`'s 400, or the error it wrote whole.
    pub(super) fn refusal(service: &Service, refusal: Refusal, ctx: &ErrorContext<'_>) -> Self {
        match refusal {
            Refusal::BadRequest(why) => Self::error(service, &ErrorKind::BadRequest(why), ctx),
            Refusal::NotFound => Self::error(service, &ErrorKind::NotFound, ctx),
            Refusal::Body {
                status,
                body,
                media,
            } => {
                let text = if media.is_some() {
                    String::new()
                } else {
                    body.to_string()
                };
                let mut a = Self::new(status, service.content_type, text);
                a.file = file(media.as_deref(), &body);
                a
            }
        }
    }

    fn new(status: u16, content_type: &'static str, body: String) -> Self {
        Self {
            status,
            content_type,
            body,
            rate: RateHeaders::default(),
            scenario: None,
            headers: Vec::new(),
            mode: BodyMode::Full,
            file: None,
            rendered: None,
        }
    }

    /// With the service's rate-limit headers.
    pub(super) fn rate(mut self, headers: RateHeaders) -> Self {
        self.rate = headers;
        self
    }

    /// The body as text, for a stage that edits it (a rendered body is decoded).
    pub(super) fn text(&mut self) -> &mut String {
        if let Some(rendered) = self.rendered.take() {
            self.body = String::from_utf8_lossy(&rendered).into_owned();
        }
        &mut self.body
    }

    /// The response.
    pub(super) fn into_response(self) -> Response<Body> {
        self.into_response_keeping(None)
    }

    /// The response; its headers and the bytes of its body (when it is sent whole from memory)
    /// written into the request journal's entry, `keep`, as they are made.
    pub(super) fn into_response_keeping(mut self, mut keep: Option<Filling<'_>>) -> Response<Body> {
        let file = self.file.take();
        // A 204 or 304 has no body (RFC 9110 §15.3.5), so no Content-Type either.
        if matches!(self.status, 204 | 304) {
            self.body = String::new();
            sent(&mut keep, &Bytes::new());
            return self.finish(Body::empty(), None, keep);
        }
        // A rendered body is sent as it is in full mode; the other modes work on its text.
        if let Some(rendered) = self.rendered.take() {
            if matches!(self.mode, BodyMode::Full) {
                let media =
                    (!rendered.is_empty()).then(|| HeaderValue::from_static(self.content_type));
                sent(&mut keep, &rendered);
                return self.finish(Body::from(rendered), media, keep);
            }
            self.body = String::from_utf8_lossy(&rendered).into_owned();
        }
        let media = match &file {
            Some((media, _)) => Some(media.clone()),
            // An answer without content has no Content-Type (a 204, WB's empty 200s).
            None if self.body.is_empty() => None,
            None => Some(HeaderValue::from_static(self.content_type)),
        };
        if let Some((_, bytes)) = file {
            // Files are sent whole whatever the mode but a reset: truncating one proves nothing.
            self.body = String::new();
            if !matches!(self.mode, BodyMode::Reset) {
                let bytes = Bytes::from(bytes);
                sent(&mut keep, &bytes);
                return self.finish(Body::from(bytes), media, keep);
            }
        }
        let text = std::mem::take(&mut self.body);
        let mut whole = |b: Bytes| {
            sent(&mut keep, &b);
            Body::from(b)
        };
        let body = match self.mode {
            BodyMode::Full => whole(Bytes::from(text)),
            BodyMode::Truncated => {
                let mut cut = text.len() / 2;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                whole(Bytes::copy_from_slice(
                    text.as_bytes().get(..cut).unwrap_or_default(),
                ))
            }
            // A streamed body is kept as none.
            BodyMode::Reset | BodyMode::Slow => {
                sent(&mut keep, &Bytes::new());
                streamed(text, matches!(self.mode, BodyMode::Reset))
            }
        };
        self.finish(body, media, keep)
    }

    /// The response of this answer with `body`, and `media` as its `Content-Type`; its headers
    /// kept in the journal's entry, `keep`, when given.
    fn finish(
        self,
        body: Body,
        media: Option<HeaderValue>,
        keep: Option<Filling<'_>>,
    ) -> Response<Body> {
        let mut h = Fields::new();
        if let Some(media) = media {
            h.push(CONTENT_TYPE, media);
        }
        for (name, value) in self.rate.iter() {
            h.push(name, number(value));
        }
        for (name, secs) in self.rate.dates() {
            let at = std::time::SystemTime::now() + Duration::from_secs(secs);
            if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(at)) {
                h.push(name, v);
            }
        }
        // The IETF fields, for the definitions that name them (none of the built-ins).
        for (name, value) in self.rate.structured() {
            if let Ok(v) = HeaderValue::from_str(&value) {
                h.push(name, v);
            }
        }
        if let Some(sc) = self.scenario {
            h.push(X_APISTEND_SCENARIO_NAME, HeaderValue::from_static(sc));
        }
        for (name, value) in self.headers {
            h.push(name, value);
        }
        let mut resp = Response::new(body);
        *resp.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        *resp.headers_mut() = heads::map(h, |shape, h| {
            if let Some(mut k) = keep {
                k.head(shape, h);
            }
        });
        resp
    }
}

/// Keeps `body`, sent whole from memory, in the journal's entry if there is one.
fn sent(keep: &mut Option<Filling<'_>>, body: &Bytes) {
    if let Some(k) = keep.as_mut() {
        k.body(body);
    }
}

/// The body of `text` sent as a stream: broken by a reset after its head, or slowly, a piece
/// every 250 ms.
fn streamed(text: String, reset: bool) -> Body {
    if reset {
        return Body::from_stream(stream::once(async {
            Err::<Vec<u8>, _>(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "x-mock-scenario: reset",
            ))
        }));
    }
    let bytes = text.into_bytes();
    let chunk = (bytes.len() / 12).max(8);
    let pieces: Vec<Vec<u8>> = bytes.chunks(chunk).map(<[u8]>::to_vec).collect();
    Body::from_stream(stream::unfold(pieces.into_iter(), |mut it| async move {
        let piece = it.next()?;
        tokio::time::sleep(Duration::from_millis(250)).await;
        Some((Ok::<_, std::io::Error>(piece), it))
    }))
}

/// An answer after which the connection closes: its request body was not read to the end (too
/// large or too slow), so the next request on it could not be found.
pub(super) fn closing(mut resp: Response<Body>) -> Response<Body> {
    resp.headers_mut()
        .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// The body of an answer of `media` type (not the service's JSON), with its `Content-Type`.
fn file(media: Option<&str>, body: &serde_json::Value) -> Option<(HeaderValue, Vec<u8>)> {
    let m = media?;
    Some((
        HeaderValue::from_str(m).ok()?,
        apistend_answers::sample_file(m, body),
    ))
}

/// A header value for a count or a number of seconds. Values up to 4095 come from a table made
/// once (a static `HeaderValue` clones without allocating): rate-limit headers are on every answer.
fn number(v: u64) -> HeaderValue {
    static SMALL: std::sync::OnceLock<Vec<HeaderValue>> = std::sync::OnceLock::new();
    let table = SMALL.get_or_init(|| {
        let text: &'static str = Box::leak(
            (0..4096)
                .map(|n: u32| n.to_string())
                .collect::<String>()
                .into_boxed_str(),
        );
        let mut at = 0;
        (0..4096u32)
            .map(|n| {
                let len = n.checked_ilog10().map_or(1, |d| d as usize + 1);
                let v = HeaderValue::from_static(text.get(at..at + len).unwrap_or("0"));
                at += len;
                v
            })
            .collect()
    });
    usize::try_from(v)
        .ok()
        .and_then(|i| table.get(i))
        .cloned()
        .unwrap_or_else(|| HeaderValue::from(v))
}
