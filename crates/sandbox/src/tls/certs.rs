//! Server certificates issued on demand by the local authority, for the names the service
//! definitions claim and for the sandbox's own loopback names — never for any other name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::KeyPair;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::ca::LocalCa;
use super::error::TlsError;

/// The names of the certificate for a connection that names no server (by IP address).
pub(crate) const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How many certificates are kept; beyond, the cache starts over (Bitrix24 portals are any name).
const CACHE_MAX: usize = 4096;

/// Which names may have a certificate.
pub type NamePolicy = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// The authority's certificates, one per name, made when first asked for.
pub struct Certificates {
    ca: LocalCa,
    claimed: NamePolicy,
    /// One key for every leaf (as mitmproxy does): issuing then costs one signature.
    leaf_key: KeyPair,
    signing: Arc<dyn rustls::sign::SigningKey>,
    cache: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificates")
            .field("ca", &self.ca)
            .finish_non_exhaustive()
    }
}

impl Certificates {
    /// Certificates of `ca` for the names `claimed` accepts (and the loopback names).
    ///
    /// # Errors
    /// [`TlsError`] if a key cannot be made.
    pub fn new(ca: LocalCa, claimed: NamePolicy) -> Result<Self, TlsError> {
        let leaf_key = KeyPair::generate()?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let signing = rustls::crypto::ring::sign::any_supported_type(&der)?;
        Ok(Self {
            ca,
            claimed,
            leaf_key,
            signing,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The authority.
    pub fn ca(&self) -> &LocalCa {
        &self.ca
    }

    /// Whether a certificate may be issued for `name`.
    pub fn covers(&self, name: &str) -> bool {
        LOOPBACK_NAMES.contains(&name) || (self.claimed)(name)
    }

    /// The certificate for `name` (any case), issued now if it has none yet.
    ///
    /// # Errors
    /// [`TlsError::UnknownName`] for a name no definition claims; [`TlsError::Certificate`]
    /// if signing fails.
    pub fn get(&self, name: &str) -> Result<Arc<CertifiedKey>, TlsError> {
        let name = name.to_ascii_lowercase();
        if !self.covers(&name) {
            return Err(TlsError::UnknownName(name));
        }
        if let Some(hit) = self.lock().get(&name) {
            return Ok(Arc::clone(hit));
        }
        let names: Vec<&str> = if LOOPBACK_NAMES.contains(&name.as_str()) {
            LOOPBACK_NAMES.to_vec()
        } else {
            vec![name.as_str()]
        };
        let leaf = self.ca.issue(&names, &self.leaf_key)?;
        let key = Arc::new(CertifiedKey::new(
            vec![leaf, self.ca.cert_der().clone()],
            Arc::clone(&self.signing),
        ));
        let mut cache = self.lock();
        if cache.len() >= CACHE_MAX {
            cache.clear();
        }
        cache.insert(name, Arc::clone(&key));
        Ok(key)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CertifiedKey>>> {
        // A panic elsewhere cannot leave the cache half-written: inserts are single calls.
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello.server_name().unwrap_or("localhost");
        match self.get(name) {
            Ok(key) => Some(key),
            Err(e) => {
                tracing::debug!(error = %e, "no certificate");
                None
            }
        }
    }
}
