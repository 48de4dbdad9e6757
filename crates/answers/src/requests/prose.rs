//! Bounds a description states only in prose, read at import time where they are unambiguous:
//! an array's most items ("Максимум 1 000 товаров", "до 100 идентификаторов", "не более 30
//! карточек", "Максимальное количество — 50") and an integer's least and most ("максимум — 2000, минимум — 1", "от 3 до 99
//! процентов"), each only where the schema states none itself. A refusal the real service would
//! not give is worse than a check missed, so the reading is narrow: one number for an array's
//! most items, not followed by a unit that is not an item (characters, days, a month…), nor a
//! time or a decimal; both ends for an integer.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// "максимум 50", "не более 30 карточек", "Максимальное количество — 50", "до 8 медиафайлов":
/// the number and the word after it.
static MOST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(максимум|максимальное количество|не более|не больше|до)\s*[—–:-]?\s*(\d{1,3}(?:[ \u{a0}]\d{3})+|\d+)([.,:]\d)?(?:\s+([\p{L}_`]+))?")
        .unwrap_or_else(|e| unreachable!("a valid pattern: {e}"))
});

/// "минимум — 1", "максимум — 2000".
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(минимум|максимум)\s*[—–:-]?\s*(\d{1,3}(?:[ \u{a0}]\d{3})+|\d+)([.,:]\d)?")
        .unwrap_or_else(|e| unreachable!("a valid pattern: {e}"))
});

/// "от 3 до 99".
static RANGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bот\s+(\d+)\s+до\s+(\d+)([.,:]\d)?(?:\s+([\p{L}_`]+))?")
        .unwrap_or_else(|e| unreachable!("a valid pattern: {e}"))
});

/// Beginnings of words after a number that make it no count of items: a length, a size, a
/// time, a date, money.
const NOT_ITEMS: [&str; 30] = [
    "символ",
    "знак",
    "байт",
    "кб",
    "мб",
    "бит",
    "дн",
    "день",
    "час",
    "минут",
    "секунд",
    "месяц",
    "год",
    "лет",
    "недел",
    "процент",
    "руб",
    "копе",
    "январ",
    "феврал",
    "марта",
    "апрел",
    "мая",
    "июн",
    "июл",
    "август",
    "сентябр",
    "октябр",
    "ноябр",
    "декабр",
];

fn is_unit(word: Option<&str>) -> bool {
    word.is_some_and(|w| {
        let w = w.to_lowercase();
        NOT_ITEMS.iter().any(|u| w.starts_with(u))
    })
}

fn number(text: &str) -> Option<u64> {
    text.chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// Adds to `out` (a converted schema) the bounds `description` states in prose that its schema
/// does not state; gives the keywords added.
pub(crate) fn add_bounds(out: &mut Map<String, Value>, description: &str) -> Vec<&'static str> {
    match out.get("type").and_then(Value::as_str) {
        Some("array") if !out.contains_key("maxItems") => most_items(description)
            .filter(|&n| {
                out.get("minItems")
                    .and_then(Value::as_u64)
                    .is_none_or(|m| m <= n)
            })
            .map(|n| {
                out.insert("maxItems".into(), Value::from(n));
                vec!["maxItems"]
            })
            .unwrap_or_default(),
        Some("integer") if !out.contains_key("minimum") && !out.contains_key("maximum") => {
            range(description)
                .map(|(lo, hi)| {
                    out.insert("minimum".into(), Value::from(lo));
                    out.insert("maximum".into(), Value::from(hi));
                    vec!["minimum", "maximum"]
                })
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// An array's most items: one number, the same wherever the description says it.
fn most_items(description: &str) -> Option<u64> {
    let mut found = None;
    for c in MOST.captures_iter(description) {
        let word = c.get(4).map(|m| m.as_str());
        // "до" is also "until" and the end of a range ("с 8 до 21 в часовом поясе"): it counts
        // only before a word that names the items, and after no number.
        let until = c
            .get(1)
            .is_some_and(|m| m.as_str().eq_ignore_ascii_case("до"));
        let after_number = c
            .get(0)
            .and_then(|m| description.get(..m.start()))
            .is_some_and(|before| before.trim_end().ends_with(|ch: char| ch.is_ascii_digit()));
        let names_items = word.is_some_and(|w| w.chars().count() >= 4);
        if c.get(3).is_some() || is_unit(word) || (until && (!names_items || after_number)) {
            continue;
        }
        let n = c.get(2).and_then(|m| number(m.as_str()))?;
        // "40 палет или 30 коробок": a bound of two kinds of items is no one count.
        let after = c
            .get(0)
            .and_then(|m| description.get(m.end()..))
            .unwrap_or("");
        let mut next = after.split_whitespace();
        let another = matches!(next.next(), Some("или" | "и"))
            && next
                .next()
                .is_some_and(|w| w.starts_with(|ch: char| ch.is_ascii_digit()));
        if n == 0 || another || found.is_some_and(|f| f != n) {
            return None;
        }
        found = Some(n);
    }
    found
}

/// An integer's least and most: "минимум — L … максимум — H" (each said once), or one
/// "от L до H".
fn range(description: &str) -> Option<(u64, u64)> {
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    for c in NAMED.captures_iter(description) {
        if c.get(3).is_some() {
            return None;
        }
        let n = c.get(2).and_then(|m| number(m.as_str()))?;
        let name = c.get(1)?.as_str().to_lowercase();
        if name.starts_with("мин") {
            lo.push(n);
        } else {
            hi.push(n);
        }
    }
    let named = match (lo.as_slice(), hi.as_slice()) {
        ([l], [h]) if l <= h => Some((*l, *h)),
        ([], []) => None,
        _ => return None,
    };
    let mut ranges = RANGE.captures_iter(description);
    let spanned = match (ranges.next(), ranges.next()) {
        (Some(c), None) => {
            let word = c.get(4).map(|m| m.as_str());
            let unit =
                is_unit(word) && !word.is_some_and(|w| w.to_lowercase().starts_with("процент"));
            let lo = c.get(1).and_then(|m| number(m.as_str()))?;
            let hi = c.get(2).and_then(|m| number(m.as_str()))?;
            (c.get(3).is_none() && !unit && lo <= hi).then_some((lo, hi))
        }
        (None, _) => None,
        (Some(_), Some(_)) => return None,
    };
    match (named, spanned) {
        (Some(a), Some(b)) if a != b => None,
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrays_most_items_is_read_where_it_is_one_count_of_items() {
        for (text, want) in [
            (
                "Товары, цены и скидки для них. Максимум 1 000 товаров.",
                Some(1000),
            ),
            (
                "Вы можете передать до 100 идентификаторов за раз.",
                Some(100),
            ),
            (
                "Список `nmID`, которые необходимо объединить (максимум 30)",
                Some(30),
            ),
            ("Ограничение значений в запросе. Максимум — 50.", Some(50)),
            (
                "Можно передать до 8 медиафайлов. До 8 медиафайлов.",
                Some(8),
            ),
            ("Допускается от 16 до 135 символов для кода", None),
            ("Остатков товара хватит до 28 дней.", None),
            ("Отчёт пустой, если сформирован до 14 октября 2025.", None),
            ("Передайте до 10:00 по Москве", None),
            ("Список минус-фраз, до 1000 фраз", Some(1000)),
            (
                "в системе Ozon — `product_id`. Максимальное количество — 50.",
                Some(50),
            ),
            ("Список складов поставки, не больше 25 значений.", Some(25)),
            (
                "Вы можете передать не больше 40 палет или 30 коробок.",
                None,
            ),
            (
                "не менее 3 звонков с 8 до 21 в часовом поясе покупателя",
                None,
            ),
            ("Отправьте до 5 шт.", None),
            ("Передайте до 100 маркировок", Some(100)),
            ("Максимум 50 товаров, но до 100 идентификаторов", None),
            ("Список товаров.", None),
        ] {
            assert_eq!(most_items(text), want, "{text}");
        }
    }

    #[test]
    fn an_integers_range_needs_both_ends() {
        for (text, want) in [
            (
                "Количество значений в ответе: - максимум — 2000, - минимум — 1.",
                Some((1, 2000)),
            ),
            ("Размер скидки: от 3 до 99 процентов.", Some((3, 99))),
            (
                "Состояние товара по шкале от 1 до 7: - 1 — плохо",
                Some((1, 7)),
            ),
            ("Список ID кампаний. Максимум 50.", None),
            ("Количество предметов, максимум 1000", None),
            ("От 16 до 135 символов.", None),
            (
                "максимум — 5000, минимум — 1000, стандарт — 2000",
                Some((1000, 5000)),
            ),
            ("от 1 до 5 и от 10 до 20", None),
        ] {
            assert_eq!(range(text), want, "{text}");
        }
    }

    #[test]
    fn only_what_the_schema_does_not_state_is_added() {
        let mut out = Map::new();
        out.insert("type".into(), Value::from("array"));
        out.insert("maxItems".into(), Value::from(5));
        assert!(add_bounds(&mut out, "Максимум 100 товаров").is_empty());
        let mut out = Map::new();
        out.insert("type".into(), Value::from("array"));
        out.insert("minItems".into(), Value::from(200));
        assert!(
            add_bounds(&mut out, "Максимум 100 товаров").is_empty(),
            "a contradiction"
        );
        let mut out = Map::new();
        out.insert("type".into(), Value::from("integer"));
        assert_eq!(add_bounds(&mut out, "от 1 до 7"), ["minimum", "maximum"]);
        assert_eq!(
            (out["minimum"].as_u64(), out["maximum"].as_u64()),
            (Some(1), Some(7))
        );
    }
}
