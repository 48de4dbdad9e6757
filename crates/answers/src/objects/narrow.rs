//! A list's filters by fields other than the id, and its page, applied to what a store listed
//! (every object its id filter lets through): a store keys objects by id and pages by position
//! only, so a filter by another field (Ozon's `offer_id`) or a page after an id (WB's cards)
//! reads the collection and narrows it here, the same for every store.

use apistend_catalog::IdStyle;
use serde_json::Value;

use super::outcome::Outcome;
use super::plan::{Window, text};

/// The page `w` asks for of `items` (whose ids `id` reads), after its filters by other fields,
/// and how many pass. A page after an id the list does not hold is empty: a client that pages
/// until a short page stops.
pub fn narrow(items: Vec<Value>, w: &Window, id: &IdStyle) -> Outcome {
    let passing: Vec<Value> = items
        .into_iter()
        .filter(|o| {
            w.by.iter().all(|(field, values)| {
                o.get(field)
                    .and_then(text)
                    .is_some_and(|v| values.contains(&v))
            }) && w
                .view
                .as_ref()
                .is_none_or(|f| apistend_catalog::View::holds(o, f))
        })
        .collect();
    let total = passing.len() as u64;
    let start = match &w.after {
        None => usize::try_from(w.offset).unwrap_or(usize::MAX),
        Some(after) => passing
            .iter()
            .position(|o| id.key(o).as_deref() == Some(after.as_str()))
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

    fn ids() -> IdStyle {
        serde_json::from_value(json!({"kind": "sequential", "field": "id"})).unwrap()
    }

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
            view: None,
        };
        assert_eq!(
            narrow(items.clone(), &w, &ids()),
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
            narrow(items.clone(), &none, &ids()),
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
        let Outcome::Listed { items: page, total } = narrow(items.clone(), &after, &ids()) else {
            panic!()
        };
        assert_eq!((page.len(), &page[0]["id"], total), (2, &json!(4), 6));
        let gone = Window {
            after: Some("99".into()),
            ..after
        };
        assert_eq!(
            narrow(items, &gone, &ids()),
            Outcome::Listed {
                items: vec![],
                total: 6
            },
            "after an id it does not hold: an empty page"
        );
    }
}
