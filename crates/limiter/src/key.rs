//! Bucket keys that keep one tenant's buckets on one Redis Cluster slot.

/// `namespace:{tenant}:part:part…`, with the tenant as the Redis Cluster hash tag.
///
/// Braces and `%` inside the tenant are percent-escaped so that a tenant can neither break the hash
/// tag nor collide with another tenant's escaped name.
///
/// ```
/// assert_eq!(apistend_limiter::bucket_key("wb:rl", "acc-7", &["content", "cards"]), "wb:rl:{acc-7}:content:cards");
/// assert_eq!(apistend_limiter::bucket_key("x", "a{b}", &[]), "x:{a%7Bb%7D}");
/// assert_eq!(apistend_limiter::bucket_key("x", "%}{", &["p"]), "x:{%25%7D%7B}:p");
/// ```
pub fn bucket_key(namespace: &str, tenant: &str, parts: &[&str]) -> String {
    let mut key = String::with_capacity(
        namespace.len() + tenant.len() + 4 + parts.iter().map(|p| p.len() + 1).sum::<usize>(),
    );
    key.push_str(namespace);
    key.push_str(":{");
    // Built on every request, so without the formatting machinery. The three escaped bytes are
    // ASCII, never inside another character: they are searched by byte, not by `char`. Almost no
    // tenant has one, which a fold without a branch per byte (vectorized) tells first; otherwise
    // the runs between them are copied whole.
    let special = |b: u8| matches!(b, b'{' | b'}' | b'%');
    let clean = tenant.bytes().fold(true, |clean, b| clean & !special(b));
    if clean {
        key.push_str(tenant);
    } else {
        let mut rest = tenant;
        while let Some(at) = rest.bytes().position(special) {
            let (run, tail) = rest.split_at(at);
            key.push_str(run);
            key.push_str(match tail.as_bytes().first() {
                Some(b'{') => "%7B",
                Some(b'}') => "%7D",
                _ => "%25",
            });
            rest = tail.get(1..).unwrap_or("");
        }
        key.push_str(rest);
    }
    key.push('}');
    for p in parts {
        key.push(':');
        key.push_str(p);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::bucket_key;

    #[test]
    fn a_tenant_of_any_characters_is_escaped_whole() {
        let key = bucket_key("ns", "ключ{ü}%й", &["wb", "g"]);
        assert_eq!(key, "ns:{ключ%7Bü%7D%25й}:wb:g");
        assert_eq!(bucket_key("ns", "", &[]), "ns:{}");
        assert_eq!(bucket_key("ns", "{", &[]), "ns:{%7B}");
    }
}
