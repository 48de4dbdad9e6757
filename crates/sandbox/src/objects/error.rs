//! Why the objects store refused.

/// Why the objects store refused a change.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ObjectsError {
    /// The sandbox holds as many objects, or bytes of them, as its bounds allow.
    #[error(
        "the sandbox holds {held} {what}, its bound is {bound}; delete objects or clear the sandbox's objects"
    )]
    Full {
        /// `objects` or `bytes`.
        what: &'static str,
        /// What it holds (with the change).
        held: u64,
        /// Its bound.
        bound: u64,
    },
    /// Redis did not answer, or answered what this version does not read.
    #[error("the objects store is unavailable: {0}")]
    Unavailable(String),
}
