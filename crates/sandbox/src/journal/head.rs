//! A message's head kept as one buffer of bytes (`METHOD /path?query` and a `name: value` line
//! per header): copied on the request path into a buffer the journal reuses, instead of a
//! header map cloned (several allocations, and values that would pin the connection's read
//! buffer); read back into lines when shown.

use http::HeaderMap;

/// Writes the head of a request at the end of `out`: its method, target and headers.
pub(crate) fn request(
    out: &mut Vec<u8>,
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
) {
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    lines(out, headers);
}

/// Writes the headers of an answer at the end of `out`.
pub(crate) fn answer(out: &mut Vec<u8>, headers: &HeaderMap) {
    lines(out, headers);
}

/// Writes the headers of an answer as the sandbox made them into `out` (appended).
pub(crate) fn fields(out: &mut Vec<u8>, fields: &[crate::heads::Field]) {
    for (k, v) in fields {
        line(out, k.as_bytes(), v.as_bytes());
    }
}

/// Writes the values of an answer's headers at the end of `out`, each after its length (four
/// bytes): what the journal keeps of an answer whose names are those of a shape the process
/// knows ([`crate::heads::names`]), a copy a header where a line is two.
pub(crate) fn values(out: &mut Vec<u8>, fields: &[crate::heads::Field]) {
    for (_, v) in fields {
        let v = v.as_bytes();
        out.extend_from_slice(&u32::try_from(v.len()).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(v);
    }
}

/// The lines of the headers `names` (as [`fields`] writes them), their values as [`values`]
/// wrote them.
pub(crate) fn named(names: &[&str], mut values: &[u8]) -> String {
    let mut out = Vec::new();
    for name in names {
        let Some((len, rest)) = values.split_first_chunk::<4>() else {
            break;
        };
        let len = usize::try_from(u32::from_le_bytes(*len)).unwrap_or(usize::MAX);
        let (value, rest) = rest.split_at(len.min(rest.len()));
        line(&mut out, name.as_bytes(), value);
        values = rest;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A `\nname: value` per header, as bytes (read back lossily: a value need not be UTF-8; none
/// holds a line break, which HTTP forbids).
fn lines(out: &mut Vec<u8>, headers: &HeaderMap) {
    for (k, v) in headers {
        line(out, k.as_str().as_bytes(), v.as_bytes());
    }
}

/// One header's line. Inlined into the loops: a call a header cost more in saving and
/// restoring registers than the line's own stores (callgrind).
#[inline(always)]
fn line(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(b'\n');
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
}

/// A request head read back: method, path, query, and the header lines.
pub(crate) fn split_request(
    head: &str,
) -> (&str, &str, Option<&str>, impl Iterator<Item = (&str, &str)>) {
    let (first, rest) = head.split_once('\n').unwrap_or((head, ""));
    let (method, target) = first.split_once(' ').unwrap_or((first, "/"));
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    (method, path, query, header_lines(rest))
}

/// The `name: value` lines of a head (an answer's: only those).
pub(crate) fn header_lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.split_once(": ").unwrap_or((l, "")))
}

/// The value of header `name` (lower-case) among `text`'s lines.
pub(crate) fn value<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    header_lines(text).find_map(|(k, v)| (k == name).then_some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_reads_back_as_it_was_written() {
        let mut h = HeaderMap::new();
        h.insert("api-key", "k".parse().unwrap());
        h.append("accept", "a".parse().unwrap());
        h.append("accept", "b".parse().unwrap());
        let uri: http::Uri = "/ozon/v3/product/list?x=1&y=2".parse().unwrap();
        let mut head = Vec::new();
        request(&mut head, &http::Method::POST, &uri, &h);
        let head = String::from_utf8(head).unwrap();
        let (m, p, q, lines) = split_request(&head);
        assert_eq!(
            (m, p, q),
            ("POST", "/ozon/v3/product/list", Some("x=1&y=2"))
        );
        let lines: Vec<_> = lines.collect();
        assert_eq!(lines, [("api-key", "k"), ("accept", "a"), ("accept", "b")]);
        let mut out = Vec::new();
        answer(&mut out, &h);
        assert_eq!(value(&String::from_utf8(out).unwrap(), "accept"), Some("a"));
        let uri: http::Uri = "/wb/ping".parse().unwrap();
        let mut head = Vec::new();
        request(&mut head, &http::Method::GET, &uri, &HeaderMap::new());
        let head = String::from_utf8(head).unwrap();
        let (_, p, q, mut none) = split_request(&head);
        assert_eq!((p, q, none.next()), ("/wb/ping", None, None));
    }
}
