//! A TLS handshake as the sandbox takes it: the ClientHello is read first, so that a name no
//! definition claims is refused with the `unrecognized_name` alert (RFC 6066 §3) and a plain
//! HTTP request on the TLS port gets a readable answer (as nginx's "The plain HTTP request was
//! sent to HTTPS port"), before any certificate is chosen. Bounded by the head timeout.

use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_rustls::StartHandshake;
use tokio_rustls::server::TlsStream;

use super::certs::Certificates;

/// A fatal `unrecognized_name` alert record (content type 21, TLS 1.2 record version, length
/// 2, level fatal, description 112). Written by hand: rustls sends alerts only once a
/// configuration has been chosen, and then `access_denied` for a name it has no certificate for.
const UNRECOGNIZED_NAME: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x70];

/// The first byte of a TLS handshake record.
const HANDSHAKE: u8 = 0x16;

/// Why a connection did not become a TLS stream.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The client spoke plain HTTP; it was told so.
    #[error("plain HTTP on the TLS port")]
    PlainHttp,
    /// The client asked for a name no definition claims; it got `unrecognized_name`.
    #[error("TLS server name {0} is not a hostname of any service definition")]
    UnknownName(String),
    /// The client closed, or the handshake failed.
    #[error("TLS handshake: {0}")]
    Handshake(#[from] std::io::Error),
    /// rustls refused the ClientHello (its alert was sent).
    #[error("TLS handshake: {0}")]
    Rustls(#[from] rustls::Error),
    /// The handshake did not finish within the head timeout.
    #[error("TLS handshake did not finish within {0:?}")]
    TimedOut(Duration),
}

/// Takes the TLS handshake on `io`. `plain` is the sandbox's plain HTTP address, for the answer
/// to a plain HTTP request.
pub(crate) async fn accept<IO>(
    io: IO,
    certs: &Certificates,
    config: &Arc<ServerConfig>,
    plain: &str,
    timeout: Duration,
) -> Result<TlsStream<IO>, Refused>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    tokio::time::timeout(timeout, handshake(io, certs, config, plain))
        .await
        .map_err(|_| Refused::TimedOut(timeout))?
}

async fn handshake<IO>(
    mut io: IO,
    certs: &Certificates,
    config: &Arc<ServerConfig>,
    plain: &str,
) -> Result<TlsStream<IO>, Refused>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let mut acceptor = rustls::server::Acceptor::default();
    let mut buf = [0u8; 4096];
    let mut first = true;
    let accepted = loop {
        let n = io.read(&mut buf).await?;
        let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        };
        if first && chunk.first() != Some(&HANDSHAKE) {
            let _ = io.write_all(plain_http_answer(plain).as_bytes()).await;
            let _ = io.shutdown().await;
            return Err(Refused::PlainHttp);
        }
        first = false;
        let mut rest = chunk;
        while !rest.is_empty() {
            if acceptor.read_tls(&mut rest)? == 0 {
                return Err(std::io::Error::other("ClientHello too large").into());
            }
        }
        match acceptor.accept() {
            Ok(Some(accepted)) => break accepted,
            Ok(None) => {}
            Err((e, mut alert)) => {
                let mut out = Vec::new();
                let _ = alert.write_all(&mut out);
                let _ = io.write_all(&out).await;
                return Err(e.into());
            }
        }
    };
    if let Some(name) = accepted.client_hello().server_name()
        && !certs.covers(&name.to_ascii_lowercase())
    {
        let name = name.to_owned();
        let _ = io.write_all(&UNRECOGNIZED_NAME).await;
        let _ = io.shutdown().await;
        return Err(Refused::UnknownName(name));
    }
    Ok(StartHandshake::from_parts(accepted, io)
        .into_stream(Arc::clone(config))
        .await?)
}

fn plain_http_answer(plain: &str) -> String {
    let body = format!(
        "400 Bad Request: this port speaks HTTPS (TLS); send https:// here, or plain HTTP to http://{plain}\n"
    );
    format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
