//! The largest request body an operation's description states: "Максимальный размер запроса
//! 10 Мб" (WB's card uploads and edits). Megabytes as the services' web servers count them,
//! 2^20 bytes.

/// The phrase that states it.
const PHRASE: &str = "максимальный размер запроса";

/// Bytes the largest request body of `description` takes, when it states one: the number
/// after the phrase, in Кб or Мб (any case, Latin `KB`/`MB` too).
pub(super) fn body_size(description: &str) -> Option<u64> {
    let lower = description.to_lowercase();
    let rest = lower.get(lower.find(PHRASE)? + PHRASE.len()..)?;
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '—' || c == '-');
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let number: u64 = digits.parse().ok()?;
    let unit = rest.get(digits.len()..)?.trim_start();
    let shift = if unit.starts_with("мб") || unit.starts_with("mb") {
        20
    } else if unit.starts_with("кб") || unit.starts_with("kb") {
        10
    } else {
        return None;
    };
    number.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::body_size;

    #[test]
    fn reads_the_stated_body_size() {
        let text = "по 30 карточек товаров в каждой. Максимальный размер запроса 10 Мб.<br> Если";
        assert_eq!(body_size(text), Some(10 << 20));
        assert_eq!(
            body_size("Максимальный размер запроса — 512 КБ"),
            Some(512 << 10)
        );
        assert_eq!(body_size("Максимальный размер запроса 10 карточек"), None);
        assert_eq!(body_size("Максимальный размер файла 10 Мб"), None);
        assert_eq!(body_size(""), None);
    }
}
