//! What the server's answers teach about its quota, per bucket of the account.
//!
//! - The burst, from the header that reports the limit (WB's `X-Ratelimit-Limit`, on a 429).
//! - The rate, by bisection between what the server showed: a rejection of a request the model
//!   allowed makes the rate it was sent at an upper bound and narrows to 0.7 of it (or to the
//!   lower bound, if higher); a rate held without rejection while the server showed headroom is
//!   a lower bound, and headroom moves the rate a quarter of the way up to 0.97 of the upper
//!   bound, but never past the server's rate where that is measured (below): a probe past a
//!   precise measurement could only be rejected. A rate held only while every report left a
//!   token to spare for the hold (the server's bucket stayed full before each request); a step
//!   after which the server reports none to spare went past its rate and is taken back, the
//!   stepped rate becoming an upper bound — the reports find it before a rejection would.
//!   Headroom
//!   is a report of tokens left, or — for a service that reports nothing (Bitrix24, Ozon) —
//!   any success, which gives back 2 % of the catalog's rate at a time (AIMD, as the AWS SDKs'
//!   adaptive retry mode).
//! - A lower bound measured, for a service that reports tokens left: while the server's bucket
//!   is never full, `left + tokens seen admitted since t0` grows by exactly its refill rate, so a
//!   least-squares slope of it on time is that rate while the server is saturated, and the
//!   client's own rate (no more than the server's) while it is not. An answer that may have
//!   found the bucket full (its report plus the request's weight reaches the limit) ends a
//!   series, since a full bucket loses refill; finished series are pooled, each with its own
//!   intercept, older ones weighing less (half every minute).
//!
//! - The rate the server states, where it reports both its limit and its window (MoySklad's
//!   `X-RateLimit-Limit` and `X-Lognex-Retry-TimeInterval`): adopted at once in either
//!   direction, past the catalog's rate too (its own headers say more is allowed), and the
//!   fastest the client then goes.
//!
//! No rate is otherwise learned for a service that reports tokens left before a rejection has
//! shown the server stricter than the model; without a stated rate it only ever narrows below
//! the catalog's, and the burst follows the server's limit header either way. A learned quota
//! holds for a TTL that each rejection, measurement or statement renews; then the catalog's is
//! back. What a process decides is shared through the store (the account's other processes
//! follow it: `client/shared.rs`); the evidence stays in the process (see
//! `docs/architecture.md`).

mod fit;
mod map;
mod quota;
mod track;

#[cfg(test)]
mod tests;

pub(crate) use map::{Bucket, Learner};
pub use quota::{LearnedFrom, LearnedQuota};
pub(crate) use track::Report;
