//! Names: a service's id, an HTTP method, a host's short name.

use std::fmt;

/// A service's id, as its definition names it (`wb`, `b24`, `apify`, `ozon`, or a user's own).
///
/// Ids are interned: a definition's id is leaked once per distinct id (a handful per process),
/// so the id stays `Copy` and compares as cheaply as the enum it replaced.
///
/// ```
/// use apistend_catalog::ServiceId;
/// assert_eq!(ServiceId::new("wb"), ServiceId::WB);
/// assert_eq!(ServiceId::new("mine").as_str(), "mine");
/// assert_eq!(ServiceId::default().as_str(), "", "no service (a slot not filled yet)");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServiceId(&'static str);

impl ServiceId {
    /// The built-in Wildberries seller API.
    pub const WB: ServiceId = ServiceId("wb");
    /// The built-in Bitrix24 REST.
    pub const B24: ServiceId = ServiceId("b24");
    /// The built-in Apify API v2.
    pub const APIFY: ServiceId = ServiceId("apify");
    /// The built-in Ozon Seller API.
    pub const OZON: ServiceId = ServiceId("ozon");

    /// The id `id`. Whether a catalog has such a service is [`crate::Catalog::service_id`]'s
    /// question.
    #[must_use]
    pub fn new(id: &str) -> Self {
        Self(crate::intern::intern(id))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for ServiceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// An HTTP method, as operations are keyed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options,
}

impl Method {
    /// Upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
        }
    }

    /// Parses a method name, case-insensitively; `None` for anything else.
    ///
    /// Compared in place: every request's method is parsed, and an upper-case copy of it was an
    /// allocation per request.
    ///
    /// ```
    /// use apistend_catalog::Method;
    /// assert_eq!(Method::parse("GET"), Some(Method::Get));
    /// assert_eq!(Method::parse("patch"), Some(Method::Patch));
    /// assert_eq!(Method::parse("TRACE"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        const ALL: [Method; 7] = [
            Method::Get,
            Method::Post,
            Method::Put,
            Method::Patch,
            Method::Delete,
            Method::Head,
            Method::Options,
        ];
        ALL.into_iter().find(|m| m.as_str().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The short name of a host: `content-api` for `content-api.wildberries.ru`.
pub fn short_host(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}
