//! The client against a sandbox started in the test: the decision record's cases.

use crate::support;

use std::time::{Duration, Instant};

use apistend_catalog::{Method, Overrides, ServiceId};
use apistend_client::{Client, ClientError, RefusedBy};
use apistend_limiter::{MemoryStore, RedisConfig, RedisStore, Store};
use apistend_testkit::RedisServer;

const FEED: &str = "/api/v1/supplier/incomes";

fn client(s: &support::TestSandbox, overrides: &str, store: Store) -> Client {
    Client::builder()
        .service(ServiceId::WB)
        .account("seller-1")
        .base_url(format!("{}/wb", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .overrides(Overrides::from_toml(overrides).unwrap())
        .store(store)
        .config(support::quick())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_of_one_request_per_window_reads_three_pages_in_a_row() {
    let group = support::wb_group(Method::Get, FEED);
    let quota = support::wb_quota(&group, 1, 1500);
    let s = support::sandbox(&quota).await;
    let c = client(&s, &quota, Store::from(MemoryStore::new()));
    let t = Instant::now();
    for page in 0..3 {
        let r = c
            .get(FEED)
            .query(&[("dateFrom", "2026-01-01"), ("page", &page.to_string())])
            .send()
            .await;
        assert!(r.is_ok(), "page {page}: {r:?}");
    }
    assert!(
        t.elapsed() >= Duration::from_millis(2900),
        "two waits for the next window: {:?}",
        t.elapsed()
    );
    let st = c.stats();
    assert_eq!((st.server_rate_limits, st.local_refusals), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loser_of_a_race_for_one_token_waits_for_the_next_slot() {
    let group = support::wb_group(Method::Get, FEED);
    let quota = support::wb_quota(&group, 1, 1000);
    let s = support::sandbox(&quota).await;
    let store = Store::from(MemoryStore::new());
    let (a, b) = (client(&s, &quota, store.clone()), client(&s, &quota, store));
    let (ra, rb) = tokio::join!(
        a.get(FEED).query(&[("dateFrom", "2026-01-01")]).send(),
        b.get(FEED).query(&[("dateFrom", "2026-01-01")]).send()
    );
    assert!(ra.is_ok() && rb.is_ok(), "{ra:?} {rb:?}");
    let waited = a.stats().waited.max(b.stats().waited);
    assert!(
        waited >= Duration::from_millis(900),
        "one of them waited for the next slot: {waited:?}"
    );
    assert_eq!(
        a.stats().server_rate_limits + b.stats().server_rate_limits,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stricter_sandbox_gets_one_429_per_penalty_then_recovery() {
    // The sandbox allows one request per second; the client believes in 5 per 3 s (600 ms).
    let group = support::wb_group(Method::Get, "/content/v2/object/all");
    let s = support::sandbox(&support::wb_quota(&group, 1, 1000)).await;
    let store = Store::from(MemoryStore::new());
    let clients = [client(&s, "", store.clone()), client(&s, "", store)];
    let t = Instant::now();
    let mut tasks = Vec::new();
    for c in clients.clone() {
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for _ in 0..4 {
                let started = Instant::now();
                let r = c.get("/content/v2/object/all").send().await;
                out.push((r.map(|_| ()), started.elapsed()));
            }
            out
        }));
    }
    let mut ok = 0;
    for t in tasks {
        for (r, took) in t.await.unwrap() {
            match r {
                Ok(()) => ok += 1,
                Err(ClientError::RateLimited { .. }) => {}
                Err(e) => panic!("only success or a typed rate limit, got {e}"),
            }
            // Attempts × (ceiling of 5.6 s + request): a call never hangs past its ceilings.
            assert!(took < Duration::from_secs(20), "{took:?}");
        }
    }
    let elapsed = t.elapsed().as_secs_f64();
    let rejected: u64 = clients.iter().map(|c| c.stats().server_rate_limits).sum();
    let penalties: u64 = clients.iter().map(|c| c.stats().penalties).sum();
    assert!(ok >= 4, "the client recovers: {ok} of 8 succeeded");
    assert!(
        rejected >= 1,
        "the sandbox is stricter: some 429s are expected"
    );
    assert_eq!(penalties, rejected, "every 429 penalizes the shared bucket");
    // A penalty lasts at least the sandbox's 1 s hint: at most one 429 per second per account.
    assert!(
        (rejected as f64) <= elapsed.ceil() + 1.0,
        "{rejected} 429s in {elapsed:.1} s"
    );
    eprintln!("stricter sandbox: {ok}/8 ok, {rejected} 429s in {elapsed:.1} s");
}

/// Two processes of one account on one real Redis, against a sandbox stricter than the catalog
/// (one request a second; the catalog says 5 per 3 s): the first meets the server's rejection
/// and narrows; the second, which never met one, follows the same quota from the store before
/// its first request (the strictest bounds and the newest quota are kept beside the bucket).
/// Forgetting what was learned (`DELETE /learned`) is not undone by the store's record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_on_one_redis_follows_the_quota_any_of_it_learned() {
    let Some(redis) =
        RedisServer::start("a_fleet_on_one_redis_follows_the_quota_any_of_it_learned")
    else {
        return;
    };
    let group = support::wb_group(Method::Get, "/content/v2/object/all");
    let s = support::sandbox(&support::wb_quota(&group, 1, 1000)).await;
    let store =
        || Store::from(RedisStore::new(RedisConfig::from_url(&redis.url()).unwrap()).unwrap());
    let (a, b) = (client(&s, "", store()), client(&s, "", store()));
    for _ in 0..4 {
        if !a.learned().is_empty() {
            break;
        }
        let _ = a.get("/content/v2/object/all").send().await;
    }
    let learned = a.learned();
    assert_eq!(
        learned.len(),
        1,
        "a learned from its rejection: {:?}",
        a.stats()
    );
    assert!(a.stats().server_rate_limits >= 1, "{:?}", a.stats());
    // The server's token comes back within a second: b's request meets no rejection of its own.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    b.get("/content/v2/object/all").send().await.unwrap();
    let followed = b.learned();
    assert_eq!(followed.len(), 1, "b follows a's quota: {followed:?}");
    assert_eq!(followed[0].quota, learned[0].quota);
    assert_eq!(b.stats().server_rate_limits, 0, "{:?}", b.stats());
    b.forget_learned();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    b.get("/content/v2/object/all").send().await.unwrap();
    assert_eq!(b.stats().server_rate_limits, 0, "{:?}", b.stats());
    let interval = learned[0].quota.interval();
    assert!(
        b.learned().iter().all(|l| l.quota.interval() != interval),
        "a forgotten quota is not taken back from the store: {:?}",
        b.learned()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_client_errors_are_not() {
    let s = support::sandbox("").await;
    let c = client(&s, "", Store::from(MemoryStore::new()));
    let t = Instant::now();
    let r = c
        .get("/api/v3/warehouses")
        .header("X-Mock-Scenario", "server_error")
        .send()
        .await;
    match r {
        Err(ClientError::Server {
            status: 500,
            attempts: 3,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // Backoff 50·2^0 + 50·2^1 ms at least.
    assert!(t.elapsed() >= Duration::from_millis(150));
    assert_eq!((c.stats().attempts, c.stats().retries_server), (3, 2));

    let c = client(&s, "", Store::from(MemoryStore::new()));
    assert!(matches!(
        c.get("/api/v3/warehouses")
            .header("X-Mock-Scenario", "unauthorized")
            .send()
            .await,
        Err(ClientError::Unauthorized { .. })
    ));
    assert!(matches!(
        c.get("/api/v3/no-such-thing").send().await,
        Err(ClientError::NotFound { .. })
    ));
    assert!(matches!(
        c.get("/api/v3/warehouses")
            .header("X-Mock-Scenario", "forbidden")
            .send()
            .await,
        Err(ClientError::Forbidden { .. })
    ));
    assert_eq!(c.stats().attempts, 3, "one attempt each: never retried");

    let bad = Client::builder()
        .service(ServiceId::WB)
        .base_url(format!("{}/wb", s.base))
        .header("Authorization", "wrong")
        .config(support::quick())
        .build()
        .unwrap();
    match bad.get("/api/v3/warehouses").send().await {
        Err(ClientError::Unauthorized { body }) => {
            assert_eq!(body["status"], 401, "the parsed WB body");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_refusals_carry_retry_after_and_respect_deadlines() {
    let group = support::wb_group(Method::Get, FEED);
    let quota = support::wb_quota(&group, 1, 60_000);
    let s = support::sandbox(&quota).await;
    let c = client(&s, &quota, Store::from(MemoryStore::new()));
    c.get(FEED)
        .query(&[("dateFrom", "2026-01-01")])
        .send()
        .await
        .unwrap();
    // The next slot is a minute away: with a 2 s deadline the client fails fast, without sending.
    let t = Instant::now();
    let r = c
        .get(FEED)
        .query(&[("dateFrom", "2026-01-01")])
        .deadline(Instant::now() + Duration::from_secs(2))
        .send()
        .await;
    match r {
        Err(
            e @ ClientError::RateLimited {
                refused_by: RefusedBy::Local,
                ..
            },
        ) => {
            assert!(e.retry_after().unwrap() > Duration::from_secs(55));
        }
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(1), "fails fast");
    assert_eq!(c.stats().attempts, 1);
}

/// The worker of `two_processes_sharing_redis_see_no_429`: runs only when asked to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_process() {
    let (Ok(base), Ok(redis), Ok(quota)) = (
        std::env::var("APISTEND_T_BASE"),
        std::env::var("APISTEND_T_REDIS"),
        std::env::var("APISTEND_T_QUOTA"),
    ) else {
        return;
    };
    let store = Store::from(RedisStore::new(RedisConfig::from_url(&redis).unwrap()).unwrap());
    let c = Client::builder()
        .service(ServiceId::WB)
        .account("seller-shared")
        .base_url(format!("{base}/wb"))
        .header("Authorization", "client-key")
        .header("X-Mock-Delay", "0")
        .overrides(Overrides::from_toml(&quota).unwrap())
        .store(store)
        .config(support::quick())
        .build()
        .unwrap();
    let mut ok = 0;
    for _ in 0..6 {
        if c.get("/content/v2/object/all").send().await.is_ok() {
            ok += 1;
        }
    }
    println!("WORKER ok={ok} rejected={}", c.stats().server_rate_limits);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_sharing_redis_see_no_429() {
    let Some(redis) = RedisServer::start("two_processes_sharing_redis_see_no_429") else {
        return;
    };
    let group = support::wb_group(Method::Get, "/content/v2/object/all");
    let quota = support::wb_quota(&group, 2, 400);
    let s = support::sandbox(&quota).await;
    let exe = std::env::current_exe().unwrap();
    let spawn = || {
        std::process::Command::new(&exe)
            .args(["--exact", "e2e::worker_process", "--nocapture"])
            .env("APISTEND_T_BASE", &s.base)
            .env("APISTEND_T_REDIS", redis.url())
            .env("APISTEND_T_QUOTA", &quota)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let children = [spawn(), spawn()];
    let outputs = tokio::task::spawn_blocking(move || {
        children
            .map(|c| String::from_utf8_lossy(&c.wait_with_output().unwrap().stdout).into_owned())
    })
    .await
    .unwrap();
    let mut total_ok = 0;
    for out in &outputs {
        let line = out
            .lines()
            .find(|l| l.starts_with("WORKER"))
            .unwrap_or_else(|| panic!("no worker report: {out}"));
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .unwrap()
                .parse::<u32>()
                .unwrap()
        };
        assert_eq!(field("rejected="), 0, "{line}");
        total_ok += field("ok=");
    }
    assert_eq!(total_ok, 12, "{outputs:?}");
}

/// The server's `X-Ratelimit-Remaining` is believed when it says less than the client's model:
/// a sandbox that holds 2 (one back a minute) against a client that believes in 5. After two
/// calls the server says 0 left; the shared bucket drops to match, so the third call is refused
/// locally instead of being sent into a 429.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_reporting_fewer_tokens_left_tightens_the_shared_bucket() {
    let group = support::wb_group(Method::Get, FEED);
    let s = support::sandbox(&support::wb_quota(&group, 2, 60_000)).await;
    let store = Store::from(MemoryStore::new());
    let c = client(&s, &support::wb_quota(&group, 5, 200), store);
    for _ in 0..2 {
        let r = c
            .request(Method::Get, FEED)
            .query(&[("dateFrom", "2026-01-01")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status, 200);
    }
    let third = c
        .request(Method::Get, FEED)
        .query(&[("dateFrom", "2026-01-01")])
        .deadline(Instant::now() + Duration::from_millis(100))
        .send()
        .await;
    assert!(
        matches!(
            third,
            Err(ClientError::RateLimited {
                refused_by: RefusedBy::Local,
                ..
            })
        ),
        "{third:?}"
    );
    assert_eq!(c.stats().server_rate_limits, 0, "{:?}", c.stats());
    assert_eq!(c.stats().attempts, 2);
}

/// A client of MoySklad on the sandbox `s` with the base URL in MoySklad's own form (ending in
/// `/api/remap/1.2`), the user's bearer token, every answer delayed `delay_ms`.
fn moysklad(
    s: &support::TestSandbox,
    account: &str,
    delay_ms: &str,
    config: apistend_client::ClientConfig,
) -> Client {
    moysklad_on(
        s,
        account,
        delay_ms,
        config,
        Store::from(MemoryStore::new()),
    )
}

/// [`moysklad`], its buckets and slots in `store`.
fn moysklad_on(
    s: &support::TestSandbox,
    account: &str,
    delay_ms: &str,
    config: apistend_client::ClientConfig,
    store: Store,
) -> Client {
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    Client::builder()
        .service(catalog.service_id("moysklad").unwrap())
        .account(account)
        .base_url(format!("{}/moysklad/api/remap/1.2", s.base))
        .header("Authorization", format!("Bearer {}", s.key))
        .header("X-Mock-Delay", delay_ms)
        .store(store)
        .config(config)
        .build()
        .unwrap()
}

/// A server more generous than the catalog that says so in its headers (MoySklad's limit and
/// window: 90 units per 3 s against the catalog's 45) is used at its own rate: after the first
/// answer, 21 more requests of weight 4 (88 units in all) go without a wait — each with a 100 ms
/// deadline, which the catalog's quota would break from the twelfth on — and the server refuses
/// none. The base URL is MoySklad's own form, ending in `/api/remap/1.2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_stating_a_larger_limit_per_window_is_used_at_its_rate() {
    let s = support::sandbox("[moysklad.groups.user]\nburst = 90\nper_second = 30\n").await;
    let ms = moysklad(&s, "ms-user", "0", support::quick());
    ms.get("/entity/product").send().await.unwrap();
    let learned = ms.learned();
    assert_eq!(learned.len(), 1, "{learned:?}");
    assert_eq!(learned[0].quota.burst(), 90, "{learned:?}");
    for i in 0..21 {
        let deadline = Instant::now() + Duration::from_millis(100);
        let r = ms.get("/entity/product").deadline(deadline).send().await;
        assert!(r.is_ok(), "request {i}: {r:?} {:?}", ms.learned());
    }
    let st = ms.stats();
    assert_eq!((st.server_rate_limits, st.local_refusals), (0, 0), "{st:?}");
}

/// Sixteen requests at once of one MoySklad user, five allowed in flight by the server: the
/// client holds the service's in-flight slots itself (`[[in_flight]]` of its definition), so at
/// most five go at once and the server refuses none for it (code 1073) — the others wait for a
/// slot, as they wait for tokens (45 units per 3 s at 4 a request: eleven at once, the rest
/// paced) — and all sixteen are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_accounts_calls_hold_the_services_in_flight_slots_and_meet_no_refusal_for_them() {
    let s = support::sandbox("").await;
    let mut config = support::quick();
    config.max_wait = Duration::from_secs(10);
    let ms = moysklad(&s, "ms-slots", "150", config);
    let calls: Vec<_> = (0..16)
        .map(|_| {
            let ms = ms.clone();
            tokio::spawn(async move { ms.get("/entity/product").send().await })
        })
        .collect();
    for c in calls {
        let r = c.await.unwrap();
        assert!(r.is_ok(), "{r:?}");
    }
    let st = ms.stats();
    assert_eq!(
        (st.retries_in_flight, st.server_rate_limits, st.attempts),
        (0, 0, 16),
        "{st:?}"
    );
    assert!(st.slot_waits >= 1, "six or more waited for a slot: {st:?}");
}

/// Five MoySklad reads at once from each client of `fleet`, every one answered.
async fn five_at_once_each(fleet: &[Client; 2]) {
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let ms = fleet[i % 2].clone();
            tokio::spawn(async move { ms.get("/entity/product").send().await })
        })
        .collect();
    for c in calls {
        let r = c.await.unwrap();
        assert!(r.is_ok(), "{r:?}");
    }
}

/// Two clients of one MoySklad user on one real Redis (as two processes of a fleet), five
/// requests at once each: the in-flight slots are shared through the store, so at most five go
/// at once between them and the server refuses none for it (code 1073).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_on_one_redis_shares_the_in_flight_slots() {
    let Some(redis) = RedisServer::start("a_fleet_on_one_redis_shares_the_in_flight_slots") else {
        return;
    };
    let s = support::sandbox("[moysklad.groups.user]\nburst = 400\nper_second = 100\n").await;
    let store =
        || Store::from(RedisStore::new(RedisConfig::from_url(&redis.url()).unwrap()).unwrap());
    let fleet = [
        moysklad_on(&s, "ms-fleet", "150", support::quick(), store()),
        moysklad_on(&s, "ms-fleet", "150", support::quick(), store()),
    ];
    five_at_once_each(&fleet).await;
    let (a, b) = (fleet[0].stats(), fleet[1].stats());
    assert_eq!(a.retries_in_flight + b.retries_in_flight, 0, "{a:?} {b:?}");
    assert!(a.slot_waits + b.slot_waits >= 1, "{a:?} {b:?}");
}

/// Two processes of one MoySklad user that share no store (each its own memory), five requests
/// at once each: the server, five in flight allowed, refuses some with code 1073; those wait and
/// go again — all ten are answered — and the refusals teach nothing of the rate: no bucket
/// penalized, no rate narrowed (before, each 1073 counted as a rate limit and narrowed the rate
/// ten minutes long). The sandbox's tokens are wide so that only the slots refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_for_too_many_in_flight_waits_for_a_slot_and_leaves_the_rate_alone() {
    let s = support::sandbox("[moysklad.groups.user]\nburst = 400\nper_second = 100\n").await;
    let mut config = support::quick();
    config.attempts = 6;
    config.max_wait = Duration::from_secs(5);
    let fleet = [
        moysklad(&s, "ms-in-flight", "150", config.clone()),
        moysklad(&s, "ms-in-flight", "150", config),
    ];
    five_at_once_each(&fleet).await;
    let (a, b) = (fleet[0].stats(), fleet[1].stats());
    assert!(
        a.retries_in_flight + b.retries_in_flight >= 1,
        "some met the in-flight limit: {a:?} {b:?}"
    );
    for (ms, st) in fleet.iter().zip([a, b]) {
        assert_eq!((st.server_rate_limits, st.penalties), (0, 0), "{st:?}");
        // The server states 400 units per window: a rate learned from that is no narrowing.
        for l in ms.learned() {
            assert!(
                l.quota.rate_per_second() >= l.catalog.rate_per_second(),
                "{l:?}"
            );
        }
    }
}

/// Yandex Market weighs a price update by its offers (`weight_from = "offers"`; 420 over the
/// group's offers a minute). Six updates of 500 offers at once against 1 000 offers at once and
/// one a millisecond: the client weighs each by the body it sends, so two go at once and the
/// others wait their 500 tokens — the server refuses none (weighed as one request each, all six
/// went at once and four were refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_update_is_weighed_by_its_offers_and_meets_no_420() {
    let quota = "[ymarket.groups.updatePrices]\nburst = 1000\ninterval_ms = 1\n";
    let s = support::sandbox(quota).await;
    let catalog = apistend_catalog::Catalog::builtin().unwrap();
    let ym = Client::builder()
        .service(catalog.service_id("ymarket").unwrap())
        .account("ym-prices")
        .base_url(format!("{}/ymarket", s.base))
        .header("Api-Key", s.key.clone())
        .header("X-Mock-Delay", "0")
        .store(Store::from(MemoryStore::new()))
        .overrides(Overrides::from_toml(quota).unwrap())
        .config(support::quick())
        .build()
        .unwrap();
    let offers: Vec<_> = (0..500)
        .map(|i| serde_json::json!({"offerId": format!("o-{i}"), "price": {"value": 100, "currencyId": "RUR"}}))
        .collect();
    let body = serde_json::json!({ "offers": offers });
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let (ym, body) = (ym.clone(), body.clone());
            tokio::spawn(async move {
                let r = ym.post("/v2/campaigns/7/offer-prices/updates");
                r.json(&body).send().await
            })
        })
        .collect();
    for c in calls {
        let r = c.await.unwrap();
        assert!(r.is_ok(), "{r:?}");
    }
    let st = ym.stats();
    assert_eq!((st.server_rate_limits, st.attempts), (0, 6), "{st:?}");
    assert!(st.waited >= Duration::from_millis(500), "{st:?}");
}

/// A user's service that states its limit only in the IETF fields (`RateLimit-Policy:
/// "default";q=20;w=2`, `RateLimit: "default";r=…;t=…`): the client learns the server's rate from
/// the first answer, with no rejection, whether it believed a looser or a stricter quota.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_stating_its_limit_in_the_ietf_fields_is_learned_from_them_in_both_directions() {
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("ietf.toml".into(), apistend_testkit::IETF_DEFINITION.into())
        .unwrap();
    let s = support::sandbox_with(|c| c.with_definitions(defs.clone())).await;
    let r = reqwest::Client::new()
        .get(format!("{}/ietf/things", s.base))
        .bearer_auth(&s.key)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["ratelimit-policy"], r#""default";q=20;w=2"#);
    assert!(
        r.headers()["ratelimit"]
            .to_str()
            .unwrap()
            .starts_with(r#""default";r=19;t="#),
        "{:?}",
        r.headers()
    );
    for (believed, account) in [
        (
            "[ietf.groups.default]\nburst = 40\ninterval_ms = 25\n",
            "looser",
        ),
        (
            "[ietf.groups.default]\nburst = 5\ninterval_ms = 1000\n",
            "stricter",
        ),
    ] {
        let catalog = apistend_catalog::Catalog::load(&defs, None).unwrap();
        let id = catalog.service_id("ietf").unwrap();
        let c = Client::builder()
            .catalog(catalog)
            .overrides(Overrides::from_toml(believed).unwrap())
            .service(id)
            .account(account)
            .base_url(format!("{}/ietf", s.base))
            .header("Authorization", format!("Bearer {}", s.key))
            .header("X-Mock-Delay", "0")
            .store(Store::from(MemoryStore::new()))
            .config(support::quick())
            .build()
            .unwrap();
        c.get("/things").send().await.unwrap();
        let learned = c.learned();
        assert_eq!(learned.len(), 1, "{account}: {learned:?}");
        assert_eq!(learned[0].quota.burst(), 20, "{account}: {learned:?}");
        let ms = learned[0].quota.interval().as_secs_f64() * 1e3;
        assert!((ms - 100.0).abs() < 1.0, "{account}: {ms} ms a token");
        assert_eq!(c.stats().server_rate_limits, 0, "{account}");
    }
}
