//! The pause a server asks for, read as the service's definition names its headers
//! ([`Service::announced_wait_ms`]: WB's `X-Ratelimit-Retry`, MoySklad's `X-Lognex-Retry-After`,
//! `Retry-After`, the sandbox's `X-APIStend-Retry-After`…): the one reader the sandbox's conduct
//! report judges a client by.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use apistend_catalog::Service;
use http::HeaderMap;

/// The pause `headers` (of an answer of `service` received at `now`) ask for, if any.
pub(crate) fn server_hint(
    service: &Service,
    headers: &HeaderMap,
    now: SystemTime,
) -> Option<Duration> {
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    service
        .announced_wait_ms(|name| headers.get(name)?.to_str().ok(), now_ms)
        .map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_headers_each_service_names() {
        let catalog = apistend_catalog::Catalog::builtin().unwrap();
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 1994-11-06T08:49:30Z
        let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(server_hint(wb, &h, now), Some(Duration::from_secs(7)));
        h.insert("x-ratelimit-retry", "12".parse().unwrap());
        assert_eq!(server_hint(wb, &h, now), Some(Duration::from_secs(12)));
        let ms = catalog
            .service(catalog.service_id("moysklad").unwrap())
            .unwrap();
        let mut h = HeaderMap::new();
        h.insert("x-lognex-retry-after", "1500".parse().unwrap());
        assert_eq!(server_hint(ms, &h, now), Some(Duration::from_millis(1500)));
        assert_eq!(server_hint(wb, &h, now), None, "not WB's header");
        assert_eq!(server_hint(wb, &HeaderMap::new(), now), None);
    }
}
