//! The rate-limit engine of APIStend: one GCRA (and one fixed-window) semantics over an in-memory
//! store and a Redis store, shared by the sandbox and the client.
//!
//! A [`Quota`] is a burst `B` and an emission interval `T`: the bucket holds at most `B` tokens and
//! regains one every `T`. The state of a key is a single integer, its theoretical arrival time
//! (TAT). [`acquire`](MemoryStore::acquire) admits `n` tokens when `max(TAT, now) + n·T − B·T ≤ now`;
//! a denial writes nothing. [`penalize`](MemoryStore::penalize) holds a key back after the remote
//! service said "429" anyway; [`refund`](MemoryStore::refund) returns tokens of a request that was
//! never sent.
//!
//! ```
//! use std::time::Duration;
//! use apistend_limiter::{ManualClock, MemoryStore, Quota};
//!
//! // WB "1 минута | 300 запросов | 200 миллисекунд | 20 запросов"
//! let quota = Quota::wb(Duration::from_secs(60), 300, Duration::from_millis(200), 20)?;
//! let clock = ManualClock::new();
//! let store = MemoryStore::with_clock(clock.clone());
//! for _ in 0..20 {
//!     assert!(store.acquire("wb:{seller-1}:content", &quota, 1)?.allowed);
//! }
//! let denied = store.acquire("wb:{seller-1}:content", &quota, 1)?;
//! assert!(!denied.allowed);
//! assert_eq!(denied.retry_after, Duration::from_millis(200));
//! clock.advance(Duration::from_millis(200));
//! assert!(store.acquire("wb:{seller-1}:content", &quota, 1)?.allowed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod algo;
mod cell;
mod clock;
mod decision;
mod draw;
mod error;
mod held;
mod key;
mod learned;
mod memory;
mod metrics;
mod quota;
#[cfg(feature = "redis")]
mod redis;
mod slots;
mod store;

pub use algo::Op;
pub use clock::{Clock, ManualClock, SystemClock, Timestamp};
pub use decision::{Decision, RateLimited};
pub use draw::{Draw, Drawn};
pub use error::{LimiterError, StoreUrlError};
pub use held::HeldSlots;
pub use key::bucket_key;
pub use learned::LearnedRecord;
pub use memory::MemoryStore;
pub use metrics::count_no_decisions;
pub use quota::{Algorithm, MAX_BURST, Quota, QuotaError};
#[cfg(feature = "redis")]
pub use redis::{FailurePolicy, RedisConfig, RedisStore, TimeSource};
pub use slots::{Lease, Slots};
pub use store::Store;
