//! The paging styles: what a page of a list writes into its answer, each with the end its
//! service documents.

use apistend_catalog::Paging;
use serde_json::Value;

use super::place::{Place, url};
use super::plan::Window;
use super::pointer;

/// Writes the paging fields of a page of `shown` items out of `total`, asked as `window`;
/// returns the status of an empty page where the style answers one (amoCRM's 204).
pub(super) fn write(
    paging: &Paging,
    doc: &mut Value,
    window: &Window,
    shown: usize,
    total: u64,
    place: &Place<'_>,
) -> Option<u16> {
    let after = window.offset.saturating_add(shown as u64);
    let more = after < total;
    match paging {
        Paging::Offset {
            total: total_at,
            limit_at,
            offset_at,
            next,
            ..
        } => {
            let set = |doc: &mut Value, at: &Option<String>, v: u64| {
                if let Some(at) = at {
                    pointer::set(doc, at, Value::from(v));
                }
            };
            set(doc, total_at, total);
            set(doc, limit_at, window.limit);
            set(doc, offset_at, window.offset);
            if let Some(next) = next {
                if more {
                    let href = url(place, &[("limit", window.limit), ("offset", after)]);
                    pointer::set(doc, next, Value::String(href));
                } else {
                    pointer::remove(doc, next);
                }
            }
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
