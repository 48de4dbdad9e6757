//! Bad input gets a clear answer and nothing hangs: oversize bodies (413), oversize heads (431),
//! slow clients (the connection is closed, or 408 for a body that never comes).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

mod support;

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn oversize_bodies_and_heads_and_slow_clients() {
    let s = support::start(|c| c.with_read_timeout(Duration::from_millis(500))).await;
    let c = support::client();
    let big = vec![b'x'; 2 << 20];
    let r = c
        .post(format!("{}/ozon/v3/product/list", s.base))
        .header("Client-Id", "1")
        .header("Api-Key", &s.key)
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap()["code"],
        3,
        "in Ozon's own format"
    );

    let r = c
        .get(format!("{}/wb/api/v3/warehouses", s.base))
        .header("Authorization", &s.key)
        .header("X-Big", "y".repeat(40_000))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 431);

    // A client that never finishes its request head is cut off after the read timeout.
    let addr = s.base.trim_start_matches("http://");
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /wb/api/v3/warehouses HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let t = Instant::now();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut buf))
        .await
        .expect("closed, not held");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // A body announced but never sent: 408 after the read timeout.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /ozon/v3/product/list HTTP/1.1\r\nHost: x\r\nClient-Id: 1\r\nApi-Key: {}\r\nContent-Length: 100\r\n\r\n{{",
        s.key
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), slow.read(&mut buf))
        .await
        .expect("answered")
        .unwrap();
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
}
