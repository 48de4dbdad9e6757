//! [`Response`]: the answer that ended a call.

use std::time::Duration;

use http::HeaderMap;

/// An answer that ended the call: a success (2xx or 3xx).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Response {
    /// Status.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Vec<u8>,
    /// Time the call spent waiting locally for tokens, over all its attempts.
    pub waited: Duration,
}

impl Response {
    /// The body as JSON.
    ///
    /// # Errors
    /// The parser's error.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}
