//! The cursor of the `cursor` paging style: opaque to a client, as the services' are (Ozon's
//! `last_id` is Base64 of a JSON list; so is this), and read back into the offset it stands
//! for.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The cursor of the page that starts after `offset` objects.
pub(super) fn at(offset: u64) -> String {
    STANDARD.encode(format!("[{offset}]"))
}

/// The offset a cursor of [`at`] stands for; `None` for one it never gave.
pub(super) fn offset(cursor: &str) -> Option<u64> {
    let bytes = STANDARD.decode(cursor.trim()).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    text.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_and_a_stranger_does_not() {
        assert_eq!(offset(&at(2)), Some(2));
        assert_eq!(offset(&at(u64::MAX)), Some(u64::MAX));
        assert_eq!(offset("not base64!"), None);
        assert_eq!(offset(&STANDARD.encode("{}")), None);
    }
}
