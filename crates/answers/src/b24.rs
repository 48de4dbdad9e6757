//! Bitrix24 REST methods: `crm.deal.*`, `crm.contact.*`, `profile`, `app.info`, `placement.bind`,
//! `batch`. Every answer carries the `time` block; the pipeline adds it.

use serde_json::{Value, json};

use crate::answer::{Refusal, Success};
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
    let cmds = batch_commands(call);
    if cmds.len() > usize::try_from(batch_max).unwrap_or(usize::MAX) {
        return Err(error(
            400,
            "ERROR_BATCH_LENGTH_EXCEEDED",
            "Max batch length exceeded",
        ));
    }
    let mut results = serde_json::Map::new();
    let mut errors = serde_json::Map::new();
    for (key, cmd) in &cmds {
        let (method, params) = cmd.split_once('?').unwrap_or((cmd.as_str(), ""));
        // Method names are case-insensitive in a batch too.
        let method = method.to_ascii_lowercase();
        let method = method.as_str();
        let nested = Call {
            service: call.service,
            method: call.method,
            path: format!("/rest/{method}"),
            host: None,
            credential: None,
            credential_part: None,
            rpc_method: Some(method.to_owned()),
            query: crate::call::parse_query(params),
            body: None,
            blocked: Vec::new(),
            has_body: false,
            content_type: None,
            malformed: None,
        };
        if call.blocked.iter().any(|b| b == method) {
            errors.insert(
                key.clone(),
                json!({"error": "OPERATION_TIME_LIMIT", "error_description": "Method is blocked due to operation time limit."}),
            );
            continue;
        }
        match answer(method, &nested, 0, documented) {
            Some(Ok(s)) if method != "batch" => {
                results.insert(
                    key.clone(),
                    s.body.get("result").cloned().unwrap_or(Value::Null),
                );
            }
            Some(Err(Refusal::Body { body, .. })) => {
                errors.insert(key.clone(), body);
            }
            _ => {
                errors.insert(key.clone(), json!({"error": "ERROR_METHOD_NOT_FOUND", "error_description": "Method not found!"}));
            }
        }
    }
    Ok(Success::ok(json!({
        "result": {
            "result": php_array(results),
            "result_error": php_array(errors),
            "result_total": [],
            "result_next": [],
            "result_time": [],
        }
    })))
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
