//! The integration tests of `apistend` (the binary): one binary, one module per
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

mod catalog_cli;
mod chaos;
mod client_libraries;
mod docs;
mod flood;
mod load_cli;
mod metrics;
mod packages;
mod proxy;
mod serve;
mod services_dir;
mod user_openapi;
