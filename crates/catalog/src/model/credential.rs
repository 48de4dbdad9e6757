//! How a real client sends its credential.

/// How a real client sends its credential to a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CredentialChannel {
    /// `X-Mock-Key: KEY` — the sandbox's own header, accepted by every service.
    MockKey,
    /// `Authorization: KEY` or `Authorization: Bearer KEY` (WB).
    Authorization,
    /// `Authorization: Bearer KEY` (Apify).
    BearerToken,
    /// `?token=KEY` (Apify).
    TokenQuery,
    /// `Client-Id: ID` and `Api-Key: KEY` (Ozon).
    ClientIdApiKey,
    /// `Api-Key: KEY` alone (Yandex Market).
    ApiKey,
    /// `/rest/{user}/{code}/{method}` (a Bitrix24 inbound webhook).
    WebhookPath,
    /// `?auth=TOKEN` or an `auth` body field (a Bitrix24 application).
    AuthParam,
}

impl CredentialChannel {
    /// The headers a client sends to present `key` on this channel; none for the channels in
    /// the path or the query (a client names those in its URL).
    ///
    /// ```
    /// use apistend_catalog::CredentialChannel;
    /// assert_eq!(
    ///     CredentialChannel::BearerToken.headers("k"),
    ///     vec![("Authorization", "Bearer k".to_owned())]
    /// );
    /// ```
    #[must_use]
    pub fn headers(self, key: &str) -> Vec<(&'static str, String)> {
        match self {
            CredentialChannel::MockKey => vec![("X-Mock-Key", key.to_owned())],
            CredentialChannel::Authorization => vec![("Authorization", key.to_owned())],
            CredentialChannel::BearerToken => vec![("Authorization", format!("Bearer {key}"))],
            // Any client id: the Api-Key is the credential.
            CredentialChannel::ClientIdApiKey => {
                vec![("Client-Id", "1".to_owned()), ("Api-Key", key.to_owned())]
            }
            CredentialChannel::ApiKey => vec![("Api-Key", key.to_owned())],
            CredentialChannel::TokenQuery
            | CredentialChannel::WebhookPath
            | CredentialChannel::AuthParam => Vec::new(),
        }
    }
}
