//! Bad input gets a clear answer and nothing hangs: oversize bodies (413), oversize heads (431),
//! slow clients (the connection is closed, or 408 for a body that never comes).

use crate::support;

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

    // At most 100 header fields, as documented (Envoy's default count): 431 beyond, however
    // small the head.
    for (fields, want) in [(90, 200), (101, 431)] {
        let mut req = c
            .get(format!("{}/wb/api/v3/warehouses", s.base))
            .header("Authorization", &s.key)
            .header("X-Mock-Delay", "0");
        for i in 0..fields {
            req = req.header(format!("x-{i}"), "1");
        }
        assert_eq!(req.send().await.unwrap().status(), want, "{fields} fields");
    }

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

/// A body sent in chunks (no Content-Length) is read like any other: over the limit it is a
/// 413, stalled it is a 408. The pipeline skips reading only bodies hyper knows to be empty.
#[tokio::test]
async fn chunked_bodies_are_read_and_bounded() {
    let s = support::start(|c| c.with_read_timeout(Duration::from_millis(500))).await;
    let addr = s.base.trim_start_matches("http://");
    let head = format!(
        "POST /ozon/v3/product/list HTTP/1.1\r\nHost: x\r\nClient-Id: 1\r\nApi-Key: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        s.key
    );
    let answer = async |tail: &[u8]| {
        let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
        conn.write_all(head.as_bytes()).await.unwrap();
        // The sandbox may answer and close before the whole of an oversize body is written.
        let _ = conn.write_all(tail).await;
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut buf))
            .await
            .expect("answered and closed");
        String::from_utf8_lossy(&buf).into_owned()
    };
    let text = answer(b"2\r\n{}\r\n0\r\n\r\n").await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");

    let mut big = format!("{:x}\r\n", 2 << 20).into_bytes();
    big.extend(std::iter::repeat_n(b'x', 2 << 20));
    big.extend_from_slice(b"\r\n0\r\n\r\n");
    let text = answer(&big).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains(r#""code":3"#), "in Ozon's own format: {text}");

    // The first chunk, then nothing: 408 after the read timeout.
    let text = answer(b"1\r\n{\r\n").await;
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
}

/// nginx's clock: an idle keep-alive connection outlives the head timeout, a started head that
/// stalls does not.
#[tokio::test]
async fn idle_connections_outlive_the_head_timeout_stalled_heads_do_not() {
    let s = support::start(|c| {
        c.with_read_timeout(Duration::from_millis(300))
            .with_idle_timeout(Duration::from_secs(2))
    })
    .await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let request = format!(
        "GET /wb/api/v3/warehouses HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nX-Mock-Delay: 0\r\n\r\n",
        s.key
    );
    let answered = async |conn: &mut tokio::net::TcpStream| {
        conn.write_all(request.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 8192];
        let n = tokio::time::timeout(Duration::from_secs(3), conn.read(&mut buf))
            .await
            .expect("answered")
            .unwrap();
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200")
    };
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    assert!(answered(&mut conn).await);
    // Idle for three head timeouts: still open.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(
        answered(&mut conn).await,
        "idle keep-alive connection was closed"
    );
    // A POST whose body comes in a second write, then idle for three head timeouts: still open
    // (hyper flushes while it reads a body; that is no answer, and must not start a head clock).
    let post = format!(
        "POST /ozon/v3/product/list HTTP/1.1\r\nHost: x\r\nClient-Id: 1\r\nApi-Key: {}\r\nX-Mock-Delay: 0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{",
        s.key
    );
    conn.write_all(post.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    conn.write_all(b"}").await.unwrap();
    let mut buf = vec![0u8; 8192];
    let n = tokio::time::timeout(Duration::from_secs(3), conn.read(&mut buf))
        .await
        .expect("answered")
        .unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(
        answered(&mut conn).await,
        "closed after a POST and idle time"
    );
    // Idle past the idle timeout: closed.
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(1), conn.read(&mut buf))
        .await
        .expect("closed, not held")
        .unwrap_or(0);
    assert_eq!(n, 0, "closed after the idle timeout");
    // A head that starts after idle time and stalls is cut at the head timeout.
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    assert!(answered(&mut conn).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    conn.write_all(b"GET /wb/api/v3/warehouses HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let t = Instant::now();
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(3), conn.read_to_end(&mut rest))
        .await
        .expect("closed, not held");
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
}

/// An early answer of the management API (401 without a token) to a POST whose body comes in a
/// second write keeps the connection usable; a body over the limit is answered 413 with
/// `Connection: close`.
#[tokio::test]
async fn early_management_answers_keep_the_connection() {
    let s = support::start(|c| c).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    for _ in 0..3 {
        conn.write_all(b"POST /api/v1/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000\r\n\r\n")
            .await
            .unwrap();
        conn.write_all(&[b' '; 1500]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        conn.write_all(&[b' '; 1500]).await.unwrap();
        let mut buf = vec![0u8; 8192];
        let n = tokio::time::timeout(Duration::from_secs(3), conn.read(&mut buf))
            .await
            .expect("answered")
            .unwrap();
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(text.starts_with("HTTP/1.1 401"), "{text}");
        assert!(text.contains("application/problem+json"), "{text}");
        assert!(
            !text.to_ascii_lowercase().contains("connection: close"),
            "{text}"
        );
    }
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    conn.write_all(
        b"POST /api/v1/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n",
    )
    .await
    .unwrap();
    let mut buf = vec![0u8; 8192];
    let n = tokio::time::timeout(Duration::from_secs(3), conn.read(&mut buf))
        .await
        .expect("answered")
        .unwrap();
    let text = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
    assert!(text.starts_with("http/1.1 413"), "{text}");
    assert!(text.contains("connection: close"), "{text}");
}

/// Every management error is problem details: a method a route lacks (405) and a query string
/// that does not parse (400).
#[tokio::test]
async fn management_405_and_query_errors_are_problem_details() {
    let s = support::start(|c| c.with_admin_token("hardening-admin-token")).await;
    let c = support::client();
    let r = c
        .patch(format!("{}/api/v1/sandboxes", s.base))
        .bearer_auth("hardening-admin-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let list = support::json(
        c.get(format!("{}/api/v1/sandboxes", s.base))
            .bearer_auth("hardening-admin-token"),
    )
    .await;
    let id = list[0]["id"].as_str().unwrap();
    for q in ["all=maybe", "colour=red"] {
        let r = c
            .get(format!("{}/api/v1/sandboxes/{id}/buckets?{q}", s.base))
            .bearer_auth("hardening-admin-token")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{q}");
        assert_eq!(
            r.headers()["content-type"],
            "application/problem+json",
            "{q}"
        );
        let v: serde_json::Value = r.json().await.unwrap();
        assert!(
            v["detail"].as_str().unwrap().contains("query string"),
            "{v}"
        );
    }
}

/// Every answer's body agrees with its status: a 413, a 408 and the `timeout` scenario's 504
/// say 413, 408 and 504 in the service's own error format (WB's `status`, MoySklad's `code`:
/// its own 1044 for a body over its 20 MB).
#[tokio::test]
async fn error_bodies_say_the_status_they_are_sent_with() {
    let s = support::start(|c| {
        c.with_read_timeout(Duration::from_millis(300))
            .with_max_timeout(Duration::from_millis(200))
    })
    .await;
    let c = support::client();
    let r = c
        .post(format!("{}/wb/content/v2/get/cards/list", s.base))
        .header("Authorization", &s.key)
        .body(vec![b'x'; 2 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        (body["status"].as_u64(), body["statusText"].as_str()),
        (Some(413), Some("Payload Too Large")),
        "{body}"
    );

    let r = c
        .post(format!("{}/moysklad/api/remap/1.2/entity/product", s.base))
        .header("Authorization", format!("Bearer {}", s.key))
        .body(vec![b'x'; 21 << 20])
        .send()
        .await
        .unwrap();
    // MoySklad takes 20 MB (docs/requests.md, "Body sizes"); more is its error 1044.
    assert_eq!(r.status(), 413);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], 1044, "{body}");

    let r = c
        .get(format!("{}/wb/api/v3/warehouses", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Scenario", "timeout")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 504);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        (body["status"].as_u64(), body["statusText"].as_str()),
        (Some(504), Some("Gateway Timeout")),
        "{body}"
    );

    let addr = s.base.trim_start_matches("http://");
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /wb/content/v2/get/cards/list HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Length: 100\r\n\r\n{{",
        s.key
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut buf))
        .await
        .expect("answered and closed")
        .unwrap();
    let text = String::from_utf8_lossy(&buf);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains(r#""status":408"#), "{text}");
}

/// A pooled client's connection, idle for longer than hyper's own default head timeout (30 s),
/// is still served: only the idle timeout (here 45 s) closes it.
#[tokio::test]
async fn an_idle_connection_outlives_thirty_seconds() {
    let s = support::start(|c| c.with_idle_timeout(Duration::from_secs(45))).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let request = format!(
        "GET /wb/api/v3/warehouses HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nX-Mock-Delay: 0\r\n\r\n",
        s.key
    );
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut buf = vec![0u8; 8192];
    for idle in [Duration::ZERO, Duration::from_secs(32)] {
        tokio::time::sleep(idle).await;
        conn.write_all(request.as_bytes()).await.unwrap();
        let n = tokio::time::timeout(Duration::from_secs(3), conn.read(&mut buf))
            .await
            .expect("answered")
            .unwrap();
        assert!(
            String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
            "after {idle:?} idle: {:?}",
            String::from_utf8_lossy(&buf[..n])
        );
    }
}

/// Answers larger than the server's write buffer (the management API's OpenAPI document, sent
/// in pieces) arrive whole with their length, and the one connection they came on serves the
/// next request.
#[tokio::test]
async fn a_large_answer_arrives_whole_on_a_kept_alive_connection() {
    let s = support::start(|c| c).await;
    let addr = s.base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut buf = Vec::new();
    let mut seen = Vec::new();
    for _ in 0..3 {
        conn.write_all(b"GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let (head, body) = loop {
            let mut chunk = [0u8; 8192];
            let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut chunk))
                .await
                .expect("answered")
                .unwrap();
            assert!(n > 0, "the connection closed");
            buf.extend_from_slice(&chunk[..n]);
            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .expect("a Content-Length")
                .parse()
                .unwrap();
            if buf.len() >= end + 4 + length {
                let body = buf[end + 4..end + 4 + length].to_vec();
                buf.drain(..end + 4 + length);
                break (head, body);
            }
        };
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(
            body.len() > 32 * 1024,
            "the document is {} bytes",
            body.len()
        );
        let _: serde_json::Value = serde_json::from_slice(&body).unwrap();
        seen.push(body);
    }
    assert!(buf.is_empty(), "nothing after the last answer");
    assert!(seen.windows(2).all(|w| w[0] == w[1]));
}
