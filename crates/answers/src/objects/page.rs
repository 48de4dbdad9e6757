//! The paging styles: what a page of a list writes into its answer, each with the end its
//! service documents.

use apistend_catalog::{PageField, Paging};
use serde_json::Value;

use super::place::{Place, url};
use super::plan::Window;
use super::pointer;

/// The page a list answers: `shown` items out of `total`, asked as `window`, the last of them
/// `last` (as stored: its id is in `id_field`).
pub(super) struct Page<'a> {
    pub(super) window: &'a Window,
    pub(super) shown: usize,
    pub(super) total: u64,
    pub(super) last: Option<&'a Value>,
    pub(super) id_field: &'a str,
}

/// Writes the paging fields of `page`; returns the status of an empty page where the style
/// answers one (amoCRM's 204).
pub(super) fn write(
    paging: &Paging,
    doc: &mut Value,
    page: &Page<'_>,
    place: &Place<'_>,
) -> Option<u16> {
    let (window, shown, total) = (page.window, page.shown, page.total);
    let after = window.offset.saturating_add(shown as u64);
    let more = after < total;
    match paging {
        Paging::Offset { .. } => {
            offset(paging, doc, page, place);
            None
        }
        Paging::Page {
            page_at,
            next,
            this,
            empty,
            ..
        } => {
            if let (0, Some(status)) = (shown, empty) {
                return Some(*status);
            }
            let page = window.offset / window.limit.max(1) + 1;
            if let Some(at) = page_at {
                pointer::set(doc, at, Value::from(page));
            }
            if let Some(at) = this {
                let href = url(place, &[("page", page), ("limit", window.limit)]);
                pointer::set(doc, at, Value::String(href));
            }
            if let Some(at) = next {
                if more {
                    let href = url(place, &[("page", page + 1), ("limit", window.limit)]);
                    pointer::set(doc, at, Value::String(href));
                } else {
                    pointer::remove(doc, at);
                }
            }
            None
        }
        Paging::Cursor {
            next,
            end,
            total: t,
            ..
        } => {
            match (more, end) {
                (true, _) => pointer::set(doc, next, Value::String(super::cursor::at(after))),
                (false, Some(end)) => pointer::set(doc, next, Value::String(end.clone())),
                (false, None) => pointer::remove(doc, next),
            }
            if let Some(t) = t {
                pointer::set(doc, t, Value::from(total));
            }
            None
        }
        Paging::After { .. } => {
            last_id(paging, doc, page);
            None
        }
        Paging::Start { next, total: t, .. } => {
            if more {
                pointer::set(doc, next, Value::from(after));
            } else {
                pointer::remove(doc, next);
            }
            pointer::set(doc, t, Value::from(total));
            None
        }
        _ => None,
    }
}

/// The `offset` style's fields: the total, limit, offset and count where the pointers say, and
/// the next page's URL while there is one.
fn offset(paging: &Paging, doc: &mut Value, page: &Page<'_>, place: &Place<'_>) {
    let Paging::Offset {
        total,
        limit_at,
        offset_at,
        next,
        count,
        ..
    } = paging
    else {
        return;
    };
    let w = page.window;
    let set = |doc: &mut Value, at: &Option<String>, v: u64| {
        if let Some(at) = at {
            pointer::set(doc, at, Value::from(v));
        }
    };
    set(doc, total, page.total);
    set(doc, limit_at, w.limit);
    set(doc, offset_at, w.offset);
    set(doc, count, page.shown as u64);
    if let Some(next) = next {
        let after = w.offset.saturating_add(page.shown as u64);
        if after < page.total {
            let href = url(place, &[("limit", w.limit), ("offset", after)]);
            pointer::set(doc, next, Value::String(href));
        } else {
            pointer::remove(doc, next);
        }
    }
}

/// The `after` style's fields: the page's last id and its other fields (none on an empty
/// page), and the page's count.
fn last_id(paging: &Paging, doc: &mut Value, page: &Page<'_>) {
    let Paging::After {
        next,
        also,
        count,
        more,
        limit_at,
        after_at,
        ..
    } = paging
    else {
        return;
    };
    let w = page.window;
    let full = page.shown as u64 >= w.limit;
    if let Some(at) = more {
        pointer::set(doc, at, Value::Bool(full));
    }
    if let Some(at) = limit_at {
        pointer::set(doc, at, Value::from(w.limit));
    }
    if let Some(at) = after_at {
        pointer::set(doc, at, w.after.clone().map_or(Value::Null, Value::String));
    }
    match page.last {
        // With `more`, a page that is not full is the last: no next id.
        Some(_) if more.is_some() && !full => pointer::set(doc, next, Value::Null),
        Some(last) => {
            let id = last.get(page.id_field).cloned().unwrap_or(Value::Null);
            pointer::set(doc, next, id);
            for (at, field) in also {
                let v = last.get(field).cloned().unwrap_or(Value::Null);
                pointer::set(doc, at, v);
            }
        }
        None if more.is_some() => pointer::set(doc, next, Value::Null),
        None => {
            for at in std::iter::once(next).chain(also.keys()) {
                pointer::remove(doc, at);
            }
        }
    }
    if let Some(at) = count {
        pointer::set(doc, at, Value::from(page.shown));
    }
}

/// The headers a page of `shown` items out of `total`, asked as `window`, carries (the
/// `offset` style's `headers`): each name with its value.
pub(super) fn headers<'p>(
    paging: &'p Paging,
    window: &Window,
    shown: usize,
    total: u64,
) -> Vec<(&'p str, u64)> {
    let Paging::Offset { headers, .. } = paging else {
        return Vec::new();
    };
    headers
        .iter()
        .map(|(field, name)| {
            let v = match field {
                PageField::Total => total,
                PageField::Offset => window.offset,
                PageField::Limit => window.limit,
                _ => shown as u64,
            };
            (name.as_str(), v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(window: &Window, shown: usize, total: u64) -> Page<'_> {
        Page {
            window,
            shown,
            total,
            last: None,
            id_field: "id",
        }
    }

    fn paging(v: Value) -> Paging {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn each_style_ends_as_its_service_documents() {
        let catalog = apistend_catalog::Catalog::builtin().unwrap();
        let service = catalog.services().first().unwrap();
        let query = vec![("page".to_owned(), "1".to_owned())];
        let place = Place {
            service,
            base: "http://s/amocrm",
            path: "/api/v4/leads",
            query: &query,
        };
        let amo = paging(
            json!({"style": "page", "default": 2, "max": 250, "page_at": "/_page",
            "next": "/_links/next/href", "empty": 204}),
        );
        let w = Window {
            limit: 2,
            ..Window::all()
        };
        let mut doc = json!({"_links": {"next": {"href": "old"}}});
        assert_eq!(write(&amo, &mut doc, &page(&w, 2, 3), &place), None);
        assert_eq!(
            doc["_links"]["next"]["href"],
            "http://s/amocrm/api/v4/leads?page=2&limit=2"
        );
        let last = Window {
            offset: 2,
            ..w.clone()
        };
        assert_eq!(write(&amo, &mut doc, &page(&last, 1, 3), &place), None);
        assert_eq!(
            doc,
            json!({"_page": 2}),
            "no next on the last page, not even an empty one"
        );
        assert_eq!(
            write(
                &amo,
                &mut doc,
                &page(&Window { offset: 4, ..w }, 0, 3),
                &place
            ),
            Some(204)
        );
        let b24 = paging(json!({"style": "start", "size": 50, "next": "/next", "total": "/total"}));
        let mut doc = json!({"next": 1});
        write(
            &b24,
            &mut doc,
            &page(
                &Window {
                    offset: 50,
                    limit: 50,
                    ids: None,
                    by: Vec::new(),
                    after: None,
                    view: None,
                },
                50,
                123,
            ),
            &place,
        );
        assert_eq!(doc, json!({"next": 100, "total": 123}));
        write(
            &b24,
            &mut doc,
            &page(
                &Window {
                    offset: 100,
                    limit: 50,
                    ids: None,
                    by: Vec::new(),
                    after: None,
                    view: None,
                },
                23,
                123,
            ),
            &place,
        );
        assert_eq!(doc, json!({"total": 123}));
        let ozon = paging(
            json!({"style": "cursor", "cursor": "/last_id", "limit": "/limit",
            "default": 100, "max": 1000, "next": "/result/last_id", "end": "", "total": "/result/total"}),
        );
        let w = Window {
            limit: 2,
            ..Window::all()
        };
        let mut doc = json!({});
        write(&ozon, &mut doc, &page(&w, 2, 3), &place);
        let next = doc["result"]["last_id"].as_str().unwrap().to_owned();
        assert_eq!(super::super::cursor::offset(&next), Some(2));
        assert_eq!(doc["result"]["total"], 3);
        let last = Window { offset: 2, ..w };
        write(&ozon, &mut doc, &page(&last, 1, 3), &place);
        assert_eq!(
            doc["result"]["last_id"], "",
            "Ozon's last page: an empty last_id"
        );
    }
}
