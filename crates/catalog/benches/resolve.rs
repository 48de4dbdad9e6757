//! Resolving `(service, method, path)` over all WB operations: target at most 1 µs per resolve.
//!
//! `cargo bench -p apistend-catalog --bench resolve`
#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::Duration;

use apistend_catalog::definition::Definitions;
use apistend_catalog::{Catalog, Method, ServiceId};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    builtin(c);
    let catalog = Catalog::builtin().unwrap();
    // Every WB operation, with its parameters filled in as a client would.
    let requests: Vec<(Method, String)> = catalog
        .service(ServiceId::WB)
        .unwrap()
        .operations
        .iter()
        .map(|op| {
            let path = op
                .path
                .split('/')
                .map(|s| if s.starts_with('{') { "12345" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            (op.method, path)
        })
        .collect();
    println!("resolving {} WB operations", requests.len());
    let mut group = c.benchmark_group("resolve");
    group.throughput(Throughput::Elements(requests.len() as u64));
    group.bench_function("all_wb_operations", |b| {
        b.iter(|| {
            for (m, p) in &requests {
                black_box(
                    catalog
                        .resolve(ServiceId::WB, *m, black_box(p), None)
                        .unwrap()
                        .operation
                        .is_some(),
                );
            }
        });
    });
    group.finish();
    templated_100k(c);
}

/// `Catalog::builtin()`: the first call of a process parses every definition (measured once,
/// printed); later calls share that catalog.
fn builtin(c: &mut Criterion) {
    let first = std::time::Instant::now();
    let _ = Catalog::builtin().unwrap();
    println!(
        "Catalog::builtin(), first call of the process: {:?}",
        first.elapsed()
    );
    c.bench_function("catalog_builtin_again", |b| {
        b.iter(|| black_box(Catalog::builtin().unwrap()));
    });
    c.bench_function("catalog_load_builtin_definitions", |b| {
        b.iter(|| black_box(Catalog::load(&Definitions::builtin(), None).unwrap()));
    });
}

/// A service of 100 000 templated operations (`GET /r{i}/items/{id}`): the first, the last and
/// an unknown path must resolve within 2× of one another — the trie's work follows the path,
/// not the number of templates.
fn templated_100k(c: &mut Criterion) {
    const N: usize = 100_000;
    let mut text = String::from(
        "id = \"many\"\nprefix = \"/many\"\ncredentials = [\"bearer_token\"]\nerrors = \"template\"\n\
         answers = \"fixtures\"\nfallback_groups = [\"key\"]\n[rejection]\nstatus = 429\n\
         content_type = \"application/json\"\n[[groups]]\nid = \"key\"\n\
         quota = { count = 10, period_ms = 1000 }\n[error_templates.default]\nbody = '{}'\n",
    );
    for i in 0..N {
        text.push_str(&format!(
            "[[operations]]\nmethod = \"GET\"\npaths = [\"/r{i}/items/{{id}}\"]\ngroups = [\"key\"]\n\
             answer = {{ body = '{{}}' }}\n"
        ));
    }
    let defs = Definitions::builtin()
        .with_file("many.toml".into(), text)
        .unwrap();
    let catalog = Catalog::load(&defs, None).unwrap();
    let id = catalog.service_id("many").unwrap();
    let mut group = c.benchmark_group("resolve_100k_templates");
    for (name, path, found) in [
        ("first", "/r0/items/42".to_owned(), true),
        ("last", format!("/r{}/items/42", N - 1), true),
        ("unknown", "/nowhere/items/42".to_owned(), false),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let hit = catalog
                    .resolve(id, Method::Get, black_box(&path), None)
                    .unwrap();
                assert_eq!(hit.operation.is_some(), found);
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
