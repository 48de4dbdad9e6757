//! The integration tests of `apistend-client`: one binary, one module per
//! subject (the shared helpers in `support`).

// Tests may unwrap, panic, index and print: a failure is the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr,
    clippy::print_stdout,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

mod conduct;
mod e2e;
mod support;
mod tower;
