//! What can go wrong in the engine — a denial is not among it: it is a [`Decision`](crate::decision::Decision).

/// An error of the engine. A denied request is never an error; a broken store never looks like a
/// denial.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LimiterError {
    /// More tokens were asked for at once than the bucket can ever hold.
    #[error(
        "{requested} tokens can never fit a bucket of {burst}; split the request or raise the burst"
    )]
    InsufficientCapacity {
        /// Tokens asked for.
        requested: u32,
        /// The bucket capacity.
        burst: u32,
    },
    /// The store could not answer and the failure policy is fail-closed.
    #[error(
        "rate-limit store {store} unavailable: {source}; check that Redis is reachable, or use FailurePolicy::FailOpen"
    )]
    Store {
        /// Which store failed (`redis`).
        store: &'static str,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A request that draws from several buckets named none.
    #[error("a request must draw from at least one bucket")]
    NothingToDraw,
    /// The store could not be configured (a bad URL, say).
    #[error("invalid rate-limit store configuration: {0}")]
    Config(String),
    /// A store URL that names no store this build can open.
    #[error("store {url:?}: {kind}")]
    StoreUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        kind: StoreUrlError,
    },
}

/// What is wrong with a store URL ([`crate::Store::from_url`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreUrlError {
    /// Neither `memory` nor a Redis URL.
    #[error(
        "not a store URL; use memory, redis://host:port or redis+cluster://host:port,host:port"
    )]
    Unknown,
    /// `redis+cluster://` without a node.
    #[error("a Redis Cluster URL needs at least one node")]
    NoClusterNode,
    /// A Redis URL in a build without the `redis` feature.
    #[error("this build has no Redis store (the `redis` feature)")]
    NoRedisSupport,
}

impl LimiterError {
    /// Whether trying again later may succeed (a store outage), as opposed to a request that can
    /// never be satisfied.
    pub fn is_transient(&self) -> bool {
        matches!(self, LimiterError::Store { .. })
    }
}
