//! The sandbox's conduct report tells three clients apart, each on its own key, for WB,
//! MoySklad and Bitrix24: this crate's client, which waits what a refusal announces (clean);
//! one that sends again 60 ms after a rate-limit answer, whatever longer wait it announced
//! (early retries, counted); one that repeats a request a 401 answered (retried dead ends, counted).

use std::time::Duration;

use apistend_catalog::{Overrides, RateValue, ServiceId};
use apistend_client::Client;
use apistend_limiter::{MemoryStore, Store};
use serde_json::{Value, json};

use crate::support;

const TOKEN: &str = "conduct-test-admin-token";

/// The sandbox is stricter than the clients believe: each meets refusals.
const STRICT: &str = "[wb.groups.\"statistics-api.get.api-v1-supplier-incomes\"]\nburst = 2\ninterval_ms = 500\n\
    [moysklad.groups.user]\nburst = 8\ninterval_ms = 150\n\
    [b24.groups.portal]\nburst = 2\ninterval_ms = 500\n";

/// What the client believes: looser, so that it sends into the sandbox's refusals.
const LOOSE: &str = "[wb.groups.\"statistics-api.get.api-v1-supplier-incomes\"]\nburst = 10\ninterval_ms = 100\n\
    [ozon.groups.client]\nburst = 10\ninterval_ms = 100\n\
    [amocrm.groups.integration]\nburst = 10\ninterval_ms = 100\n\
    [apify.groups.users-me]\nburst = 10\ninterval_ms = 100\n\
    [ymarket.groups.getCampaigns]\nburst = 10\ninterval_ms = 100\n";

/// The other services, stricter than [`LOOSE`] too.
const STRICT_OTHERS: &str = "[ozon.groups.client]\nburst = 2\ninterval_ms = 500\n\
    [amocrm.groups.integration]\nburst = 2\ninterval_ms = 500\n\
    [apify.groups.users-me]\nburst = 2\ninterval_ms = 500\n\
    [ymarket.groups.getCampaigns]\nburst = 2\ninterval_ms = 500\n";

/// One service's request, as each client sends it.
struct Call {
    service: ServiceId,
    /// Under the sandbox's base, before the path.
    prefix: &'static str,
    /// `{key}` stands for the key.
    path: &'static str,
    method: reqwest::Method,
    /// The headers that carry the credential, each value's form (`{key}` stands for the key).
    auth: &'static [(&'static str, &'static str)],
    /// A rate-limit answer's status.
    refused: u16,
    /// A JSON body the operation requires, if any.
    body: Option<&'static str>,
}

fn calls() -> [Call; 3] {
    [
        Call {
            service: ServiceId::WB,
            prefix: "/wb",
            path: "/api/v1/supplier/incomes?dateFrom=2026-01-01",
            method: reqwest::Method::GET,
            auth: &[("Authorization", "{key}")],
            refused: 429,
            body: None,
        },
        Call {
            service: ServiceId::new("moysklad"),
            prefix: "/moysklad",
            path: "/api/remap/1.2/entity/product",
            method: reqwest::Method::GET,
            auth: &[("Authorization", "Bearer {key}")],
            refused: 429,
            body: None,
        },
        Call {
            service: ServiceId::B24,
            prefix: "/b24",
            path: "/rest/1/{key}/crm.deal.list",
            method: reqwest::Method::POST,
            auth: &[],
            refused: 503,
            body: None,
        },
    ]
}

/// The other services' calls (this crate's client alone is judged on them).
fn other_calls() -> [Call; 4] {
    [
        Call {
            service: ServiceId::new("ozon"),
            prefix: "/ozon",
            path: "/v2/warehouse/list",
            method: reqwest::Method::POST,
            auth: &[("Client-Id", "1"), ("Api-Key", "{key}")],
            refused: 429,
            body: Some(r#"{"limit": 50}"#),
        },
        Call {
            service: ServiceId::new("amocrm"),
            prefix: "/amocrm",
            path: "/api/v4/leads",
            method: reqwest::Method::GET,
            auth: &[("Authorization", "Bearer {key}")],
            refused: 429,
            body: None,
        },
        Call {
            service: ServiceId::new("apify"),
            prefix: "/apify",
            path: "/v2/users/me",
            method: reqwest::Method::GET,
            auth: &[("Authorization", "Bearer {key}")],
            refused: 429,
            body: None,
        },
        Call {
            service: ServiceId::new("ymarket"),
            prefix: "/ymarket",
            path: "/v2/campaigns",
            method: reqwest::Method::GET,
            auth: &[("Api-Key", "{key}")],
            refused: 420,
            body: None,
        },
    ]
}

/// `GET url` of the management API, as JSON.
async fn admin(url: &str) -> Value {
    reqwest::Client::new()
        .get(url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn issue_key(base: &str, sandbox: &str) -> String {
    let r: Value = reqwest::Client::new()
        .post(format!("{base}/api/v1/sandboxes/{sandbox}/keys"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["key"].as_str().unwrap().to_owned()
}

impl Call {
    fn request(&self, base: &str, key: &str) -> reqwest::RequestBuilder {
        self.request_on(&reqwest::Client::new(), base, key)
    }

    /// The request through `http` (its connection pool: one kept-alive connection for requests
    /// sent one after the other).
    fn request_on(&self, http: &reqwest::Client, base: &str, key: &str) -> reqwest::RequestBuilder {
        let url = format!("{base}{}{}", self.prefix, self.path.replace("{key}", key));
        let mut r = http
            .request(self.method.clone(), url)
            .header("X-Mock-Delay", "0");
        for (name, form) in self.auth {
            r = r.header(*name, form.replace("{key}", key));
        }
        r
    }

    /// This crate's client: six calls, one after the other.
    async fn obey(&self, base: &str, key: &str) -> u64 {
        let mut b = Client::builder()
            .service(self.service)
            .account(format!("obeys-{key}"))
            .base_url(format!("{base}{}", self.prefix))
            .header("X-Mock-Delay", "0")
            .overrides(Overrides::from_toml(LOOSE).unwrap())
            .store(Store::from(MemoryStore::new()))
            .config({
                let mut c = support::quick();
                c.max_wait = Duration::from_secs(5);
                c
            });
        for (name, form) in self.auth {
            b = b.header(*name, form.replace("{key}", key));
        }
        let c = b.build().unwrap();
        let path = self.path.replace("{key}", key);
        let (path, query) = path.split_once('?').unwrap_or((&path, ""));
        for _ in 0..6 {
            let call = if self.method == reqwest::Method::GET {
                c.get(path)
            } else {
                c.post(path)
            };
            let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let pairs: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let mut call = call.query(&pairs);
            if let Some(body) = self.body {
                call = call.json(&serde_json::from_str(body).unwrap());
            }
            let r = call.send().await;
            assert!(
                r.is_ok() || matches!(r, Err(ref e) if e.retry_after().is_some()),
                "{r:?}"
            );
        }
        c.stats().server_rate_limits
    }

    /// Sends again 60 ms after every rate-limit answer that announced a wait of 90 ms or more,
    /// far inside it (and on the refused connection, so the sandbox knows it was sent after the
    /// refusal was read — but the first of a pause): twelve requests in all; how many were sent
    /// that early. A refusal that
    /// announced less (MoySklad's pause is in milliseconds: the next token may be due in a few)
    /// is waited out with 30 ms to spare, so that each count is one the sandbox must agree with.
    async fn hammer(&self, base: &str, key: &str) -> u64 {
        let catalog = apistend_catalog::Catalog::builtin().unwrap();
        let service = catalog.service(self.service).unwrap();
        // One client, as a naive loop has: its requests share a connection.
        let http = reqwest::Client::new();
        let mut early = 0;
        let mut pause = None;
        // The first retry of a pause on its connection is not judged (a pooled client may have
        // queued it before the refusal came); a pause starts with a refusal when none is on.
        let mut excused = false;
        for _ in 0..12 {
            match pause {
                Some(wait) if wait >= 90 => {
                    if excused {
                        early += 1;
                    }
                    excused = true;
                    tokio::time::sleep(Duration::from_millis(60)).await;
                }
                Some(wait) => {
                    excused = false;
                    tokio::time::sleep(Duration::from_millis(wait + 30)).await;
                }
                None => excused = false,
            }
            let r = self.request_on(&http, base, key).send().await.unwrap();
            pause = (r.status().as_u16() == self.refused).then(|| {
                let header = |name: &str| r.headers().get(name)?.to_str().ok();
                let now = u64::try_from(
                    std::time::SystemTime::UNIX_EPOCH
                        .elapsed()
                        .unwrap()
                        .as_millis(),
                )
                .unwrap();
                service.announced_wait_ms(header, now).unwrap_or(1000)
            });
        }
        early
    }

    /// Repeats a request a 401 answered, three times, paced so that no bucket refuses it.
    async fn retry_dead_end(&self, base: &str, key: &str) {
        for _ in 0..4 {
            let r = self
                .request(base, key)
                .header("X-Mock-Scenario", "unauthorized")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401);
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
    }
}

/// The report's part on `key`, and on its only group of `service`.
fn of<'r>(report: &'r Value, key: &str) -> (&'r Value, &'r Value) {
    let k = report["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == key)
        .unwrap_or_else(|| panic!("no key {key} in {report}"));
    let groups = k["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{k}");
    (k, &groups[0])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conduct_report_tells_an_obeying_client_from_a_hammering_one_and_a_dead_end_retrier() {
    let s = support::sandbox_with(|c| {
        c.with_admin_token(TOKEN)
            .with_overrides(Overrides::from_toml(STRICT).unwrap())
    })
    .await;
    let sandboxes = admin(&format!("{}/api/v1/sandboxes", s.base)).await;
    let id = sandboxes[0]["id"].as_str().unwrap().to_owned();
    let mut runs = Vec::new();
    for call in calls() {
        let keys = [
            issue_key(&s.base, &id).await,
            issue_key(&s.base, &id).await,
            issue_key(&s.base, &id).await,
        ];
        let base = s.base.clone();
        runs.push(tokio::spawn(async move {
            let (met, early, ()) = tokio::join!(
                call.obey(&base, &keys[0]),
                call.hammer(&base, &keys[1]),
                call.retry_dead_end(&base, &keys[2])
            );
            (call.service, keys, met, early)
        }));
    }
    let mut done = Vec::new();
    for r in runs {
        done.push(r.await.unwrap());
    }
    let report = admin(&format!("{}/api/v1/sandboxes/{id}/conduct", s.base)).await;
    assert_eq!(report["verdict"], "violations", "{report}");
    for (service, [obeys, hammers, retries], met, early) in done {
        let (k, g) = of(&report, &obeys);
        assert_eq!(k["verdict"], "clean", "{service}: {k}");
        assert_eq!(g["early_retries"], 0, "{service}: {g}");
        // It met the sandbox's refusals and waited them out — unless the service states its
        // rate on every answer (MoySklad's limit and window), which the client follows before
        // any refusal.
        let catalog = apistend_catalog::Catalog::builtin().unwrap();
        if !catalog
            .service(service)
            .unwrap()
            .reports(RateValue::WindowMs)
        {
            assert!(
                met >= 1,
                "{service}: the client met the sandbox's refusals: {g}"
            );
        }
        assert_eq!(g["refused"].as_u64(), Some(met), "{service}: {g}");

        let (k, g) = of(&report, &hammers);
        assert_eq!(k["verdict"], "violations", "{service}: {k}");
        assert!(early >= 1, "{service}");
        assert_eq!(g["early_retries"].as_u64(), Some(early), "{service}: {g}");
        assert!(g["early_by_max_ms"].as_u64().unwrap() > 0, "{g}");
        assert_eq!(g["retried_dead_ends"], json!({}), "{service}: {g}");
        assert!(g["longest_refusal_run"].as_u64().unwrap() >= 1);

        let (k, g) = of(&report, &retries);
        assert_eq!(k["verdict"], "violations", "{service}: {k}");
        assert_eq!(g["retried_dead_ends"], json!({"401": 3}), "{service}: {g}");
        assert_eq!(g["early_retries"], 0, "{service}: {g}");
        assert_eq!(g["refusals"], json!({"scenario": 4}), "{service}: {g}");
        let reasons = k["reasons"].to_string();
        assert!(reasons.contains("repeated after a 401"), "{reasons}");
    }
    // The metrics tell the same, summed over the keys per service and group.
    let text = reqwest::get(format!("{}/metrics", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let gauge = |line_start: String| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&line_start)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{line_start} in:\n{text}"))
    };
    let mut sums: std::collections::BTreeMap<(String, String), (u64, u64)> = Default::default();
    for k in report["keys"].as_array().unwrap() {
        for g in k["groups"].as_array().unwrap() {
            let at = (
                g["service"].as_str().unwrap().to_owned(),
                g["group"].as_str().unwrap_or_default().to_owned(),
            );
            let dead: u64 = g["retried_dead_ends"]
                .as_object()
                .unwrap()
                .values()
                .filter_map(Value::as_u64)
                .sum();
            let e = sums.entry(at).or_default();
            e.0 += g["early_retries"].as_u64().unwrap();
            e.1 += dead;
        }
    }
    assert!(sums.values().any(|(early, _)| *early > 0), "{report}");
    for ((service, group), (early, dead)) in sums {
        let labels = format!("{{service=\"{service}\",group=\"{group}\"}}");
        assert_eq!(
            gauge(format!("apistend_conduct_early_retries{labels}")),
            early
        );
        assert_eq!(
            gauge(format!("apistend_conduct_retried_dead_ends{labels}")),
            dead
        );
    }
    assert_eq!(gauge("apistend_conduct_keys{verdict=\"clean\"}".into()), 3);
    assert_eq!(
        gauge("apistend_conduct_keys{verdict=\"violations\"}".into()),
        6
    );
}

/// This crate's client keeps a clean conduct on the other four services too, against a
/// sandbox stricter than it believes (it meets refusals and waits what they announce: Ozon's,
/// Apify's and amoCRM's `X-APIStend-Retry-After`, Yandex Market's `X-RateLimit-Resource-Until`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_client_keeps_a_clean_conduct_on_ozon_amocrm_apify_and_yandex_market() {
    let s = support::sandbox_with(|c| {
        c.with_admin_token(TOKEN)
            .with_overrides(Overrides::from_toml(STRICT_OTHERS).unwrap())
    })
    .await;
    let sandboxes = admin(&format!("{}/api/v1/sandboxes", s.base)).await;
    let id = sandboxes[0]["id"].as_str().unwrap().to_owned();
    let mut runs = Vec::new();
    for call in other_calls() {
        let key = issue_key(&s.base, &id).await;
        let base = s.base.clone();
        runs.push(tokio::spawn(async move {
            let met = call.obey(&base, &key).await;
            (call.service, key, met)
        }));
    }
    let mut done = Vec::new();
    for r in runs {
        done.push(r.await.unwrap());
    }
    let report = admin(&format!("{}/api/v1/sandboxes/{id}/conduct", s.base)).await;
    assert_eq!(report["verdict"], "clean", "{report}");
    let mut met_any = 0;
    for (service, key, met) in done {
        let (k, g) = of(&report, &key);
        assert_eq!(k["verdict"], "clean", "{service}: {k}");
        assert_eq!(g["refused"].as_u64(), Some(met), "{service}: {g}");
        eprintln!("{service}: the client met {met} refusal(s), waited them out");
        met_any += met;
    }
    assert!(
        met_any >= 1,
        "the client met the sandbox's refusals somewhere: {report}"
    );
}
