//! A list's filters by fields other than the id, and its page, applied to what a store listed
//! (every object its id filter lets through): a store keys objects by id only, so a filter by
//! another field (Ozon's `offer_id`) reads the collection and narrows it here, the same for
//! every store.

use serde_json::Value;

use super::outcome::Outcome;
use super::plan::{Window, text};

/// The page `w` asks for of `items` (whose ids are in their `id_field`), after its filters by
/// other fields, and how many pass. A page after an id the list does not hold is empty: a
/// client that pages until a short page stops.
pub fn narrow(items: Vec<Value>, w: &Window, id_field: &str) -> Outcome {
    let passing: Vec<Value> = items
        .into_iter()
        .filter(|o| {
            w.by.iter().all(|(field, values)| {
                o.get(field)
                    .and_then(text)
                    .is_some_and(|v| values.contains(&v))
            })
        })
        .collect();
    let total = passing.len() as u64;
    let start = match &w.after {
        None => usize::try_from(w.offset).unwrap_or(usize::MAX),
        Some(id) => passing
            .iter()
            .position(|o| o.get(id_field).and_then(text).as_deref() == Some(id.as_str()))
            .map_or(usize::MAX, |at| at + 1),
    };
    let items = passing
        .into_iter()
        .skip(start)
        .take(usize::try_from(w.limit).unwrap_or(usize::MAX))
        .collect();
    Outcome::Listed { items, total }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filters_by_each_field_then_pages() {
        let items: Vec<Value> = (0..6)
            .map(|i| json!({"id": i, "offer_id": format!("o{}", i % 3), "n": i}))
            .collect();
        let w = Window {
            offset: 1,
            limit: 1,
            ids: None,
            by: vec![("offer_id".into(), vec!["o1".into(), "o2".into()])],
            after: None,
        };
        assert_eq!(
            narrow(items.clone(), &w, "id"),
            Outcome::Listed {
                items: vec![json!({"id": 2, "offer_id": "o2", "n": 2})],
                total: 4
            }
        );
        let none = Window {
            by: vec![("missing".into(), vec!["x".into()])],
            ..Window::all()
        };
        assert_eq!(
            narrow(items.clone(), &none, "id"),
            Outcome::Listed {
                items: vec![],
                total: 0
            }
        );
        let after = Window {
            limit: 2,
            after: Some("3".into()),
            ..Window::all()
        };
        let Outcome::Listed { items: page, total } = narrow(items.clone(), &after, "id") else {
            panic!()
        };
        assert_eq!((page.len(), &page[0]["id"], total), (2, &json!(4), 6));
        let gone = Window {
            after: Some("99".into()),
            ..after
        };
        assert_eq!(
            narrow(items, &gone, "id"),
            Outcome::Listed {
                items: vec![],
                total: 6
            },
            "after an id it does not hold: an empty page"
        );
    }
}
