//! The integration core of APIStend: a per-account rate-limited, retrying HTTP client for the
//! services of the catalog (WB first), after the WB integration decision record as amended:
//! a token bucket shared by every process of an account (memory or Redis), acquired before every
//! attempt; a 429 treated as feedback that penalizes the shared bucket; separate policies for rate
//! limits and for 5xx and network errors; a ladder of next-run delays for jobs.

mod client;
mod config;
mod error;
mod hint;
mod ladder;
mod layer;
mod learn;
mod metrics;
mod transport;

pub use client::{Client, ClientBuilder, RequestBuilder, Response};
pub use config::{
    ClientConfig, ENV_ATTEMPTS, ENV_BASE_MS, ENV_MAX_WAIT_MS, ENV_RATE_LIMIT_MAX_WAIT_MS,
    ENV_REDIS, ENV_RETRY_ATTEMPTS, ENV_RETRY_BASE_MS,
};
pub use error::{BoxError, ClientError, RefusedBy};
pub use ladder::Ladder;
pub use layer::{RateLimit, RateLimitLayer, RetryPolicy, Waited};
pub use learn::{LearnedFrom, LearnedQuota};
pub use metrics::Stats;
pub use transport::{Deadline, http_method, reqwest_transport};
