//! The sandbox's time in the fields a resource stamps.

use apistend_catalog::{Resource, StampFormat, StampOn};
use serde_json::{Map, Value};

/// The member of a stored job that holds when it was stopped (its `abort`), Unix
/// milliseconds; never shown (the job's rendering removes it).
pub(super) const ABORT: &str = "__abort";

/// Stamps `object` (a created one when `created`, else an update's patch) with `now` (Unix
/// seconds) in every field the resource stamps then.
pub(super) fn apply(resource: &Resource, object: &mut Map<String, Value>, now: i64, created: bool) {
    for s in &resource.stamps {
        if !created && s.on == StampOn::Create {
            continue;
        }
        super::pointer::set_in(object, &s.at, written(s.format, now));
    }
}

/// `now` as `format` writes it; Bitrix24 and MoySklad write Moscow time.
fn written(format: StampFormat, now: i64) -> Value {
    match format {
        StampFormat::Rfc3339 => Value::String(moscow(now, 'T', "+03:00")),
        StampFormat::Moysklad => Value::String(moscow(now, ' ', ".000")),
        _ => Value::from(now),
    }
}

/// `now` in Moscow time (UTC+3, no daylight saving since 2014): the date, `sep`, the time to
/// the second, then `tail`.
fn moscow(now: i64, sep: char, tail: &str) -> String {
    const MSK: i64 = 3 * 3600;
    let t = time::OffsetDateTime::from_unix_timestamp(now + MSK)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!("{}{tail}", date_time(t, sep))
}

/// `t`'s date, `sep` and time to the second, as every format here writes them.
fn date_time(t: time::OffsetDateTime, sep: char) -> String {
    format!(
        "{:04}-{:02}-{:02}{sep}{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_each_format() {
        assert_eq!(
            written(StampFormat::Unix, 1_767_225_600),
            Value::from(1_767_225_600)
        );
        assert_eq!(
            written(StampFormat::Rfc3339, 1_767_225_600),
            "2026-01-01T03:00:00+03:00"
        );
        assert_eq!(
            written(StampFormat::Moysklad, 1_767_225_600),
            "2026-01-01 03:00:00.000"
        );
    }
}
