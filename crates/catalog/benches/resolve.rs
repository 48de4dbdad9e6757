//! Resolving `(service, method, path)` over all WB operations: target at most 1 µs per resolve.
//!
//! `cargo bench -p apistend-catalog --bench resolve`
#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::Duration;

use apistend_catalog::{Catalog, Method, ServiceId};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
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
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
