//! Secrets: keys, tokens and ids from the operating system's random generator, and the admin
//! token kept only as its SHA-256 (in the data file and in Redis), compared in constant time.

use sha2::{Digest, Sha256};

use crate::error::SandboxError;

/// `prefix` and 128 random bits in hex: `ak_3f…` (32 hex digits).
///
/// # Errors
/// [`SandboxError::Random`] when the operating system gives no random bytes.
pub(crate) fn token(prefix: &str) -> Result<String, SandboxError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| SandboxError::Random(e.to_string()))?;
    Ok(format!("{prefix}_{}", hex(&bytes)))
}

/// A random 64-bit number (seeds, ids).
///
/// # Errors
/// As [`token`].
pub(crate) fn u64() -> Result<u64, SandboxError> {
    getrandom::u64().map_err(|e| SandboxError::Random(e.to_string()))
}

/// `bytes` as lower-case hex, two digits a byte. Written from a table rather than with
/// `write!` or `char::from_digit`: it also makes every error answer's request id, where the
/// formatting machinery cost a tenth of a microsecond.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digit = |d: u8| char::from(DIGITS.get(usize::from(d)).copied().unwrap_or(b'0'));
    // Pushed into a string of the right size: every request id is made here, and collecting
    // through an iterator of pairs grew and then validated a vector.
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(digit(b >> 4));
        out.push(digit(b & 0xf));
    }
    out
}

/// The shortest admin token accepted from the operator.
pub(crate) const MIN_TOKEN_LEN: usize = 16;

/// The admin token as the sandbox keeps it: its SHA-256, in hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenHash([u8; 32]);

impl TokenHash {
    /// The hash of an operator's token, after checking it is long and printable enough.
    ///
    /// # Errors
    /// [`SandboxError::AdminToken`] for an empty, short or unprintable token.
    pub(crate) fn of_configured(token: &str) -> Result<Self, SandboxError> {
        if token.is_empty() {
            return Err(SandboxError::AdminToken("is empty"));
        }
        if token.len() < MIN_TOKEN_LEN {
            return Err(SandboxError::AdminToken("is too short"));
        }
        if token.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(SandboxError::AdminToken(
                "holds spaces or control characters",
            ));
        }
        Ok(Self::of(token))
    }

    /// The hash of any string.
    pub(crate) fn of(token: &str) -> Self {
        Self(Sha256::digest(token.as_bytes()).into())
    }

    /// Reads the hex form.
    pub(crate) fn parse(hex_text: &str) -> Option<Self> {
        if hex_text.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(hex_text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Self(out))
    }

    /// The hex form.
    pub(crate) fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Whether `presented` is the token: its hash compared with no early exit, so the time taken
    /// says nothing about how much of it was right.
    pub(crate) fn matches(&self, presented: &str) -> bool {
        let other = Self::of(presented);
        self.0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_long() {
        let a = token("ak").unwrap();
        assert_eq!(a.len(), 3 + 32);
        assert_ne!(a, token("ak").unwrap());
    }

    #[test]
    fn a_hash_round_trips_and_matches_only_its_token() {
        let h = TokenHash::of_configured("a-long-enough-token").unwrap();
        assert_eq!(TokenHash::parse(&h.to_hex()), Some(h.clone()));
        assert!(h.matches("a-long-enough-token"));
        assert!(!h.matches("a-long-enough-tokeN"));
        assert!(!h.matches(""));
        assert!(TokenHash::parse("zz").is_none());
    }

    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        for v in [0, 1, 0xabc, u128::MAX, fastrand::u128(..)] {
            assert_eq!(hex(&v.to_be_bytes()), format!("{v:032x}"));
        }
    }

    #[test]
    fn empty_short_and_spaced_tokens_are_refused() {
        for t in ["", "short", "has a space in it ok"] {
            assert!(TokenHash::of_configured(t).is_err(), "{t:?}");
        }
    }
}
