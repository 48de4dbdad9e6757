//! Where an answer is made: the sandbox's URL of the service and the request's, for the links
//! an answer carries.

use apistend_catalog::Service;

/// Where the answer is made: the sandbox's URL of the service as the request addressed it
/// (`http://127.0.0.1:8080/amocrm`, `https://example.amocrm.ru`), and the request's path
/// after it and its query, for the links an answer carries.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The service: links to its real hosts in an answer are links to the sandbox.
    pub service: &'a Service,
    /// The service's URL.
    pub base: &'a str,
    /// The request's path after it.
    pub path: &'a str,
    /// The request's query pairs.
    pub query: &'a [(String, String)],
}

/// The request's URL with the parameters `set` (the paging styles' links to other pages).
pub(super) fn url(place: &Place<'_>, set: &[(&str, u64)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in place.query {
        if !set.iter().any(|(name, _)| name == k) {
            q.append_pair(k, v);
        }
    }
    for (name, v) in set {
        q.append_pair(name, &v.to_string());
    }
    format!("{}{}?{}", place.base, place.path, q.finish())
}
