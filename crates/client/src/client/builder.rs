//! [`ClientBuilder`]: a service, an account, a store, a base URL; checked at build.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use apistend_catalog::{Catalog, Overrides, ServiceId};
use apistend_limiter::{Algorithm, MemoryStore, Store};

use super::core::Core;
use super::handle::Client;
use crate::config::ClientConfig;
use crate::error::ClientError;
use crate::learn::Learner;
use crate::metrics::{Counters, Handles};

/// Builds a [`Client`].
#[derive(Debug, Default)]
pub struct ClientBuilder {
    service: Option<ServiceId>,
    account: Option<String>,
    store: Option<Store>,
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    query: Vec<(String, String)>,
    catalog: Option<Catalog>,
    overrides: Option<Overrides>,
    config: Option<ClientConfig>,
    algorithm: Option<Algorithm>,
}

impl ClientBuilder {
    /// Enforces every quota with `algorithm` (GCRA by default; the fixed window of the decision
    /// record's first design, for comparison).
    #[must_use]
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = Some(algorithm);
        self
    }

    /// The service (its limits come from the catalog).
    #[must_use]
    pub fn service(mut self, id: ServiceId) -> Self {
        self.service = Some(id);
        self
    }

    /// The account whose buckets the calls draw from (`_global` when unset).
    #[must_use]
    pub fn account(mut self, account: impl Into<String>) -> Self {
        self.account = Some(account.into());
        self
    }

    /// The bucket store: a [`MemoryStore`] shared by this process's clients, or a [`RedisStore`](apistend_limiter::RedisStore)
    /// shared by every process. Default: Redis when `APISTEND_CLIENT_REDIS` is set, else memory.
    #[must_use]
    pub fn store(mut self, store: impl Into<Store>) -> Self {
        self.store = Some(store.into());
        self
    }

    /// The service's base URL (`https://content-api.wildberries.ru`, or a sandbox's
    /// `http://127.0.0.1:8080/wb`).
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// A header sent with every request (`Authorization`, `Client-Id`, `Api-Key`…).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A query parameter sent with every request (Apify `token`, Bitrix24 `auth`).
    #[must_use]
    pub fn query_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// A catalog other than the built-in one.
    #[must_use]
    pub fn catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Quota overrides applied on top of the catalog.
    #[must_use]
    pub fn overrides(mut self, overrides: Overrides) -> Self {
        self.overrides = Some(overrides);
        self
    }

    /// Settings other than those of the environment.
    #[must_use]
    pub fn config(mut self, config: ClientConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// The client.
    ///
    /// # Errors
    /// [`ClientError::Config`] for a missing service or base URL, a bad header, an environment
    /// value out of range, or a catalog that does not load.
    pub fn build(self) -> Result<Client, ClientError> {
        let base = self
            .base_url
            .ok_or_else(|| ClientError::Config("no base URL: call .base_url(…)".into()))?;
        let base_path = reqwest::Url::parse(&base)
            .map_err(|e| {
                ClientError::Config(format!(
                    "base URL {base:?}: {e}; expected e.g. https://content-api.wildberries.ru"
                ))
            })?
            .path()
            .trim_end_matches('/')
            .to_owned();
        let config = match self.config {
            Some(c) => c,
            None => ClientConfig::from_env()?,
        };
        let mut catalog = match self.catalog {
            Some(c) => c,
            None => Catalog::builtin().map_err(|e| ClientError::Config(e.to_string()))?,
        };
        if let Some(o) = &self.overrides {
            catalog = catalog
                .with_overrides(o)
                .map_err(|e| ClientError::Config(e.to_string()))?;
        }
        // The service must be one of the catalog's; the error lists them.
        let service = self
            .service
            .filter(|id| catalog.service(*id).is_some())
            .ok_or_else(|| {
                let known: Vec<&str> = catalog.services().iter().map(|s| s.id.as_str()).collect();
                let asked = self
                    .service
                    .map_or_else(|| "no service".to_owned(), |id| format!("service {id:?}"));
                ClientError::Config(format!(
                    "{asked}: call .service(id) with the id of one of {}",
                    known.join(", ")
                ))
            })?;
        if let Some(a) = self.algorithm {
            catalog = catalog
                .with_algorithm(service, a)
                .map_err(|e| ClientError::Config(e.to_string()))?;
        }
        let definition = catalog
            .service(service)
            .cloned()
            .ok_or_else(|| ClientError::Config(format!("service {service} left the catalog")))?;
        let store = match (self.store, &config.redis) {
            (Some(s), _) => s,
            (None, Some(url)) => Store::from_url(url)?,
            (None, None) => Store::from(MemoryStore::new()),
        };
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &self.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| ClientError::Config(format!("header {k:?}: {e}")))?;
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|e| ClientError::Config(format!("header {k:?}: {e}")))?;
            headers.append(name, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .map_err(|e| ClientError::Config(format!("HTTP client: {e}")))?;
        let account = self
            .account
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "_global".to_owned());
        Ok(Client {
            inner: Arc::new(Core {
                service,
                handles: Handles::new(&definition, &account),
                account,
                store,
                mount: definition.mount(&base_path).to_owned(),
                base_path,
                base: base.trim_end_matches('/').to_owned(),
                query: self.query,
                catalog,
                definition,
                http,
                counters: Counters::default(),
                learner: Learner::new(config.learned_ttl),
                operating_reset: Mutex::new(HashMap::new()),
                latency_ceiling_us: AtomicU64::new(0),
                scouting: super::core::Scouting::default(),
                config,
            }),
        })
    }
}

impl Client {
    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }
}

#[cfg(test)]
mod tests {
    use apistend_catalog::Method;

    use super::*;

    /// The id the catalog gives the service named `name`.
    fn id(name: &str) -> ServiceId {
        Catalog::builtin().unwrap().service_id(name).unwrap()
    }

    #[test]
    fn a_base_url_that_does_not_parse_is_refused_at_build() {
        let built = Client::builder()
            .service(id("wb"))
            .base_url("content-api.wildberries.ru")
            .config(ClientConfig::default())
            .store(MemoryStore::new())
            .build();
        assert!(matches!(built, Err(ClientError::Config(m)) if m.contains("base URL")));
    }

    #[test]
    fn the_algorithm_applies_to_every_quota() {
        let c = Client::builder()
            .service(id("wb"))
            .base_url("http://127.0.0.1:9")
            .algorithm(Algorithm::FixedWindow)
            .config(ClientConfig::default())
            .store(MemoryStore::new())
            .build()
            .unwrap();
        let q = c.quota_of(Method::Get, "/content/v2/object/all").unwrap();
        assert_eq!(q.algorithm(), Algorithm::FixedWindow);
    }

    #[test]
    fn a_request_takes_the_weight_its_definition_gives() {
        let c = Client::builder()
            .service(id("moysklad"))
            .base_url("http://127.0.0.1:9/moysklad")
            .config(ClientConfig::default())
            .store(MemoryStore::new())
            .build()
            .unwrap();
        let weight = |path| c.inner.plan(Method::Get, path, b"").weight;
        assert_eq!(weight("/api/remap/1.2/entity/product"), 4);
        assert_eq!(weight("/api/remap/1.2/report/stock/all"), 5);
    }
}
