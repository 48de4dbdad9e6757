//! The pause a server asks for: `Retry-After` (seconds or an HTTP date), WB's
//! `X-Ratelimit-Retry`, or the sandbox's `X-APIStend-Retry-After`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT` (the form RFC 9110 requires senders to use).
fn http_date(v: &str) -> Option<SystemTime> {
    let mut it = v.split_whitespace();
    let _weekday = it.next()?;
    let day: u64 = it.next()?.parse().ok()?;
    let month = match it.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if it.next()? != "GMT" || day == 0 || day > 31 || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::try_from(day).ok()? - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
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
    }
}
