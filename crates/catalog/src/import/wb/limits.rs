//! WB's limit texts: the `description_limit` block of an operation's description, read as a
//! one-row table or a sentence, and the names the catalog makes of them.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Limit {
    pub(super) label: Option<String>,
    pub(super) per_host: bool,
    pub(super) period_ms: u64,
    pub(super) limit: u32,
    pub(super) interval_ms: u64,
    pub(super) burst: u32,
    pub(super) form: &'static str,
}

/// The inside of `<div class="description_limit">…</div>`, with links reduced to their text.
pub(super) fn limit_block(description: &str) -> Option<String> {
    const OPEN: &str = "<div class=\"description_limit\">";
    let start = description.find(OPEN)? + OPEN.len();
    let rest = description.get(start..)?;
    let end = rest.find("</div>").unwrap_or(rest.len());
    Some(strip_tag(rest.get(..end)?, "a"))
}

/// Removes `<tag …>` and `</tag>`, keeping what is between them.
fn strip_tag(s: &str, tag: &str) -> String {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(&open) {
        let after = rest.get(i + open.len()..).unwrap_or("");
        // `<a` must be the whole tag name (not `<abbr`).
        if !after.starts_with([' ', '>']) {
            out.push_str(rest.get(..i + open.len()).unwrap_or(""));
            rest = after;
            continue;
        }
        out.push_str(rest.get(..i).unwrap_or(""));
        rest = after
            .find('>')
            .and_then(|j| after.get(j + 1..))
            .unwrap_or("");
    }
    out.push_str(rest);
    out.replace(&close, "")
}

pub(super) type ParseError = (String, String);

/// Period, limit, interval, burst.
pub(super) type Numbers = (u64, u32, u64, u32);

pub(super) fn parse_block(
    block: &str,
    cost: &mut BTreeMap<String, u32>,
) -> Result<Limit, ParseError> {
    let mut label: Option<String> = None;
    let mut table: Vec<&str> = Vec::new();
    let mut sentence: Option<Limit> = None;
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with('|') {
            table.push(line);
        } else if let Some(rest) = line.strip_prefix("Лимит запросов на один аккаунт продавца")
        {
            label = group_label(rest).map_err(|r| (r, line.to_owned()))?;
        } else if line.starts_with("Максимум") {
            let mut s = parse_sentence(line)
                .ok_or_else(|| ("unfamiliar limit sentence".to_owned(), line.to_owned()))?;
            s.per_host = line.contains(PER_HOST);
            sentence = Some(s);
        } else if line.starts_with("Один запрос с кодом ответа") {
            let (status, tokens) = parse_cost(line)
                .ok_or_else(|| ("unfamiliar cost rule".to_owned(), line.to_owned()))?;
            cost.insert(status.to_string(), tokens);
        } else if is_listing(line) {
            // The names of the methods a group covers or excludes: prose for people.
        } else {
            return Err(("unfamiliar text in a limit block".into(), line.to_owned()));
        }
    }
    match (table.as_slice(), sentence) {
        ([], Some(mut s)) => {
            s.label = label;
            Ok(s)
        }
        ([header, sep, row], None) => {
            let cells = |l: &str| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_owned())
                    .collect::<Vec<_>>()
            };
            if cells(header) != ["Период", "Лимит", "Интервал", "Всплеск"]
            {
                return Err(("unfamiliar table header".into(), (*header).to_owned()));
            }
            if !cells(sep)
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':') && !c.is_empty())
            {
                return Err(("malformed table".into(), (*sep).to_owned()));
            }
            let bad = || ("malformed table row".to_owned(), (*row).to_owned());
            let c = cells(row);
            let [period, limit, interval, burst] = c.as_slice() else {
                return Err(bad());
            };
            let limit = Limit {
                label,
                per_host: false,
                period_ms: parse_duration_ms(period).ok_or_else(bad)?,
                limit: parse_count(limit).ok_or_else(bad)?,
                interval_ms: parse_duration_ms(interval).ok_or_else(bad)?,
                burst: parse_count(burst).ok_or_else(bad)?,
                form: "table",
            };
            if limit.limit == 0 || limit.burst == 0 || limit.interval_ms == 0 {
                return Err(("a limit of zero".into(), (*row).to_owned()));
            }
            let expected = limit.period_ms as f64 / f64::from(limit.limit);
            if ((limit.interval_ms as f64 - expected) / expected).abs() > 0.01 {
                return Err((
                    "the interval is not period / limit".into(),
                    (*row).to_owned(),
                ));
            }
            Ok(limit)
        }
        ([], None) => Err((
            "a limit block without numbers".into(),
            block.trim().to_owned(),
        )),
        _ => Err((
            "a limit block with more than one limit".into(),
            block.trim().to_owned(),
        )),
    }
}

/// The sentence that makes a limit per domain.
const PER_HOST: &str =
    "Лимит действует отдельно для каждого варианта метода в зависимости от домена";

/// The hosts of `https://HOST/PATH` URLs the description lists, other than `host`.
pub(super) fn variant_hosts(description: &str, host: &str, path: &str) -> Vec<String> {
    let mut hosts = Vec::new();
    for part in description.split("https://").skip(1) {
        let Some(end) = part.find(path) else { continue };
        let candidate = part.get(..end).unwrap_or("");
        let valid = !candidate.is_empty()
            && candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        if valid && candidate != host && !hosts.iter().any(|h| h == candidate) {
            hosts.push(candidate.to_owned());
        }
    }
    hosts
}

fn is_listing(line: &str) -> bool {
    line == "<ul>"
        || line == "</ul>"
        || (line.starts_with("<li>") && line.ends_with("</li>"))
        || line.starts_with("Исключение")
}

/// `:` alone (the method's own limit) or `для … <strong>X</strong> …:` (a named group).
fn group_label(rest: &str) -> Result<Option<String>, String> {
    let rest = rest.trim();
    if rest == ":" {
        return Ok(None);
    }
    let Some(after) = rest.strip_prefix("для ") else {
        return Err("unfamiliar scope of a limit".into());
    };
    let after = after.trim_end_matches(':').trim();
    let mut strong = Vec::new();
    let mut s = after;
    while let Some(i) = s.find("<strong>") {
        let tail = s.get(i + 8..).unwrap_or("");
        let Some(j) = tail.find("</strong>") else {
            break;
        };
        strong.push(tail.get(..j).unwrap_or("").trim().to_owned());
        s = tail.get(j + 9..).unwrap_or("");
    }
    let label = if strong.is_empty() {
        after.to_owned()
    } else {
        strong.join(" ")
    };
    if label.is_empty() {
        Err("a group without a name".into())
    } else {
        Ok(Some(label))
    }
}

/// "Максимум 3 запроса за 30 секунд…", "Максимум 1 запрос в 10 минут…", "Максимум 50 запросов в секунду".
fn parse_sentence(line: &str) -> Option<Limit> {
    let first = line.split('.').next()?;
    let mut words = first.split_whitespace();
    words.next().filter(|w| *w == "Максимум")?;
    let limit: u32 = words.next()?.parse().ok()?;
    words.next().filter(|w| w.starts_with("запрос"))?;
    words.next().filter(|w| *w == "за" || *w == "в")?;
    let mut word = words.next()?;
    let mut amount = 1u64;
    if let Ok(n) = word.parse::<u64>() {
        amount = n;
        word = words.next()?;
    }
    let unit = unit_ms(word)?;
    // What may follow: "на один аккаунт продавца".
    let rest: Vec<&str> = words.collect();
    if !(rest.is_empty() || rest.join(" ") == "на один аккаунт продавца") {
        return None;
    }
    let period_ms = amount.checked_mul(unit)?;
    if limit == 0 || period_ms == 0 || period_ms % u64::from(limit) != 0 {
        return None;
    }
    Some(Limit {
        label: None,
        per_host: false,
        period_ms,
        limit,
        interval_ms: period_ms / u64::from(limit),
        burst: limit,
        form: "sentence",
    })
}

fn parse_cost(line: &str) -> Option<(u16, u32)> {
    let status: u16 = line
        .split("<code>")
        .nth(1)?
        .split("</code>")
        .next()?
        .trim()
        .parse()
        .ok()?;
    let tail = line.split("учитывается как").nth(1)?;
    let mut words = tail.split_whitespace();
    let tokens: u32 = words.next()?.parse().ok()?;
    words.next().filter(|w| w.starts_with("запрос"))?;
    Some((status, tokens))
}

fn parse_duration_ms(cell: &str) -> Option<u64> {
    let mut words = cell.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let unit = unit_ms(words.next()?)?;
    if words.next().is_some() {
        return None;
    }
    n.checked_mul(unit)
}

fn parse_count(cell: &str) -> Option<u32> {
    let mut words = cell.split_whitespace();
    let n = words.next()?.parse().ok()?;
    words.next().filter(|w| w.starts_with("запрос"))?;
    words.next().is_none().then_some(n)
}

fn unit_ms(word: &str) -> Option<u64> {
    let w = word.trim_end_matches([',', '.', ';']);
    Some(match w {
        "миллисекунда" | "миллисекунды" | "миллисекунд" | "миллисекунду" => {
            1
        }
        "секунда" | "секунды" | "секунд" | "секунду" => 1_000,
        "минута" | "минуты" | "минут" | "минуту" => 60_000,
        "час" | "часа" | "часов" => 3_600_000,
        _ => return None,
    })
}

/// A URL-safe id from Russian (or any) text: transliterated, lower-case, dashes.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.to_lowercase().chars() {
        let t: &str = match c {
            'а' => "a",
            'б' => "b",
            'в' => "v",
            'г' => "g",
            'д' => "d",
            'е' | 'ё' | 'э' => "e",
            'ж' => "zh",
            'з' => "z",
            'и' | 'й' => "i",
            'к' => "k",
            'л' => "l",
            'м' => "m",
            'н' => "n",
            'о' => "o",
            'п' => "p",
            'р' => "r",
            'с' => "s",
            'т' => "t",
            'у' => "u",
            'ф' => "f",
            'х' => "h",
            'ц' => "ts",
            'ч' => "ch",
            'ш' => "sh",
            'щ' => "sch",
            'ъ' | 'ь' => "",
            'ы' => "y",
            'ю' => "yu",
            'я' => "ya",
            c if c.is_ascii_alphanumeric() => {
                out.push(c);
                continue;
            }
            _ => "-",
        };
        out.push_str(t);
    }
    let mut collapsed = String::with_capacity(out.len());
    for part in out.split('-').filter(|p| !p.is_empty()) {
        if !collapsed.is_empty() {
            collapsed.push('-');
        }
        collapsed.push_str(part);
    }
    collapsed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(s: &str) -> Result<(Limit, BTreeMap<String, u32>), ParseError> {
        let mut cost = BTreeMap::new();
        parse_block(s, &mut cost).map(|l| (l, cost))
    }

    #[test]
    fn reads_a_group_table_with_a_cost() {
        let (l, cost) = block(
            "Лимит запросов на один аккаунт продавца для методов <strong>сборочных заданий, поставок и пропусков FBS</strong>:\n\n\
             | Период | Лимит | Интервал | Всплеск |\n| --- | --- | --- | --- |\n| 1 минута | 300 запросов | 200 миллисекунд | 20 запросов |\n\n\
             Один запрос с кодом ответа <code>409</code> учитывается как 10 запросов",
        )
        .unwrap();
        assert_eq!(
            l.label.as_deref(),
            Some("сборочных заданий, поставок и пропусков FBS")
        );
        assert_eq!(
            (l.period_ms, l.limit, l.interval_ms, l.burst),
            (60_000, 300, 200, 20)
        );
        assert_eq!(cost.get("409"), Some(&10));
    }

    #[test]
    fn reads_the_sentence_forms() {
        for (text, numbers) in [
            (
                "Максимум 3 запроса за 30 секунд. Если попытаться автоматизировать…",
                (30_000, 3, 10_000),
            ),
            (
                "Максимум 1 запрос в 10 минут на один аккаунт продавца",
                (600_000, 1, 600_000),
            ),
            ("Максимум 50 запросов в секунду", (1_000, 50, 20)),
        ] {
            let (l, _) = block(text).unwrap();
            assert_eq!((l.period_ms, l.limit, l.interval_ms), numbers, "{text}");
            assert_eq!(l.burst, l.limit);
        }
    }

    #[test]
    fn reports_what_it_does_not_know() {
        assert!(block("Максимум 3 запроса за 30 парсеков").is_err());
        assert!(block("Лимит запросов на один аккаунт продавца:\n| Период | Лимит | Интервал | Всплеск |\n| --- | --- | --- | --- |\n| 1 минута | 300 запросов | 1 секунда | 20 запросов |").is_err());
        assert!(block("Лимит запросов на один аккаунт продавца:\nЧто-то новое").is_err());
        assert!(block("Лимит запросов на один аккаунт продавца:").is_err());
    }

    #[test]
    fn slugs_are_url_safe() {
        assert_eq!(slug("Контент"), "kontent");
        assert_eq!(
            slug("сборочных заданий, поставок и пропусков FBS"),
            "sborochnyh-zadanii-postavok-i-propuskov-fbs"
        );
        assert_eq!(
            slug("/api/v3/stocks/{warehouseId}"),
            "api-v3-stocks-warehouseid"
        );
        assert_eq!(
            strip_tag("a <a href=\"x\">b</a> <abbr>c</abbr>", "a"),
            "a b <abbr>c</abbr>"
        );
    }
}
