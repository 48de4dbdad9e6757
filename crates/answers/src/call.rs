//! A request as the pipeline sees it: the service-relative operation path, the host (WB), the
//! credential from whichever channel the real service uses, and the query.

use apistend_catalog::{CredentialChannel, Method, Service, ServiceId};
use http::header::AsHeaderName;
use http::{HeaderMap, HeaderName};

const CLIENT_ID: HeaderName = HeaderName::from_static("client-id");
const API_KEY: HeaderName = HeaderName::from_static("api-key");
use http::request::Parts;

/// `X-Mock-Key`: the sandbox's own credential header, accepted by every service.
pub const X_MOCK_KEY: HeaderName = HeaderName::from_static("x-mock-key");

/// A request as an answer source reads it.
#[derive(Debug)]
pub struct Call {
    /// The service called.
    pub service: ServiceId,
    /// Its method.
    pub method: Method,
    /// The path the catalog resolves (`/content/v2/cards/update`, `/rest/crm.deal.fields`).
    pub path: String,
    /// The host the request addressed: by its `Host` (`content-api.wildberries.ru`, a Bitrix24
    /// portal) or, for a service with several, by a path segment (`/wb/content-api/…`).
    pub host: Option<String>,
    /// The credential, from the channel the service uses (its header, query or path).
    pub credential: Option<String>,
    /// The other part of a credential pair (Ozon's `Client-Id`), for buckets per credential part.
    pub credential_part: Option<String>,
    /// The method an RPC-style path names (Bitrix24's `/rest/{method}`: `crm.deal.fields`).
    pub rpc_method: Option<String>,
    /// The query's pairs, in order.
    pub query: Vec<(String, String)>,
    /// The body, when it is JSON (or a form, read as an object).
    pub body: Option<serde_json::Value>,
    /// Methods of a `batch` blocked by their operating-time budget (filled by the pipeline).
    pub blocked: Vec<String>,
    /// Whether the request had a body at all (JSON or not: multipart uploads, octet streams).
    pub has_body: bool,
    /// Its `Content-Type`, as sent.
    pub content_type: Option<String>,
    /// Why a body that is not a form did not read as JSON (the parser's words), if it did not.
    pub malformed: Option<String>,
    /// The body as sent, where it is not read as JSON (set by [`keep_raw`](Self::keep_raw),
    /// empty otherwise): a value kept as it came (Apify's records of any media type).
    pub raw: bytes::Bytes,
}

impl Call {
    /// Whether its body is read as JSON by its `Content-Type`: none, or a JSON media type.
    pub fn json_media(&self) -> bool {
        self.content_type
            .as_deref()
            .is_none_or(|m| crate::media::essence(m).is_empty() || crate::media::is_json(m))
    }

    /// Keeps `body` (this call's, as it came) where it is not read as JSON: shared, not copied,
    /// and nothing for the JSON bodies every other operation takes.
    pub fn keep_raw(&mut self, body: &bytes::Bytes) {
        if self.has_body && (self.body.is_none() || !self.json_media()) {
            self.raw = body.clone();
        }
    }

    /// `host` is the hostname the request came by, if it came by one.
    pub fn parse(
        service: &Service,
        parts: &Parts,
        rest: &str,
        body: &[u8],
        host: Option<String>,
    ) -> Self {
        let query = parse_query(parts.uri.query().unwrap_or(""));
        let content_type = header(&parts.headers, http::header::CONTENT_TYPE).unwrap_or("");
        let mut malformed = None;
        let body_json = if body.is_empty() {
            None
        } else if content_type.contains("x-www-form-urlencoded") {
            let pairs = parse_query(std::str::from_utf8(body).unwrap_or(""));
            Some(serde_json::Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect(),
            ))
        } else {
            serde_json::from_slice(body)
                .map_err(|e| malformed = Some(e.to_string()))
                .ok()
        };
        let method = Method::parse(parts.method.as_str()).unwrap_or(Method::Get);
        let mut call = Call {
            service: service.id,
            host: None,
            method,
            path: if rest.is_empty() {
                "/".to_owned()
            } else {
                rest.to_owned()
            },
            credential: header(&parts.headers, X_MOCK_KEY).map(str::to_owned),
            credential_part: None,
            rpc_method: None,
            query,
            body: body_json,
            blocked: Vec::new(),
            has_body: !body.is_empty(),
            content_type: (!content_type.is_empty()).then(|| content_type.to_owned()),
            malformed,
            raw: bytes::Bytes::new(),
        };
        // What differs between services is in their definitions: the hosts a path may name, the
        // webhook path form, and the credential channels in the order they are tried.
        let by_name = host.is_some();
        call.host = host;
        if !by_name && !service.hosts.is_empty() {
            call.strip_host(service);
        }
        let webhook = if service
            .credentials
            .contains(&CredentialChannel::WebhookPath)
        {
            call.rest_method()
        } else {
            None
        };
        if service.case_insensitive_paths {
            call.path.make_ascii_lowercase();
            if let Some(m) = &mut call.rpc_method {
                m.make_ascii_lowercase();
            }
        }
        if service
            .credentials
            .contains(&CredentialChannel::ClientIdApiKey)
        {
            // Bounded like the credential itself: it becomes part of a bucket key.
            call.credential_part =
                header(&parts.headers, CLIENT_ID).map(|v| v.chars().take(128).collect());
        }
        if call.credential.is_none() {
            call.credential = service
                .credentials
                .iter()
                .find_map(|c| call.credential_from(*c, &parts.headers, webhook.as_deref()));
        }
        call
    }

    /// The credential `channel` carries, if the request uses it.
    fn credential_from(
        &self,
        channel: CredentialChannel,
        headers: &HeaderMap,
        webhook: Option<&str>,
    ) -> Option<String> {
        match channel {
            CredentialChannel::MockKey => header(headers, X_MOCK_KEY).map(str::to_owned),
            CredentialChannel::Authorization => {
                header(headers, http::header::AUTHORIZATION).map(|v| strip_bearer(v).to_owned())
            }
            CredentialChannel::BearerToken => bearer(headers),
            CredentialChannel::TokenQuery => self.param("token"),
            // Both headers are wanted; the Api-Key is the sandbox key.
            CredentialChannel::ClientIdApiKey => header(headers, CLIENT_ID)
                .and_then(|_| header(headers, API_KEY))
                .map(str::to_owned),
            CredentialChannel::ApiKey => header(headers, API_KEY).map(str::to_owned),
            CredentialChannel::WebhookPath => webhook.map(str::to_owned),
            CredentialChannel::AuthParam => self.param("auth"),
            _ => None,
        }
    }

    /// `/{short host}/…` (`/content-api/content/v2/…`) → that host and the path after it, for a
    /// service with several hosts.
    fn strip_host(&mut self, service: &Service) {
        if let Some((host, rest)) = service.split_host(&self.path) {
            let path = if rest.is_empty() { "/" } else { rest }.to_owned();
            self.host = Some(host.to_owned());
            self.path = path;
        }
    }

    /// A webhook-style path (`/rest/{user}/{code}/{method}` or `/rest/{method}`): the operation
    /// becomes `/rest/{method}`; returns the webhook's code, if the path has one.
    fn rest_method(&mut self) -> Option<String> {
        let path = std::mem::take(&mut self.path);
        let segs: Vec<&str> = path
            .trim_start_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let (code, name) = match segs.as_slice() {
            ["rest", user, code, name] if user.chars().all(|c| c.is_ascii_digit()) => {
                (Some(*code), *name)
            }
            ["rest", name] => (None, *name),
            _ => {
                self.path = path;
                return None;
            }
        };
        let name = name
            .trim_end_matches(".json")
            .trim_end_matches(".xml")
            .to_owned();
        self.path = format!("/rest/{name}");
        // Bitrix24 accepts GET and POST alike.
        self.method = Method::Post;
        self.rpc_method = Some(name);
        code.map(str::to_owned)
    }

    /// A parameter from the query or the body.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| {
                self.body.as_ref()?.get(name).map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
            })
    }
}

/// A header's trimmed, non-empty text value. Names are `HeaderName` constants: a `&str` name is
/// parsed again on every lookup, and this is on every request.
#[inline]
pub fn header(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(text)
}

/// A header value's trimmed, non-empty text.
#[inline]
pub fn text(value: &http::HeaderValue) -> Option<&str> {
    value.to_str().ok().map(str::trim).filter(|v| !v.is_empty())
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = header(headers, http::header::AUTHORIZATION)?;
    bearer_token(v).map(str::to_owned)
}

fn strip_bearer(v: &str) -> &str {
    bearer_token(v).unwrap_or(v)
}

/// The token of `Bearer <token>` (the scheme in any case). The scheme is compared in place: a
/// search for the space would scan the whole credential on every request.
fn bearer_token(v: &str) -> Option<&str> {
    const SCHEME: &str = "bearer ";
    v.get(..SCHEME.len())
        .filter(|s| s.eq_ignore_ascii_case(SCHEME))
        .and_then(|_| v.get(SCHEME.len()..))
        .map(str::trim)
}

/// `a=1&b=x%20y` → pairs, percent- and plus-decoded (`application/x-www-form-urlencoded`, as
/// form_urlencoded reads it). Malformed escapes are kept as written.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(q.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_queries() {
        assert_eq!(
            parse_query("a=1&b=x%20y+z&c&d=%zz"),
            [
                ("a".into(), "1".into()),
                ("b".into(), "x y z".into()),
                ("c".into(), String::new()),
                ("d".into(), "%zz".into())
            ]
        );
        assert_eq!(
            parse_query("cmd%5Ba%5D=crm.deal.get%3Fid%3D1"),
            [("cmd[a]".into(), "crm.deal.get?id=1".into())]
        );
    }

    #[test]
    fn reads_a_bearer_token_in_any_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bEaReR  abc"), Some("abc"));
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearerabc"), None);
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("ключ абв"), None, "not cut inside a character");
        assert_eq!(strip_bearer("wb-key"), "wb-key");
        assert_eq!(strip_bearer("Bearer wb-key"), "wb-key");
    }

    #[test]
    fn keeps_the_body_only_where_it_is_not_read_as_json() {
        let catalog = apistend_catalog::Catalog::builtin().unwrap();
        let apify = catalog
            .service(catalog.service_id("apify").unwrap())
            .unwrap();
        let call = |media: &str, body: &'static [u8]| {
            let req = http::Request::post("/v2/key-value-stores/s/records/k")
                .header("content-type", media)
                .body(())
                .unwrap();
            let (parts, ()) = req.into_parts();
            let mut c = Call::parse(
                apify,
                &parts,
                "/v2/key-value-stores/s/records/k",
                body,
                None,
            );
            c.keep_raw(&bytes::Bytes::from_static(body));
            c
        };
        assert!(call("application/json", b"{\"a\":1}").raw.is_empty());
        assert!(
            call("application/ld+json; charset=utf-8", b"[1]")
                .raw
                .is_empty()
        );
        assert_eq!(
            &call("text/plain", b"123").raw[..],
            b"123",
            "text, though it parses"
        );
        assert_eq!(&call("application/json", b"{bad").raw[..], b"{bad");
        assert_eq!(
            &call("application/octet-stream", b"\x00\xff").raw[..],
            b"\x00\xff"
        );
    }
}
