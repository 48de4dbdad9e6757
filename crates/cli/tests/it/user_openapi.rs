//! A new API from its OpenAPI document, with no rebuild: a document the repository does not
//! ship (written here: a dozen operations with path and query parameters, bodies, a file
//! answer), a starting definition from `apistend catalog import-openapi --id --prefix`, and
//! `apistend serve --services DIR` answering every operation from the document — each answer
//! valid against its schema by the walk the built-ins are checked with
//! (`tests/compat/validate_answers.py`), requests the document forbids refused in the
//! definition's words, an operation added to the document answered at the next start, and the
//! starting limit enforced.

use std::process::Command;

use super::client_libraries::{python, repo, run_bounded, serve_with};

/// The shop's document: twelve operations under the server path `/v1`.
fn document(extra: &str) -> String {
    format!(
        r##"openapi: 3.0.3
info:
  title: Shop API
  version: "1.0"
servers:
  - url: https://api.shop.example/v1
components:
  securitySchemes:
    bearer:
      type: http
      scheme: bearer
  schemas:
    Item:
      type: object
      required: [id, name, price]
      properties:
        id: {{type: integer, format: int64, minimum: 1}}
        name: {{type: string, minLength: 1, maxLength: 80}}
        price: {{type: number, minimum: 0}}
        created: {{type: string, format: date-time}}
        tags: {{type: array, items: {{type: string}}, maxItems: 10}}
    NewItem:
      type: object
      required: [name, price]
      additionalProperties: false
      properties:
        name: {{type: string, minLength: 1, maxLength: 80}}
        price: {{type: number, minimum: 0}}
        tags: {{type: array, items: {{type: string}}, maxItems: 10}}
    Order:
      type: object
      required: [id, status, items]
      properties:
        id: {{type: string, format: uuid}}
        status: {{type: string, enum: [new, paid, shipped]}}
        items: {{type: array, items: {{type: integer}}}}
        delivery: {{type: string, format: time}}
security:
  - bearer: []
paths:
  /items:
    get:
      summary: List items
      parameters:
        - {{name: limit, in: query, required: true, schema: {{type: integer, minimum: 1, maximum: 100}}}}
        - {{name: page, in: query, schema: {{type: integer, minimum: 1}}}}
      responses:
        "200":
          description: A page of items
          content:
            application/json:
              schema: {{type: array, items: {{$ref: "#/components/schemas/Item"}}}}
              example: [{{id: 1, name: Lamp, price: 12.5}}]
    post:
      summary: Create an item
      requestBody:
        required: true
        content:
          application/json:
            schema: {{$ref: "#/components/schemas/NewItem"}}
            example: {{name: Lamp, price: 12.5}}
      responses:
        "201":
          description: Created
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Item"}}
  /items/{{itemId}}:
    parameters:
      - {{name: itemId, in: path, required: true, schema: {{type: integer, minimum: 1}}, example: 7}}
    get:
      summary: One item
      responses:
        "200":
          description: The item
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Item"}}
    put:
      summary: Replace an item
      requestBody:
        required: true
        content:
          application/json:
            schema: {{$ref: "#/components/schemas/NewItem"}}
      responses:
        "200":
          description: Replaced
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Item"}}
    delete:
      summary: Remove an item
      responses:
        "204": {{description: Removed}}
  /items/{{itemId}}/photo:
    get:
      summary: The item's photo
      parameters:
        - {{name: itemId, in: path, required: true, schema: {{type: integer}}, example: 7}}
      responses:
        "200":
          description: A PNG
          content:
            image/png:
              schema: {{type: string, format: binary}}
  /orders:
    get:
      summary: List orders
      parameters:
        - {{name: status, in: query, required: true, schema: {{type: string, enum: [new, paid, shipped]}}}}
      responses:
        "200":
          description: Orders
          content:
            application/json:
              schema:
                type: object
                required: [orders, total]
                properties:
                  orders: {{type: array, items: {{$ref: "#/components/schemas/Order"}}}}
                  total: {{type: integer}}
    post:
      summary: Place an order
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [items]
              properties:
                items: {{type: array, minItems: 1, items: {{type: integer, minimum: 1}}}}
      responses:
        "201":
          description: Placed
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Order"}}
  /orders/{{orderId}}:
    parameters:
      - {{name: orderId, in: path, required: true, schema: {{type: string, format: uuid}}, example: 3fa85f64-5717-4562-b3fc-2c963f66afa6}}
    get:
      summary: One order
      responses:
        "200":
          description: The order
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Order"}}
    patch:
      summary: Change an order's status
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [status]
              properties:
                status: {{type: string, enum: [new, paid, shipped]}}
      responses:
        "200":
          description: Changed
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Order"}}
  /reports/{{reportId}}/file:
    get:
      summary: A report as PDF
      parameters:
        - {{name: reportId, in: path, required: true, schema: {{type: integer}}, example: 3}}
      responses:
        "200":
          description: The report
          content:
            application/pdf:
              schema: {{type: string, format: binary}}
  /health:
    get:
      summary: Liveness
      security: []
      responses:
        "200":
          description: Up
          content:
            application/json:
              schema:
                type: object
                required: [status]
                properties:
                  status: {{type: string, enum: [ok]}}
{extra}"##
    )
}

/// An operation added to the document later.
const ADDED: &str = r"  /coupons:
    get:
      summary: Coupons
      responses:
        '200':
          description: Coupons
          content:
            application/json:
              schema: {type: array, items: {type: string}}
              example: [SPRING]
";

// The processes it starts and waits for block this test's own thread only.
#[tokio::test]
async fn a_users_openapi_document_is_served_from_a_directory_with_no_rebuild() {
    let Some(python) = python() else { return };
    let dir = apistend_testkit::temp_dir("user-openapi");
    let services = dir.join("services");
    std::fs::create_dir_all(&services).unwrap();
    let spec = services.join("shop.yaml");
    std::fs::write(&spec, document("")).unwrap();
    let definition = services.join("shop.toml");
    let import = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_apistend"))
            .args(["catalog", "import-openapi"])
            .arg(&spec)
            .args(["--id", "shop", "--prefix", "/shop", "--definition"])
            .arg(&definition)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = import(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&definition).unwrap();
    assert!(text.contains("openapi = \"shop.yaml\""), "{text}");
    assert!(text.contains("credentials = [\"bearer_token\"]"), "{text}");
    assert!(text.contains("[[groups]]\nid = \"default\""), "{text}");
    assert_eq!(text.matches("[[operations]]").count(), 12, "{text}");
    // Never over a file.
    let again = import(&[]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));

    // Every operation answered from the document, each answer valid against its schema, each
    // request the document forbids refused (the walk breaks one of each, where it can).
    // Its limit wide open: the walk is not a rate test.
    let data = dir.join("data");
    let open = dir.join("open.toml");
    std::fs::write(
        &open,
        "[shop.groups.default]\nburst = 100000\ninterval_ms = 1\n",
    )
    .unwrap();
    let (mut child, base) = serve_with(
        &data,
        &[
            "--services".as_ref(),
            services.as_os_str(),
            "--overrides".as_ref(),
            open.as_os_str(),
        ],
    );
    let (status, out, err) = run_bounded(
        Command::new(&python)
            .arg(repo().join("tests/compat/validate_answers.py"))
            .args([&base, "compat-key", "--document"])
            .arg(&spec)
            .arg("/shop"),
        120,
    );
    assert!(status.success(), "{status}\n{out}\n{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    eprintln!("{report}");
    assert_eq!(report["operations"], 12, "{report}");
    assert_eq!(report["valid"], 12, "{report}");
    assert_eq!(report["refused_valid"], 0, "{report}");
    assert_eq!(report["format_violations"], 0, "{report}");
    assert!(report["refused_broken"].as_u64().unwrap() >= 6, "{report}");

    // In the starting definition's words: a wrong body is its 400.
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{base}/shop/v1/items"))
        .bearer_auth("compat-key")
        .header("Content-Type", "application/json")
        .header("X-Mock-Delay", "0")
        .body(r#"{"name": "Lamp", "price": "cheap"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["status"], 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("price"),
        "{body}"
    );
    let _ = child.kill();
    let _ = child.wait();

    // The document grows: the next start answers the new operation, with no new import.
    std::fs::write(&spec, document(ADDED)).unwrap();
    let (mut child, base) = serve_with(&data, &["--services".as_ref(), services.as_os_str()]);
    let r = http
        .get(format!("{base}/shop/v1/coupons"))
        .bearer_auth("compat-key")
        .header("X-Mock-Delay", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), r#"["SPRING"]"#);
    // The starting limit, ten a second: the eleventh request at once is its 429, with
    // Retry-After.
    let mut refused = None;
    for _ in 0..12 {
        let r = http
            .get(format!("{base}/shop/v1/items/7"))
            .bearer_auth("compat-key")
            .header("X-Mock-Delay", "0")
            .send()
            .await
            .unwrap();
        if r.status() == 429 {
            refused = Some(r);
            break;
        }
    }
    let refused = refused.expect("the eleventh request at once is refused");
    assert!(refused.headers().contains_key("retry-after"));
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
