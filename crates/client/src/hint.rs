//! The pause a server asks for: `Retry-After` (seconds or an HTTP date), WB's
//! `X-Ratelimit-Retry`, or the sandbox's `X-APIStend-Retry-After`.

use std::time::{Duration, SystemTime};

use http::HeaderMap;

/// The longest hint of the headers, if any parses.
pub(crate) fn server_hint(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    ["retry-after", "x-ratelimit-retry", "x-apistend-retry-after"]
        .iter()
        .filter_map(|name| headers.get(*name)?.to_str().ok())
        .filter_map(|v| parse(v.trim(), now))
        .max()
}

fn parse(v: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let at = http_date(v)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An HTTP date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the obsolete RFC 850 and
/// asctime forms, which RFC 9110 says a recipient must accept too.
fn http_date(v: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(v.trim()).ok()
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    #[test]
    fn parses_every_form_and_takes_the_longest() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 1994-11-06T08:49:30Z
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(server_hint(&h, now), Some(Duration::from_secs(7)));
        h.insert("x-ratelimit-retry", "12".parse().unwrap());
        assert_eq!(server_hint(&h, now), Some(Duration::from_secs(12)));
        let mut h = HeaderMap::new();
        h.insert("x-apistend-retry-after", "1".parse().unwrap());
        assert_eq!(server_hint(&h, now), Some(Duration::from_secs(1)));
        h.insert("retry-after", "garbage".parse().unwrap());
        assert_eq!(server_hint(&h, now), Some(Duration::from_secs(1)));
        assert_eq!(server_hint(&HeaderMap::new(), now), None);
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO),
            "a past date is no pause"
        );
        // The obsolete forms a recipient must read too (RFC 9110 §5.6.7).
        for old in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            assert_eq!(parse(old, now), Some(Duration::from_secs(7)), "{old}");
        }
    }
}
