//! Interception: requests addressed to a real service's hostname are emulated as that service,
//! without a path prefix — through the TLS listener (`--tls-addr` with the hostname pointed at
//! it), a `CONNECT` tunnel, or an absolute-form request to the plain listener used as an HTTP
//! proxy. (Not to be confused with `apistend proxy`, which forwards to the real services.)

pub(crate) mod connect;
pub(crate) mod egress;
pub(crate) mod tunnel;

use apistend_catalog::Catalog;
use http::{HeaderMap, Uri};

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// By path prefix (`/wb/…`): the request named the sandbox itself (loopback, or any `Host`
    /// no definition claims).
    Prefix,
    /// To a service by hostname; `host` is the name as the request gave it, lower-cased.
    Service {
        /// The service's position in the catalog.
        index: usize,
        /// The hostname.
        host: String,
    },
    /// An absolute-form request for a host no definition claims: never forwarded.
    Elsewhere(String),
}

/// The target of a request with `uri` and `headers`. An absolute-form URI (a client using the
/// sandbox as its HTTP proxy; `https://` ones too, as axios sends them) decides by its
/// authority, as RFC 9112 §3.2.2 says; otherwise the `Host` header does. An absolute-form URI
/// to a loopback address names the sandbox itself only on `own_port` (the plain listener's,
/// when known): another local port is another program, never reached through the sandbox.
pub(crate) fn target(
    catalog: &Catalog,
    uri: &Uri,
    headers: &HeaderMap,
    own_port: Option<u16>,
) -> Target {
    if let Some(authority) = uri.authority() {
        let name = authority.host();
        if is_loopback(name) {
            let port = authority
                .port_u16()
                .unwrap_or(if uri.scheme_str() == Some("https") {
                    443
                } else {
                    80
                });
            return if own_port.is_none_or(|own| own == port) {
                Target::Prefix
            } else {
                Target::Elsewhere(authority.as_str().to_owned())
            };
        }
        return match catalog.hostname_index(name) {
            Some(index) => Target::Service {
                index,
                host: name.to_ascii_lowercase(),
            },
            None => Target::Elsewhere(name.to_owned()),
        };
    }
    let Some(host) = headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
    else {
        return Target::Prefix;
    };
    let name = without_port(host);
    // The common case first: a client of the sandbox's own address (`127.0.0.1:8080`, which
    // the digit rules in without parsing it as an address).
    if name.starts_with(|c: char| c.is_ascii_digit()) || is_loopback(name) {
        return Target::Prefix;
    }
    match catalog.hostname_index(name) {
        Some(index) => Target::Service {
            index,
            host: name.to_ascii_lowercase(),
        },
        None => Target::Prefix,
    }
}

/// `name` of `name:port` (`[v6]:port` keeps its brackets).
pub(crate) fn without_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// `localhost`, `*.localhost` (RFC 6761) and loopback addresses: the sandbox itself.
pub(crate) fn is_loopback(name: &str) -> bool {
    let name = name.trim_start_matches('[').trim_end_matches(']');
    // Asked on every request by address: compared in place, no lowercase copy made.
    const SUB: &str = ".localhost";
    name.eq_ignore_ascii_case("localhost")
        || name
            .len()
            .checked_sub(SUB.len())
            .and_then(|at| name.get(at..))
            .is_some_and(|tail| tail.eq_ignore_ascii_case(SUB))
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id the built-in catalog gives `name`.
    /// The position of the built-in service `name` in the catalog.
    fn at(name: &str) -> usize {
        let catalog = Catalog::builtin().unwrap();
        let id = catalog.service_id(name).unwrap();
        catalog.services().iter().position(|s| s.id == id).unwrap()
    }

    fn of(uri: &str, host: Option<&str>) -> Target {
        let catalog = Catalog::builtin().unwrap();
        let mut headers = HeaderMap::new();
        if let Some(h) = host {
            headers.insert(http::header::HOST, h.parse().unwrap());
        }
        target(&catalog, &uri.parse().unwrap(), &headers, Some(8080))
    }

    #[test]
    fn absolute_form_to_another_local_port_is_not_the_sandbox() {
        assert_eq!(of("http://127.0.0.1:8080/wb/ping", None), Target::Prefix);
        assert_eq!(
            of("http://127.0.0.1:6379/", None),
            Target::Elsewhere("127.0.0.1:6379".into())
        );
        assert_eq!(
            of("http://localhost/x", None),
            Target::Elsewhere("localhost".into())
        );
    }

    #[test]
    fn hosts_of_the_definitions_are_emulated_and_others_keep_prefix_routing() {
        assert_eq!(of("/wb/ping", Some("127.0.0.1:8080")), Target::Prefix);
        assert_eq!(of("/wb/ping", Some("localhost")), Target::Prefix);
        assert_eq!(
            of("/wb/ping", Some("sandbox.internal:8080")),
            Target::Prefix
        );
        assert_eq!(of("/wb/ping", None), Target::Prefix);
        assert_eq!(
            of(
                "/content/v2/get/cards/list",
                Some("Content-API.wildberries.ru")
            ),
            Target::Service {
                index: at("wb"),
                host: "content-api.wildberries.ru".into()
            }
        );
        assert_eq!(
            of("/rest/user.current", Some("my.bitrix24.com:443")),
            Target::Service {
                index: at("b24"),
                host: "my.bitrix24.com".into()
            }
        );
    }

    #[test]
    fn absolute_form_decides_by_its_authority() {
        assert_eq!(
            of(
                "https://api-seller.ozon.ru/v3/product/list",
                Some("ignored")
            ),
            Target::Service {
                index: at("ozon"),
                host: "api-seller.ozon.ru".into()
            }
        );
        assert_eq!(
            of("http://127.0.0.1:8080/wb/ping", None),
            Target::Prefix,
            "the sandbox's own address through the proxy"
        );
        assert_eq!(
            of("http://example.com/x", Some("example.com")),
            Target::Elsewhere("example.com".into())
        );
    }

    #[test]
    fn ports_and_loopback_names() {
        assert_eq!(without_port("a.b:443"), "a.b");
        assert_eq!(without_port("[::1]:8080"), "[::1]");
        assert_eq!(without_port("[::1]"), "[::1]");
        assert_eq!(without_port("a.b"), "a.b");
        assert!(is_loopback("[::1]") && is_loopback("app.localhost") && is_loopback("127.0.0.2"));
        assert!(!is_loopback("10.0.0.1") && !is_loopback("example.com"));
    }
}
