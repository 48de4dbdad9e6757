//! A data file or a shared Redis record: parsed, checked and indexed, or merged.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    apistend_sandbox::fuzzing::tenant_state(data);
});
