//! The ids WB's gateway writes into its error bodies, in WB's formats: `detail` of a 429 names
//! the limiter that refused (`limited by c122a060-a7fb-4bb4-abb0-32fd4e18d489`, a UUID) and
//! `code` is a trace of the gateway (`07e4668e-ac2242c5c8c5-[UK-4dx7JUdskGZ]`), both in the
//! `Error` examples of WB's descriptions. Made from the request's id, so that each answer has its
//! own, as WB's do, and a client that parses them meets the shapes it meets in production.

use std::hash::BuildHasher as _;

use foldhash::fast::FixedState;

const HEX: &[u8; 16] = b"0123456789abcdef";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// 128 bits drawn from `request_id` (two seeded hashes: the id may be a caller's own text).
fn bits(request_id: &str) -> (u64, u64) {
    (
        FixedState::with_seed(0x5742_0001).hash_one(request_id),
        FixedState::with_seed(0x5742_0002).hash_one(request_id),
    )
}

fn push_hex(out: &mut String, v: u64, digits: u32) {
    for i in (0..digits).rev() {
        let digit = usize::try_from((v >> (i * 4)) & 0xf).unwrap_or(0);
        out.push(char::from(HEX.get(digit).copied().unwrap_or(b'0')));
    }
}

/// Appends the limiter's UUID (version 4 form) of a refusal.
pub(crate) fn push_limiter(out: &mut String, request_id: &str) {
    let (a, b) = bits(request_id);
    push_hex(out, a >> 32, 8);
    out.push('-');
    push_hex(out, a >> 16, 4);
    out.push_str("-4");
    push_hex(out, a, 3);
    out.push('-');
    push_hex(out, 0x8 | ((b >> 60) & 0x3), 1);
    push_hex(out, b >> 48, 3);
    out.push('-');
    push_hex(out, b, 12);
}

/// Appends the gateway's trace code: 8 hex digits, 12 hex digits, `[UK-` and 11 letters or
/// digits.
pub(crate) fn push_code(out: &mut String, request_id: &str) {
    let (a, b) = bits(request_id);
    push_hex(out, b >> 32, 8);
    out.push('-');
    push_hex(out, a, 12);
    out.push_str("-[UK-");
    let mut v = a ^ b.rotate_left(17);
    for _ in 0..11 {
        let digit = usize::try_from(v % 62).unwrap_or(0);
        out.push(char::from(BASE62.get(digit).copied().unwrap_or(b'0')));
        v /= 62;
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_have_wbs_shapes_and_differ_per_request() {
        let mut uuid = String::new();
        push_limiter(&mut uuid, "9d3c02cc698f8b041c661a7c28bed293");
        let parts: Vec<&str> = uuid.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(
            uuid.bytes().all(|b| b == b'-' || HEX.contains(&b)),
            "{uuid}"
        );
        assert!(
            parts[2].starts_with('4') && "89ab".contains(&parts[3][..1]),
            "{uuid}"
        );

        let mut code = String::new();
        push_code(&mut code, "9d3c02cc698f8b041c661a7c28bed293");
        let (head, tail) = code.split_once("-[UK-").unwrap();
        let (a, b) = head.split_once('-').unwrap();
        assert_eq!((a.len(), b.len()), (8, 12), "{code}");
        assert!(tail.ends_with(']') && tail.len() == 12, "{code}");
        assert!(
            tail[..11].bytes().all(|c| c.is_ascii_alphanumeric()),
            "{code}"
        );

        let mut other = String::new();
        push_code(&mut other, "another request");
        assert_ne!(code, other);
    }
}
