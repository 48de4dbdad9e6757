//! How the sandbox runs: [`SandboxConfig`], parsed and validated once, then passed by value.

use std::path::PathBuf;
use std::time::Duration;

use apistend_catalog::Overrides;
use apistend_catalog::definition::Definitions;

/// The longest `X-Mock-Delay` accepted by default, in milliseconds.
pub(crate) const DEFAULT_MAX_DELAY_MS: u64 = 60_000;

/// The management API's requests a second by default (its burst is 50, or this if more).
pub(crate) const ADMIN_PER_SECOND: u32 = 20;

/// How the sandbox runs. Parsed and validated once, then passed by value.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// Where the embedded data file lives.
    pub data_dir: PathBuf,
    /// Make sure a demo sandbox with this key exists.
    pub demo_key: Option<String>,
    /// Newer official descriptions than the embedded ones: an examples set's name (a
    /// definition's `examples`) and the directory of its OpenAPI documents (`--wb-openapi DIR`
    /// is `("wb", DIR)`).
    pub newer_examples: Vec<(String, PathBuf)>,
    /// The service definitions (the built-in ones unless a user adds files).
    pub definitions: Definitions,
    /// Redis URL for shared buckets (`redis://…` or `redis+cluster://…`); memory when absent.
    pub redis: Option<String>,
    /// Catalog overrides.
    pub overrides: Overrides,
    /// Largest `X-Mock-Delay` accepted, in milliseconds.
    pub max_delay_ms: u64,
    /// How long the `timeout` scenario holds a request at most, in milliseconds.
    pub max_timeout_ms: u64,
    /// Largest request body accepted (413 beyond).
    pub max_body_bytes: usize,
    /// The management API's token (at least 16 printable characters); when absent, one is
    /// generated on first start and shown once. Only its SHA-256 is kept.
    pub admin_token: Option<String>,
    /// The management API's own rate: requests per second (20), with a burst of 50 or this,
    /// whichever is more.
    pub admin_per_second: u32,
    /// How long a client may take to send its request head once it has started, and its body
    /// (408 beyond).
    pub read_timeout: Duration,
    /// How long an idle keep-alive connection stays open (nginx's `keepalive_timeout`).
    pub idle_timeout: Duration,
    /// Largest request head (request line and headers) accepted (431 beyond).
    pub max_header_bytes: usize,
    /// The local certificate authority's directory (the data directory when absent); several
    /// instances given one directory share one authority.
    pub ca_dir: Option<PathBuf>,
    /// Whether a `CONNECT` to a host no definition claims is tunnelled to it (bytes only)
    /// rather than refused with a 502. Only to public addresses, unless `passthrough_allow`
    /// names the range; a tunnel closes after `idle_timeout` without a byte either way.
    pub passthrough: bool,
    /// Internal address ranges (loopback, private, link-local…) a passthrough tunnel may reach
    /// all the same; the sandbox's own listeners never.
    pub passthrough_allow: Vec<ipnet::IpNet>,
    /// Objects one sandbox keeps at most, in all the collections of its services (10 000);
    /// a create beyond answers 507.
    pub max_objects: u64,
    /// Bytes of JSON one sandbox's objects take at most (16 MiB).
    pub max_object_bytes: u64,
    /// Objects the demo sandbox starts with (`{"SERVICE": {"COLLECTION": [OBJECT, …]}}`),
    /// checked whole against the catalog before the sandbox starts.
    pub seed: Option<serde_json::Value>,
    /// How much the request journal keeps: requests per sandbox (1 000; 0 keeps none), bytes
    /// in all (64 MiB), bytes of each body (16 KiB).
    pub journal: JournalBounds,
}

impl SandboxConfig {
    /// Defaults: memory buckets, delays up to 60 s, `timeout` held up to 30 s, bodies up to 1 MiB.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            demo_key: None,
            newer_examples: Vec::new(),
            definitions: Definitions::builtin(),
            redis: None,
            overrides: Overrides::default(),
            max_delay_ms: DEFAULT_MAX_DELAY_MS,
            max_timeout_ms: 30_000,
            max_body_bytes: 1 << 20,
            admin_token: None,
            admin_per_second: ADMIN_PER_SECOND,
            read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(75),
            max_header_bytes: 16 * 1024,
            ca_dir: None,
            passthrough: false,
            passthrough_allow: Vec::new(),
            max_objects: 10_000,
            max_object_bytes: 16 << 20,
            seed: None,
            journal: JournalBounds::default(),
        }
    }

    /// Sets the read timeout for slow clients.
    #[must_use]
    pub fn with_read_timeout(mut self, d: Duration) -> Self {
        self.read_timeout = d;
        self
    }

    /// Sets how long an idle keep-alive connection stays open.
    #[must_use]
    pub fn with_idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = d;
        self
    }

    /// Sets the management API's token.
    #[must_use]
    pub fn with_admin_token(mut self, token: impl Into<String>) -> Self {
        self.admin_token = Some(token.into());
        self
    }

    /// Sets the demo key.
    #[must_use]
    pub fn with_demo_key(mut self, key: impl Into<String>) -> Self {
        self.demo_key = Some(key.into());
        self
    }

    /// Answers the services whose definition names the examples set `name` from the OpenAPI
    /// documents of `dir` instead of the embedded ones.
    #[must_use]
    pub fn with_newer_examples(mut self, name: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.newer_examples.push((name.into(), dir.into()));
        self
    }

    /// Sets the service definitions.
    #[must_use]
    pub fn with_definitions(mut self, definitions: Definitions) -> Self {
        self.definitions = definitions;
        self
    }

    /// Sets catalog overrides.
    #[must_use]
    pub fn with_overrides(mut self, overrides: Overrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Sets the Redis URL.
    #[must_use]
    pub fn with_redis(mut self, url: impl Into<String>) -> Self {
        self.redis = Some(url.into());
        self
    }

    /// Sets the longest `timeout` scenario.
    #[must_use]
    pub fn with_max_timeout(mut self, d: Duration) -> Self {
        self.max_timeout_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self
    }
}

/// How much the journal keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalBounds {
    /// Requests each sandbox keeps, its latest (1 000); 0 keeps none anywhere.
    pub requests: usize,
    /// Bytes all sandboxes' requests take in all (64 MiB), the oldest dropped first.
    pub bytes: usize,
    /// Bytes of each request's body, and of its answer's, kept (16 KiB): the rest is counted,
    /// not kept.
    pub body_bytes: usize,
}

impl Default for JournalBounds {
    fn default() -> Self {
        Self {
            requests: 1000,
            bytes: 64 << 20,
            body_bytes: 16 << 10,
        }
    }
}
