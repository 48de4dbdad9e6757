//! Access tokens as JSON Web Tokens (RFC 7519): claims a client reads (`exp` above all), signed
//! with HMAC-SHA256 (`ring`, already built for TLS). The key is derived from the sandbox's id:
//! the signature proves nothing to a third party — what makes a token good is that it is a key
//! of its sandbox, and its `exp`, which is in the key itself.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Map, Value};

/// A signed token of `claims`, keyed by `key`.
pub(super) fn mint(claims: &Map<String, Value>, key: &[u8]) -> String {
    let header = B64.encode(br#"{"typ":"JWT","alg":"HS256"}"#);
    let payload = B64.encode(Value::Object(claims.clone()).to_string());
    let signed = format!("{header}.{payload}");
    let tag = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key),
        signed.as_bytes(),
    );
    format!("{signed}.{}", B64.encode(tag.as_ref()))
}

/// The claims of `token`, if it is a JWT.
pub(super) fn claims(token: &str) -> Option<Map<String, Value>> {
    let mut parts = token.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let bytes = B64.decode(payload).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Whether `credential` is a token whose `exp` (Unix seconds) is not after `now`. Anything but
/// a JWT with a numeric `exp` is not expired (a key).
pub(crate) fn expired(credential: &str, now: i64) -> bool {
    credential.bytes().filter(|b| *b == b'.').count() == 2
        && claims(credential)
            .and_then(|c| c.get("exp").and_then(Value::as_i64))
            .is_some_and(|exp| exp <= now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_token_reads_back_and_expires() {
        let Value::Object(c) = json!({"exp": 100, "sub": "1"}) else {
            unreachable!()
        };
        let t = mint(&c, b"k");
        assert_eq!(t.split('.').count(), 3);
        assert_eq!(claims(&t).unwrap()["sub"], "1");
        assert!(expired(&t, 100));
        assert!(!expired(&t, 99));
        assert!(!expired("ak_plain-key", 1 << 40), "a key is not a token");
        assert!(
            !expired("a.b.c", 1 << 40),
            "not a JWT: not expired, just unknown"
        );
    }
}
