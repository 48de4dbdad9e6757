//! `apistend catalog` as a user runs it.

use std::process::Command;

fn apistend(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_apistend"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn prints_json_rows_for_one_service() {
    let out = apistend(&["catalog", "--service", "b24", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["service"] == "b24" && r["burst"] == 50 && r["interval_ms"] == 500.0)
    );
}

#[test]
fn prints_a_table_and_rejects_bad_arguments() {
    let out = apistend(&["catalog", "--service", "wb"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("content-api.kontent"));
    let bad = apistend(&["catalog", "--service", "nope"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown service"));
    let missing = apistend(&["catalog", "import-wb-openapi", "/nonexistent-dir"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent-dir"));
}
