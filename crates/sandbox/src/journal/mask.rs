//! Secrets masked in what the journal shows: the credential a request presented wherever it
//! appears (a header, the path of a Bitrix24 webhook, `?token=`, a body), the values of the
//! headers that carry credentials, and the values of the body fields that hold tokens and
//! passwords (amoCRM's OAuth exchange: `client_secret`, `refresh_token`, `access_token`).
//! Text is replaced where it stands, so a body keeps the bytes and layout it was sent with.

use std::borrow::Cow;

/// Headers whose value is a credential, whatever it holds.
const SECRET_HEADERS: [&str; 7] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-mock-key",
    "api-key",
    "x-api-key",
];

/// Body fields (JSON or form) whose value is a secret.
const SECRET_FIELDS: [&str; 6] = [
    "access_token",
    "refresh_token",
    "client_secret",
    "password",
    "secret",
    "auth",
];

/// Values shorter than this are not hunted for in text: "1" would mask every digit one.
const SHORTEST: usize = 6;

/// The secrets of one request and its answer.
#[derive(Debug, Default)]
pub(crate) struct Mask {
    secrets: Vec<String>,
}

/// How a secret shows: its last four characters, when it is long enough to keep them secret.
pub(crate) fn masked(secret: &str) -> String {
    let n = secret.chars().count();
    if n >= 12 {
        let tail: String = secret.chars().skip(n - 4).collect();
        format!("***{tail}")
    } else {
        "***".to_owned()
    }
}

impl Mask {
    /// The secrets of a request that presented `credential`, with `bodies` (its own and its
    /// answer's, JSON or form) searched for secret fields.
    pub(crate) fn new(credential: Option<&str>, bodies: &[&[u8]]) -> Self {
        let mut secrets: Vec<String> = credential.map(str::to_owned).into_iter().collect();
        for body in bodies {
            fields(body, &mut secrets);
        }
        secrets.retain(|s| s.len() >= SHORTEST);
        // The longest first: a token that holds another is masked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self { secrets }
    }

    /// `text` with every secret masked.
    pub(crate) fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), &masked(s)));
            }
        }
        out
    }

    /// A header's value as shown: a credential header's masked whole (its scheme kept:
    /// `Bearer ***abcd`), any other with the secrets masked.
    pub(crate) fn header(&self, name: &str, value: &str) -> String {
        if !SECRET_HEADERS.contains(&name) {
            return self.text(value).into_owned();
        }
        match value.split_once(' ') {
            Some((scheme, rest)) if !scheme.is_empty() && !rest.trim().is_empty() => {
                format!("{scheme} {}", masked(rest.trim()))
            }
            _ => masked(value.trim()),
        }
    }
}

/// The values of secret fields in `body`, read as JSON (at any depth) or as a form.
fn fields(body: &[u8], out: &mut Vec<String>) {
    if body.is_empty() {
        return;
    }
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        walk(&v, out);
        return;
    }
    if body.contains(&b'=') {
        for (k, v) in form_urlencoded::parse(body) {
            if SECRET_FIELDS.contains(&k.as_ref()) {
                // As it stands in the text, percent-encoded, and as it reads.
                out.push(form_urlencoded::byte_serialize(v.as_bytes()).collect());
                out.push(v.into_owned());
            }
        }
    }
}

fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                match v {
                    serde_json::Value::String(s) if SECRET_FIELDS.contains(&k.as_str()) => {
                        out.push(s.clone());
                    }
                    _ => walk(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_and_secret_fields_are_masked_where_they_stand() {
        let body = br#"{"client_id":"app","client_secret":"s3cr3t-value-42","grant_type":"x"}"#;
        let answer = br#"{"access_token":"eyJhbGciOi.abc.def","refresh_token":"r-0123456789"}"#;
        let m = Mask::new(Some("key-0123456789abcdef"), &[body, answer]);
        assert_eq!(
            m.text("/rest/1/key-0123456789abcdef/crm.deal.get"),
            "/rest/1/***cdef/crm.deal.get"
        );
        let shown = m.text(std::str::from_utf8(body).unwrap());
        assert_eq!(
            shown,
            r#"{"client_id":"app","client_secret":"***e-42","grant_type":"x"}"#
        );
        assert!(!m.text(std::str::from_utf8(answer).unwrap()).contains("eyJ"));
        assert_eq!(
            m.header("authorization", "Bearer key-0123456789abcdef"),
            "Bearer ***cdef"
        );
        assert_eq!(m.header("api-key", "short"), "***");
        assert_eq!(m.header("accept", "application/json"), "application/json");
    }

    #[test]
    fn form_secrets_are_masked_as_they_were_encoded() {
        let m = Mask::new(None, &[b"auth=tok%2Ben-123456&x=1"]);
        assert_eq!(m.text("auth=tok%2Ben-123456&x=1"), "auth=***3456&x=1");
        let m = Mask::new(None, &[b"password=hunter22"]);
        assert_eq!(m.text("password=hunter22"), "password=***");
        assert_eq!(
            Mask::new(Some("k"), &[]).text("k and k"),
            "k and k",
            "too short to hunt"
        );
    }
}
