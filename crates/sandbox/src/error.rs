//! Errors of the sandbox as a program (not the emulated services' answers).

/// Something that stops the sandbox from starting or keeping its state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The data directory or file.
    #[error("data: {0}")]
    Data(String),
    /// A configuration value.
    #[error("configuration: {0}")]
    Config(String),
    /// The catalog.
    #[error(transparent)]
    Catalog(#[from] apistend_catalog::CatalogError),
    /// The rate-limit store.
    #[error(transparent)]
    Limiter(#[from] apistend_limiter::LimiterError),
    /// The listener.
    #[error("cannot listen: {0}")]
    Io(#[from] std::io::Error),
}
