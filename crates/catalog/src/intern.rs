//! Interned strings for the few texts of a definition that the sandbox puts on the wire on every
//! answer (ids, prefixes, content types): `&'static str` lets it build header values without a
//! copy. Each distinct text is leaked once per process; definitions are loaded at start, so the
//! set is small and bounded by the files.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

static TEXTS: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The one `'static` copy of `text`.
pub(crate) fn intern(text: &str) -> &'static str {
    let mut texts = TEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = texts.get(text) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
    texts.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_text_is_one_copy() {
        let a = super::intern(&String::from("x-service"));
        let b = super::intern("x-service");
        assert!(std::ptr::eq(a, b));
    }
}
