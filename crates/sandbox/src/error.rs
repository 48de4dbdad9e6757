//! Errors of the sandbox as a program (not the emulated services' answers).

/// Something that stops the sandbox from starting or keeping its state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The data directory or file.
    #[error("data: {0}")]
    Data(String),
    /// No sandbox has this id.
    #[error("no sandbox {id:?}")]
    NoSandbox {
        /// The id asked for.
        id: String,
    },
    /// Another process holds the data directory.
    #[error("data directory {} in use by PID {pid} (one process per data directory; stop it or pick another --data)", dir.display())]
    DataDirInUse {
        /// The directory.
        dir: std::path::PathBuf,
        /// The holder's process id, as its lock file says.
        pid: String,
    },
    /// The data file cannot be used as it is; it is left untouched.
    #[error("{}: {reason}; the file was left untouched", path.display())]
    DataFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// The configured admin token is unusable.
    #[error(
        "the admin token {0}; use at least 16 printable characters (or none, to have one generated)"
    )]
    AdminToken(&'static str),
    /// The operating system's random generator failed.
    #[error("no random numbers from the operating system: {0}")]
    Random(String),
    /// A configuration value.
    #[error("configuration: {0}")]
    Config(String),
    /// A key some sandbox has already.
    #[error("key {0:?} is taken")]
    KeyTaken(String),
    /// A service's answers (an examples set, an answers file, an official description).
    #[error("configuration: {0}")]
    Answers(#[from] apistend_answers::AnswersError),
    /// The catalog.
    #[error(transparent)]
    Catalog(#[from] apistend_catalog::CatalogError),
    /// The rate-limit store.
    #[error(transparent)]
    Limiter(#[from] apistend_limiter::LimiterError),
    /// The local certificate authority.
    #[error("local certificate authority: {0}")]
    Tls(#[from] crate::tls::TlsError),
    /// The listener.
    #[error("cannot listen: {0}")]
    Io(#[from] std::io::Error),
}
