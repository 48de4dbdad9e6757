//! HTTPS for clients whose hosts are fixed: a local certificate authority, certificates on
//! demand for the names the service definitions claim, and the handshake.

mod accept;
mod ca;
mod certs;
mod error;

use std::sync::Arc;

pub(crate) use accept::accept;
pub use ca::{CA_CERT_FILE, CA_KEY_FILE, LocalCa};
pub use certs::{Certificates, NamePolicy};
pub use error::TlsError;

/// The server side of TLS: the certificates and the configuration every handshake shares.
#[derive(Debug, Clone)]
pub(crate) struct Tls {
    pub(crate) certs: Arc<Certificates>,
    pub(crate) config: Arc<rustls::ServerConfig>,
}

impl Tls {
    /// TLS 1.2 and 1.3 (ring), no client certificates, HTTP/1.1 offered by ALPN.
    pub(crate) fn new(certs: Certificates) -> Result<Self, TlsError> {
        let certs = Arc::new(certs);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&certs) as Arc<dyn rustls::server::ResolvesServerCert>);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            certs,
            config: Arc::new(config),
        })
    }
}
