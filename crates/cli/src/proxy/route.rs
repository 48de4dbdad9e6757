//! Which service a proxied request is for, where it goes upstream, and the stack it goes
//! through: one client per service (its account's shared buckets), wrapped as
//! `RetryPolicy(RateLimitLayer(transport))` around reqwest.

use std::time::Duration;

use anyhow::{Context as _, bail};
use apistend_catalog::{Catalog, Method, Overrides, ServiceId};
use apistend_client::{BoxError, Client, ClientConfig};
use apistend_limiter::Store;
use axum::body::Bytes;
use tower::ServiceBuilder;
use tower::util::BoxCloneSyncService;

use super::upstream::{Transport, UpstreamBody};

/// The stack a request goes through.
pub(crate) type Stack =
    BoxCloneSyncService<http::Request<Bytes>, http::Response<UpstreamBody>, BoxError>;

/// One proxied service.
pub(crate) struct Entry {
    pub(crate) id: ServiceId,
    /// Its prefix when several services share the proxy (`/wb`); empty when it is alone.
    prefix: &'static str,
    /// `scheme://authority` every request goes to, when `--upstream` names one.
    upstream: Option<String>,
    /// The real service's host for services with one (Ozon's `api-seller.ozon.ru`).
    default_host: Option<String>,
    pub(crate) stack: Stack,
    /// The client under the stack (its learned quotas).
    pub(crate) client: Client,
    /// The largest request body the service takes, when its definition says (MoySklad's
    /// 20 MB): the proxy reads up to it, whatever `--max-body-bytes` says.
    pub(crate) largest_body: Option<u64>,
}

/// Where one request goes.
pub(crate) struct Upstream<'a> {
    pub(crate) entry: &'a Entry,
    /// The path and query upstream.
    pub(crate) path_and_query: String,
    /// The absolute URL upstream.
    pub(crate) url: String,
    /// The `Host` to send, when it differs from the URL's (a sandbox told which WB host).
    pub(crate) host: Option<String>,
}

/// Every proxied service.
pub(crate) struct Routes {
    catalog: Catalog,
    entries: Vec<Entry>,
}

impl Routes {
    /// The routes of `services` (ids of `catalog`), each with its client for `account`.
    pub(crate) fn new(
        catalog: &Catalog,
        services: &[String],
        upstream: Option<&str>,
        account: &str,
        store: &Store,
        overrides: &Overrides,
        limits: &super::limits::Limits,
    ) -> anyhow::Result<Self> {
        let (timeout, max_judged) = (limits.upstream_timeout, limits.max_judged_body_bytes);
        let upstream = upstream
            .map(|u| {
                let u = u.trim_end_matches('/');
                if !(u.starts_with("http://") || u.starts_with("https://")) {
                    bail!("--upstream {u:?}: expected an http:// or https:// URL");
                }
                Ok(u.to_owned())
            })
            .transpose()?;
        // No total timeout here: the request's deadline bounds the time to an answer's head,
        // and a streamed body may take as long as it keeps coming (`upstream`).
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .build()
            .context("the HTTP client")?;
        let mut entries = Vec::new();
        for name in services {
            let id = catalog
                .service_id(name)
                .with_context(|| format!("--service {name}"))?;
            let svc = catalog
                .service(id)
                .with_context(|| format!("--service {name}"))?;
            let default_host = svc.hostnames.iter().find(|h| !h.starts_with('*')).cloned();
            if upstream.is_none() && svc.hosts.is_empty() && default_host.is_none() {
                if svc.hostnames.is_empty() {
                    bail!("--service {name}: it names no host; give --upstream, the API's URL");
                }
                bail!(
                    "--service {name}: its hosts are per account ({}); give --upstream",
                    svc.hostnames.join(", ")
                );
            }
            // The layer resolves operations from the path below the upstream's own path.
            let base = upstream.clone().unwrap_or_else(|| {
                let host = default_host.as_ref().or(svc.hosts.first());
                format!("https://{}", host.map_or("localhost", String::as_str))
            });
            let client = Client::builder()
                .base_url(base)
                .service(id)
                .catalog(catalog.clone())
                .account(account)
                .store(store.clone())
                .overrides(overrides.clone())
                .config(ClientConfig::from_env()?)
                .build()
                .with_context(|| format!("--service {name}"))?;
            entries.push(Entry {
                id,
                prefix: if services.len() > 1 { svc.prefix } else { "" },
                upstream: upstream.clone(),
                default_host,
                stack: stack(
                    &client,
                    Transport {
                        http: http.clone(),
                        service: std::sync::Arc::new(svc.clone()),
                        max_judged,
                        idle: timeout,
                    },
                ),
                client,
                largest_body: svc.largest_body,
            });
        }
        Ok(Self {
            catalog: catalog.clone(),
            entries,
        })
    }

    /// The quotas every service's client learned from the upstream's answers.
    pub(crate) fn learned(&self) -> Vec<(ServiceId, apistend_client::LearnedQuota)> {
        self.entries
            .iter()
            .flat_map(|e| e.client.learned().into_iter().map(|l| (e.id, l)))
            .collect()
    }

    /// Forgets what every client learned; gives how many quotas it forgot.
    pub(crate) fn forget_learned(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.client.forget_learned().len())
            .sum()
    }

    /// One line per service: how it is reached and where it goes.
    pub(crate) fn describe(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| {
                let to = match (&e.upstream, &e.default_host) {
                    (Some(u), _) => u.clone(),
                    (None, Some(h)) => format!("https://{h}"),
                    (None, None) => "its hosts, https".to_owned(),
                };
                let at = if e.prefix.is_empty() { "/" } else { e.prefix };
                format!("{} at {at} → {to}", e.id)
            })
            .collect()
    }

    /// The target of a request for `path_and_query` with `host` (the request's `Host`).
    pub(crate) fn target(
        &self,
        method: Method,
        host: Option<&str>,
        path_and_query: &str,
    ) -> Option<Upstream<'_>> {
        let by_host = host
            .map(|h| h.rsplit_once(':').map_or(h, |(name, _)| name))
            .and_then(|h| self.catalog.by_hostname(h))
            .and_then(|svc| self.entries.iter().find(|e| e.id == svc.id));
        let (entry, rest) = match by_host {
            Some(e) => (e, path_and_query),
            None => self.entries.iter().find_map(|e| {
                let rest = path_and_query.strip_prefix(e.prefix)?;
                (rest.is_empty() || rest.starts_with(['/', '?'])).then_some((e, rest))
            })?,
        };
        let rest = if rest.is_empty() { "/" } else { rest };
        let path = rest.split('?').next().unwrap_or(rest);
        // A service with several hosts (WB): the operation's own host.
        let op_host = self
            .catalog
            .resolve(entry.id, method, path, None)
            .and_then(|r| r.operation)
            .and_then(|o| o.host.clone());
        let (url, host) = match (
            &entry.upstream,
            op_host.or_else(|| entry.default_host.clone()),
        ) {
            // Upstream given: its scheme and host. An upstream that is only an origin gets the
            // real host as `Host` (WB's operation host), so that a sandbox there routes by it;
            // one with a path (`http://127.0.0.1:8080/ozon`) is taken as it is.
            (Some(u), real) => (
                format!("{u}{rest}"),
                real.filter(|_| apistend_catalog::server_path(u).is_empty()),
            ),
            (None, Some(h)) => (format!("https://{h}{rest}"), None),
            (None, None) => return None,
        };
        Some(Upstream {
            entry,
            path_and_query: rest.to_owned(),
            url,
            host,
        })
    }
}

/// `RetryPolicy(RateLimitLayer(transport))` of `client`: the Rust client's acquire → send →
/// penalize / retry → ceiling, the answers passed through as they come (streamed).
fn stack(client: &Client, transport: Transport) -> Stack {
    BoxCloneSyncService::new(
        ServiceBuilder::new()
            .retry(client.retry_policy())
            .layer(client.layer())
            .service(transport.service()),
    )
}
