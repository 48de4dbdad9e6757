//! Refresh tokens: `def50200` (the prefix amoCRM's have) and the base64 of what the sandbox
//! needs to honour one — its sandbox, a hash of the access token it came with, its expiry —
//! then an HMAC of that. A refresh token is good once: while the access token it came with is
//! still a key of its sandbox (a refresh revokes it).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const PREFIX: &str = "def50200";

/// What a refresh token stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Refresh {
    /// The sandbox.
    pub(super) s: String,
    /// SHA-256 (hex) of the access token it came with.
    pub(super) h: String,
    /// Until when it may be used (Unix seconds).
    pub(super) exp: i64,
}

/// SHA-256 of `token`, hex.
pub(super) fn hash(token: &str) -> String {
    crate::secret::hex(&Sha256::digest(token.as_bytes()))
}

fn tag(body: &str, key: &[u8]) -> String {
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    B64.encode(ring::hmac::sign(&k, body.as_bytes()).as_ref())
}

impl Refresh {
    /// The token, keyed by `key`.
    pub(super) fn encode(&self, key: &[u8]) -> String {
        let body = B64.encode(serde_json::to_vec(self).unwrap_or_default());
        format!("{PREFIX}{body}.{}", tag(&body, key))
    }

    /// What `token` stands for, if it is one the sandbox made (`key_of` gives a sandbox's key).
    pub(super) fn decode(token: &str, key_of: impl Fn(&str) -> Vec<u8>) -> Option<Self> {
        let (body, sig) = token.strip_prefix(PREFIX)?.split_once('.')?;
        let r: Self = serde_json::from_slice(&B64.decode(body).ok()?).ok()?;
        let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key_of(&r.s));
        ring::hmac::verify(&k, body.as_bytes(), &B64.decode(sig).ok()?).ok()?;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_only_what_it_made() {
        let r = Refresh {
            s: "sbx_1".into(),
            h: hash("token"),
            exp: 5,
        };
        let key = |s: &str| s.as_bytes().to_vec();
        let t = r.encode(b"sbx_1");
        assert!(t.starts_with("def50200"));
        assert_eq!(Refresh::decode(&t, key), Some(r));
        let forged = t.replace('.', ".x");
        assert_eq!(Refresh::decode(&forged, key), None);
        assert_eq!(Refresh::decode("def50200junk", key), None);
        assert_eq!(Refresh::decode("nope", key), None);
    }
}
