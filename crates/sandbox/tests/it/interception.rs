//! Clients with fixed hosts: the local certificate authority, the TLS listener, `CONNECT`
//! tunnels and absolute-form proxy requests, over real sockets and a real TLS client (rustls).

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::Catalog;
use apistend_sandbox::tls::{CA_CERT_FILE, CA_KEY_FILE, Certificates, LocalCa, TlsError};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

fn roots(ca: &CertificateDer<'static>) -> Arc<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    Arc::new(roots)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A TLS client that trusts only the sandbox's authority.
fn connector(dir: &std::path::Path) -> tokio_rustls::TlsConnector {
    let pem = std::fs::read(dir.join(CA_CERT_FILE)).unwrap();
    let ca = rustls::pki_types::pem::PemObject::from_pem_slice(&pem).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots(&ca))
        .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// Sends a whole HTTP/1.1 request (with `Connection: close`) and reads the whole answer.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, head: &str, body: &str) -> String {
    let request = format!(
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("an answer, not a hang")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

fn status(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn plain_addr(server: &support::TestServer) -> String {
    server.base.trim_start_matches("http://").to_owned()
}

/// A TLS handshake for `name` on `stream`, then [`exchange`].
async fn over_tls(
    server: &support::TestServer,
    stream: TcpStream,
    name: &str,
    head: &str,
    body: &str,
) -> String {
    let stream = connector(&server.dir)
        .connect(ServerName::try_from(name.to_owned()).unwrap(), stream)
        .await
        .unwrap();
    exchange(stream, head, body).await
}

/// Opens a `CONNECT` tunnel through the plain listener; returns the stream and the proxy's answer head.
async fn connect(server: &support::TestServer, authority: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(plain_addr(server)).await.unwrap();
    s.write_all(format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        if s.read(&mut b).await.unwrap() == 0 {
            break;
        }
        head.push(b[0]);
    }
    (s, String::from_utf8_lossy(&head).into_owned())
}

/// Every name a definition claims: its hosts, and a portal-like name under each `*.` suffix.
fn builtin_names() -> Vec<String> {
    let catalog = Catalog::builtin().unwrap();
    let mut names = Vec::new();
    for s in catalog.services() {
        names.extend(s.hosts.iter().cloned());
        for h in &s.hostnames {
            names.push(h.replacen('*', "my-portal", 1));
        }
    }
    names
}

#[test]
fn every_builtin_hostname_gets_a_certificate_that_verifies_against_the_authority() {
    let dir = support::temp_dir();
    let ca = LocalCa::open(&dir).unwrap();
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
        roots(ca.cert_der()),
        provider(),
    )
    .build()
    .unwrap();
    let catalog = Arc::new(Catalog::builtin().unwrap());
    let names = Arc::clone(&catalog);
    let certs = Certificates::new(ca, Box::new(move |n| names.by_hostname(n).is_some())).unwrap();
    let mut checked = builtin_names();
    checked.extend(["localhost", "127.0.0.1", "::1"].map(String::from));
    assert!(checked.len() > 30, "{checked:?}");
    for name in &checked {
        let key = certs.get(name).unwrap();
        let server_name = ServerName::try_from(name.as_str()).unwrap();
        rustls::client::danger::ServerCertVerifier::verify_server_cert(
            verifier.as_ref(),
            &key.cert[0],
            &key.cert[1..],
            &server_name,
            &[],
            UnixTime::now(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // Never a certificate for a name outside the definitions.
    for name in [
        "example.com",
        "bitrix24.ru",
        "wildberries.ru.evil.com",
        "ozon.ru",
    ] {
        assert!(
            matches!(certs.get(name), Err(TlsError::UnknownName(_))),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_authority_survives_restarts_and_its_key_stays_private() {
    let server = support::start(|c| c).await;
    let dir = server.stop_keeping_dir().await;
    let first = std::fs::read_to_string(dir.join(CA_CERT_FILE)).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(CA_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let server = support::start_in(dir.clone(), |c| c).await;
    let again = std::fs::read_to_string(dir.join(CA_CERT_FILE)).unwrap();
    assert_eq!(first, again, "one authority across restarts");
    // A shared directory (--ca-dir) serves another instance with another data directory.
    let other = support::start(|c| {
        let mut c = c;
        c.ca_dir = Some(dir.clone());
        c
    })
    .await;
    assert!(!other.dir.join(CA_CERT_FILE).exists());
    drop((server, other));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_tls_listener_emulates_a_service_by_its_hostname() {
    let server = support::start_tls(|c| c).await;
    let tls = server.tls.unwrap();
    let answer = over_tls(
        &server,
        TcpStream::connect(tls).await.unwrap(),
        "content-api.wildberries.ru",
        &format!(
            "GET /ping HTTP/1.1\r\nHost: content-api.wildberries.ru\r\nAuthorization: {}\r\nX-Mock-Delay: 0",
            server.key
        ),
        "",
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(answer.contains("\"Status\":\"OK\""), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("x-ratelimit-remaining"),
        "{answer}"
    );

    // A Bitrix24 portal of any name, by its webhook URL.
    let answer = over_tls(
        &server,
        TcpStream::connect(tls).await.unwrap(),
        "any-portal.bitrix24.ru",
        &format!(
            "POST /rest/1/{}/user.current HTTP/1.1\r\nHost: any-portal.bitrix24.ru\r\nX-Mock-Delay: 0",
            server.key
        ),
        "",
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(answer.contains("\"result\""), "{answer}");

    // Without a server name (by IP), the loopback certificate and prefix routing.
    let answer = over_tls(
        &server,
        TcpStream::connect(tls).await.unwrap(),
        "127.0.0.1",
        &format!(
            "GET /wb/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {}\r\nX-Mock-Delay: 0",
            server.key
        ),
        "",
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");

    // The management API is not on the TLS listener.
    let answer = over_tls(
        &server,
        TcpStream::connect(tls).await.unwrap(),
        "localhost",
        "GET /api/v1/sandboxes HTTP/1.1\r\nHost: localhost",
        "",
    )
    .await;
    assert_eq!(status(&answer), 404, "{answer}");
}

#[tokio::test]
async fn bad_tls_input_gets_a_clear_answer_or_a_clean_close() {
    let server = support::start_tls(|c| c.with_read_timeout(Duration::from_millis(500))).await;
    let tls = server.tls.unwrap();
    // An unknown server name: the unrecognized_name alert, no certificate.
    let stream = TcpStream::connect(tls).await.unwrap();
    let err = connector(&server.dir)
        .connect(ServerName::try_from("example.com").unwrap(), stream)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("UnrecognisedName") || err.to_string().contains("unrecognised"),
        "{err}"
    );
    // Plain HTTP on the TLS port: a readable 400 that names the plain listener.
    let stream = TcpStream::connect(tls).await.unwrap();
    let answer = exchange(stream, "GET /wb/ping HTTP/1.1\r\nHost: localhost", "").await;
    assert_eq!(status(&answer), 400, "{answer}");
    assert!(answer.contains(&plain_addr(&server)), "{answer}");
    // Garbage, then silence: closed within the head timeout, not held open.
    let mut stream = TcpStream::connect(tls).await.unwrap();
    stream.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
        .await
        .expect("closed, not hung")
        .ok();
    // Nothing at all: closed as well.
    let mut stream = TcpStream::connect(tls).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
        .await
        .expect("closed, not hung")
        .ok();
    // The listener still serves.
    let answer = over_tls(
        &server,
        TcpStream::connect(tls).await.unwrap(),
        "api.apify.com",
        &format!(
            "GET /v2/users/me HTTP/1.1\r\nHost: api.apify.com\r\nAuthorization: Bearer {}\r\nX-Mock-Delay: 0",
            server.key
        ),
        "",
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
}

#[tokio::test]
async fn connect_to_a_known_host_is_emulated_and_any_other_is_refused() {
    let server = support::start(|c| c).await;
    let (stream, head) = connect(&server, "api-seller.ozon.ru:443").await;
    assert_eq!(status(&head), 200, "{head}");
    let answer = over_tls(
        &server,
        stream,
        "api-seller.ozon.ru",
        &format!(
            "POST /v1/warehouse/list HTTP/1.1\r\nHost: api-seller.ozon.ru\r\nClient-Id: 42\r\nApi-Key: {}\r\nX-Mock-Delay: 0\r\nContent-Type: application/json",
            server.key
        ),
        r#"{"limit": 50}"#,
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(answer.contains("warehouse_id"), "{answer}");

    // Port 80 through a tunnel is plain HTTP.
    let (stream, head) = connect(&server, "api.moysklad.ru:80").await;
    assert_eq!(status(&head), 200, "{head}");
    let answer = exchange(
        stream,
        &format!(
            "GET /api/remap/1.2/entity/product HTTP/1.1\r\nHost: api.moysklad.ru\r\nAuthorization: Bearer {}\r\nX-Mock-Delay: 0",
            server.key
        ),
        "",
    )
    .await;
    assert_ne!(status(&answer), 0, "{answer}");
    assert!(
        !answer.contains("problem+json"),
        "emulated, not the management API: {answer}"
    );

    // Any other host: a 502 naming the known ones, and nothing forwarded.
    let (mut stream, head) = connect(&server, "example.com:443").await;
    assert_eq!(status(&head), 502, "{head}");
    let mut body = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut body)).await;
    assert!(
        body.contains("api-seller.ozon.ru") && body.contains("*.bitrix24.ru"),
        "{body}"
    );
    // A CONNECT without a port.
    let (_, head) = connect(&server, "api-seller.ozon.ru").await;
    assert_eq!(status(&head), 400, "{head}");
}

#[tokio::test]
async fn passthrough_tunnels_bytes_to_other_hosts_only_when_asked() {
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo_addr = echo.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = echo.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    let refused = support::start(|c| c).await;
    let (_, head) = connect(&refused, &echo_addr.to_string()).await;
    assert_eq!(status(&head), 502, "{head}");

    // Passthrough alone reaches public addresses only: loopback (a Redis, say) is refused.
    let open = support::start(|c| {
        let mut c = c;
        c.passthrough = true;
        c
    })
    .await;
    let (mut refused_stream, head) = connect(&open, &echo_addr.to_string()).await;
    assert_eq!(status(&head), 403, "{head}");
    let mut why = String::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        refused_stream.read_to_string(&mut why),
    )
    .await;
    assert!(why.contains("--passthrough-allow"), "{why}");
    let (_, head) = connect(&open, &format!("localhost:{}", echo_addr.port())).await;
    assert_eq!(status(&head), 403, "{head}");

    let server = support::start(|c| {
        let mut c = c;
        c.passthrough = true;
        c.passthrough_allow = vec!["127.0.0.0/8".parse().unwrap()];
        c.idle_timeout = Duration::from_secs(1);
        c
    })
    .await;
    // Its own listener stays closed to a tunnel, allowed range or not.
    let (_, head) = connect(&server, &plain_addr(&server)).await;
    assert_eq!(status(&head), 403, "{head}");
    let (mut stream, head) = connect(&server, &echo_addr.to_string()).await;
    assert_eq!(status(&head), 200, "{head}");
    stream.write_all(b"ping through the tunnel").await.unwrap();
    let mut back = [0u8; 23];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut back))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&back, b"ping through the tunnel");
    // Quiet for the idle timeout: the tunnel closes.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    assert!(matches!(closed, Ok(Ok(0))), "{closed:?}");
    // A host that does not answer: 502, not a hang.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let (_, head) = connect(&server, &dead_addr.to_string()).await;
    assert_eq!(status(&head), 502, "{head}");
}

#[tokio::test]
async fn absolute_form_requests_are_emulated_by_their_authority() {
    let server = support::start(|c| c).await;
    let body = "{}";
    for uri in [
        "http://api-seller.ozon.ru/v3/product/list",
        // axios sends https:// URLs to an HTTP proxy this way instead of a CONNECT.
        "https://api-seller.ozon.ru/v3/product/list",
    ] {
        let stream = TcpStream::connect(plain_addr(&server)).await.unwrap();
        let answer = exchange(
            stream,
            &format!(
                "POST {uri} HTTP/1.1\r\nHost: api-seller.ozon.ru\r\nClient-Id: 42\r\nApi-Key: {}\r\nX-Mock-Delay: 0\r\nContent-Type: application/json",
                server.key
            ),
            body,
        )
        .await;
        assert_eq!(status(&answer), 200, "{uri}: {answer}");
        assert!(answer.contains("\"result\""), "{answer}");
    }
    // Another host is never forwarded.
    let stream = TcpStream::connect(plain_addr(&server)).await.unwrap();
    let answer = exchange(
        stream,
        "GET http://example.com/ HTTP/1.1\r\nHost: example.com",
        "",
    )
    .await;
    assert_eq!(status(&answer), 502, "{answer}");
    // Nor another local port (a Redis beside the sandbox); the sandbox's own port is itself.
    let stream = TcpStream::connect(plain_addr(&server)).await.unwrap();
    let answer = exchange(
        stream,
        "GET http://127.0.0.1:6379/ HTTP/1.1\r\nHost: 127.0.0.1:6379",
        "",
    )
    .await;
    assert_eq!(status(&answer), 502, "{answer}");
    let stream = TcpStream::connect(plain_addr(&server)).await.unwrap();
    let answer = exchange(
        stream,
        &format!(
            "GET http://{0}/healthz HTTP/1.1\r\nHost: {0}",
            plain_addr(&server)
        ),
        "",
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
    // A Host header alone routes too (a hosts-file entry pointing the name at the sandbox).
    let stream = TcpStream::connect(plain_addr(&server)).await.unwrap();
    let answer = exchange(
        stream,
        &format!(
            "GET /v2/users/me HTTP/1.1\r\nHost: api.apify.com\r\nAuthorization: Bearer {}\r\nX-Mock-Delay: 0",
            server.key
        ),
        "",
    )
    .await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(answer.contains("\"data\""), "{answer}");
}

/// A tunnel keeps no clock of its own: a slow answer (longer than the head timeout) inside it
/// arrives, and the connection inside serves several requests.
#[tokio::test]
async fn a_tunnel_carries_slow_answers_and_keeps_alive() {
    let server = support::start(|c| c.with_read_timeout(Duration::from_millis(400))).await;
    let (stream, head) = connect(&server, "api.apify.com:443").await;
    assert_eq!(status(&head), 200, "{head}");
    let mut tls = connector(&server.dir)
        .connect(ServerName::try_from("api.apify.com").unwrap(), stream)
        .await
        .unwrap();
    for delay in [1200, 0] {
        let request = format!(
            "GET /v2/users/me HTTP/1.1\r\nHost: api.apify.com\r\nAuthorization: Bearer {}\r\nX-Mock-Delay: {delay}\r\n\r\n",
            server.key
        );
        tls.write_all(request.as_bytes()).await.unwrap();
        // One whole answer: its head, then Content-Length bytes of body.
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&got).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_owned)
                    })
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + length {
                    break;
                }
            }
            let n = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut buf))
                .await
                .expect("an answer within 5 s")
                .unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        assert!(String::from_utf8_lossy(&got).contains("\"data\""));
        assert_eq!(status(&String::from_utf8_lossy(&got)), 200);
    }
}

/// Any portal name is Bitrix24, and its buckets follow the sandbox's scope, not the name: with
/// the default (per key), two portals called with one key drain one bucket.
#[tokio::test]
async fn portals_of_any_name_share_the_keys_bucket() {
    let server = support::start(|c| c).await;
    let call = |portal: &'static str| {
        let addr = plain_addr(&server);
        let key = server.key.clone();
        async move {
            let stream = TcpStream::connect(addr).await.unwrap();
            exchange(
                stream,
                &format!(
                    "POST /rest/1/{key}/user.current HTTP/1.1\r\nHost: {portal}\r\nX-Mock-Delay: 0"
                ),
                "",
            )
            .await
        }
    };
    let mut admitted = 0;
    let refused = loop {
        let answer = call("first.bitrix24.ru").await;
        match status(&answer) {
            200 => admitted += 1,
            _ => break answer,
        }
        assert!(admitted < 1000, "the portal bucket never emptied");
    };
    assert!(refused.contains("QUERY_LIMIT_EXCEEDED"), "{refused}");
    let other = call("second-portal.bitrix24.com").await;
    assert!(
        other.contains("QUERY_LIMIT_EXCEEDED"),
        "one key, one bucket: {other}"
    );
}
