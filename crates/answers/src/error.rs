//! Why answers could not be had.

/// A set of answers that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnswersError {
    /// Bytes or a description that are not what they should be: an embedded file (a build
    /// problem), a file an import wrote, an official description.
    #[error("{what}: {reason}")]
    Corrupt {
        /// What was read (`answers file`, `OpenAPI DIR`).
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An examples set no embedded file has.
    #[error("examples = {name:?}: no such embedded set (there are {known})")]
    UnknownSet {
        /// The name asked for.
        name: String,
        /// The names there are, comma-separated.
        known: String,
    },
    /// One service's answers.
    #[error("service {service}: {source}")]
    OfService {
        /// The service.
        service: String,
        /// Why.
        source: Box<AnswersError>,
    },
}

impl AnswersError {
    /// `what` is not what it should be, because of `reason`.
    pub(crate) fn corrupt(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Corrupt {
            what: what.into(),
            reason: reason.into(),
        }
    }
}
