//! The pause a service's refusal announces, read from its headers the way its definition names
//! them: one reader for every side that judges a wait (the request journal's conduct report
//! here; a client choosing its pause).

use crate::model::Service;
use crate::rate_headers::{RateValue, X_APISTEND_RETRY_AFTER, ietf_param};

impl Service {
    /// Milliseconds the answer sent at `sent_ms` (Unix milliseconds) asks its client to wait,
    /// read with `header` (a lookup by lower-case name): the definition's own pause headers
    /// (WB's `X-Ratelimit-Retry` in seconds, MoySklad's `X-Lognex-Retry-After` in
    /// milliseconds; the IETF `RateLimit` field's `t` when its `r` is 0), the standard
    /// `Retry-After` (seconds or an HTTP date) and the sandbox's `X-APIStend-Retry-After`, the
    /// longest of them; when none says, the moment the bucket is
    /// full again where the service names only that (Yandex Market's
    /// `X-RateLimit-Resource-Until`; the older `RateLimit-Reset` and `X-RateLimit-Reset` in
    /// seconds, or in Unix seconds where the number is one, as GitHub writes it), unless the
    /// answer reports tokens left. `None` when the answer announces no pause.
    ///
    /// ```
    /// let catalog = apistend_catalog::Catalog::builtin()?;
    /// let wb = catalog.service(apistend_catalog::ServiceId::WB).unwrap();
    /// let h = |name: &str| (name == "x-ratelimit-retry").then_some("2");
    /// assert_eq!(wb.announced_wait_ms(h, 0), Some(2000));
    /// let ms = catalog.service_id("moysklad")?;
    /// let ms = catalog.service(ms).unwrap();
    /// let h = |name: &str| (name == "x-lognex-retry-after").then_some("1500");
    /// assert_eq!(ms.announced_wait_ms(h, 0), Some(1500));
    /// assert_eq!(ms.announced_wait_ms(|_| None, 0), None);
    /// // WB's reset is no pause of a refusal that names its own.
    /// let h = |name: &str| match name {
    ///     "x-ratelimit-retry" => Some("2"),
    ///     "x-ratelimit-reset" => Some("9"),
    ///     _ => None,
    /// };
    /// assert_eq!(wb.announced_wait_ms(h, 0), Some(2000));
    /// let h = |name: &str| (name == "x-ratelimit-reset").then_some("9");
    /// assert_eq!(wb.announced_wait_ms(h, 0), Some(9000));
    /// let h = |name: &str| match name {
    ///     "x-ratelimit-reset" => Some("9"),
    ///     "x-ratelimit-remaining" => Some("3"),
    ///     _ => None,
    /// };
    /// assert_eq!(wb.announced_wait_ms(h, 0), None, "tokens left: the reset is no pause");
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    pub fn announced_wait_ms<'h>(
        &self,
        header: impl Fn(&str) -> Option<&'h str>,
        sent_ms: u64,
    ) -> Option<u64> {
        let own = self.headers.iter().filter_map(|h| {
            let v = header(h.name)?.trim();
            match h.value {
                Ok(RateValue::RetryAfterSecs) => v.parse::<u64>().ok().map(|s| s * 1000),
                Ok(RateValue::RetryAfterMs) => v.parse().ok(),
                // The IETF `RateLimit` field with no quota left: its `t`, the seconds until
                // the quota resets, is the pause (draft-ietf-httpapi-ratelimit-headers §4.1).
                Ok(RateValue::IetfLimit) if ietf_param(v, "r") == Some(0) => {
                    ietf_param(v, "t").map(|s| s.saturating_mul(1000))
                }
                _ => None,
            }
        });
        let general = ["retry-after", X_APISTEND_RETRY_AFTER]
            .into_iter()
            .filter_map(|name| until(header(name)?.trim(), sent_ms));
        own.chain(general).max().or_else(|| {
            // Not while the answer says tokens are left: then the refusal is not the bucket's
            // (too many requests in flight), and its reset is no pause.
            if self
                .reported(RateValue::Remaining, &header)
                .is_some_and(|n| n > 0)
            {
                return None;
            }
            self.headers.iter().find_map(|h| {
                let v = header(h.name)?.trim();
                match h.value {
                    Ok(RateValue::ResetDate) => date_ms(v).map(|at| at.saturating_sub(sent_ms)),
                    Ok(RateValue::ResetSecs) => v.parse::<u64>().ok().map(|secs| {
                        if secs >= UNIX_SECONDS_FROM {
                            (secs.saturating_mul(1000)).saturating_sub(sent_ms)
                        } else {
                            secs.saturating_mul(1000)
                        }
                    }),
                    Ok(RateValue::ResetMs) => v.parse().ok(),
                    _ => None,
                }
            })
        })
    }
}

/// A reset in seconds this large is a moment, not a delay (2001-09-09 in Unix seconds; no
/// window lasts 31 years): `X-RateLimit-Reset` is Unix seconds at GitHub, seconds from now
/// elsewhere.
const UNIX_SECONDS_FROM: u64 = 1_000_000_000;

/// A `Retry-After` value: seconds (whole, or with a fraction as some servers write them), or an
/// HTTP date (a past one is no pause).
fn until(v: &str, sent_ms: u64) -> Option<u64> {
    if let Ok(secs) = v.parse::<u64>() {
        return Some(secs.saturating_mul(1000));
    }
    if let Ok(secs) = v.parse::<f64>() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // within 0..1e12
        return (secs.is_finite() && secs >= 0.0).then(|| (secs.min(1e9) * 1000.0).ceil() as u64);
    }
    date_ms(v).map(|at| at.saturating_sub(sent_ms))
}

/// An HTTP date as Unix milliseconds.
fn date_ms(v: &str) -> Option<u64> {
    let at = httpdate::parse_http_date(v).ok()?;
    let d = at.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(d.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use crate::{Catalog, ServiceId};

    #[test]
    fn a_reset_in_unix_seconds_is_a_moment_and_a_small_one_a_delay() {
        let catalog = Catalog::builtin().unwrap();
        let wb = catalog.service(ServiceId::WB).unwrap();
        let at = |v: &'static str| move |n: &str| (n == "x-ratelimit-reset").then_some(v);
        assert_eq!(
            wb.announced_wait_ms(at("1700000060"), 1_700_000_000_000),
            Some(60_000)
        );
        assert_eq!(
            wb.announced_wait_ms(at("1600000000"), 1_700_000_000_000),
            Some(0)
        );
        assert_eq!(
            wb.announced_wait_ms(at("60"), 1_700_000_000_000),
            Some(60_000)
        );
    }

    #[test]
    fn a_date_is_read_as_the_time_left_and_the_longest_pause_wins() {
        let catalog = Catalog::builtin().unwrap();
        let ym = catalog.service_id("ymarket").unwrap();
        let ym = catalog.service(ym).unwrap();
        // 1994-11-06T08:49:37Z
        let h = |n: &str| {
            (n == "x-ratelimit-resource-until").then_some("Sun, 06 Nov 1994 08:49:37 GMT")
        };
        assert_eq!(ym.announced_wait_ms(h, 784_111_770_000), Some(7000));
        assert_eq!(
            ym.announced_wait_ms(h, 784_111_790_000),
            Some(0),
            "a past date"
        );
        let b24 = catalog.service(ServiceId::B24).unwrap();
        let h = |n: &str| match n {
            "x-apistend-retry-after" => Some("1"),
            "retry-after" => Some("3"),
            _ => None,
        };
        assert_eq!(b24.announced_wait_ms(h, 0), Some(3000));
        assert_eq!(b24.announced_wait_ms(|_| Some("soon"), 0), None);
        // Fractions, and the obsolete date forms a recipient must read (RFC 9110 §5.6.7).
        let at = 784_111_770_000;
        for (v, ms) in [
            ("1.5", 1500),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 7000),
            ("Sun Nov  6 08:49:37 1994", 7000),
            ("-1", 0),
        ] {
            let h = |n: &str| (n == "retry-after").then_some(v);
            let want = (v != "-1").then_some(ms);
            assert_eq!(b24.announced_wait_ms(h, at), want, "{v}");
        }
    }

    /// A definition naming the IETF `RateLimit` field: with no quota left (`r=0`), its `t` is
    /// the pause; with some left, it announces none.
    #[test]
    fn the_ietf_fields_reset_is_the_pause_once_no_quota_is_left() {
        let defs = crate::definition::Definitions::builtin()
            .with_file("ietf.toml".into(), apistend_testkit::IETF_DEFINITION.into())
            .unwrap();
        let catalog = Catalog::load(&defs, None).unwrap();
        let svc = catalog
            .service(catalog.service_id("ietf").unwrap())
            .unwrap();
        let at = |v: &'static str| move |n: &str| (n == "ratelimit").then_some(v);
        assert_eq!(
            svc.announced_wait_ms(at(r#""default";r=0;t=3"#), 0),
            Some(3000)
        );
        assert_eq!(svc.announced_wait_ms(at(r#""default";r=4;t=3"#), 0), None);
    }
}
