//! What every request to a service must carry before the service reads it (MoySklad's gzip).

use serde::{Deserialize, Serialize};

/// A header every request must carry with a token among its list members; without it the
/// service answers `status` with no body. MoySklad: `Accept-Encoding` holding `gzip`, else 415
/// (its documentation, "Сжатие содержимого ответов").
///
/// ```
/// use apistend_catalog::HeaderRequirement;
/// let gzip = HeaderRequirement::new("Accept-Encoding", "gzip", 415);
/// assert!(gzip.met(["deflate, GZip;q=0.8"]));
/// assert!(!gzip.met(["gzip;q=0", "br"]));
/// assert!(!gzip.met([]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HeaderRequirement {
    /// The header's name (any case in a definition; lower case once built).
    pub header: String,
    /// The token one of its list members must be (any case).
    pub token: String,
    /// The status answered without it, with no body.
    pub status: u16,
}

impl HeaderRequirement {
    /// A requirement of `token` in `header`, else `status`.
    #[must_use]
    pub fn new(header: &str, token: &str, status: u16) -> Self {
        Self {
            header: header.to_ascii_lowercase(),
            token: token.to_owned(),
            status,
        }
    }

    /// Whether a request whose values of the header are `values` meets it: one list member is
    /// the token, with no `q=0` (RFC 9110 §12.5.3: a weight of 0 is "not acceptable").
    pub fn met<'a>(&self, values: impl IntoIterator<Item = &'a str>) -> bool {
        values.into_iter().flat_map(|v| v.split(',')).any(|member| {
            let mut parts = member.split(';').map(str::trim);
            let named = parts
                .next()
                .is_some_and(|t| t.eq_ignore_ascii_case(&self.token));
            named && !parts.any(refuses)
        })
    }

    /// What a request without it lacks, for the sandbox's `X-APIStend-Invalid`.
    #[must_use]
    pub fn reason(&self) -> String {
        format!(
            "header {}: no {:?} among its values; the service answers {} without it",
            self.header, self.token, self.status
        )
    }
}

/// Whether a member's parameter is a weight of zero (`q=0`, `q=0.000`).
fn refuses(param: &str) -> bool {
    let Some((name, value)) = param.split_once('=') else {
        return false;
    };
    name.trim().eq_ignore_ascii_case("q") && value.trim().parse::<f64>().is_ok_and(|q| q <= 0.0)
}
