//! The packages that carry the binary (`python/`, the wheel; `js/`, the npm package) keep the
//! crate's version, and the changelog names it. (Their own suites run from the built wheel in
//! `scripts/test-packages.sh`, which CI calls.)

use std::path::PathBuf;

fn repo_file(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

#[test]
fn the_wheel_and_the_npm_package_have_the_crates_version() {
    let crate_version = env!("CARGO_PKG_VERSION");
    let npm: serde_json::Value = serde_json::from_str(&repo_file("js/package.json")).unwrap();
    assert_eq!(npm["version"], crate_version, "js/package.json");
    let lock: serde_json::Value = serde_json::from_str(&repo_file("js/package-lock.json")).unwrap();
    assert_eq!(lock["version"], crate_version, "js/package-lock.json");
    // maturin takes the wheel's version from the crate: the project must not state its own.
    let pyproject = repo_file("python/pyproject.toml");
    assert!(
        pyproject.contains("dynamic = [\"version\"]")
            && !pyproject.lines().any(|l| l.starts_with("version")),
        "python/pyproject.toml must leave its version to crates/cli/Cargo.toml"
    );
    assert!(
        pyproject.contains("manifest-path = \"../crates/cli/Cargo.toml\""),
        "the wheel is built from the apistend crate"
    );
    let changelog = repo_file("CHANGELOG.md");
    assert!(
        changelog.contains(&format!("everything below is in {crate_version}")),
        "CHANGELOG.md names the version its entries belong to"
    );
}
