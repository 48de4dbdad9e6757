//! Errors of the catalog.

/// Something in the catalog, an override file or a spec could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A service id the catalog has no definition for.
    #[error("unknown service {id:?}; the services are {known}")]
    UnknownService {
        /// The id asked for.
        id: String,
        /// The ids there are, comma-separated.
        known: String,
    },
    /// A service definition that does not parse or validate.
    #[error("{file}:{line}: {field}{sep}{reason}", sep = if field.is_empty() { "" } else { ": " })]
    Definition {
        /// The file.
        file: String,
        /// Its line (1-based; 0 when the file could not be read).
        line: usize,
        /// The field, as a path (`groups[2].quota`); empty when the parser names it in `reason`.
        field: String,
        /// What is wrong and what is allowed.
        reason: String,
    },
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
