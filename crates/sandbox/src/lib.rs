//! The APIStend sandbox: a multi-tenant gateway that emulates Wildberries, Bitrix24, Apify and Ozon
//! with their real limits — the same buckets, status codes, error bodies and headers as production.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use apistend_sandbox::{Sandbox, SandboxConfig};
//! let sandbox = Sandbox::new(SandboxConfig::new("./data").with_demo_key("demo-key")).await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! sandbox.serve(listener, std::future::pending()).await?;
//! # Ok(()) }
//! ```

mod admin;
mod buckets;
mod config;
mod controls;
mod drain;
mod error;
mod heads;
mod in_flight;
mod intercept;
mod journal;
mod lockout;
mod metrics;
mod objects;
mod operating;
mod pieces;
mod pipeline;
mod routes;
mod sandbox;
mod scenario;
mod secret;
mod server;
mod state;
mod sync;
mod tenants;
pub mod tls;
mod tokens;
pub mod transport;
mod ui;
mod watch;

pub use apistend_answers::{B24Methods, RequestRules, SpecAnswers};
pub use config::{JournalBounds, SandboxConfig};
pub use error::SandboxError;
pub use metrics::SharedRecorder;
pub use sandbox::{Demo, Sandbox};
pub use tenants::{
    AppRecord, ChaosRecord, DATA_FILE, JobRecord, LimitRecord, SandboxRecord, ScopeChoice,
    SettingsRecord, Tenants, Validation, new_key,
};

/// Entry points for the fuzz targets (`fuzz/`), built only by `cargo fuzz` (`--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// A data file's or a shared record's bytes, read and checked as the sandbox reads them.
    pub fn tenant_state(bytes: &[u8]) {
        crate::tenants::fuzz_read(bytes);
    }
}
