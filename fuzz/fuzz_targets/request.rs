//! A whole request through the sandbox's router, as a client sends it: method, path and query,
//! headers (credential channels, `X-Mock-*`), body. Covers credential extraction and
//! `Call::parse`, Bitrix24's path, query and `batch` parsing, request validation against the
//! official descriptions (every service with request rules is a prefix here; `X-Mock-Validation`
//! is one of the headers), the `X-Mock-*` headers and the management API. Time is paused (delays and the `timeout` scenario pass at once).
//!
//! Input: byte 0 picks the method and the service prefix; then the path line; then header
//! lines `name: value` up to an empty line; the rest is the body.
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use tower::Service;

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];
const PREFIXES: [&str; 8] = [
    "/wb",
    "/b24",
    "/apify",
    "/ozon",
    "/ymarket",
    "/moysklad",
    "/api/v1",
    "",
];
const ADMIN: &str = "fuzz-admin-token-0123";

struct World {
    rt: tokio::runtime::Runtime,
    router: axum::Router,
    _dir: tempfile::TempDir,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let config = apistend_sandbox::SandboxConfig::new(dir.path())
            .with_demo_key("fuzz-key")
            .with_admin_token(ADMIN);
        let sandbox = rt
            .block_on(apistend_sandbox::Sandbox::new(config))
            .expect("sandbox");
        World {
            router: sandbox.router(),
            rt,
            _dir: dir,
        }
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let method = METHODS[usize::from(pick) % METHODS.len()];
    let prefix = PREFIXES[usize::from(pick / 8) % PREFIXES.len()];
    let mut lines = rest.splitn(2, |b| *b == b'\n');
    let path = lines.next().unwrap_or_default();
    let mut rest = lines.next().unwrap_or_default();
    let Ok(path) = std::str::from_utf8(path) else {
        return;
    };
    let mut req = http::Request::builder()
        .method(method)
        .uri(format!("{prefix}{path}"));
    // Header lines up to an empty one.
    while let Some(end) = rest.iter().position(|b| *b == b'\n') {
        let (line, tail) = rest.split_at(end);
        rest = tail.get(1..).unwrap_or_default();
        if line.is_empty() {
            break;
        }
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (name, value) = line.split_at(colon);
        let value = value.get(1..).unwrap_or_default();
        let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name),
            http::HeaderValue::from_bytes(value.trim_ascii()),
        ) else {
            continue;
        };
        req = req.header(name, value);
    }
    let Ok(req) = req.body(Body::from(rest.to_vec())) else {
        return;
    };
    let w = world();
    w.rt.block_on(async {
        let mut router = w.router.clone();
        // The router's error type is Infallible.
        let Ok(resp) = router.call(req).await;
        let _ = axum::body::to_bytes(resp.into_body(), 16 << 20).await;
    });
});
