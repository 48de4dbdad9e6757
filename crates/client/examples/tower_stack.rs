//! The client's limiter and retry rules as tower middleware in an HTTP stack of your own:
//! `RetryPolicy` outside `RateLimitLayer` (so that every attempt takes its own token) around a
//! transport — here `reqwest_transport`; any `Service<http::Request<B>>` will do. Requests
//! through the stack and through the `Client` share one budget.
//!
//! Run: `cargo run -p apistend-client --example tower_stack`

#![allow(clippy::print_stdout)] // an example prints what it shows

mod support;

use apistend_catalog::ServiceId;
use apistend_client::{Client, Waited, reqwest_transport};
use tower::{ServiceBuilder, ServiceExt};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sandbox = support::start("tower").await?;
    let origin = &sandbox.origin;
    let wb = Client::builder()
        .service(ServiceId::WB)
        .account("seller-42")
        .base_url(format!("{origin}/wb"))
        .build()?;
    let stack = ServiceBuilder::new()
        .retry(wb.retry_policy())
        .layer(wb.layer())
        .service(reqwest_transport(reqwest::Client::new()));

    for i in 1..=5 {
        let mut req = http::Request::get(format!("{origin}/wb/api/v3/warehouses"))
            .header("Authorization", support::KEY)
            .header("X-Mock-Delay", "0")
            .body(bytes::Bytes::new())?;
        // Optional: learn how long the call waited for its tokens.
        let waited = Waited::default();
        req.extensions_mut().insert(waited.clone());
        let answer = stack
            .clone()
            .oneshot(req)
            .await
            .map_err(anyhow::Error::from_boxed)?;
        let left = answer
            .headers()
            .get("x-ratelimit-remaining")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        println!(
            "{i}: {} (X-Ratelimit-Remaining {left}, waited {:?})",
            answer.status(),
            waited.get()
        );
    }
    sandbox.stop().await
}
