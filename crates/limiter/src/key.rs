//! Bucket keys that keep one tenant's buckets on one Redis Cluster slot.

use std::fmt::Write;

/// `namespace:{tenant}:part:part…`, with the tenant as the Redis Cluster hash tag.
///
/// Braces and `%` inside the tenant are percent-escaped so that a tenant can neither break the hash
/// tag nor collide with another tenant's escaped name.
///
/// ```
/// assert_eq!(apistend_limiter::bucket_key("wb:rl", "acc-7", &["content", "cards"]), "wb:rl:{acc-7}:content:cards");
/// assert_eq!(apistend_limiter::bucket_key("x", "a{b}", &[]), "x:{a%7Bb%7D}");
/// ```
pub fn bucket_key(namespace: &str, tenant: &str, parts: &[&str]) -> String {
    let mut key = String::with_capacity(
        namespace.len() + tenant.len() + 4 + parts.iter().map(|p| p.len() + 1).sum::<usize>(),
    );
    key.push_str(namespace);
    key.push_str(":{");
    for c in tenant.chars() {
        match c {
            '{' => key.push_str("%7B"),
            '}' => key.push_str("%7D"),
            '%' => key.push_str("%25"),
            c => key.push(c),
        }
    }
    key.push('}');
    for p in parts {
        let _ = write!(key, ":{p}");
    }
    key
}
