//! Tokens a service issues (amoCRM's OAuth 2.0 `/oauth2/access_token`): what a definition's
//! `[token]` says of them. The sandbox issues them as keys of a sandbox.

use serde::{Deserialize, Serialize};

use super::resource::Missing;

/// The token endpoint of a service, and the tokens it issues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TokenEndpoint {
    /// The (anonymous) operation that issues them (`/oauth2/access_token`).
    pub path: String,
    /// Seconds an access token lives (amoCRM: 86 400).
    pub lifetime_secs: u64,
    /// Seconds a refresh token may be used, once (amoCRM: three months).
    pub refresh_lifetime_secs: u64,
    /// Where the answer carries the access token (a JSON pointer into the operation's example).
    pub access_at: String,
    /// Where it carries the refresh token.
    pub refresh_at: String,
    /// Where it carries the access token's lifetime in seconds, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Where it carries the server's time (Unix seconds), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_at: Option<String>,
    /// Claims every access token carries besides `aud`, `jti`, `iat`, `nbf`, `exp` and `sub`
    /// (a JSON object: amoCRM's `account_id`, `base_domain`, `api_domain`, `scopes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<String>,
    /// The answer to a grant it cannot read or does not know (`{message}` in the body says
    /// why).
    pub refused: Missing,
    /// The answer to a code or refresh token that is no longer good: used, revoked or expired.
    pub revoked: Missing,
}
