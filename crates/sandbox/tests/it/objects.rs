//! What a client writes, it reads back: each service's collections (its definition's
//! `resources`) created, read, listed over several pages, updated and deleted, once on one
//! instance's memory and once with two instances on one Redis (written on one, read on the
//! other); their bounds, seeding, export and reset through the management API.

use crate::support::{self, TestServer};

use apistend_catalog::Overrides;
use apistend_sandbox::SandboxConfig;
use apistend_testkit::{RedisCluster, RedisServer};
use serde_json::{Value, json};

pub(crate) const TOKEN: &str = "objects-test-admin-token";

/// Limits wide enough that a flow of a few hundred requests is never refused.
const WIDE: &str = "[amocrm.groups.integration]\nburst = 100000\ninterval_ms = 1\n\
    [b24.groups.portal]\nburst = 100000\ninterval_ms = 1\n\
    [moysklad.groups.user]\nburst = 100000\ninterval_ms = 1\n\
    [ozon.groups.client]\nburst = 100000\ninterval_ms = 1\n\
    [wb.groups.\"discounts-prices-api.tseny-i-skidki\"]\nburst = 100000\ninterval_ms = 1\n\
    [ymarket.groups.generateStocksOnWarehousesReport]\nburst = 100000\ninterval_ms = 1\n\
    [wb.groups.\"content-api.kontent\"]\nburst = 100000\ninterval_ms = 1\n\
    [wb.groups.\"content-api.post.content-v2-cards-update\"]\nburst = 100000\ninterval_ms = 1\n";

fn wide(c: SandboxConfig) -> SandboxConfig {
    c.with_admin_token(TOKEN)
        .with_overrides(Overrides::from_toml(WIDE).unwrap())
}

/// Two bases to write on and read from: one instance twice, or two on one Redis.
pub(crate) struct Pair {
    pub(crate) w: TestServer,
    r: Option<TestServer>,
}

impl Pair {
    pub(crate) async fn memory(tune: impl Fn(SandboxConfig) -> SandboxConfig) -> Self {
        Self {
            w: support::start(|c| tune(wide(c))).await,
            r: None,
        }
    }

    pub(crate) async fn redis(url: &str, tune: impl Fn(SandboxConfig) -> SandboxConfig) -> Self {
        let w = support::start(|c| tune(wide(c)).with_redis(url)).await;
        let r = support::start(|c| tune(wide(c)).with_redis(url)).await;
        Self { w, r: Some(r) }
    }

    pub(crate) fn write(&self) -> &str {
        &self.w.base
    }

    pub(crate) fn read(&self) -> &str {
        &self.r.as_ref().unwrap_or(&self.w).base
    }

    pub(crate) fn key(&self) -> &str {
        &self.w.key
    }
}

pub(crate) async fn send(r: reqwest::RequestBuilder) -> (u16, Value) {
    let r = r.header("X-Mock-Delay", "0").send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// amoCRM: leads created in arrays, paged by `page`/`limit` with `next` only while there are
/// more and 204 past the end, filtered by ids, updated in bulk and by path.
async fn amocrm(p: &Pair) {
    let c = support::client();
    let at = |base: &str, path: &str| format!("{base}/amocrm/api/v4{path}");
    let auth = format!("Bearer {}", p.key());
    let mut ids = Vec::new();
    for batch in 0..3 {
        let leads: Vec<Value> = (0..40)
            .map(|i| json!({"name": format!("Lead {}", batch * 40 + i), "price": i}))
            .collect();
        let (status, v) = send(
            c.post(at(p.write(), "/leads"))
                .header("Authorization", &auth)
                .json(&leads),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        let made = v["_embedded"]["leads"].as_array().unwrap();
        assert_eq!(made.len(), 40);
        assert_eq!(
            made[1]["request_id"], "1",
            "each item's place in the request"
        );
        let href = made[0]["_links"]["self"]["href"].as_str().unwrap();
        assert!(
            href.starts_with(p.write()),
            "links point at the sandbox: {href}"
        );
        ids.extend(made.iter().map(|l| l["id"].as_u64().unwrap()));
    }
    let mut distinct = ids.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 120);
    // 2 leads the sandbox starts with, then 120: pages of 50, 50, 22, then none.
    let mut seen = Vec::new();
    for page in 1..=3 {
        let (status, v) = send(
            c.get(at(p.read(), &format!("/leads?page={page}&limit=50")))
                .header("Authorization", &auth),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(v["_page"], page);
        assert_eq!(
            v["_links"]["next"].is_object(),
            page < 3,
            "page {page}: {}",
            v["_links"]
        );
        seen.extend(
            v["_embedded"]["leads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["name"].as_str().unwrap().to_owned()),
        );
    }
    assert_eq!(seen.len(), 122);
    assert_eq!(seen[2], "Lead 0");
    assert_eq!(seen[121], "Lead 119");
    let (status, _) = send(
        c.get(at(p.read(), "/leads?page=4&limit=50"))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(status, 204, "past the end, as amoCRM answers");
    // Read back one, then update it by path and two in bulk.
    let one = ids[7];
    let (_, v) = send(
        c.get(at(p.read(), &format!("/leads/{one}")))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(v["name"], "Lead 7");
    assert_eq!(v["price"], 7);
    assert!(v["created_at"].as_u64().unwrap() > 1_700_000_000);
    let (status, _) = send(
        c.patch(at(p.write(), &format!("/leads/{one}")))
            .header("Authorization", &auth)
            .json(&json!({"name": "Renamed"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, v) = send(
        c.patch(at(p.write(), "/leads"))
            .header("Authorization", &auth)
            .json(&json!([{"id": ids[0], "price": 1000}, {"id": ids[1], "price": 2000}])),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["_embedded"]["leads"].as_array().unwrap().len(), 2);
    let q = format!(
        "/leads?filter[id][]={one}&filter[id][]={}&filter[id][]={}",
        ids[0], ids[1]
    );
    let (_, v) = send(c.get(at(p.read(), &q)).header("Authorization", &auth)).await;
    let got: Vec<(u64, String, u64)> = v["_embedded"]["leads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["id"].as_u64().unwrap(),
                l["name"].as_str().unwrap().to_owned(),
                l["price"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (ids[0], "Lead 0".into(), 1000),
            (ids[1], "Lead 1".into(), 2000),
            (one, "Renamed".into(), 7)
        ]
    );
    let (status, _) = send(
        c.get(at(p.read(), "/leads/1"))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(status, 204, "an id it does not hold: amoCRM's 204");
}

/// Bitrix24: deals added and read back inside `batch` with `$result` references, listed by
/// `start` with `next` and `total`, updated and deleted.
async fn bitrix24(p: &Pair) {
    let c = support::client();
    let call =
        |base: &str, method: &str| c.post(format!("{base}/b24/rest/1/{}/{method}.json", p.key()));
    // One batch: a contact, a deal of that contact (a reference), the deal read back.
    let (status, v) = send(call(p.write(), "batch").json(&json!({"cmd": {
        "c": "crm.contact.add?fields[NAME]=Ivan",
        "d": "crm.deal.add?fields[TITLE]=For $result[c]&fields[CONTACT_ID]=$result[c]",
        "g": "crm.deal.get?id=$result[d]",
    }})))
    .await;
    assert_eq!(status, 200, "{v}");
    let r = &v["result"]["result"];
    let contact = r["c"]
        .as_u64()
        .expect("crm.contact.add answers the new ID, a number");
    assert_eq!(r["g"]["CONTACT_ID"], contact.to_string());
    assert_eq!(r["g"]["TITLE"], format!("For {contact}"));
    // 119 more deals, in batches of 50 at most.
    for chunk in (0..119).collect::<Vec<_>>().chunks(50) {
        let cmd: serde_json::Map<String, Value> = chunk
            .iter()
            .map(|i| {
                (
                    format!("a{i}"),
                    json!(format!("crm.deal.add?fields[TITLE]=Deal {i}")),
                )
            })
            .collect();
        let (status, v) = send(call(p.write(), "batch").json(&json!({ "cmd": cmd }))).await;
        assert_eq!(status, 200);
        assert_eq!(v["result"]["result_error"], json!([]), "{v}");
    }
    // 3 deals the sandbox starts with + 120: next 50, 100, then none; total 123.
    let mut titles = Vec::new();
    let mut start = Some(0);
    while let Some(s) = start {
        let (_, v) = send(call(p.read(), "crm.deal.list").query(&[("start", s)])).await;
        assert_eq!(v["total"], 123);
        titles.extend(
            v["result"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["TITLE"].clone()),
        );
        start = v.get("next").map(|n| n.as_u64().unwrap());
        assert!(start.is_none() || start == Some(s + 50), "{v}");
    }
    assert_eq!(titles.len(), 123);
    assert_eq!(titles[4], "Deal 0");
    // Update one, read it back, delete it, and it is gone.
    let id = 5;
    let (_, v) = send(
        call(p.write(), "crm.deal.update").json(&json!({"id": id, "fields": {"STAGE_ID": "WON"}})),
    )
    .await;
    assert_eq!(v["result"], true);
    let (_, v) = send(call(p.read(), "crm.deal.get").query(&[("id", id)])).await;
    assert_eq!(v["result"]["STAGE_ID"], "WON");
    assert_eq!(v["result"]["TITLE"], "Deal 0");
    let (_, v) = send(call(p.read(), "crm.deal.list").query(&[("filter[=ID]", "5")])).await;
    assert_eq!(v["total"], 1, "{v}");
    let (_, v) = send(call(p.write(), "crm.deal.delete").query(&[("id", id)])).await;
    assert_eq!(v["result"], true);
    let (status, v) = send(call(p.read(), "crm.deal.get").query(&[("id", id)])).await;
    assert_eq!(
        (status, v),
        (400, json!({"error": "", "error_description": "Not found"}))
    );
}

/// MoySklad: products created, read, listed by `limit`/`offset` with `meta.size` and
/// `meta.nextHref`, changed by `PUT`, deleted; `meta.href` points back at the sandbox.
async fn moysklad(p: &Pair) {
    let c = support::client();
    let at = |base: &str, path: &str| format!("{base}/moysklad/api/remap/1.2/entity{path}");
    let auth = format!("Bearer {}", p.key());
    // One by one: the official description's `POST /entity/product` takes one product.
    let mut made = Vec::new();
    for i in 0..28 {
        let (status, v) = send(
            c.post(at(p.write(), "/product"))
                .header("Authorization", &auth)
                .json(&json!({"name": format!("P{i}")})),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["name"], format!("P{i}"));
        made.push(v);
    }
    let id = made[3]["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID");
    // 2 the sandbox starts with + 28: offsets 0, 10, 20; nextHref on the first two.
    let mut names = Vec::new();
    for offset in [0, 10, 20] {
        let (_, v) = send(
            c.get(at(p.read(), &format!("/product?limit=10&offset={offset}")))
                .header("Authorization", &auth),
        )
        .await;
        assert_eq!(v["meta"]["size"], 30);
        assert_eq!(v["meta"]["offset"], offset);
        let next = v["meta"].get("nextHref").and_then(Value::as_str);
        assert_eq!(next.is_some(), offset < 20, "{}", v["meta"]);
        if let Some(next) = next {
            assert!(
                next.starts_with(p.read()) && next.contains(&format!("offset={}", offset + 10))
            );
        }
        names.extend(
            v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["name"].clone()),
        );
    }
    assert_eq!(names.len(), 30);
    assert_eq!(names[2], "P0");
    let (status, v) = send(
        c.put(at(p.write(), &format!("/product/{id}")))
            .header("Authorization", &auth)
            .json(&json!({"article": "A-3"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (v["name"].clone(), v["article"].clone()),
        (json!("P3"), json!("A-3"))
    );
    let (_, v) = send(
        c.get(at(p.read(), &format!("/product/{id}")))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(v["article"], "A-3");
    let href = v["meta"]["href"].as_str().unwrap();
    assert_eq!(href, at(p.read(), &format!("/product/{id}")));
    let (status, _) = send(
        c.delete(at(p.write(), &format!("/product/{id}")))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(status, 200);
    let (status, v) = send(
        c.get(at(p.read(), &format!("/product/{id}")))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(v["errors"][0]["code"], 1002, "{v}");
}

/// WB: stocks written per warehouse by size (`chrtId`, `PUT`), read back by sizes (`POST`);
/// another warehouse keeps its own.
async fn wb_stocks(p: &Pair) {
    let c = support::client();
    let at = |base: &str, w: u32| format!("{base}/wb/api/v3/stocks/{w}");
    let put = |base: &str, w: u32, stocks: Value| {
        c.put(at(base, w))
            .header("Authorization", p.key())
            .json(&json!({ "stocks": stocks }))
    };
    let read = |base: &str, w: u32, sizes: &[u64]| {
        c.post(at(base, w))
            .header("Authorization", p.key())
            .json(&json!({ "chrtIds": sizes }))
    };
    let (status, v) = send(put(
        p.write(),
        507,
        json!([{"chrtId": 11, "amount": 5}, {"chrtId": 22, "amount": 7}]),
    ))
    .await;
    assert_eq!(status, 204, "{v}");
    // What was written; the example fills the rest (its deprecated `sku`).
    let pairs = |v: &Value| -> Vec<(u64, u64)> {
        v["stocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["chrtId"].as_u64().unwrap(), s["amount"].as_u64().unwrap()))
            .collect()
    };
    let (status, v) = send(read(p.read(), 507, &[11, 22, 33])).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(pairs(&v), [(11, 5), (22, 7)]);
    send(put(p.write(), 507, json!([{"chrtId": 11, "amount": 9}]))).await;
    let (_, v) = send(read(p.read(), 507, &[11])).await;
    assert_eq!(pairs(&v), [(11, 9)], "in place of the old one");
    let (_, v) = send(read(p.read(), 508, &[11])).await;
    assert_eq!(v["stocks"], json!([]), "another warehouse keeps its own");
    let (status, v) = send(put(p.write(), 507, json!([{"amount": 1}]))).await;
    assert_eq!(status, 400, "an item without its chrtId: {v}");
    let (status, v) = send(
        c.delete(at(p.write(), 507))
            .header("Authorization", p.key())
            .json(&json!({"chrtIds": [11, 44]})),
    )
    .await;
    assert_eq!(status, 204, "{v}");
    let (_, v) = send(read(p.read(), 507, &[11, 22])).await;
    assert_eq!(pairs(&v), [(22, 7)], "11 removed, 44 was never there");
}

/// Yandex Market: a business's offers written by `offer-mappings/update` (each under its
/// `offerId`, in place of the one there), listed by `pageToken` over three pages (no
/// `nextPageToken` on the last), filtered by `offerIds`; another business keeps its own.
async fn ymarket_offers(p: &Pair) {
    let c = support::client();
    let at = |base: &str, business: u32, path: &str| {
        format!("{base}/ymarket/v2/businesses/{business}/offer-mappings{path}")
    };
    let update = |base: &str, offers: Vec<Value>| {
        let mappings: Vec<Value> = offers.into_iter().map(|o| json!({ "offer": o })).collect();
        c.post(at(base, 7, "/update"))
            .header("Api-Key", p.key())
            .json(&json!({ "offerMappings": mappings }))
    };
    let list = |base: &str, business: u32, query: &str, body: Value| {
        c.post(format!("{}{query}", at(base, business, "")))
            .header("Api-Key", p.key())
            .json(&body)
    };
    let offers: Vec<Value> = (0..5)
        .map(|i| json!({"offerId": format!("offer-{i}"), "name": format!("Товар {i}")}))
        .collect();
    let (status, v) = send(update(p.write(), offers)).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v, json!({"status": "OK"}), "no errors made up");
    // The business starts with the example's offer: 6 in all, 3 pages of 2.
    let (mut seen, mut token) = (Vec::new(), None::<String>);
    for page in 0..3 {
        let query = match &token {
            Some(t) => format!("?limit=2&pageToken={t}"),
            None => "?limit=2".to_owned(),
        };
        let (status, v) = send(list(p.read(), 7, &query, json!({}))).await;
        assert_eq!(status, 200, "{v}");
        let items = v["result"]["offerMappings"].as_array().unwrap();
        assert_eq!(items.len(), 2, "page {page}: {v}");
        for i in items {
            seen.push(i["offer"]["offerId"].as_str().unwrap().to_owned());
            assert!(
                i["mapping"].is_object(),
                "the example's mapping beside: {i}"
            );
        }
        token = v["result"]["paging"]["nextPageToken"]
            .as_str()
            .map(str::to_owned);
        assert_eq!(token.is_none(), page == 2, "page {page}: {v}");
    }
    assert_eq!(seen.len(), 6);
    assert_eq!(
        seen[1..],
        ["offer-0", "offer-1", "offer-2", "offer-3", "offer-4"]
    );
    send(update(
        p.write(),
        vec![json!({"offerId": "offer-3", "name": "Новое имя"})],
    ))
    .await;
    let (_, v) = send(list(
        p.read(),
        7,
        "",
        json!({"offerIds": ["offer-3", "none"]}),
    ))
    .await;
    let items = v["result"]["offerMappings"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{v}");
    assert_eq!(
        items[0]["offer"]["name"], "Новое имя",
        "in place of the old one"
    );
    let (_, v) = send(list(p.read(), 8, "", json!({"offerIds": ["offer-3"]}))).await;
    assert_eq!(
        v["result"]["offerMappings"],
        json!([]),
        "another business keeps its own"
    );
    let (status, v) = send(
        c.post(at(p.write(), 7, "/delete"))
            .header("Api-Key", p.key())
            .json(&json!({"offerIds": ["offer-3", "offer-4"]})),
    )
    .await;
    assert_eq!((status, &v["status"]), (200, &json!("OK")), "{v}");
    assert!(
        v["result"].get("notDeletedOfferIds").is_none(),
        "none made up: {v}"
    );
    let (_, v) = send(list(
        p.read(),
        7,
        "",
        json!({"offerIds": ["offer-3", "offer-2"]}),
    ))
    .await;
    let left: Vec<&Value> = v["result"]["offerMappings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["offer"]["offerId"])
        .collect();
    assert_eq!(left, [&json!("offer-2")], "{v}");
    let (status, v) = send(list(p.read(), 7, "?pageToken=nope", json!({}))).await;
    assert_eq!((status, &v["status"]), (400, &json!("ERROR")), "{v}");
}

/// WB: cards uploaded (each variant a card with its `nmID`) are listed as WB pages them, by
/// the last card's `nmID` until a page is shorter than its limit; `textSearch` finds one by its
/// `vendorCode`.
async fn wb_cards(p: &Pair) {
    let c = support::client();
    let at = |base: &str, path: &str| format!("{base}/wb/content-api/content/v2{path}");
    let variants = |codes: &[&str]| -> Vec<Value> {
        codes
            .iter()
            .map(|v| json!({"vendorCode": v, "title": format!("Card {v}"), "brand": "APIStend"}))
            .collect()
    };
    let body = json!([
        {"subjectID": 105, "variants": variants(&["v1", "v2", "v3"])},
        {"subjectID": 105, "variants": variants(&["v4", "v5"])}
    ]);
    let (status, v) = send(
        c.post(at(p.write(), "/cards/upload"))
            .header("Authorization", p.key())
            .json(&body),
    )
    .await;
    assert_eq!((status, &v["error"]), (200, &json!(false)), "{v}");
    let list = |base: &str, cursor: Value, filter: Value| {
        c.post(at(base, "/get/cards/list"))
            .header("Authorization", p.key())
            .json(&json!({"settings": {"cursor": cursor, "filter": filter}}))
    };
    let mut cursor = json!({"limit": 2});
    let (mut codes, mut pages) = (Vec::new(), 0);
    loop {
        let (status, v) = send(list(p.read(), cursor.clone(), json!({"withPhoto": -1}))).await;
        assert_eq!(status, 200, "{v}");
        pages += 1;
        let cards = v["cards"].as_array().unwrap();
        assert_eq!(v["cursor"]["total"], cards.len(), "{v}");
        codes.extend(
            cards
                .iter()
                .map(|c| c["vendorCode"].as_str().unwrap().to_owned()),
        );
        if cards.len() < 2 {
            break;
        }
        assert_eq!(
            v["cursor"]["nmID"], cards[1]["nmID"],
            "the last card's: {v}"
        );
        cursor =
            json!({"limit": 2, "nmID": v["cursor"]["nmID"], "updatedAt": v["cursor"]["updatedAt"]});
        assert!(pages < 10, "the list ends");
    }
    // The example's card the sandbox starts with, then the five: four pages, the last empty.
    assert_eq!(pages, 4, "{codes:?}");
    assert_eq!(codes[1..], ["v1", "v2", "v3", "v4", "v5"]);
    let (_, v) = send(list(
        p.read(),
        json!({"limit": 100}),
        json!({"textSearch": "v4"}),
    ))
    .await;
    let cards = v["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 1, "{v}");
    assert_eq!(
        (&cards[0]["vendorCode"], &cards[0]["title"]),
        (&json!("v4"), &json!("Card v4"))
    );
    assert!(cards[0]["nmID"].as_u64().unwrap() > 12_345_678, "{v}");
    // Updated over its nmID, then moved to the trash: out of the list.
    let nm = cards[0]["nmID"].clone();
    let edit = json!([{"nmID": nm, "vendorCode": "v4", "title": "Renamed", "sizes": []}]);
    let (status, v) = send(
        c.post(at(p.write(), "/cards/update"))
            .header("Authorization", p.key())
            .json(&edit),
    )
    .await;
    assert_eq!((status, &v["error"]), (200, &json!(false)), "{v}");
    let (_, v) = send(list(
        p.read(),
        json!({"limit": 100}),
        json!({"textSearch": "v4"}),
    ))
    .await;
    assert_eq!(v["cards"][0]["title"], "Renamed", "{v}");
    let (status, v) = send(
        c.post(at(p.write(), "/cards/delete/trash"))
            .header("Authorization", p.key())
            .json(&json!({"nmIDs": [nm]})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let (_, v) = send(list(
        p.read(),
        json!({"limit": 100}),
        json!({"textSearch": "v4"}),
    ))
    .await;
    assert_eq!(v["cards"], json!([]), "in the trash, not in the list: {v}");
}

/// Yandex Market: a campaign's prices written by `offer-prices/updates` (each under its
/// `offerId`, in place of the one there, stamped `updatedAt`), listed by `POST offer-prices`
/// (filtered by `offerIds`) and by `GET offer-prices` (the offer named `id`) over pages of
/// `pageToken`; another campaign keeps its own.
async fn ymarket_prices(p: &Pair) {
    let c = support::client();
    let at = |base: &str, campaign: u32, path: &str| {
        format!("{base}/ymarket/v2/campaigns/{campaign}/offer-prices{path}")
    };
    let update = |base: &str, offers: Vec<Value>| {
        c.post(at(base, 7, "/updates"))
            .header("Api-Key", p.key())
            .json(&json!({ "offers": offers }))
    };
    let price = |id: &str, value: u32| json!({"offerId": id, "price": {"value": value, "currencyId": "RUR"}});
    let offers: Vec<Value> = (0..5).map(|i| price(&format!("p-{i}"), 100 + i)).collect();
    let (status, v) = send(update(p.write(), offers)).await;
    assert_eq!((status, &v), (200, &json!({"status": "OK"})), "{v}");
    send(update(p.write(), vec![price("p-3", 990)])).await;
    let by_ids = |campaign: u32, ids: Value| {
        c.post(at(p.read(), campaign, ""))
            .header("Api-Key", p.key())
            .json(&json!({ "offerIds": ids }))
    };
    let (status, v) = send(by_ids(7, json!(["p-3", "p-1", "none"]))).await;
    assert_eq!(status, 200, "{v}");
    let mut got: Vec<(String, u64)> = v["result"]["offers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            assert!(
                o["updatedAt"].as_str().is_some_and(|t| t.contains('T')),
                "{o}"
            );
            (
                o["offerId"].as_str().unwrap().to_owned(),
                o["price"]["value"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [("p-1".to_owned(), 101), ("p-3".to_owned(), 990)],
        "{v}"
    );
    let (_, v) = send(by_ids(8, json!(["p-1"]))).await;
    assert_eq!(
        v["result"]["offers"],
        json!([]),
        "another campaign keeps its own"
    );
    // Every price of the campaign by GET, two a page: the example's and the five written.
    let (mut seen, mut token) = (Vec::new(), None::<String>);
    for page in 0..3 {
        let query = token
            .as_ref()
            .map_or("?limit=2".to_owned(), |t| format!("?limit=2&pageToken={t}"));
        let (status, v) = send(
            c.get(format!("{}{query}", at(p.read(), 7, "")))
                .header("Api-Key", p.key()),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        for o in v["result"]["offers"].as_array().unwrap() {
            seen.push(o["id"].as_str().unwrap().to_owned());
        }
        token = v["result"]["paging"]["nextPageToken"]
            .as_str()
            .map(str::to_owned);
        assert_eq!(token.is_none(), page == 2, "page {page}: {v}");
    }
    assert_eq!(
        seen[seen.len() - 5..],
        ["p-0", "p-1", "p-2", "p-3", "p-4"],
        "{seen:?}"
    );
}

/// Yandex Market: a campaign's stocks written by `PUT offers/stocks` (each `skus[]` under its
/// `sku`), read back by `POST offers/stocks` as the offers of its warehouse — the sku as
/// `offerId`, the count as the first stock — filtered by `offerIds`, over pages of `pageToken`.
async fn ymarket_stocks(p: &Pair) {
    let c = support::client();
    let at =
        |base: &str, campaign: u32| format!("{base}/ymarket/v2/campaigns/{campaign}/offers/stocks");
    let put = |skus: Vec<Value>| {
        c.put(at(p.write(), 7))
            .header("Api-Key", p.key())
            .json(&json!({ "skus": skus }))
    };
    let sku = |id: &str, count: u32| json!({"sku": id, "items": [{"count": count}]});
    let skus: Vec<Value> = (0..3).map(|i| sku(&format!("s-{i}"), 10 + i)).collect();
    let (status, v) = send(put(skus)).await;
    assert_eq!((status, &v), (200, &json!({"status": "OK"})), "{v}");
    send(put(vec![sku("s-1", 99)])).await;
    let list = |campaign: u32, query: &str, body: Value| {
        c.post(format!("{}{query}", at(p.read(), campaign)))
            .header("Api-Key", p.key())
            .json(&body)
    };
    let (status, v) = send(list(7, "", json!({"offerIds": ["s-1", "s-2"]}))).await;
    assert_eq!(status, 200, "{v}");
    let offers = v["result"]["warehouses"][0]["offers"].as_array().unwrap();
    let mut got: Vec<(String, u64)> = offers
        .iter()
        .map(|o| {
            assert!(
                o.get("sku").is_none() && o.get("items").is_none(),
                "only the answer's fields: {o}"
            );
            (
                o["offerId"].as_str().unwrap().to_owned(),
                o["stocks"][0]["count"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, [("s-1".to_owned(), 99), ("s-2".to_owned(), 12)], "{v}");
    let (_, v) = send(list(8, "", json!({"offerIds": ["s-1"]}))).await;
    assert_eq!(
        v["result"]["warehouses"][0]["offers"],
        json!([]),
        "another campaign keeps its own"
    );
    // All of them, two a page: the example's offer and the three written.
    let (mut seen, mut token) = (Vec::new(), None::<String>);
    for page in 0..2 {
        let query = token
            .as_ref()
            .map_or("?limit=2".to_owned(), |t| format!("?limit=2&pageToken={t}"));
        let (status, v) = send(list(7, &query, json!({}))).await;
        assert_eq!(status, 200, "{v}");
        for o in v["result"]["warehouses"][0]["offers"].as_array().unwrap() {
            seen.push(o["offerId"].as_str().unwrap().to_owned());
        }
        token = v["result"]["paging"]["nextPageToken"]
            .as_str()
            .map(str::to_owned);
        assert_eq!(token.is_none(), page == 1, "page {page}: {v}");
    }
    assert_eq!(seen[1..], ["s-0", "s-1", "s-2"], "{seen:?}");
}

#[tokio::test]
async fn ymarket_keeps_the_stocks_it_is_sent() {
    ymarket_stocks(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn ymarket_keeps_the_prices_it_is_sent() {
    ymarket_prices(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn wb_keeps_the_cards_it_is_sent() {
    wb_cards(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn ymarket_keeps_its_offers() {
    ymarket_offers(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn wb_keeps_the_stocks_it_is_sent() {
    wb_stocks(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn amocrm_keeps_what_it_is_sent() {
    amocrm(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn bitrix24_keeps_what_it_is_sent() {
    bitrix24(&Pair::memory(|c| c).await).await;
}

#[tokio::test]
async fn moysklad_keeps_what_it_is_sent() {
    moysklad(&Pair::memory(|c| c).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_redis_read_what_the_other_wrote() {
    let Some(redis) = RedisServer::start("two_instances_on_one_redis_read_what_the_other_wrote")
    else {
        return;
    };
    let p = Pair::redis(&redis.url(), |c| c).await;
    amocrm(&p).await;
    bitrix24(&p).await;
    moysklad(&p).await;
    wb_stocks(&p).await;
    wb_cards(&p).await;
    ymarket_offers(&p).await;
    ymarket_prices(&p).await;
    ymarket_stocks(&p).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_a_redis_cluster_read_what_the_other_wrote() {
    let Some(cluster) =
        RedisCluster::start("two_instances_on_a_redis_cluster_read_what_the_other_wrote")
    else {
        return;
    };
    let p = Pair::redis(&cluster.url(), |c| c).await;
    amocrm(&p).await;
    moysklad(&p).await;
}

/// 200 creates at once, half on each instance: 200 distinct ids.
async fn concurrent_creates_get_distinct_ids(p: &Pair) {
    let c = support::client();
    let auth = format!("Bearer {}", p.key());
    let mut tasks = Vec::new();
    for i in 0..200 {
        let base = if i % 2 == 0 { p.write() } else { p.read() }.to_owned();
        let (c, auth) = (c.clone(), auth.clone());
        tasks.push(tokio::spawn(async move {
            let (status, v) = send(
                c.post(format!("{base}/amocrm/api/v4/contacts"))
                    .header("Authorization", auth)
                    .json(&json!([{"name": format!("C{i}")}])),
            )
            .await;
            assert_eq!(status, 200, "{v}");
            v["_embedded"]["contacts"][0]["id"].as_u64().unwrap()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 200, "no id given twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_on_two_instances_get_distinct_ids() {
    concurrent_creates_get_distinct_ids(&Pair::memory(|c| c).await).await;
    let Some(redis) = RedisServer::start("concurrent_creates_on_two_instances_get_distinct_ids")
    else {
        return;
    };
    concurrent_creates_get_distinct_ids(&Pair::redis(&redis.url(), |c| c).await).await;
}

pub(crate) async fn demo_id(c: &reqwest::Client, base: &str) -> String {
    let v = support::json(c.get(format!("{base}/api/v1/sandboxes")).bearer_auth(TOKEN)).await;
    v.as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "demo")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Over the bound a create is refused whole with 507, and nothing of it is kept.
async fn bounded(p: &Pair) {
    let c = support::client();
    let auth = format!("Bearer {}", p.key());
    let leads = |n: usize| {
        (0..n)
            .map(|i| json!({"name": format!("L{i}")}))
            .collect::<Vec<_>>()
    };
    let post = |base: &str, n: usize| {
        c.post(format!("{base}/amocrm/api/v4/leads"))
            .header("Authorization", &auth)
            .json(&leads(n))
    };
    // 2 leads to start with, + 3 = the bound of 5.
    assert_eq!(send(post(p.write(), 3)).await.0, 200);
    let (status, v) = send(post(p.read(), 1)).await;
    assert_eq!(status, 507, "{v}");
    assert_eq!(v["status"], 507);
    assert!(v["detail"].as_str().unwrap().contains("bound is 5"), "{v}");
    let id = demo_id(&c, p.write()).await;
    let counts = support::json(
        c.get(format!("{}/api/v1/sandboxes/{id}/objects/counts", p.read()))
            .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(counts, json!({"amocrm/leads": 5}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_over_its_bound_refuses_with_507() {
    let five = |mut c: SandboxConfig| {
        c.max_objects = 5;
        c
    };
    bounded(&Pair::memory(five).await).await;
    let Some(redis) = RedisServer::start("a_sandbox_over_its_bound_refuses_with_507") else {
        return;
    };
    bounded(&Pair::redis(&redis.url(), five).await).await;
}

/// Seeded, exported and reset through the management API; a bad seed is refused naming the
/// field, and nothing of it is loaded.
async fn seeded(p: &Pair) {
    let c = support::client();
    let id = demo_id(&c, p.write()).await;
    let objects = |base: &str| format!("{base}/api/v1/sandboxes/{id}/objects");
    let seed = json!({
        "amocrm": {"leads": [{"id": 7, "name": "Seeded"}], "contacts": []},
        "b24": {"deal": [{"ID": "9", "TITLE": "Seeded deal"}]}
    });
    let (status, v) = send(c.put(objects(p.write())).bearer_auth(TOKEN).json(&seed)).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v,
        json!({"amocrm/contacts": 0, "amocrm/leads": 1, "b24/deal": 1})
    );
    let auth = format!("Bearer {}", p.key());
    let (_, v) = send(
        c.get(format!("{}/amocrm/api/v4/leads", p.read()))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(v["_embedded"]["leads"].as_array().unwrap().len(), 1);
    assert_eq!(v["_embedded"]["leads"][0]["name"], "Seeded");
    let (status, _) = send(
        c.get(format!("{}/amocrm/api/v4/contacts", p.read()))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(status, 204, "seeded empty: amoCRM's empty list");
    // The next id follows the seeded ones.
    let (_, v) = send(
        c.post(format!(
            "{}/b24/rest/1/{}/crm.deal.add.json",
            p.write(),
            p.key()
        ))
        .json(&json!({"fields": {"TITLE": "x"}})),
    )
    .await;
    assert_eq!(v["result"], 10);
    let exported = support::json(c.get(objects(p.read())).bearer_auth(TOKEN)).await;
    assert_eq!(exported["amocrm"]["leads"], seed["amocrm"]["leads"]);
    assert_eq!(exported["b24"]["deal"][1]["TITLE"], "x");
    // A bad seed: refused whole, naming the field; what was there stays.
    for (bad, field) in [
        (
            json!({"amocrm": {"leads": [{"id": 1}, {"name": "no id"}]}}),
            "amocrm.leads[1].id",
        ),
        (json!({"amocrm": {"deals": []}}), "amocrm.deals"),
        (json!({"nope": {}}), "nope"),
        (json!({"amocrm": {"leads": "x"}}), "amocrm.leads"),
    ] {
        let (status, v) = send(c.put(objects(p.write())).bearer_auth(TOKEN).json(&bad)).await;
        assert_eq!(status, 422, "{bad}: {v}");
        assert!(v["detail"].as_str().unwrap().starts_with(field), "{v}");
    }
    let (status, _) = send(
        c.put(objects(p.write()))
            .bearer_auth(TOKEN)
            .body("{\"amocrm\":"),
    )
    .await;
    assert_eq!(status, 400, "not JSON");
    assert_eq!(
        support::json(c.get(objects(p.read())).bearer_auth(TOKEN)).await,
        exported
    );
    // Reset: every collection starts again with its examples.
    let (status, _) = send(c.delete(objects(p.write())).bearer_auth(TOKEN)).await;
    assert_eq!(status, 204);
    let (_, v) = send(
        c.get(format!("{}/amocrm/api/v4/leads", p.read()))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(v["_embedded"]["leads"][0]["id"], 20_000_001);
    let (status, _) = send(
        c.get(format!("{}/api/v1/sandboxes/nope/objects", p.read()))
            .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_are_seeded_exported_and_reset() {
    seeded(&Pair::memory(|c| c).await).await;
    let Some(redis) = RedisServer::start("objects_are_seeded_exported_and_reset") else {
        return;
    };
    seeded(&Pair::redis(&redis.url(), |c| c).await).await;
}

#[tokio::test]
async fn a_seed_file_is_loaded_at_start_or_the_start_fails_naming_the_field() {
    let seed = json!({"amocrm": {"leads": [{"id": 3, "name": "From the file"}]}});
    let s = support::start(|c| {
        let mut c = wide(c);
        c.seed = Some(seed.clone());
        c
    })
    .await;
    let c = support::client();
    let (_, v) = send(
        c.get(format!("{}/amocrm/api/v4/leads/3", s.base))
            .header("Authorization", format!("Bearer {}", s.key)),
    )
    .await;
    assert_eq!(v["name"], "From the file");
    let mut bad = SandboxConfig::new(support::temp_dir());
    bad.seed = Some(json!({"amocrm": {"leads": [{"id": 3}, {"name": "no id"}]}}));
    let err = apistend_sandbox::Sandbox::new(bad)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the seed: amocrm.leads[1].id: missing"),
        "{err}"
    );
}

#[tokio::test]
async fn x_mock_state_off_answers_the_example() {
    let p = Pair::memory(|c| c).await;
    let c = support::client();
    let get = |state: &str| {
        c.get(format!("{}/amocrm/api/v4/leads/1", p.write()))
            .header("Authorization", format!("Bearer {}", p.key()))
            .header("X-Mock-State", state)
    };
    assert_eq!(send(get("on")).await.0, 204, "no lead 1 is kept");
    let (status, v) = send(get("off")).await;
    assert_eq!(
        (status, v["id"].clone()),
        (200, json!(20_000_001)),
        "the example"
    );
    let (status, v) = send(get("maybe")).await;
    assert_eq!(status, 400);
    assert!(v.to_string().contains("X-Mock-State"), "{v}");
}

/// The TOML blocks of docs/services.md's worked example ("Adding a service" and "Keeping the
/// shop's orders"), as written there.
fn shop_definition() -> String {
    let doc = include_str!("../../../../docs/services.md");
    let from = doc.find("## Adding a service: a worked example").unwrap();
    let blocks: Vec<&str> = doc[from..]
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .take(2)
        .collect();
    assert_eq!(blocks.len(), 2, "the example's two TOML blocks");
    blocks.concat()
}

#[tokio::test]
async fn the_worked_example_of_docs_services_keeps_its_orders() {
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("shop.toml".into(), shop_definition())
        .unwrap();
    // Its 10 requests a second would refuse the eleventh of this test.
    let quota = format!("{WIDE}[shop.groups.key]\nburst = 1000\ninterval_ms = 1\n");
    let s = support::start(|c| {
        c.with_definitions(defs)
            .with_overrides(Overrides::from_toml(&quota).unwrap())
    })
    .await;
    let c = support::client();
    let orders = format!("{}/shop/v1/orders", s.base);
    let auth = format!("Bearer {}", s.key);
    let (status, v) = send(
        c.post(&orders)
            .header("Authorization", &auth)
            .json(&json!({"total": 1500})),
    )
    .await;
    assert_eq!(
        (status, v.clone()),
        (201, json!({"id": 100, "total": 1500})),
        "{v}"
    );
    let (_, v) = send(
        c.get(format!("{orders}/100"))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(v, json!({"id": 100, "total": 1500, "status": "new"}));
    for i in 0..3 {
        send(
            c.post(&orders)
                .header("Authorization", &auth)
                .json(&json!({"total": i})),
        )
        .await;
    }
    // 1 order to start with + 4: pages of 2.
    let mut ids = Vec::new();
    for offset in [0, 2, 4] {
        let (_, v) = send(
            c.get(format!("{orders}?limit=2&offset={offset}"))
                .header("Authorization", &auth),
        )
        .await;
        assert_eq!(v["count"], 5);
        ids.extend(
            v["orders"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["id"].as_u64().unwrap()),
        );
    }
    assert_eq!(ids, [1, 100, 101, 102, 103]);
    let (status, v) = send(
        c.patch(format!("{orders}/101"))
            .header("Authorization", &auth)
            .json(&json!({"status": "paid"})),
    )
    .await;
    assert_eq!(
        (status, v["status"].clone(), v["total"].clone()),
        (200, json!("paid"), json!(0))
    );
    let (status, _) = send(
        c.delete(format!("{orders}/101"))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!(status, 204);
    let (status, v) = send(
        c.get(format!("{orders}/101"))
            .header("Authorization", &auth),
    )
    .await;
    assert_eq!((status, v["detail"].clone()), (404, json!("no order 101")));

    // The requests its `request`s do not allow: the template's 400, the reason in `detail`
    // and `X-APIStend-Invalid`; a body over its 64 KiB, 413.
    let refused = async |r: reqwest::RequestBuilder, status: u16, reason: &str| {
        let r = r.header("Authorization", &auth).header("X-Mock-Delay", "0");
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), status, "{reason}");
        let why = r
            .headers()
            .get("x-apistend-invalid")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        assert!(why.starts_with(reason), "{why:?}, wanted {reason:?}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["status"], status, "{v}");
        assert!(v["detail"].as_str().unwrap().starts_with(reason), "{v}");
    };
    let post = || c.post(&orders);
    refused(
        post().json(&json!({"total": "much"})),
        400,
        "body.total: want integer",
    )
    .await;
    refused(
        post().json(&json!({"total": 1, "note": "x"})),
        400,
        "body.note: is not a property",
    )
    .await;
    refused(
        post().json(&json!({"total": 1, "status": "lost"})),
        400,
        "body.status",
    )
    .await;
    refused(post(), 400, "body: is required").await;
    refused(post().body("{\"total\": 1}"), 400, "Content-Type: missing").await;
    let big = json!({"total": 1, "status": "x".repeat(70_000)});
    refused(post().json(&big), 413, "").await;
    let list = |q: &str| c.get(format!("{orders}?{q}"));
    refused(list("limit=0"), 400, "query.limit: must be >=1").await;
    refused(list("offset=first"), 400, "query.offset: want integer").await;
}

/// A `request` whose schema does not compile stops the start, naming its operation (the
/// catalog cannot tell: it knows no JSON Schema).
#[tokio::test]
async fn a_request_schema_that_does_not_compile_stops_the_start() {
    let text = shop_definition().replace(
        "properties = { total = { type = \"integer\", minimum = 0 }",
        "properties = { total = { type = \"whole number\", minimum = 0 }",
    );
    let defs = apistend_catalog::definition::Definitions::builtin()
        .with_file("shop.toml".into(), text)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = apistend_sandbox::SandboxConfig::new(dir.path()).with_definitions(defs);
    let Err(e) = apistend_sandbox::Sandbox::new(config).await else {
        panic!("a schema that does not compile was taken");
    };
    let e = e.to_string();
    assert!(e.contains("shop") && e.contains("POST /v1/orders"), "{e}");
}

/// A Redis that goes away: the objects are refused with a clear 503 (buckets fail open, objects
/// cannot); one that comes back empty (restarted without its data): the collections start again
/// with their examples and get back what was written (`restore.rs` tests it whole), and nothing
/// panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_goes_away_and_comes_back_empty() {
    let Some(mut redis) = RedisServer::start("a_redis_that_goes_away_and_comes_back_empty") else {
        return;
    };
    let p = Pair::redis(&redis.url(), |c| c).await;
    let c = support::client();
    let auth = format!("Bearer {}", p.key());
    let leads = format!("{}/amocrm/api/v4/leads", p.write());
    let (status, v) = send(
        c.post(&leads)
            .header("Authorization", &auth)
            .json(&json!([{"name": "kept"}])),
    )
    .await;
    assert_eq!(status, 200);
    let before = v["_embedded"]["leads"][0]["id"].as_u64().unwrap();
    redis.stop();
    let r = c
        .get(&leads)
        .header("Authorization", &auth)
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let v: Value = r.json().await.unwrap();
    assert!(
        v["detail"]
            .as_str()
            .unwrap()
            .contains("objects store is unavailable"),
        "{v}"
    );
    redis.restart();
    let mut got = (0, Value::Null);
    for _ in 0..50 {
        got = send(c.get(&leads).header("Authorization", &auth)).await;
        if got.0 == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(got.0, 200, "{}", got.1);
    let names: Vec<&str> = got.1["_embedded"]["leads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        3,
        "the examples again, and what was written: {names:?}"
    );
    assert!(names.contains(&"kept"), "{names:?}");
    // The ids given stay given: the instance that gave them goes on after them.
    let (_, v) = send(
        c.post(&leads)
            .header("Authorization", &auth)
            .json(&json!([{"name": "after"}])),
    )
    .await;
    let after = v["_embedded"]["leads"][0]["id"].as_u64().unwrap();
    assert!(after > before, "{after} after {before}: no id given twice");
}

/// A reset collection starts again with its examples, but gives none of the ids it gave
/// before; a deleted sandbox takes its objects with it. In memory and on Redis.
async fn reset_gives_no_id_twice(p: &Pair) {
    let c = support::client();
    let auth = format!("Bearer {}", p.key());
    let leads = format!("{}/amocrm/api/v4/leads", p.write());
    let create = || {
        c.post(&leads)
            .header("Authorization", &auth)
            .json(&json!([{"name": "a"}, {"name": "b"}]))
    };
    let (_, v) = send(create()).await;
    let last = v["_embedded"]["leads"][1]["id"].as_u64().unwrap();
    let id = demo_id(&c, p.write()).await;
    let objects = format!("{}/api/v1/sandboxes/{id}/objects", p.write());
    let r = c.delete(&objects).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status(), 204);
    let (_, v) = send(c.get(&objects).bearer_auth(TOKEN)).await;
    assert_eq!(v, json!({}), "reset: {v}");
    let (_, v) = send(create()).await;
    let first = v["_embedded"]["leads"][0]["id"].as_u64().unwrap();
    assert!(first > last, "{first} after {last}: no id given twice");
    let (_, v) = send(c.get(format!("{objects}/counts")).bearer_auth(TOKEN)).await;
    assert_eq!(
        v["amocrm/leads"], 4,
        "the examples again, and the two new: {v}"
    );
}

#[tokio::test]
async fn a_reset_gives_no_id_twice() {
    reset_gives_no_id_twice(&Pair::memory(|c| c).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_gives_no_id_twice_on_redis() {
    let Some(redis) = RedisServer::start("a_reset_gives_no_id_twice_on_redis") else {
        return;
    };
    reset_gives_no_id_twice(&Pair::redis(&redis.url(), |c| c).await).await;
}

/// A sandbox that fixes its objects' time stamps them all alike: repeatable answers.
#[tokio::test]
async fn a_sandbox_can_fix_the_time_its_objects_are_stamped_with() {
    let p = Pair::memory(|c| c).await;
    let c = support::client();
    let id = demo_id(&c, p.write()).await;
    let settings = format!("{}/api/v1/sandboxes/{id}/settings", p.write());
    let (status, v) = send(
        c.put(&settings)
            .bearer_auth(TOKEN)
            .json(&json!({"object_time": 1_767_225_600})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["object_time"], 1_767_225_600);
    let (_, v) = send(
        c.post(format!("{}/amocrm/api/v4/leads", p.write()))
            .header("Authorization", format!("Bearer {}", p.key()))
            .json(&json!([{"name": "stamped"}])),
    )
    .await;
    let lead = v["_embedded"]["leads"][0]["id"].as_u64().unwrap();
    let (_, v) = send(
        c.get(format!("{}/amocrm/api/v4/leads/{lead}", p.read()))
            .header("Authorization", format!("Bearer {}", p.key())),
    )
    .await;
    assert_eq!(
        (v["created_at"].clone(), v["updated_at"].clone()),
        (json!(1_767_225_600), json!(1_767_225_600))
    );
    let (_, v) = send(
        c.post(format!("{}/b24/rest/1/{}/batch.json", p.write(), p.key()))
            .json(&json!({"cmd": {"a": "crm.deal.add?fields[TITLE]=t", "g": "crm.deal.get?id=$result[a]"}})),
    )
    .await;
    assert_eq!(
        v["result"]["result"]["g"]["DATE_CREATE"],
        "2026-01-01T03:00:00+03:00"
    );
    let (status, _) = send(
        c.put(&settings)
            .bearer_auth(TOKEN)
            .json(&json!({"object_time": -1})),
    )
    .await;
    assert_eq!(status, 400, "a negative time is not one");
    let (status, _) = send(
        c.put(&settings)
            .bearer_auth(TOKEN)
            .json(&json!({"object_time": 253_402_300_800_u64})),
    )
    .await;
    assert_eq!(status, 422, "past the year 9999");
}
