//! A user's service definition (`--services DIR`): parsed, validated (path templates, duplicate
//! operations, reserved prefixes) and built into a catalog; then every operation it defines is
//! resolved through the router's trie, parameters filled in, and so are a few paths of the
//! input's own making.
#![no_main]

use std::sync::OnceLock;

use apistend_catalog::definition::Definitions;
use apistend_catalog::WbCatalogFile;
use apistend_catalog::{Catalog, Method};

static WB: OnceLock<WbCatalogFile> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let wb = WB.get_or_init(|| {
        serde_json::from_str(apistend_catalog::WB_CATALOG_JSON).expect("the committed WB import")
    });
    let Ok(defs) = Definitions::default().with_file("fuzz.toml".into(), text.to_owned()) else {
        return;
    };
    let Ok(catalog) = Catalog::load(&defs, Some(wb)) else {
        return;
    };
    for svc in catalog.services() {
        for op in &svc.operations {
            let filled: Vec<&str> = op
                .path
                .split('/')
                .map(|s| if s.starts_with('{') { "1" } else { s })
                .collect();
            let path = filled.join("/");
            let hit = catalog.resolve(svc.id, op.method, &path, None);
            assert!(hit.is_some_and(|h| h.operation.is_some()), "{} {path}", op.method.as_str());
        }
        for line in text.lines().take(8) {
            let _ = catalog.resolve(svc.id, Method::Get, line, None);
        }
    }
});
