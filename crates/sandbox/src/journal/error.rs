//! Why the request journal cannot answer.

/// Why the journal cannot answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JournalError {
    /// The shared Redis did not answer.
    #[error("the request journal's Redis did not answer: {0}")]
    Unavailable(String),
}

impl JournalError {
    pub(super) fn unavailable(e: impl std::fmt::Display) -> Self {
        JournalError::Unavailable(e.to_string())
    }
}
