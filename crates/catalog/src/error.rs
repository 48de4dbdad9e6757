//! Errors of the catalog.

/// Something in the catalog, an override file or a spec could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A service id that is not `wb`, `b24`, `apify` or `ozon`.
    #[error("unknown service {0:?}; expected one of wb, b24, apify, ozon")]
    UnknownService(String),
    /// A group id the service does not have.
    #[error(
        "service {service} has no limit group {group:?}; `apistend catalog --service {service}` lists them"
    )]
    UnknownGroup {
        /// The service.
        service: String,
        /// The group asked for.
        group: String,
    },
    /// A quota that makes no sense.
    #[error("invalid quota for {what}: {source}")]
    Quota {
        /// What the quota was for.
        what: String,
        /// Why it is invalid.
        #[source]
        source: apistend_limiter::QuotaError,
    },
    /// An override file that could not be parsed.
    #[error("override file: {0}")]
    Overrides(String),
    /// A catalog file that could not be read.
    #[error("catalog data: {0}")]
    Data(String),
    /// Limit text in a spec that the importer does not understand.
    #[error("{file}: {method} {path}: {reason}: {text:?}")]
    LimitText {
        /// The spec file.
        file: String,
        /// The operation's method.
        method: String,
        /// The operation's path.
        path: String,
        /// What is wrong.
        reason: String,
        /// The text in question.
        text: String,
    },
    /// A spec file that could not be read or parsed.
    #[error("{file}: {reason}")]
    Spec {
        /// The file.
        file: String,
        /// What went wrong.
        reason: String,
    },
}
