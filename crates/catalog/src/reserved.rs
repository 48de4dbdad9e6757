//! The sandbox's own paths, as far as definitions care.

/// Path prefixes the sandbox answers itself (the management API, metrics, health, the
/// dashboard), which no service definition may take: refused when a definition is loaded, by
/// every command alike.
pub const RESERVED_PREFIXES: [&str; 5] = ["/api", "/metrics", "/healthz", "/readyz", "/ui"];
