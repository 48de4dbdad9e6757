//! A catalog overrides file (`--overrides`): parsed, then applied to the built-in catalog.
#![no_main]

use std::sync::OnceLock;

static CATALOG: OnceLock<apistend_catalog::Catalog> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let catalog =
        CATALOG.get_or_init(|| apistend_catalog::Catalog::builtin().expect("built-in catalog"));
    if let Ok(o) = apistend_catalog::Overrides::from_toml(text) {
        let _ = catalog.clone().with_overrides(&o);
    }
});
