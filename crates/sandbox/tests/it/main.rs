//! The integration tests of `apistend-sandbox`: one binary, one module per
//! subject (the shared helpers in `support`).

// Tests may unwrap, panic, index and print: a failure is the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

mod admin;
mod answers;
mod archive;
mod buckets;
mod credentials;
mod dashboard;
mod hardening;
mod interception;
mod jobs;
mod journal;
mod latency;
mod objects;
mod observability;
mod responses;
mod restore;
mod scenarios;
mod seed;
mod services;
mod shared;
mod support;
mod tokens;
mod validation;
