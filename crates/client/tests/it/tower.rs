//! The client's limiter and retry rules as tower middleware over a transport of the test's own
//! (reqwest behind `tower::service_fn`), against a sandbox started in the test.

use crate::support;

use std::time::{Duration, Instant};

use apistend_catalog::{Method, Overrides, ServiceId};
use apistend_client::{BoxError, Client, ClientError, Deadline, RefusedBy};
use apistend_limiter::{MemoryStore, Store};
use tower::{Service, ServiceBuilder, ServiceExt};

type Req = http::Request<Vec<u8>>;
type Resp = http::Response<Vec<u8>>;

/// reqwest as a `Service<http::Request<Vec<u8>>>`.
fn transport() -> impl Service<Req, Response = Resp, Error = BoxError, Future: Send> + Clone + Send
{
    let http = reqwest::Client::new();
    tower::service_fn(move |req: Req| {
        let http = http.clone();
        async move {
            let req = reqwest::Request::try_from(req.map(reqwest::Body::from))?;
            let r = http.execute(req).await?;
            let mut out = http::Response::builder().status(r.status().as_u16());
            for (k, v) in r.headers() {
                out = out.header(k.as_str(), v.as_bytes());
            }
            let body = r.bytes().await?.to_vec();
            Ok::<_, BoxError>(out.body(body)?)
        }
    })
}

fn client(s: &support::TestSandbox, overrides: &str) -> Client {
    Client::builder()
        .service(ServiceId::WB)
        .account("tower-seller")
        .base_url(format!("{}/wb", s.base))
        .overrides(Overrides::from_toml(overrides).unwrap())
        .store(Store::from(MemoryStore::new()))
        .config(support::quick())
        .build()
        .unwrap()
}

/// Retries outside the limiter, so that every attempt takes its own token.
fn stack(c: &Client) -> impl Service<Req, Response = Resp, Error = BoxError> {
    ServiceBuilder::new()
        .retry(c.retry_policy())
        .layer(c.layer())
        .service(transport())
}

async fn call(
    stack: &mut impl Service<Req, Response = Resp, Error = BoxError>,
    req: Req,
) -> Result<Resp, BoxError> {
    stack.ready().await?.call(req).await
}

fn get(s: &support::TestSandbox, path: &str) -> Req {
    http::Request::get(format!("{}/wb{path}", s.base))
        .header("Authorization", &s.key)
        .header("X-Mock-Delay", "0")
        .body(Vec::new())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_paces_calls_to_the_quota_without_a_429() {
    let path = "/content/v2/object/all";
    let quota = support::wb_quota(&support::wb_group(Method::Get, path), 1, 700);
    let s = support::sandbox(&quota).await;
    let c = client(&s, &quota);
    let mut stack = stack(&c);
    let t = Instant::now();
    for _ in 0..3 {
        let r = call(&mut stack, get(&s, path)).await.unwrap();
        assert_eq!(r.status(), 200);
    }
    assert!(
        t.elapsed() >= Duration::from_millis(1300),
        "two waits for the next slot: {:?}",
        t.elapsed()
    );
    let st = c.stats();
    assert_eq!(st.attempts, 3);
    assert_eq!(st.server_rate_limits, 0);
    assert!(st.waited >= Duration::from_millis(1300), "{st:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_through_the_layer_penalizes_and_the_policy_retries() {
    // The sandbox allows one request a second; the client believes in 5 per 3 s.
    let path = "/content/v2/object/all";
    let s = support::sandbox(&support::wb_quota(
        &support::wb_group(Method::Get, path),
        1,
        1000,
    ))
    .await;
    let c = client(&s, "");
    let mut stack = stack(&c);
    let mut ok = 0;
    for _ in 0..3 {
        let r = call(&mut stack, get(&s, path)).await.unwrap();
        ok += u32::from(r.status() == 200);
    }
    let st = c.stats();
    assert_eq!(ok, 3, "every call ends in success after its retry: {st:?}");
    assert!(st.server_rate_limits >= 1, "{st:?}");
    assert_eq!(st.penalties, st.server_rate_limits);
    assert_eq!(st.retries_rate_limit, st.server_rate_limits);
    // Server errors are retried with backoff, then the last answer is the caller's (on an
    // operation whose quota the sandbox and the client agree on).
    let mut req = get(&s, "/api/v3/warehouses");
    req.headers_mut()
        .insert("x-mock-scenario", "server_error".parse().unwrap());
    let r = call(&mut stack, req).await.unwrap();
    assert_eq!(r.status(), 500);
    assert_eq!(c.stats().retries_server, 2, "three attempts in all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_past_the_deadline_is_a_typed_local_refusal_not_retried() {
    // Two requests an hour: the third would wait half an hour. With a deadline in the request's
    // extensions the layer refuses at once without sending, and the policy does not retry that.
    let path = "/content/v2/object/all";
    let quota = support::wb_quota(&support::wb_group(Method::Get, path), 2, 3_600_000);
    let s = support::sandbox(&quota).await;
    let c = client(&s, &quota);
    let mut stack = stack(&c);
    for _ in 0..2 {
        let r = call(&mut stack, get(&s, path)).await.unwrap();
        assert_eq!(r.status(), 200);
    }
    let t = Instant::now();
    let mut req = get(&s, path);
    req.extensions_mut()
        .insert(Deadline(Instant::now() + Duration::from_secs(2)));
    let err = call(&mut stack, req).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(1), "fails fast");
    match err.downcast_ref::<ClientError>() {
        Some(
            e @ ClientError::RateLimited {
                refused_by: RefusedBy::Local,
                ..
            },
        ) => assert!(e.retry_after().unwrap() > Duration::from_secs(1000)),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.stats().attempts, 2, "nothing was sent");
}

/// A Bitrix24 whose methods may run one second of every ten minutes (its definition, edited as
/// a user would).
async fn b24_with_a_short_operating_budget() -> support::TestSandbox {
    let text = apistend_catalog::definition::builtin_text("b24.toml")
        .unwrap()
        .replace(
            "operating_budget = { limit_secs = 480, window_secs = 600 }",
            "operating_budget = { limit_secs = 1, window_secs = 600 }",
        );
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("b24.toml".into(), text)
        .unwrap();
    support::sandbox_with(|c| c.with_definitions(defs)).await
}

/// Bitrix24's ambiguous answers are judged alike by `send` and by a stack of the caller's own
/// (one classifier, from its definition, reading the body only there): its 503
/// `QUERY_LIMIT_EXCEEDED` is a rate limit that penalizes the portal's bucket; its 503
/// `SERVICE_UNAVAILABLE` a server error, retried with backoff, that penalizes nothing; its 429
/// `OPERATION_TIME_LIMIT` blocks that method alone for ten minutes — past the ceiling, so final
/// at once, and no penalty of the bucket either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bitrix24_answers_are_judged_alike_by_send_and_by_the_layer() {
    let s = b24_with_a_short_operating_budget().await;
    let b24 = Client::builder()
        .service(ServiceId::B24)
        .account("portal-1")
        .base_url(format!("{}/b24", s.base))
        .header("X-Mock-Delay", "0")
        .store(Store::from(MemoryStore::new()))
        .config(support::quick())
        .build()
        .unwrap();
    let method = |m: &str| format!("/rest/1/{}/{m}.json", s.key);
    let mut stack = ServiceBuilder::new()
        .retry(b24.retry_policy())
        .layer(b24.layer())
        .service(transport());
    let through_stack = |path: String, scenario: Option<&str>| {
        let mut req =
            http::Request::post(format!("{}/b24{path}", s.base)).header("X-Mock-Delay", "0");
        if let Some(scenario) = scenario {
            req = req.header("X-Mock-Scenario", scenario);
        }
        req.body(Vec::new()).unwrap()
    };
    // A call of `send` under a scenario; it fails.
    let refused = |scenario: &'static str| {
        let call = b24
            .post(method("crm.deal.fields"))
            .header("X-Mock-Scenario", scenario);
        async move { call.send().await.unwrap_err() }
    };

    // 503 SERVICE_UNAVAILABLE: a server error, three tries, no penalty.
    let e = refused("unavailable").await;
    assert!(
        matches!(
            e,
            ClientError::Server {
                status: 503,
                attempts: 3,
                ..
            }
        ),
        "{e:?}"
    );
    let r = call(
        &mut stack,
        through_stack(method("crm.deal.fields"), Some("unavailable")),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 503);
    let st = b24.stats();
    assert_eq!(
        (st.retries_server, st.penalties, st.server_rate_limits),
        (4, 0, 0),
        "{st:?}"
    );

    // 503 QUERY_LIMIT_EXCEEDED: a rate limit, the bucket penalized, retried.
    let e = refused("rate_limit").await;
    assert!(
        matches!(
            e,
            ClientError::RateLimited {
                refused_by: RefusedBy::Server,
                ..
            }
        ),
        "{e:?}"
    );
    let st = b24.stats();
    assert_eq!(st.server_rate_limits, 3, "every try was refused: {st:?}");
    assert_eq!((st.penalties, st.retries_rate_limit), (3, 2), "{st:?}");

    // Spend crm.deal.list's second of operating time, then it is blocked.
    for _ in 0..2 {
        b24.post(method("crm.deal.list"))
            .header("X-Mock-Delay", "700")
            .send()
            .await
            .unwrap();
    }
    let before = b24.stats();
    let e = b24.post(method("crm.deal.list")).send().await.unwrap_err();
    let ClientError::RateLimited {
        retry_after,
        refused_by: RefusedBy::Server,
    } = e
    else {
        panic!("{e:?}");
    };
    assert!(
        retry_after > Duration::from_secs(500),
        "until the budget frees up: {retry_after:?}"
    );
    let r = call(&mut stack, through_stack(method("crm.deal.list"), None))
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let st = b24.stats();
    assert_eq!(
        st.attempts,
        before.attempts + 2,
        "one try each, not retried: {st:?}"
    );
    assert_eq!(
        (st.penalties, st.server_rate_limits),
        (3, 3),
        "the bucket is not penalized: {st:?}"
    );
    // Other methods go on.
    b24.post(method("crm.deal.fields")).send().await.unwrap();
}
