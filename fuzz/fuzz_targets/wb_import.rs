//! WB's OpenAPI importer: a spec file's YAML, and a limit block's text on its own.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    apistend_catalog::import::wb::fuzzing::limit_block(text);
    apistend_catalog::import::wb::fuzzing::import_yaml(text);
});
