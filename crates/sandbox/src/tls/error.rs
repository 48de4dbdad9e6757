//! What can go wrong with the local certificate authority and its certificates.

use std::path::PathBuf;

/// An error of the local certificate authority.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file of the authority could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The authority's key file holds no usable key or certificate.
    #[error("{}: {reason} (delete the directory's apistend-ca* files to make a new authority)", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Making or signing a certificate failed.
    #[error("certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    /// rustls refused a key or configuration.
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// The operating system's random generator failed.
    #[error("no random numbers from the operating system: {0}")]
    Random(String),
    /// No certificate is issued for a name no service definition claims.
    #[error("{0} is not a hostname of any service definition (nor localhost)")]
    UnknownName(String),
}
