//! The token endpoint: a grant read, checked against the sandboxes, and a new access token
//! (a key of the sandbox) with its refresh token issued.

use apistend_answers::call::Call;
use apistend_catalog::TokenEndpoint;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::jwt;
use super::refresh::{Refresh, hash};
use crate::tenants::{Principal, Tenants};

/// Why a grant is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A grant that cannot be read or is not one the endpoint takes (the definition's
    /// `refused`).
    Bad(String),
    /// A code or refresh token that is no longer good (its `revoked`).
    Revoked(String),
    /// The sandbox could not keep the new key (its data file); logged.
    Failed(String),
}

/// What a grant gave.
#[derive(Debug, Clone)]
pub(crate) struct Issued {
    /// The access token: a key of the sandbox until it expires or is refreshed.
    pub(crate) access: String,
    /// Its refresh token, good once.
    pub(crate) refresh: String,
    /// When it was issued (Unix seconds).
    pub(crate) now: i64,
}

/// The signing key of sandbox `id`'s tokens (see `jwt.rs` on what it proves).
fn key_of(id: &str) -> Vec<u8> {
    Sha256::digest(format!("apistend-token:{id}").as_bytes()).to_vec()
}

/// The sandbox whose key `credential` is.
fn sandbox_of(tenants: &Tenants, credential: &str) -> Option<String> {
    match tenants.lookup(credential)? {
        Principal::Key { view, .. } | Principal::App { view, .. } => Some(view.sandbox.to_string()),
    }
}

/// Answers the grant of `call` at `endpoint` at time `now`.
///
/// # Errors
/// [`Refused`], saying why in amoCRM's words where it has them.
pub(crate) fn exchange(
    tenants: &Tenants,
    endpoint: &TokenEndpoint,
    call: &Call,
    now: i64,
) -> Result<Issued, Refused> {
    let param = |name: &str| call.param(name).filter(|v| !v.is_empty());
    let sandbox = match param("grant_type").as_deref() {
        Some("authorization_code") => {
            let code =
                param("code").ok_or_else(|| Refused::Bad("Check the `code` parameter".into()))?;
            live(tenants, &code, now)
                .ok_or_else(|| Refused::Revoked("Authorization code has been revoked".into()))?
        }
        Some("client_credentials") => {
            let secret = param("client_secret")
                .ok_or_else(|| Refused::Bad("Check the `client_secret` parameter".into()))?;
            live(tenants, &secret, now)
                .ok_or_else(|| Refused::Revoked("Client authentication failed".into()))?
        }
        Some("refresh_token") => {
            let token = param("refresh_token")
                .ok_or_else(|| Refused::Bad("Check the `refresh_token` parameter".into()))?;
            used(tenants, &token, now)?
        }
        Some(other) => {
            return Err(Refused::Bad(format!(
                "The authorization grant type {other:?} is not supported"
            )));
        }
        None => return Err(Refused::Bad("Check the `grant_type` parameter".into())),
    };
    let mut claims: Map<String, Value> = endpoint
        .claims
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or_default();
    let jti = crate::secret::token("jti").map_err(|e| Refused::Failed(e.to_string()))?;
    let lifetime = i64::try_from(endpoint.lifetime_secs).unwrap_or(i64::MAX);
    for (k, v) in [
        ("aud", Value::from(param("client_id").unwrap_or_default())),
        ("jti", Value::from(jti)),
        ("iat", Value::from(now)),
        ("nbf", Value::from(now)),
        ("exp", Value::from(now.saturating_add(lifetime))),
    ] {
        claims.insert(k.to_owned(), v);
    }
    claims.entry("sub").or_insert_with(|| Value::from("1"));
    let key = key_of(&sandbox);
    let access = jwt::mint(&claims, &key);
    forget_expired(tenants, &sandbox, now);
    tenants
        .add_key(&sandbox, &access)
        .map_err(|e| Refused::Failed(e.to_string()))?;
    let refresh_life = i64::try_from(endpoint.refresh_lifetime_secs).unwrap_or(i64::MAX);
    let refresh = Refresh {
        s: sandbox,
        h: hash(&access),
        exp: now.saturating_add(refresh_life),
    }
    .encode(&key);
    Ok(Issued {
        access,
        refresh,
        now,
    })
}

/// The sandbox of `credential`, a key that has not expired.
fn live(tenants: &Tenants, credential: &str, now: i64) -> Option<String> {
    if jwt::expired(credential, now) {
        return None;
    }
    sandbox_of(tenants, credential)
}

/// The sandbox of refresh token `token`, whose access token is revoked now: it is good once.
fn used(tenants: &Tenants, token: &str, now: i64) -> Result<String, Refused> {
    let r = Refresh::decode(token, key_of)
        .ok_or_else(|| Refused::Revoked("Cannot decrypt the refresh token".into()))?;
    if r.exp <= now {
        return Err(Refused::Revoked("Token has expired".into()));
    }
    let revoked = || Refused::Revoked("Token has been revoked".into());
    let record = tenants.get(&r.s).ok_or_else(revoked)?;
    let access = record
        .keys
        .iter()
        .find(|k| hash(k) == r.h)
        .ok_or_else(revoked)?;
    // Two refreshes at once: one revokes, the other finds nothing to revoke.
    match tenants.revoke_key(&r.s, access) {
        Ok(true) => Ok(r.s),
        Ok(false) => Err(revoked()),
        Err(e) => Err(Refused::Failed(e.to_string())),
    }
}

/// Revokes the sandbox's access tokens that have expired, so that tokens do not pile up in it.
fn forget_expired(tenants: &Tenants, sandbox: &str, now: i64) {
    let Some(record) = tenants.get(sandbox) else {
        return;
    };
    for k in record.keys.iter().filter(|k| jwt::expired(k, now)) {
        if let Err(e) = tenants.revoke_key(sandbox, k) {
            tracing::warn!(error = %e, "an expired token stays a key");
        }
    }
}
