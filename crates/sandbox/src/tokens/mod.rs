//! Tokens a service issues (its definition's `[token]`: amoCRM's OAuth 2.0), issued as keys of
//! a sandbox so that they authenticate like any key, on every instance: `jwt.rs` makes and reads
//! the access tokens, `refresh.rs` the refresh tokens, `exchange.rs` answers the token endpoint.

mod exchange;
mod jwt;
mod refresh;

pub(crate) use exchange::{Refused, exchange};
pub(crate) use jwt::expired;
