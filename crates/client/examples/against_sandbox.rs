//! The client against a local sandbox: start `apistend serve` in-process (no files needed),
//! then call WB's content API ten times through a client limited as WB limits it (its content
//! group: 100 a minute, 5 at once). The first calls go at once (the burst); the others wait their
//! turn locally, 600 ms each, instead of drawing 429s from the server.
//!
//! Run: `cargo run -p apistend-client --example against_sandbox`

#![allow(clippy::print_stdout)] // an example prints what it shows

mod support;

use std::time::Instant;

use apistend_catalog::{Method, ServiceId};
use apistend_client::Client;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sandbox = support::start("client").await?;
    // The integration's client: one account, WB's quotas from the catalog, the key in WB's header.
    let wb = Client::builder()
        .service(ServiceId::WB)
        .account("seller-42")
        .base_url(format!("{}/wb", sandbox.origin))
        .header("Authorization", support::KEY)
        .build()?;
    let start = Instant::now();
    for i in 1..=10 {
        let answer = wb
            .request(Method::Get, "/content/v2/object/all")
            .header("X-Mock-Delay", "0")
            .send()
            .await?;
        println!(
            "{i:2}: {} after {:>4} ms (waited {:>4} ms for a token)",
            answer.status,
            start.elapsed().as_millis(),
            answer.waited.as_millis()
        );
    }
    let stats = wb.stats();
    println!(
        "{} sent, {} rate-limit answers from the server, {:?} waited locally in all",
        stats.attempts, stats.server_rate_limits, stats.waited
    );
    sandbox.stop().await
}
