//! The wall clock: float Unix seconds, and RFC 3339 in UTC (formatted by the `time` crate).

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, as a float.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Microseconds since the Unix epoch.
pub fn unix_now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        // Seconds and micros apart: `as_micros` is a 128-bit division, on every request.
        .map_or(0, |d| {
            d.as_secs()
                .saturating_mul(1_000_000)
                .saturating_add(u64::from(d.subsec_micros()))
        })
}

/// Milliseconds since the Unix epoch.
pub fn unix_now_ms() -> i64 {
    i64::try_from(unix_now_us() / 1000).unwrap_or(i64::MAX)
}

/// `2026-11-30T05:20:11Z` for a Unix time in seconds (whole seconds, UTC). Error bodies carry
/// it (WB's 429s), so each thread keeps the last second it formatted: at tens of thousands of
/// refusals a second, that is one formatting a second instead of one each.
pub fn rfc3339(unix_secs: f64) -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> =
            const { std::cell::RefCell::new((i64::MIN, String::new())) };
    }
    #[allow(clippy::cast_possible_truncation)] // seconds since 1970 fit an i64
    let whole = unix_secs.floor() as i64;
    LAST.with_borrow_mut(|(second, text)| {
        if *second != whole {
            *text = format_utc(whole);
            *second = whole;
        }
        text.clone()
    })
}

fn format_utc(whole: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(whole)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// `2026-12-05T10:00:00.000Z` for a Unix time in milliseconds (UTC, to the millisecond), as
/// Apify writes its times and the request journal its records.
pub fn utc_ms(ms: i64) -> String {
    let utc = format_utc(ms.div_euclid(1000));
    let stem = utc.strip_suffix('Z').unwrap_or(&utc);
    format!("{stem}.{:03}Z", ms.rem_euclid(1000))
}

/// `2026-11-30T05:20:11+00:00` (Bitrix24 writes its offset).
pub fn rfc3339_offset(unix_secs: f64) -> String {
    let utc = rfc3339(unix_secs);
    match utc.strip_suffix('Z') {
        Some(stem) => format!("{stem}+00:00"),
        None => utc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_727_679_158.0), "2024-09-30T06:52:38Z");
        assert_eq!(rfc3339_offset(951_782_400.5), "2000-02-29T00:00:00+00:00");
        // The same second again (from the thread's last), then the next.
        assert_eq!(rfc3339(951_782_400.9), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(951_782_401.0), "2000-02-29T00:00:01Z");
        assert_eq!(utc_ms(951_782_400_007), "2000-02-29T00:00:00.007Z");
        assert_eq!(utc_ms(-1), "1969-12-31T23:59:59.999Z");
    }
}
