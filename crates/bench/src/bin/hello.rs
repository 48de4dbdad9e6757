//! The anchor of the gateway benchmark: axum's hello-world as its own process, with the
//! allocator and runtime an `axum` user starts with (`#[tokio::main]`, `axum::serve`) and the
//! `apistend` binary's allocator, mimalloc, so the two differ only in what they do per request.
//!
//! `apistend-hello [ADDR]` (default `127.0.0.1:0`); prints `listening on http://ADDR`.
#![allow(clippy::print_stdout)]

use std::io::Write;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let app = axum::Router::new().route("/", axum::routing::get(|| async { "Hello, World!" }));
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on http://{}", listener.local_addr()?)?;
    out.flush()?;
    drop(out);
    axum::serve(listener, app).await?;
    Ok(())
}
