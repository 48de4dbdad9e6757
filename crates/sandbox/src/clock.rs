//! Wall-clock formatting without a date library: RFC 3339 UTC and float Unix seconds.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, as a float.
pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Microseconds since the Unix epoch.
pub(crate) fn unix_now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// `2026-11-30T05:20:11Z` for a Unix time in seconds.
pub(crate) fn rfc3339(unix_secs: f64) -> String {
    let (date, hh, mm, ss) = civil(unix_secs);
    format!("{date}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// `2026-11-30T05:20:11+00:00` (Bitrix24 writes its offset).
pub(crate) fn rfc3339_offset(unix_secs: f64) -> String {
    let (date, hh, mm, ss) = civil(unix_secs);
    format!("{date}T{hh:02}:{mm:02}:{ss:02}+00:00")
}

#[allow(clippy::cast_possible_truncation)]
fn civil(unix_secs: f64) -> (String, i64, i64, i64) {
    let secs = unix_secs.floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-from-civil, inverted.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (
        format!("{y:04}-{m:02}-{d:02}"),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_727_679_158.0), "2024-09-30T06:52:38Z");
        assert_eq!(rfc3339_offset(951_782_400.5), "2000-02-29T00:00:00+00:00");
    }
}
