//! Service definitions: the built-in files parse, validate and round-trip; a user's file adds a
//! service or replaces a built-in; every bad file is refused with its file, line and field.

use apistend_catalog::definition::{BUILTIN, Definitions, builtin_text, to_toml};
use apistend_catalog::{BucketScope, Catalog, CatalogError, Method, ServiceId};

fn ozon_as(id: &str, prefix: &str) -> String {
    builtin_text("ozon.toml")
        .unwrap()
        .replacen("id = \"ozon\"", &format!("id = \"{id}\""), 1)
        .replacen("prefix = \"/ozon\"", &format!("prefix = \"{prefix}\""), 1)
}

fn load(name: &str, text: &str) -> Result<Catalog, CatalogError> {
    Catalog::load(
        &Definitions::builtin().with_file(name.into(), text.into())?,
        None,
    )
}

/// The error's (file, line, field, reason), or a panic naming what came instead.
fn refused(text: &str) -> (usize, String, String) {
    match load("bad.toml", text) {
        Err(CatalogError::Definition {
            file,
            line,
            field,
            reason,
        }) => {
            assert_eq!(file, "bad.toml");
            (line, field, reason)
        }
        other => panic!("expected a definition error, got {other:?}"),
    }
}

#[test]
fn every_builtin_definition_parses_validates_and_round_trips() {
    let defs = Definitions::builtin();
    let files = defs.parse().unwrap();
    assert_eq!(files.len(), 7);
    let mut again = Definitions::default();
    for (file, (name, _)) in files.iter().zip(BUILTIN) {
        let text = to_toml(file).unwrap();
        let back = Definitions::default()
            .with_file(name.into(), text.clone())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(&back[0], file, "{name} round-trips");
        again = again.with_file(name.into(), text).unwrap();
    }
    let original = Catalog::builtin().unwrap();
    let reloaded = Catalog::load(&again, None).unwrap();
    assert_eq!(original.services(), reloaded.services());
    let ids: Vec<&str> = original.services().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "wb", "b24", "apify", "ozon", "amocrm", "moysklad", "ymarket"
        ]
    );
}

#[test]
fn a_users_copy_of_a_builtin_takes_its_hostnames_over() {
    let c = load("shop.toml", &ozon_as("shop", "/shop")).unwrap();
    assert_eq!(c.by_hostname("api-seller.ozon.ru").unwrap().prefix, "/shop");
    assert_eq!(c.by_hostname("my.bitrix24.ru").unwrap().prefix, "/b24");
}

#[test]
fn a_file_adds_a_service_and_one_with_a_builtin_id_replaces_it() {
    let c = load("ozon2.toml", &ozon_as("ozon2", "/oz2")).unwrap();
    assert_eq!(c.services().len(), 8);
    let id = c.service_id("ozon2").unwrap();
    let (svc, rest) = c.route("/oz2/v1/warehouse/list").unwrap();
    assert_eq!((svc.id, rest), (id, "/v1/warehouse/list"));
    let r = c.resolve(id, Method::Post, rest, None).unwrap();
    let groups: Vec<&str> = r
        .groups
        .iter()
        .map(|&g| svc.groups[g].id.as_str())
        .collect();
    assert_eq!(groups, ["warehouse-list", "client"]);
    assert_eq!(svc.groups[r.groups[0]].quota.burst(), 1);

    let slower = ozon_as("ozon", "/ozon").replace("latency_ms = 25", "latency_ms = 250");
    let c = load("mine/ozon.toml", &slower).unwrap();
    assert_eq!(c.services().len(), 7, "replaced, not added");
    assert_eq!(c.service(ServiceId::OZON).unwrap().latency.base_ms, 250);
    assert_eq!(
        c.services()[3].id,
        ServiceId::OZON,
        "in the built-in's place"
    );
}

#[test]
fn a_user_file_overrides_per_plan_and_scope() {
    let text = ozon_as("shop", "/shop").replace(
        "quota = { count = 50, period_ms = 1000 }",
        "scope = \"host\"\nquota = { burst = 5, interval_ms = 100, algorithm = \"fixed_window\" }",
    );
    let c = load("shop.toml", &text).unwrap();
    let g = c
        .service(c.service_id("shop").unwrap())
        .unwrap()
        .group("client")
        .unwrap();
    assert_eq!(g.scope, BucketScope::Host);
    assert_eq!((g.quota.burst(), g.quota.interval().as_millis()), (5, 100));
    assert_eq!(
        g.quota.algorithm(),
        apistend_limiter::Algorithm::FixedWindow
    );
}

#[test]
fn bad_files_name_the_file_the_line_and_the_field() {
    let base = ozon_as("shop", "/shop");

    // An unknown key: the parser's message lists what is allowed.
    let text = base.replace("latency_ms = 25", "latency_ms = 25\nlatncy = 3");
    let want = text.lines().position(|l| l.starts_with("latncy")).unwrap() + 1;
    let (line, _, reason) = refused(&text);
    assert_eq!(line, want, "{reason}");
    assert!(
        reason.contains("unknown field `latncy`") && reason.contains("latency_ms"),
        "{reason}"
    );

    // A hostname that is none (a port, upper case, a bare top-level domain).
    for bad in ["api.shop.ru:443", "API.shop.ru", "*.ru"] {
        let text = base.replacen(
            "hostnames = [\"api-seller.ozon.ru\"]",
            &format!("hostnames = [\"{bad}\"]"),
            1,
        );
        let want = text
            .lines()
            .position(|l| l.starts_with("hostnames"))
            .unwrap()
            + 1;
        let (line, field, reason) = refused(&text);
        assert_eq!((line, field.as_str()), (want, "hostnames[0]"), "{reason}");
        assert!(reason.contains(bad), "{reason}");
    }

    // A group that does not exist.
    let text = base.replacen("\ngroups = [\"client\"]", "\ngroups = [\"clinet\"]", 1);
    let want = text
        .lines()
        .position(|l| l.starts_with("groups = [\"clinet"))
        .unwrap()
        + 1;
    let (line, field, reason) = refused(&text);
    assert_eq!((line, field.as_str()), (want, "operations[0].groups[0]"));
    assert!(
        reason.contains("no group \"clinet\"") && reason.contains("client, stocks-update"),
        "{reason}"
    );

    // A quota in no known spelling.
    let text = base.replacen(
        "count = 50, period_ms = 1000",
        "burst = 50, period_ms = 1000",
        1,
    );
    let (_, field, reason) = refused(&text);
    assert_eq!(field, "groups[0].quota");
    assert!(reason.contains("burst + interval_ms"), "{reason}");

    // Zero is not a quota.
    let (_, field, reason) = refused(&base.replacen("count = 50,", "count = 0,", 1));
    assert_eq!(field, "groups[0].quota", "{reason}");

    // Values outside their sets.
    let (_, field, _) = refused(&base.replacen("status = 429", "status = 200", 1));
    assert_eq!(field, "rejection.status");
    let (_, field, reason) = refused(&base.replacen("method = \"POST\"", "method = \"FETCH\"", 1));
    assert_eq!(field, "operations[0].method");
    assert!(reason.contains("GET, POST"), "{reason}");
    let (_, _, reason) = refused(&base.replace("errors = \"ozon\"", "errors = \"grpc\""));
    assert!(
        reason.contains("unknown variant `grpc`") && reason.contains("`ozon`"),
        "{reason}"
    );
    let text = base.replace("id = \"shop\"", "id = \"Shop!\"");
    let want = text.lines().position(|l| l.starts_with("id = ")).unwrap() + 1;
    let (line, field, _) = refused(&text);
    assert_eq!((line, field.as_str()), (want, "id"));
    let (_, field, _) = refused(&base.replace("prefix = \"/shop\"", "prefix = \"shop/x\""));
    assert_eq!(field, "prefix");

    // Two services on one prefix.
    let (_, field, reason) = refused(&base.replace("prefix = \"/shop\"", "prefix = \"/wb\""));
    assert_eq!(field, "prefix");
    assert!(reason.contains("wb (/wb)"), "{reason}");

    // A concurrency limit of some groups replaces one of every call, and only that.
    let limits =
        "\n[[in_flight]]\nid = \"all\"\nmax = 4\n\n[[in_flight]]\nid = \"some\"\nmax = 6\n";
    let with = |extra: &str| format!("{base}{limits}{extra}");
    let text = with("groups = [\"client\"]\ninstead_of = \"nall\"\n");
    let want = text
        .lines()
        .position(|l| l.starts_with("instead_of"))
        .unwrap()
        + 1;
    let (line, field, reason) = refused(&text);
    assert_eq!(
        (line, field.as_str()),
        (want, "in_flight[1].instead_of"),
        "{reason}"
    );
    assert!(reason.contains("all, some"), "{reason}");
    let (_, field, _) = refused(&with("instead_of = \"all\"\n"));
    assert_eq!(field, "in_flight[1].instead_of");
    let (_, field, _) = refused(&with("groups = [\"clinet\"]\n"));
    assert_eq!(field, "in_flight[1].groups[0]");
    let text = with("groups = [\"stocks-update\"]\ninstead_of = \"all\"\n");
    let c = load("shop.toml", &text).unwrap();
    let shop = c.service(c.service_id("shop").unwrap()).unwrap();
    let held = |op: Option<&apistend_catalog::Operation>| -> Vec<String> {
        shop.in_flight_for(op).map(|l| l.id.clone()).collect()
    };
    let stocks = shop.group_index("stocks-update").unwrap();
    let stocks_op = shop.operations.iter().find(|o| o.groups.contains(&stocks));
    assert_eq!(held(stocks_op), ["some"]);
    let other = shop.operations.iter().find(|o| !o.groups.contains(&stocks));
    assert_eq!(held(other), ["all"]);
    assert_eq!(
        held(None),
        ["all"],
        "a call of no operation is held by the limit of every call"
    );

    // Not TOML at all.
    let (line, _, _) = refused("id = \"x\"\nprefix = \n");
    assert_eq!(line, 2);
}

#[test]
fn a_directory_adds_its_toml_files_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.toml"), ozon_as("shop-b", "/b")).unwrap();
    std::fs::write(dir.path().join("a.toml"), ozon_as("shop-a", "/a")).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a definition").unwrap();
    let c = Catalog::load(&Definitions::builtin().with_dir(dir.path()).unwrap(), None).unwrap();
    let ids: Vec<&str> = c.services().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "wb", "b24", "apify", "ozon", "amocrm", "moysklad", "ymarket", "shop-a", "shop-b"
        ]
    );
    let missing = Definitions::builtin().with_dir(&dir.path().join("nope"));
    assert!(matches!(missing, Err(CatalogError::Definition { .. })));
}

/// The committed output of `importer` for `name` is what it writes from `../shared` now.
fn regenerates(name: &str, source: &str, importer: fn(&str, &str) -> Result<String, CatalogError>) {
    let path = format!(
        "{}/../../../shared/specs/{source}",
        env!("CARGO_MANIFEST_DIR")
    );
    let Ok(input) = std::fs::read_to_string(&path) else {
        assert!(std::env::var_os("CI").is_none(), "{path} is missing in CI");
        eprintln!("SKIP: {path} not found (../shared is not beside the repository)");
        return;
    };
    let committed = builtin_text(name).unwrap();
    let generated = importer(committed, &input).unwrap();
    assert!(
        generated == committed,
        "services/{name} is stale: run its apistend catalog import-… command (docs/services.md)"
    );
}

#[test]
fn the_committed_amocrm_definition_is_what_its_importer_generates() {
    regenerates(
        "amocrm.toml",
        "amocrm/endpoints.json",
        apistend_catalog::import::amocrm::import,
    );
}

/// Every operation of Apify's official OpenAPI, in its documented limit class, under its current
/// `/v2/actors/…` path and the deprecated `/v2/acts/…` one.
#[test]
fn the_committed_apify_definition_is_what_its_importer_generates() {
    regenerates(
        "apify.toml",
        "apify/openapi.yaml",
        apistend_catalog::import::apify::import,
    );
    let c = Catalog::builtin().unwrap();
    let apify = c.service(ServiceId::APIFY).unwrap();
    let distinct: std::collections::BTreeSet<(Method, String)> = apify
        .operations
        .iter()
        .filter(|o| !o.path.starts_with("/v2/acts"))
        .map(|o| (o.method, o.path.clone()))
        .collect();
    assert_eq!(distinct.len(), 231);
    for (method, path, group) in [
        (Method::Get, "/v2/key-value-stores/s1/keys", "resource"),
        (
            Method::Get,
            "/v2/key-value-stores/s1/records/k",
            "kv-records",
        ),
        (Method::Post, "/v2/acts/a1/runs", "runs-datasets"),
        (Method::Post, "/v2/actors/a1/runs", "runs-datasets"),
        (
            Method::Post,
            "/v2/request-queues/q1/requests",
            "rq-requests",
        ),
        (
            Method::Post,
            "/v2/request-queues/q1/requests/batch",
            "rq-batch",
        ),
        (Method::Post, "/v2/request-queues/q1/head/lock", "rq-batch"),
    ] {
        let hit = c.resolve(ServiceId::APIFY, method, path, None).unwrap();
        let op = hit.operation.unwrap_or_else(|| panic!("{method} {path}"));
        assert_eq!(
            apify.groups[hit.groups[0]].id, group,
            "{method} {path} ({})",
            op.path
        );
    }
}

/// Every operation of MoySklad's official OpenAPI, under its server's `/api/remap/1.2`.
#[test]
fn the_committed_moysklad_definition_is_what_its_importer_generates() {
    let dir = format!(
        "{}/../../../shared/specs/moysklad",
        env!("CARGO_MANIFEST_DIR")
    );
    let (Ok(spec), Ok(extra)) = (
        std::fs::read_to_string(format!("{dir}/openapi.yaml")),
        std::fs::read_to_string(format!("{dir}/doc-only-endpoints.json")),
    ) else {
        assert!(std::env::var_os("CI").is_none(), "{dir} is missing in CI");
        eprintln!("SKIP: {dir} not found (../shared is not beside the repository)");
        return;
    };
    let committed = builtin_text("moysklad.toml").unwrap();
    let generated =
        apistend_catalog::import::openapi::import_with(committed, &spec, Some(&extra)).unwrap();
    assert!(
        generated == committed,
        "services/moysklad.toml is stale: run its apistend catalog import-openapi command (docs/services.md)"
    );
    let c = Catalog::builtin().unwrap();
    let ms = c.service(c.service_id("moysklad").unwrap()).unwrap();
    // The 1 141 operations of the OpenAPI and the 191 the documentation shows besides.
    assert!(ms.operations.len() >= 1141 + 180, "{}", ms.operations.len());
}

/// Every classic method of Bitrix24's documentation is an operation of the portal's bucket.
#[test]
fn the_committed_b24_definition_is_what_its_importer_generates() {
    regenerates(
        "b24.toml",
        "b24/methods.json",
        apistend_catalog::import::b24::import,
    );
    let c = Catalog::builtin().unwrap();
    let b24 = c.service(ServiceId::B24).unwrap();
    assert!(b24.operations.len() >= 1565, "{}", b24.operations.len());
}

/// Every operation of Ozon's official Seller API OpenAPI: those with a limit of their own in
/// the head, the others in the service-wide bucket.
#[test]
fn the_committed_ozon_definition_is_what_its_importer_generates() {
    regenerates(
        "ozon.toml",
        "ozon/seller-openapi.json",
        apistend_catalog::import::openapi::import,
    );
    let c = Catalog::builtin().unwrap();
    let ozon = c.service(ServiceId::OZON).unwrap();
    assert_eq!(ozon.operations.len(), 460);
    let hit = c
        .resolve(ServiceId::OZON, Method::Post, "/v2/warehouse/list", None)
        .unwrap();
    assert!(hit.operation.is_some());
    assert_eq!(ozon.groups[hit.groups[0]].id, "client");
}

/// Quotas against the official source: every operation of the spec's x-resource-limit-config
/// has its group with the `none` tier's numbers, split per campaign or business.
#[test]
fn the_committed_ymarket_definition_is_what_its_importer_generates() {
    regenerates(
        "ymarket.toml",
        "yandex-market/limits.json",
        apistend_catalog::import::ymarket::import,
    );
    let c = Catalog::builtin().unwrap();
    let svc = c.service(c.service_id("ymarket").unwrap()).unwrap();
    let g = svc.group("updatePrices").unwrap();
    assert_eq!(
        (g.quota.burst(), g.documented),
        (10_000, Some((60_000, 10_000)))
    );
    assert_eq!(g.per_resource, ["campaignId"]);
    let g = svc.group("getCampaigns").unwrap();
    assert_eq!(
        (g.quota.burst(), g.documented),
        (1000, Some((3_600_000, 1000)))
    );
    assert!(g.per_resource.is_empty());
    assert_eq!(svc.rejection.status, 420);
}

/// Every operation whose `x-resource-limit-config` counts a collection counts it: the request's
/// (`req.offers`: its weight) or the answer's (`resp.result.offers`: its cost), head-written or
/// generated; every `parallel-limit-value` is the only concurrency limit of its operation.
#[test]
fn ymarket_weights_costs_and_parallel_limits_are_the_specs() {
    let path = format!(
        "{}/../../../shared/specs/yandex-market/limits.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let Ok(text) = std::fs::read_to_string(&path) else {
        assert!(std::env::var_os("CI").is_none(), "{path} is missing in CI");
        eprintln!("SKIP: {path} not found (../shared is not beside the repository)");
        return;
    };
    let spec: serde_json::Value = serde_json::from_str(&text).unwrap();
    let c = Catalog::builtin().unwrap();
    let svc = c.service(c.service_id("ymarket").unwrap()).unwrap();
    let (mut counted, mut parallel) = (0, 0);
    for op in spec["operations"].as_array().unwrap() {
        let (method, path) = (op["method"].as_str().unwrap(), op["path"].as_str().unwrap());
        let concrete = path
            .replace("{campaignId}", "7")
            .replace("{businessId}", "8");
        let concrete = concrete
            .split('/')
            .map(|s| if s.starts_with('{') { "1" } else { s });
        let concrete = concrete.collect::<Vec<_>>().join("/");
        let m = Method::parse(&method.to_ascii_uppercase()).unwrap();
        let hit = c.resolve(svc.id, m, &concrete, None).unwrap();
        let o = hit.operation.unwrap_or_else(|| panic!("{method} {path}"));
        let config = &op["x-resource-limit-config"];
        let counts = config["path"].as_str().unwrap();
        let what = (o.weight_from.as_deref(), o.cost_from.as_deref());
        match (counts.strip_prefix("req."), counts.strip_prefix("resp.")) {
            (Some(field), _) => assert_eq!(what, (Some(field), None), "{method} {path}"),
            (_, Some(field)) => assert_eq!(what, (None, Some(field)), "{method} {path}"),
            _ => assert_eq!(what, (None, None), "{method} {path}"),
        }
        counted += usize::from(counts != "resp");
        let maxes: Vec<u32> = svc.in_flight_for(Some(o)).map(|l| l.slots.max()).collect();
        let want = config["parallel-limit-value"]
            .as_u64()
            .map_or(4, |n| n as u32);
        assert_eq!(maxes, [want], "{method} {path}");
        parallel += usize::from(config.get("parallel-limit-value").is_some());
    }
    assert_eq!((counted, parallel), (24, 7));
}

#[test]
fn the_worked_example_of_docs_services_md_loads() {
    let doc = include_str!("../../../../docs/services.md");
    let section = doc
        .split("## Adding a service")
        .nth(1)
        .expect("the worked example");
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("its TOML");
    let c = load("shop.toml", block).unwrap();
    let id = c.service_id("shop").unwrap();
    let svc = c.service(id).unwrap();
    assert_eq!(svc.in_flight.len(), 1);
    assert_eq!(svc.operations.len(), 2);
    let r = c.resolve(id, Method::Post, "/v1/orders", None).unwrap();
    assert_eq!(r.operation.unwrap().fixture.as_ref().unwrap().status, 201);
}

/// Path templates are checked (whole-segment parameters, no query, no dot segments), an
/// operation defined twice is refused with both places, and so are a prefix of the sandbox's
/// own routes and two user files of one service; a user's file replacing a built-in stays.
#[test]
fn bad_templates_duplicates_reserved_prefixes_and_two_files_of_one_id_are_refused() {
    let base = ozon_as("mine", "/mine");
    let with_op = |method: &str, path: &str| {
        format!(
            "{base}\n[[operations]]\nmethod = \"{method}\"\npaths = [\"{path}\"]\ngroups = [\"client\"]\n"
        )
    };
    for (path, says) in [
        ("/x/{a", "unbalanced"),
        ("/x/{}", "without a name"),
        ("/x/{a}{b}", "one whole parameter"),
        ("/x?y=1", "query"),
        ("/../v1/orders", "dot segment"),
        ("/./v1", "dot segment"),
    ] {
        let (line, field, reason) = refused(&with_op("GET", path));
        assert!(field.ends_with(".paths"), "{path}: {field}");
        assert!(reason.contains(says), "{path}: {reason}");
        assert!(line > 1, "{path}: line {line}");
    }
    // Ozon's file has `POST /v3/product/list`; a second one, whatever its parameters are called.
    let (line, field, reason) = refused(&with_op("POST", "/v3/product/list"));
    assert!(
        reason.contains("defined twice") && reason.contains("operations[0]"),
        "{reason}"
    );
    assert!(field.ends_with(".paths") && line > 1, "{field} {line}");
    let twice = format!(
        "{}[[operations]]\nmethod = \"GET\"\npaths = [\"/v9/{{b}}/x\"]\ngroups = [\"client\"]\n",
        with_op("GET", "/v9/{a}/x")
    );
    let (_, _, reason) = refused(&twice);
    assert!(reason.contains("defined twice"), "{reason}");
    // The sandbox's own routes, for every command that loads definitions.
    let (_, field, reason) = refused(&ozon_as("mine", "/api"));
    assert_eq!(field, "prefix");
    assert!(reason.contains("sandbox's own routes"), "{reason}");

    // Two user files of one id: refused, naming both; one replacing a built-in: kept.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.toml"), ozon_as("ozon", "/ozon")).unwrap();
    let replaced = Definitions::builtin().with_dir(dir.path()).unwrap();
    assert!(Catalog::load(&replaced, None).is_ok());
    std::fs::write(dir.path().join("b.toml"), ozon_as("ozon", "/ozon")).unwrap();
    match Definitions::builtin().with_dir(dir.path()) {
        Err(CatalogError::Definition {
            file,
            field,
            reason,
            ..
        }) => {
            assert!(file.ends_with("b.toml"), "{file}");
            assert_eq!(field, "id");
            assert!(reason.contains("a.toml"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A built-in file is named by its service's id (what `Definitions` knows without parsing it).
#[test]
fn builtin_files_are_named_by_their_ids() {
    for (file, parsed) in BUILTIN.iter().zip(Definitions::builtin().parse().unwrap()) {
        assert_eq!(file.0, format!("{}.toml", parsed.id.get_ref()));
    }
}

/// Spellings that would be accepted and then sent or matched as written are refused with their
/// line and field: a method in lower case, a misspelt placeholder of an error template.
#[test]
fn a_lower_case_method_and_an_unknown_placeholder_are_refused() {
    let base = ozon_as("mine", "/mine");
    let op = format!(
        "{base}\n[[operations]]\nmethod = \"get\"\npaths = [\"/v9/x\"]\ngroups = [\"client\"]\n"
    );
    let (line, field, reason) = refused(&op);
    assert!(field.ends_with(".method"), "{field}");
    assert!(
        reason.contains("\"get\"") && reason.contains("capitals"),
        "{reason}"
    );
    let want = op.lines().position(|l| l == "method = \"get\"").unwrap() + 1;
    assert_eq!(line, want, "{reason}");

    let moysklad = moysklad_as_ms2().replacen("{message}", "{mesage}", 1);
    let (line, field, reason) = refused(&moysklad);
    assert!(
        field.starts_with("error_templates.") && field.ends_with(".body"),
        "{field}"
    );
    assert!(
        reason.contains("{mesage} is no placeholder") && reason.contains("{message}"),
        "{reason}"
    );
    assert!(line > 1, "{line}");
}

/// MoySklad's built-in definition as a second service `ms2` (its own id, prefix and hostname).
fn moysklad_as_ms2() -> String {
    builtin_text("moysklad.toml")
        .unwrap()
        .replacen("id = \"moysklad\"", "id = \"ms2\"", 1)
        .replacen("prefix = \"/moysklad\"", "prefix = \"/ms2\"", 1)
        .replacen(
            "hostnames = [\"api.moysklad.ru\"]",
            "hostnames = [\"ms2.example.ru\"]",
            1,
        )
}

/// A required header is a header name with one token, refused with a client error; anything
/// else is refused at its field, with its line.
#[test]
fn a_required_header_is_a_name_a_token_and_a_client_error() {
    let ms2 = |requires: &str| {
        moysklad_as_ms2().replacen(
            r#"requires = [{ header = "Accept-Encoding", token = "gzip", status = 415 }]"#,
            requires,
            1,
        )
    };
    let good = ms2(r#"requires = [{ header = "X-Tenant", token = "a", status = 403 }]"#);
    let catalog = load("ms2.toml", &good).unwrap();
    let svc = catalog.service(ServiceId::new("ms2")).unwrap();
    assert_eq!(svc.requires[0].header, "x-tenant");
    for (requires, field) in [
        (
            r#"requires = [{ header = "Accept Encoding", token = "gzip", status = 415 }]"#,
            "requires[0].header",
        ),
        (
            r#"requires = [{ header = "Accept-Encoding", token = "gzip, br", status = 415 }]"#,
            "requires[0].token",
        ),
        (
            r#"requires = [{ header = "Accept-Encoding", token = "gzip", status = 200 }]"#,
            "requires[0].status",
        ),
    ] {
        let text = ms2(requires);
        let (line, got, _) = refused(&text);
        assert_eq!(got, field);
        let want = text.lines().position(|l| l == requires).unwrap() + 1;
        assert_eq!(line, want, "{field}");
    }
    let unknown = ms2(r#"requires = [{ header = "A", token = "b", status = 415, code = 1 }]"#);
    let (_, field, reason) = refused(&unknown);
    assert!(reason.contains("code"), "{field}: {reason}");
}

/// A definition naming an OpenAPI document: the document's operations (under its server's
/// path) are the service's, in its first fallback group, but those the file writes itself; a
/// document that is missing or not one is refused at the `openapi` field.
#[test]
fn a_definition_takes_the_operations_of_the_openapi_document_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "openapi: 3.0.3\ninfo: {title: Tiny, version: '1'}\n\
        servers: [{url: 'https://tiny.example/api'}]\n\
        components: {securitySchemes: {key: {type: apiKey, in: header, name: Api-Key}}}\n\
        paths:\n  /things:\n    get: {summary: Things, responses: {'200': {description: ok}}}\n    \
        post: {responses: {'201': {description: made}}}\n  /things/{id}:\n    \
        delete: {responses: {'204': {description: gone}}}\n";
    std::fs::write(dir.path().join("tiny.yaml"), spec).unwrap();
    let text =
        apistend_catalog::import::openapi::starting(spec, "tiny", "/tiny", "tiny.yaml").unwrap();
    assert!(text.contains("credentials = [\"api_key\"]"), "{text}");
    // The file writes one of them itself, with a group of its own.
    let (head, _) = text
        .split_once(apistend_catalog::import::openapi::MARKER)
        .unwrap();
    let own = format!(
        "{head}[[groups]]\nid = \"deletes\"\nquota = {{ burst = 1, interval_ms = 1000 }}\n\n\
         [[operations]]\nmethod = \"DELETE\"\npaths = [\"/api/things/{{id}}\"]\ngroups = [\"deletes\"]\n"
    );
    let at = dir.path().join("tiny.toml").display().to_string();
    let catalog = load(&at, &own).unwrap();
    let tiny = catalog
        .service(catalog.service_id("tiny").unwrap())
        .unwrap();
    assert_eq!(
        tiny.openapi.as_deref(),
        Some(dir.path().join("tiny.yaml").as_path())
    );
    let mut ops: Vec<(Method, &str, Vec<&str>)> = tiny
        .operations
        .iter()
        .map(|o| {
            let groups = o
                .groups
                .iter()
                .map(|g| tiny.groups[*g].id.as_str())
                .collect();
            (o.method, o.path.as_str(), groups)
        })
        .collect();
    ops.sort();
    assert_eq!(
        ops,
        [
            (Method::Get, "/api/things", vec!["default"]),
            (Method::Post, "/api/things", vec!["default"]),
            (Method::Delete, "/api/things/{id}", vec!["deletes"]),
        ]
    );
    // Missing, or not a document: refused at the field, with the path it looked at.
    let missing = own.replace("openapi = \"tiny.yaml\"", "openapi = \"gone.yaml\"");
    let Err(CatalogError::Definition { field, reason, .. }) = load(&at, &missing) else {
        panic!("a missing document is refused");
    };
    assert_eq!(field, "openapi");
    assert!(reason.contains("gone.yaml"), "{reason}");
    std::fs::write(dir.path().join("tiny.yaml"), "just: words\n").unwrap();
    let Err(CatalogError::Definition { field, reason, .. }) = load(&at, &own) else {
        panic!("a file that is no document is refused");
    };
    assert_eq!(field, "openapi");
    assert!(reason.contains("no paths"), "{reason}");
}

/// An `abort` stops a job: a collection whose job says no `aborted` status has none, and an
/// abort names where its id is; a body size of 0 is refused. Each names its field.
#[test]
fn aborts_and_body_sizes_are_checked() {
    let apify = builtin_text("apify.toml").unwrap();
    let without_status = apify.replace(
        "aborted = { status = \"ABORTED\", writes = { \"/finishedAt\" = \"{finished}\" } }\n",
        "",
    );
    assert_ne!(without_status, apify);
    let e = load("apify.toml", &without_status).unwrap_err().to_string();
    assert!(e.contains("actions[") && e.contains("aborted"), "{e}");
    let without_id = apify.replace(
        "path = \"/v2/actor-runs/{runId}/abort\", id = \"path:runId\",",
        "path = \"/v2/actor-runs/{runId}/abort\",",
    );
    assert_ne!(without_id, apify);
    let e = load("apify.toml", &without_id).unwrap_err().to_string();
    assert!(e.contains("an abort"), "{e}");
    let moysklad = builtin_text("moysklad.toml").unwrap();
    let zero = moysklad.replace("max_body_bytes = 20_971_520", "max_body_bytes = 0");
    let e = load("moysklad.toml", &zero).unwrap_err().to_string();
    assert!(e.contains("nonzero"), "{e}");
}

/// What selects objects beyond their ids is checked where it is written: `set` is an update's
/// by its `filter`, a `view` a list's (its default one of its values), `only` a delete's by
/// `filter_by`.
#[test]
fn selections_are_checked() {
    let ozon = builtin_text("ozon.toml").unwrap();
    let cases = [
        (
            "path = \"/v1/product/archive\", filter = [\"/product_id\"],",
            "path = \"/v1/product/archive\",",
            "`set` is an update's, of the ids its `filter` lists",
        ),
        (
            "view = { at = \"/filter/visibility\", default = \"ALL\"",
            "view = { at = \"/filter/visibility\", default = \"EVERY\"",
            "\"EVERY\" is none of its values",
        ),
        (
            "filter_by = { \"/products/*/offer_id\" = \"offer_id\" }, only",
            "filter = [\"/products\"], only",
            "`only` and `unmatched` are a delete's",
        ),
    ];
    for (from, to, why) in cases {
        let text = ozon.replace(from, to);
        assert_ne!(text, ozon, "{from}");
        let e = load("ozon.toml", &text).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
    }
}
