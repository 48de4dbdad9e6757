//! The committed `data/wb.json` is exactly what the importer makes of WB's official specs.

use apistend_catalog::WB_CATALOG_JSON;
use apistend_catalog::WbCatalogFile;
use apistend_catalog::import::wb::import_dir;

#[test]
fn importer_reproduces_the_committed_catalog_exactly() {
    let Some(dir) = apistend_testkit::wb_specs() else {
        return;
    };
    let report = import_dir(&dir).unwrap();
    assert!(report.errors.is_empty(), "{:#?}", report.errors);
    let mut fresh = serde_json::to_string_pretty(&report.catalog).unwrap();
    fresh.push('\n');
    assert!(
        fresh == WB_CATALOG_JSON,
        "crates/catalog/data/wb.json is stale: run `cargo run -p apistend -- catalog import-wb-openapi ../shared/wb-openapi -o crates/catalog/data/wb.json`"
    );
}

#[test]
fn all_limited_operations_with_exact_numbers() {
    let file: WbCatalogFile = serde_json::from_str(WB_CATALOG_JSON).unwrap();
    assert_eq!(file.operations.len(), 299);
    assert_eq!(
        file.operations.iter().filter(|o| o.group.is_some()).count(),
        281
    );
    let unlimited: Vec<_> = file
        .operations
        .iter()
        .filter(|o| o.group.is_none())
        .collect();
    assert_eq!(unlimited.len(), 18);
    assert!(
        unlimited.iter().all(|o| o.deprecated),
        "operations without a limit block are deprecated"
    );
    let costs = |n: u32| {
        file.operations
            .iter()
            .filter(|o| o.cost.get("409") == Some(&n))
            .count()
    };
    assert_eq!((costs(10), costs(33)), (77, 2));
    let group = |id: &str| file.groups.iter().find(|g| g.id == id).unwrap();
    let content = group("content-api.kontent");
    assert_eq!(
        (
            content.period_ms,
            content.limit,
            content.interval_ms,
            content.burst
        ),
        (60_000, 100, 600, 5)
    );
    assert_eq!(
        file.operations
            .iter()
            .filter(|o| o.group.as_deref() == Some("content-api.kontent"))
            .count(),
        23
    );
    // The excise report: 5 hours, 10 requests, 30 minutes, burst 10.
    let excise = file
        .operations
        .iter()
        .find(|o| o.path == "/api/v1/analytics/excise-report")
        .unwrap();
    let g = group(excise.group.as_deref().unwrap());
    assert_eq!(
        (g.period_ms, g.limit, g.interval_ms, g.burst),
        (5 * 3_600_000, 10, 1_800_000, 10)
    );
    // Sentence forms.
    let passes = file
        .operations
        .iter()
        .find(|o| o.path == "/api/v3/passes" && o.method == "POST")
        .unwrap();
    let g = group(passes.group.as_deref().unwrap());
    assert_eq!(
        (g.period_ms, g.limit, g.burst, g.form.as_str()),
        (600_000, 1, 1, "sentence")
    );
    // /ping: one operation on every domain, limited per domain.
    let ping = file.operations.iter().find(|o| o.path == "/ping").unwrap();
    let g = group(ping.group.as_deref().unwrap());
    assert!(g.per_host);
    assert_eq!((g.period_ms, g.limit, g.interval_ms), (30_000, 3, 10_000));
    assert!(
        ping.also_hosts
            .contains(&"marketplace-api.wildberries.ru".to_owned())
    );
}
