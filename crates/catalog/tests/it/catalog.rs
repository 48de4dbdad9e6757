//! The resolver, the built-in services and user overrides.

use std::time::Duration;

use apistend_catalog::{BucketScope, Catalog, CatalogError, Method, Overrides, ServiceId};
use apistend_limiter::Algorithm;

fn group_of<'a>(
    c: &'a Catalog,
    s: ServiceId,
    m: Method,
    p: &str,
) -> &'a apistend_catalog::LimitGroup {
    let r = c.resolve(s, m, p, None).unwrap();
    &r.service.groups[r.groups[0]]
}

#[test]
fn wb_groups_share_buckets_and_keep_their_own_numbers() {
    let c = Catalog::builtin().unwrap();
    let stocks_put = group_of(&c, ServiceId::WB, Method::Put, "/api/v3/stocks/777");
    let stocks_delete = group_of(&c, ServiceId::WB, Method::Delete, "/api/v3/stocks/777");
    assert_ne!(stocks_put.id, stocks_delete.id);
    assert_eq!(
        (stocks_put.quota.burst(), stocks_put.quota.interval()),
        (20, Duration::from_millis(200))
    );
    assert_eq!(
        (stocks_delete.quota.burst(), stocks_delete.quota.interval()),
        (2, Duration::from_millis(1200))
    );
    let r = c
        .resolve(
            ServiceId::WB,
            Method::Patch,
            "/api/v3/dbs/orders/42/receive",
            None,
        )
        .unwrap();
    assert_eq!(r.operation.unwrap().cost_of(409, 1, b"{}"), 33);
    assert_eq!(r.operation.unwrap().cost_of(200, 1, b"{}"), 1);
    // /ping is one operation served on every host, with a bucket per host.
    let a = c
        .resolve(
            ServiceId::WB,
            Method::Get,
            "/ping",
            Some("content-api.wildberries.ru"),
        )
        .unwrap();
    let ping = a.operation.unwrap();
    assert!(
        ping.also_hosts
            .iter()
            .any(|h| h == "content-api.wildberries.ru")
    );
    assert!(ping.also_hosts.len() >= 13, "{:?}", ping.also_hosts);
    assert_eq!(a.service.groups[a.groups[0]].scope, BucketScope::Host);
    // Unknown paths fall back to the service's unmatched bucket.
    let none = c
        .resolve(ServiceId::WB, Method::Get, "/no/such/thing", None)
        .unwrap();
    assert!(none.operation.is_none());
    assert_eq!(none.service.groups[none.groups[0]].id, "unmatched");
    assert!(
        c.resolve(ServiceId::WB, Method::Get, "/content/v2/object/all/", None)
            .unwrap()
            .operation
            .is_some(),
        "a trailing slash resolves"
    );
    assert!(
        c.resolve(
            ServiceId::WB,
            Method::Delete,
            "/content/v2/object/all",
            None
        )
        .unwrap()
        .operation
        .is_none(),
        "method matters"
    );
    assert!(
        c.service(ServiceId::WB)
            .unwrap()
            .hosts
            .iter()
            .any(|h| h == "content-api.wildberries.ru")
    );
}

#[test]
fn bitrix_apify_ozon_numbers() {
    let c = Catalog::builtin().unwrap();
    let b24 = group_of(&c, ServiceId::B24, Method::Post, "/rest/crm.deal.fields");
    assert_eq!(
        (b24.quota.burst(), b24.quota.interval()),
        (50, Duration::from_millis(500))
    );
    assert_eq!(b24.scope, BucketScope::Application);
    let svc = c.service(ServiceId::B24).unwrap();
    assert_eq!(svc.rejection.status, 503);
    assert_eq!(svc.batch_max, Some(50));
    assert_eq!(svc.operating_budget.unwrap().limit_secs, 480);
    let apify = |m, p| group_of(&c, ServiceId::APIFY, m, p).quota.burst();
    assert_eq!(apify(Method::Get, "/v2/users/me"), 90);
    assert_eq!(
        apify(Method::Put, "/v2/key-value-stores/s1/records/OUTPUT"),
        200
    );
    assert_eq!(apify(Method::Post, "/v2/acts/a~b/runs"), 400);
    assert_eq!(apify(Method::Post, "/v2/datasets/d1/items"), 400);
    assert_eq!(apify(Method::Get, "/v2/datasets/d1"), 60);
    assert_eq!(apify(Method::Get, "/v2/whatever"), 60);
    assert_eq!(
        group_of(&c, ServiceId::APIFY, Method::Get, "/v2/users/me").scope,
        BucketScope::PathClass
    );
    let ozon = c
        .resolve(ServiceId::OZON, Method::Post, "/v2/products/stocks", None)
        .unwrap();
    let ids: Vec<_> = ozon
        .groups
        .iter()
        .map(|&i| ozon.service.groups[i].id.as_str())
        .collect();
    assert_eq!(ids, ["stocks-update", "client"]);
    assert_eq!(
        group_of(&c, ServiceId::OZON, Method::Post, "/v3/product/list")
            .quota
            .burst(),
        50
    );
}

#[test]
fn overrides_change_quotas_and_defaults_and_reject_nonsense() {
    let text = r#"
        [b24]
        plan = "enterprise"
        latency_ms = 0
        [wb.groups."content-api.kontent"]
        burst = 10
        interval_ms = 300
        [ozon.groups.client]
        per_second = 100
        algorithm = "fixed_window"
    "#;
    let c = Catalog::builtin()
        .unwrap()
        .with_overrides(&Overrides::from_toml(text).unwrap())
        .unwrap();
    let b24 = group_of(&c, ServiceId::B24, Method::Post, "/rest/profile");
    assert_eq!(
        (b24.quota.burst(), b24.quota.interval()),
        (250, Duration::from_millis(200))
    );
    assert_eq!(c.service(ServiceId::B24).unwrap().latency.base_ms, 0);
    let content = group_of(&c, ServiceId::WB, Method::Get, "/content/v2/object/all");
    assert_eq!(
        (content.quota.burst(), content.quota.interval()),
        (10, Duration::from_millis(300))
    );
    let ozon = group_of(&c, ServiceId::OZON, Method::Post, "/v3/product/list");
    assert_eq!(
        (ozon.quota.interval(), ozon.quota.algorithm()),
        (Duration::from_millis(10), Algorithm::FixedWindow)
    );

    let bad = |t: &str| {
        Catalog::builtin()
            .unwrap()
            .with_overrides(&Overrides::from_toml(t)?)
    };
    assert!(matches!(
        bad("[wb.groups.nope]\nburst = 1"),
        Err(CatalogError::UnknownGroup { .. })
    ));
    assert!(matches!(
        bad("[nope]\nlatency_ms = 1"),
        Err(CatalogError::UnknownService { .. })
    ));
    assert!(matches!(
        bad("[wb]\nplan = \"enterprise\""),
        Err(CatalogError::Overrides(_))
    ));
    assert!(matches!(
        bad("[wb.groups.unmatched]\nburst = 0"),
        Err(CatalogError::Quota { .. })
    ));
    assert!(matches!(
        Overrides::from_toml("[wb]\nlatncy_ms = 1"),
        Err(CatalogError::Overrides(_))
    ));
    let err = Overrides::from_toml("[wb\n").unwrap_err().to_string();
    assert!(err.contains("line"), "{err}");
}

#[test]
fn rows_carry_the_documented_fields() {
    let c = Catalog::builtin().unwrap();
    let rows = c.rows(None);
    assert_eq!(rows.iter().filter(|r| r.service == "wb").count(), 299);
    let v = serde_json::to_value(&rows).unwrap();
    let first = &v[0];
    for field in [
        "service",
        "host",
        "method",
        "path",
        "group",
        "burst",
        "interval_ms",
        "algorithm",
        "cost",
        "deprecated",
    ] {
        assert!(first.get(field).is_some(), "missing {field}");
    }
    let cost = rows
        .iter()
        .find(|r| r.cost.get("409") == Some(&10))
        .unwrap();
    assert_eq!(cost.service, "wb");
}
