//! The real hostnames of the services: which service a request addressed by name is for, so
//! that clients whose base URL cannot change (SDKs with hard-coded `https://…` hosts) reach the
//! sandbox through a proxy or a hosts-file entry and are emulated as that service.
//!
//! A definition names its hosts exactly (`api-seller.ozon.ru`, WB's imported hosts) or as `*.`
//! and a suffix (`*.bitrix24.ru`: every portal); names compare in ASCII lower case.

use foldhash::HashMap;

/// Which service each hostname belongs to, built once with the catalog.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HostIndex {
    /// Exact names → service index.
    exact: HashMap<String, usize>,
    /// `.suffix` of `*.suffix` patterns → service index, longest first.
    suffixes: Vec<(String, usize)>,
}

impl HostIndex {
    /// Gives `pattern` to service `service` (from whichever service had it).
    pub(crate) fn add(&mut self, pattern: &str, service: usize) {
        let pattern = pattern.to_ascii_lowercase();
        if let Some(suffix) = pattern.strip_prefix('*') {
            self.suffixes.retain(|(s, _)| s != suffix);
            self.suffixes.push((suffix.to_owned(), service));
            // The longest suffix first: `*.a.b.ru` of one service wins over `*.b.ru` of another.
            self.suffixes
                .sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        } else {
            self.exact.insert(pattern, service);
        }
    }

    /// The service `name` (no port, any case, an optional trailing dot) belongs to.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        let name = name.strip_suffix('.').unwrap_or(name);
        if name.is_empty() || name.len() > 253 {
            return None;
        }
        let lower;
        let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            lower = name.to_ascii_lowercase();
            lower.as_str()
        } else {
            name
        };
        if let Some(i) = self.exact.get(name) {
            return Some(*i);
        }
        self.suffixes
            .iter()
            .find(|(suffix, _)| name.len() > suffix.len() && name.ends_with(suffix.as_str()))
            .map(|(_, i)| *i)
    }
}

/// Whether `pattern` is a hostname (lower-case letters, digits and `-` in dot-separated labels
/// of 1–63 characters, at least two labels) or `*.` and such a hostname.
pub(crate) fn valid_pattern(pattern: &str) -> bool {
    let name = pattern.strip_prefix("*.").unwrap_or(pattern);
    let labels: Vec<&str> = name.split('.').collect();
    name.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            (1..=63).contains(&l.len())
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

/// The path of a server URL (`https://api.moysklad.ru/api/remap/1.2` → `/api/remap/1.2`),
/// which prefixes every path of its document; empty when it has none (`//api-seller.ozon.ru`).
///
/// ```
/// use apistend_catalog::server_path;
/// assert_eq!(server_path("https://api.moysklad.ru/api/remap/1.2/"), "/api/remap/1.2");
/// assert_eq!(server_path("//api-seller.ozon.ru"), "");
/// ```
#[must_use]
pub fn server_path(url: &str) -> &str {
    let rest = url.split_once("//").map_or(url, |(_, r)| r);
    rest.find('/')
        .and_then(|i| rest.get(i..))
        .unwrap_or("")
        .trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_and_suffixes_find_their_service() {
        let mut index = HostIndex::default();
        index.add("api-seller.ozon.ru", 0);
        index.add("*.bitrix24.ru", 1);
        index.add("*.wildberries.ru", 2);
        index.add("content-api.wildberries.ru", 2);
        assert_eq!(index.find("api-seller.ozon.ru"), Some(0));
        assert_eq!(index.find("API-Seller.Ozon.RU."), Some(0));
        assert_eq!(index.find("my-portal.bitrix24.ru"), Some(1));
        assert_eq!(index.find("a.b.bitrix24.ru"), Some(1));
        assert_eq!(
            index.find("bitrix24.ru"),
            None,
            "the suffix alone is no portal"
        );
        assert_eq!(index.find("evilbitrix24.ru"), None);
        assert_eq!(index.find("content-api.wildberries.ru"), Some(2));
        assert_eq!(index.find("localhost"), None);
        assert_eq!(index.find(""), None);
        // A later claim takes the name over.
        index.add("api-seller.ozon.ru", 3);
        index.add("*.bitrix24.ru", 3);
        assert_eq!(index.find("api-seller.ozon.ru"), Some(3));
        assert_eq!(index.find("p.bitrix24.ru"), Some(3));
    }

    #[test]
    fn patterns_are_hostnames() {
        for ok in ["api.apify.com", "*.bitrix24.ru", "x-1.a.b"] {
            assert!(valid_pattern(ok), "{ok}");
        }
        for bad in [
            "localhost",
            "*.ru",
            "Api.apify.com",
            "a..b",
            "-a.b",
            "a.b:443",
            "*",
            "a.*.b",
        ] {
            assert!(!valid_pattern(bad), "{bad}");
        }
    }
}
