//! The client: acquire before every attempt, send, classify, and retry by the policy of the
//! answer — a rate limit penalizes the shared bucket, a 5xx or network error backs off.
//!
//! - `handle`: [`Client`]; `core`: the state its clones share;
//! - `builder`: [`ClientBuilder`];
//! - `budget`: what a call draws from (plan, acquire, penalize, margin, ceiling, backoff);
//! - `slots`: the in-flight slots a call holds while it is sent (hold_slots);
//! - `scout`: first contact, one call at a time until a bucket's first report;
//! - `shared`: what the account's processes learn, shared through the store;
//! - `judge`: what an answer means for the call (the one place answers are classified);
//! - `request`: [`RequestBuilder`]: one call, sent through the layer and the retry policy;
//! - `response`: [`Response`].

pub(crate) mod budget;
mod builder;
pub(crate) mod core;
pub(crate) mod handle;
pub(crate) mod judge;
mod request;
mod response;
mod scout;
mod shared;
mod slots;

pub use builder::ClientBuilder;
pub use handle::Client;
pub use request::RequestBuilder;
pub use response::Response;
