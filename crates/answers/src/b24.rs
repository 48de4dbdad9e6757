//! Bitrix24 REST methods: `crm.deal.*`, `crm.contact.*`, `profile`, `app.info`, `placement.bind`,
//! `batch`. Every answer carries the `time` block; the pipeline adds it.

use serde_json::{Value, json};

use crate::answer::{Refusal, Success};
use crate::batch::Ran;
use crate::call::Call;

fn deal(id: u64) -> Value {
    json!({
        "ID": id.to_string(), "TITLE": format!("Deal #{id}"), "TYPE_ID": "SALE", "STAGE_ID": "NEW",
        "CURRENCY_ID": "RUB", "OPPORTUNITY": "10000.00", "ASSIGNED_BY_ID": "1",
        "DATE_CREATE": "2026-01-15T10:00:00+03:00", "CATEGORY_ID": "0"
    })
}

/// The answer of `method`: its own where it depends on the request, else the example its
/// documentation shows (`documented`); `None` for an undocumented method (Bitrix24's 404).
pub(crate) fn answer(
    method: &str,
    call: &Call,
    batch_max: u32,
    documented: &crate::b24_methods::B24Methods,
) -> Option<Result<Success, Refusal>> {
    let id = call
        .param("id")
        .or_else(|| call.param("ID"))
        .and_then(|v| v.parse::<u64>().ok());
    let result = match method {
        "crm.deal.fields" => json!({
            "ID": {"type": "integer", "isRequired": false, "isReadOnly": true, "isImmutable": false, "isMultiple": false, "isDynamic": false, "title": "ID"},
            "TITLE": {"type": "string", "isRequired": false, "isReadOnly": false, "isImmutable": false, "isMultiple": false, "isDynamic": false, "title": "Название"},
            "STAGE_ID": {"type": "crm_status", "isRequired": false, "isReadOnly": false, "isImmutable": false, "isMultiple": false, "isDynamic": false, "statusType": "DEAL_STAGE", "title": "Стадия сделки"},
            "OPPORTUNITY": {"type": "double", "isRequired": false, "isReadOnly": false, "isImmutable": false, "isMultiple": false, "isDynamic": false, "title": "Сумма"},
            "CURRENCY_ID": {"type": "crm_currency", "isRequired": false, "isReadOnly": false, "isImmutable": false, "isMultiple": false, "isDynamic": false, "title": "Валюта"}
        }),
        "crm.deal.list" => {
            return Some(Ok(Success::ok(
                json!({"result": (1..=3).map(deal).collect::<Vec<_>>(), "total": 3}),
            )));
        }
        "crm.deal.get" => match id {
            Some(id) => deal(id),
            None => {
                return Some(Err(error(
                    400,
                    "ERROR_CORE",
                    "ID is not defined or invalid.",
                )));
            }
        },
        "crm.deal.add" => json!(fastrand::u32(100..100_000)),
        "crm.deal.update" => json!(true),
        "crm.contact.list" => {
            return Some(Ok(Success::ok(
                json!({"result": [{"ID": "1", "NAME": "Иван", "LAST_NAME": "Петров"}], "total": 1}),
            )));
        }
        "crm.contact.get" => {
            json!({"ID": id.unwrap_or(1).to_string(), "NAME": "Иван", "LAST_NAME": "Петров"})
        }
        "crm.contact.add" => json!(fastrand::u32(100..100_000)),
        "profile" | "user.current" => {
            json!({"ID": "1", "ADMIN": true, "NAME": "Demo", "LAST_NAME": "User", "PERSONAL_GENDER": "", "TIME_ZONE": "Europe/Moscow", "TIME_ZONE_OFFSET": 10800})
        }
        "app.info" => {
            json!({"ID": 7, "CODE": "local.apistend.demo", "VERSION": 1, "STATUS": "L", "INSTALLED": true, "PAYMENT_EXPIRED": "N", "DAYS": null, "LICENSE": "ru_project", "LANGUAGE_ID": "ru"})
        }
        "placement.bind" => json!(true),
        "server.time" => json!(crate::clock::rfc3339_offset(crate::clock::unix_now())),
        "batch" => return Some(batch(call, batch_max, documented)),
        _ => {
            return documented
                .answer(method)
                .map(|b| Ok(Success::ok(b.clone())));
        }
    };
    Some(Ok(Success::ok(json!({ "result": result }))))
}

/// The nested commands of a `batch` call: `cmd[key]=method?params` (form or query), or a JSON
/// `cmd` object or array (an array's keys are its indices, as PHP reads it).
pub(crate) fn batch_commands(call: &Call) -> Vec<(String, String)> {
    let mut cmds: Vec<(String, String)> = call
        .query
        .iter()
        .filter_map(|(k, v)| {
            Some((
                k.strip_prefix("cmd[")?.strip_suffix(']')?.to_owned(),
                v.clone(),
            ))
        })
        .collect();
    if let Some(body) = &call.body {
        if let Some(obj) = body.get("cmd").and_then(Value::as_object) {
            cmds.extend(
                obj.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned())),
            );
        } else if let Some(list) = body.get("cmd").and_then(Value::as_array) {
            cmds.extend(
                list.iter()
                    .enumerate()
                    .map(|(i, v)| (i.to_string(), v.as_str().unwrap_or("").to_owned())),
            );
        } else if let Some(obj) = body.as_object() {
            cmds.extend(obj.iter().filter_map(|(k, v)| {
                Some((
                    k.strip_prefix("cmd[")?.strip_suffix(']')?.to_owned(),
                    v.as_str().unwrap_or("").to_owned(),
                ))
            }));
        }
    }
    cmds
}

/// Bitrix24's error body: `{"error": CODE, "error_description": TEXT}`.
fn error(status: u16, code: &str, text: &str) -> Refusal {
    Refusal::Body {
        status,
        body: json!({"error": code, "error_description": text}),
        media: None,
    }
}

fn batch(
    call: &Call,
    batch_max: u32,
    documented: &crate::b24_methods::B24Methods,
) -> Result<Success, Refusal> {
    crate::batch::run_now(&Batch, call, batch_max, |nested| {
        let method = nested.rpc_method.clone().unwrap_or_default();
        answer(&method, &nested, 0, documented).filter(|_| method != "batch")
    })
}

/// Bitrix24's `batch`: `cmd[key]=method?params`, each command's `$result[key]` (and
/// `$result[key][FIELD]…`) references replaced by the answers of the commands before it, as
/// the real batch resolves them; `halt=1` stops at the first error.
pub(crate) struct Batch;

impl crate::batch::Batching for Batch {
    fn commands(&self, call: &Call, max: u32) -> Result<Vec<(String, String)>, Refusal> {
        let cmds = batch_commands(call);
        if cmds.len() > usize::try_from(max).unwrap_or(usize::MAX) {
            return Err(error(
                400,
                "ERROR_BATCH_LENGTH_EXCEEDED",
                "Max batch length exceeded",
            ));
        }
        Ok(cmds)
    }

    fn call_of(&self, parent: &Call, command: &str, ran: &[Ran]) -> Result<Call, Refusal> {
        let (method, params) = command.split_once('?').unwrap_or((command, ""));
        // Method names are case-insensitive in a batch too.
        let method = method.to_ascii_lowercase();
        if parent.blocked.contains(&method) {
            return Err(error(
                400,
                "OPERATION_TIME_LIMIT",
                "Method is blocked due to operation time limit.",
            ));
        }
        let query = crate::call::parse_query(params)
            .into_iter()
            .map(|(k, v)| (k, resolve(&v, ran)))
            .collect();
        Ok(Call {
            service: parent.service,
            method: parent.method,
            path: format!("/rest/{method}"),
            host: parent.host.clone(),
            credential: parent.credential.clone(),
            credential_part: parent.credential_part.clone(),
            rpc_method: Some(method),
            query,
            body: None,
            blocked: Vec::new(),
            has_body: false,
            content_type: None,
            malformed: None,
            raw: bytes::Bytes::new(),
        })
    }

    fn halts(&self, call: &Call) -> bool {
        call.param("halt").is_some_and(|h| h == "1" || h == "true")
    }

    fn answer(&self, ran: Vec<Ran>) -> Success {
        let mut results = serde_json::Map::new();
        let mut errors = serde_json::Map::new();
        let (mut totals, mut nexts) = (serde_json::Map::new(), serde_json::Map::new());
        for r in ran {
            match r.answer {
                Some(Ok(s)) => {
                    // A list's `total` and `next` go to `result_total` and `result_next`.
                    if let Some(t) = s.body.get("total") {
                        totals.insert(r.key.clone(), t.clone());
                    }
                    if let Some(n) = s.body.get("next") {
                        nexts.insert(r.key.clone(), n.clone());
                    }
                    results.insert(r.key, s.body.get("result").cloned().unwrap_or(Value::Null));
                }
                Some(Err(Refusal::Body { body, .. })) => {
                    errors.insert(r.key, body);
                }
                Some(Err(Refusal::BadRequest(why))) => {
                    errors.insert(
                        r.key,
                        json!({"error": "INVALID_REQUEST", "error_description": why}),
                    );
                }
                _ => {
                    errors.insert(r.key, json!({"error": "ERROR_METHOD_NOT_FOUND", "error_description": "Method not found!"}));
                }
            }
        }
        Success::ok(json!({
            "result": {
                "result": php_array(results),
                "result_error": php_array(errors),
                "result_total": php_array(totals),
                "result_next": php_array(nexts),
                "result_time": [],
            }
        }))
    }
}

/// `text` with each `$result[key]`, `$result[key][FIELD]`… replaced by that value of the
/// answer of command `key` (a scalar's text; anything else, or a reference to nothing, is
/// left as written).
fn resolve(text: &str, ran: &[Ran]) -> String {
    const MARK: &str = "$result[";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARK.len()..];
        let mut keys = Vec::new();
        let mut tail = after;
        if let Some(end) = tail.find(']') {
            keys.push(&tail[..end]);
            tail = &tail[end + 1..];
            while let Some(inner) = tail.strip_prefix('[') {
                let Some(end) = inner.find(']') else { break };
                keys.push(&inner[..end]);
                tail = &inner[end + 1..];
            }
        }
        let value = keys.split_first().and_then(|(cmd, path)| {
            let r = ran.iter().find(|r| r.key == *cmd)?;
            let Some(Ok(s)) = &r.answer else { return None };
            path.iter().try_fold(s.body.get("result")?, |v, k| match v {
                Value::Array(l) => l.get(k.parse::<usize>().ok()?),
                _ => v.get(*k),
            })
        });
        match value {
            Some(Value::String(s)) => out.push_str(s),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => out.push_str(&v.to_string()),
            _ => out.push_str(&rest[at..rest.len() - tail.len()]),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A map as PHP's `json_encode` writes an array: a list when its keys are 0, 1, 2… in order
/// (also when empty), an object otherwise. Bitrix24 is PHP: `cmd[0]`, `cmd[1]` come back as a
/// list, named commands as an object, and no errors as `[]`.
fn php_array(map: serde_json::Map<String, Value>) -> Value {
    let sequential = map.keys().enumerate().all(|(i, k)| *k == i.to_string());
    if sequential {
        Value::Array(map.into_iter().map(|(_, v)| v).collect())
    } else {
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_references_to_earlier_results() {
        let ran = vec![
            Ran {
                key: "a".into(),
                answer: Some(Ok(Success::ok(json!({"result": 42})))),
            },
            Ran {
                key: "g".into(),
                answer: Some(Ok(Success::ok(
                    json!({"result": {"ID": "7", "L": [{"X": 1}]}}),
                ))),
            },
        ];
        assert_eq!(resolve("$result[a]", &ran), "42");
        assert_eq!(resolve("id=$result[g][ID]!", &ran), "id=7!");
        assert_eq!(resolve("$result[g][L][0][X]", &ran), "1");
        assert_eq!(resolve("$result[nothing]", &ran), "$result[nothing]");
        assert_eq!(
            resolve("$result[g]", &ran),
            "$result[g]",
            "an object is left"
        );
        assert_eq!(resolve("$result[", &ran), "$result[");
    }

    #[test]
    fn batch_results_are_arrays_as_php_writes_them() {
        let mut m = serde_json::Map::new();
        assert_eq!(php_array(m.clone()), json!([]), "no errors: []");
        m.insert("0".into(), json!("a"));
        m.insert("1".into(), json!("b"));
        assert_eq!(php_array(m.clone()), json!(["a", "b"]));
        let mut gap = serde_json::Map::new();
        gap.insert("1".into(), json!("b"));
        assert_eq!(
            php_array(gap),
            json!({"1": "b"}),
            "keys not from 0: an object"
        );
        let mut named = serde_json::Map::new();
        named.insert("me".into(), json!(1));
        assert_eq!(php_array(named), json!({"me": 1}));
    }
}
