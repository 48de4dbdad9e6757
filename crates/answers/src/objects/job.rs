//! Jobs (`model/job.rs` of the catalog): when a job is created it is stamped with when it
//! started, how long it takes and whether it fails; when it is read, its status is computed
//! from those and the time, and the stamp is not shown. A sandbox can mark every job started
//! before a moment as done (the management API's "finish the pending jobs").

use std::collections::BTreeMap;

use apistend_catalog::{Job, JobEnd, Makes, Resource};
use serde_json::{Map, Value};

use super::plan::text;
use super::pointer;
use super::stamp;
use super::stamp::ABORT;

/// The member of a stored job that holds its timing; never shown.
pub const MARK: &str = "__job";

/// The member a shown job carries to its rendering: the pointers of the fields not to show
/// (those of its `shown_when` it has not reached).
pub(super) const HIDE: &str = "__hide";

/// How a job is to go, chosen when it is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// When it starts, Unix milliseconds.
    pub from_ms: i64,
    /// How long it takes.
    pub ms: u64,
    /// Whether it fails.
    pub fails: bool,
}

/// The time a job is read at, and the sandbox's mark: every job started at or before it is
/// done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    /// Now, Unix milliseconds.
    pub now_ms: i64,
    /// The sandbox's mark, Unix milliseconds.
    pub finished: Option<i64>,
}

/// Stamps a new object of `kind` with `timing`, and writes how long it takes where the kind
/// says.
pub fn start(kind: &Job, job: &mut Map<String, Value>, timing: Timing) {
    if let Some(at) = &kind.takes {
        pointer::set_in(job, at, Value::from(timing.ms));
    }
    job.insert(
        MARK.into(),
        serde_json::json!({"from": timing.from_ms, "ms": timing.ms, "fails": timing.fails}),
    );
}

/// A stored job's stamp, if it has one (a seeded job, or one of the examples, has none: it is
/// done).
fn timing(stored: &Value) -> Option<Timing> {
    let mark = stored.get(MARK)?;
    Some(Timing {
        from_ms: mark.get("from").and_then(Value::as_i64).unwrap_or(0),
        ms: mark.get("ms").and_then(Value::as_u64).unwrap_or(0),
        fails: mark.get("fails").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// When a job of `t` ends, as seen at `moment` (Unix milliseconds): at the end of its time, or
/// at the sandbox's mark if that came first.
fn end_ms(t: Timing, moment: Moment) -> i64 {
    let end = t
        .from_ms
        .saturating_add(i64::try_from(t.ms).unwrap_or(i64::MAX));
    match moment.finished {
        Some(f) if t.from_ms <= f => end.min(f),
        _ => end,
    }
}

/// How long until the job `stored` is done, at `moment` (0: done, or stopped).
pub fn remaining_ms(stored: &Value, moment: Moment) -> u64 {
    timing(stored).map_or(0, |t| {
        if stopped(stored, t, moment).is_some() {
            return 0;
        }
        u64::try_from(end_ms(t, moment).saturating_sub(moment.now_ms)).unwrap_or(0)
    })
}

/// When the job `stored` (of `t`) was stopped, if it was before it ended.
fn stopped(stored: &Value, t: Timing, moment: Moment) -> Option<i64> {
    let at = stored.get(ABORT)?.as_i64()?;
    (at < end_ms(t, moment) && at <= moment.now_ms).then_some(at)
}

/// The fields that stopping `stored` (of `job`) at `at` writes, and its status.
fn show_stopped(job: &Job, stored: &mut Value, at: i64, base: &str, id: &str) {
    let Some(aborted) = &job.aborted else { return };
    for p in &job.status {
        set_each(stored, p, &aborted.status);
    }
    let finished = crate::clock::utc_ms(at);
    for (p, template) in &aborted.writes {
        let v = template
            .replace("{base}", base)
            .replace("{id}", id)
            .replace("{finished}", &finished);
        set_each(stored, p, &Value::String(v));
    }
}

/// Where a job of `t` is at `moment`: the index of its state, or `None` when it has failed.
fn state(job: &Job, t: Timing, moment: Moment) -> Option<usize> {
    let last = job.states.len().saturating_sub(1);
    if moment.now_ms >= end_ms(t, moment) {
        return if t.fails { None } else { Some(last) };
    }
    // The states before the last share the time equally.
    let elapsed = u64::try_from(moment.now_ms.saturating_sub(t.from_ms)).unwrap_or(0);
    let i = u128::from(elapsed) * last as u128 / u128::from(t.ms.max(1));
    Some(usize::try_from(i).unwrap_or(0).min(last.saturating_sub(1)))
}

/// `stored` as a client sees it at `moment`: its status (and, failed or done, what the job
/// writes then; `{base}` and `{id}` in those templates are `base` and `id`), without its stamp.
/// A job without a stamp (one of the examples a collection starts with, or seeded) is shown as
/// it is.
pub fn show(job: &Job, stored: &mut Value, moment: Moment, base: &str, id: &str) {
    let stop = timing(stored).map(|t| (t, stopped(stored, t, moment)));
    if let Value::Object(m) = stored {
        m.remove(ABORT);
    }
    // A job without a stamp (ended before the sandbox knew it) stays as it is.
    let Some((t, stop)) = stop else { return };
    if let Some(at) = stop {
        if let Value::Object(m) = stored {
            m.remove(MARK);
        }
        return show_stopped(job, stored, at, base, id);
    }
    let at = state(job, t, moment);
    let end = match at {
        None => Some(JobEnd::Failed),
        Some(i) if i + 1 == job.states.len() => Some(JobEnd::Done),
        Some(_) => None,
    };
    if let Value::Object(m) = stored {
        m.remove(MARK);
    }
    let status = match at {
        Some(i) => job.states.get(i).cloned().unwrap_or(Value::Null),
        None => job.failed.clone(),
    };
    for p in &job.status {
        set_each(stored, p, &status);
    }
    match end {
        Some(JobEnd::Failed) => {
            for (p, v) in &job.failure {
                set_each(stored, p, v);
            }
        }
        Some(_) => {
            let finished = crate::clock::utc_ms(end_ms(t, moment));
            for (p, template) in &job.done {
                let v = Value::String(
                    template
                        .replace("{base}", base)
                        .replace("{id}", id)
                        .replace("{finished}", &finished),
                );
                set_each(stored, p, &v);
            }
        }
        None => {}
    }
    let hide: Vec<Value> = job
        .shown_when
        .iter()
        .filter(|(_, when)| Some(**when) != end)
        .map(|(p, _)| Value::String(p.clone()))
        .collect();
    if let (false, Value::Object(m)) = (hide.is_empty(), stored) {
        m.insert(HIDE.into(), Value::Array(hide));
    }
}

/// Removes from `shown` (an object as rendered from `stored`) the fields `stored`'s job has
/// not reached, and the list of them.
pub(super) fn hide(stored: &Value, shown: &mut Value) {
    let Some(Value::Array(hide)) = stored.get(HIDE) else {
        return;
    };
    for p in hide.iter().filter_map(Value::as_str) {
        pointer::remove(shown, p);
    }
    if let Value::Object(m) = shown {
        m.remove(HIDE);
    }
}

/// Sets `p` to `v` in `doc`, where a `*` step is each item of the list there.
fn set_each(doc: &mut Value, p: &str, v: &Value) {
    match p.split_once("/*") {
        None => pointer::set(doc, p, v.clone()),
        Some((list, rest)) => {
            if let Some(Value::Array(items)) = doc.pointer_mut(list) {
                for item in items {
                    set_each(item, rest, v);
                }
            }
        }
    }
}

/// Writes into a new `job` what it lists of the objects it `made`: for each, `makes.fields`
/// read from it and `makes.with`; and their count.
pub fn list_made(job: &mut Map<String, Value>, makes: &Makes, made: &[Value]) {
    let entries = made
        .iter()
        .map(|o| {
            let mut e: Map<String, Value> = makes
                .fields
                .iter()
                .filter_map(|(to, from)| Some((to.clone(), o.get(from)?.clone())))
                .collect();
            e.extend(makes.with.iter().map(|(k, v)| (k.clone(), v.clone())));
            Value::Object(e)
        })
        .collect();
    pointer::set_in(job, &makes.into, Value::Array(entries));
    if let Some(at) = &makes.count {
        pointer::set_in(job, at, Value::from(made.len()));
    }
}

/// What a job's create writes into the collection `target` it makes objects of: the updates
/// of objects it holds (by `makes.key`, among `held`) and the new ones, stamped with `now`
/// (Unix seconds), and for each item of the request, in order, which of those it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Making {
    /// Patches of objects the collection holds, by id.
    pub updates: Vec<(String, Map<String, Value>)>,
    /// New objects.
    pub creates: Vec<Map<String, Value>>,
    /// For each item: `Ok(i)`, the `i`-th update, or `Err(i)`, the `i`-th create.
    pub order: Vec<Result<usize, usize>>,
}

/// The [`Making`] of the items at `makes.input` in `params` (the request's parameters).
pub fn making(
    target: &Resource,
    makes: &Makes,
    params: &Value,
    held: &[Value],
    now: i64,
) -> Making {
    let items: Vec<Map<String, Value>> = match params.pointer(&makes.input) {
        Some(Value::Array(list)) => list.iter().filter_map(|v| v.as_object().cloned()).collect(),
        Some(Value::Object(o)) => vec![o.clone()],
        _ => Vec::new(),
    };
    let id_field = &target.id.field;
    let by_key: BTreeMap<String, String> = makes
        .key
        .as_ref()
        .map(|key| {
            held.iter()
                .filter_map(|o| Some((text(o.get(key)?)?, target.id.key(o)?)))
                .collect()
        })
        .unwrap_or_default();
    let mut m = Making {
        updates: Vec::new(),
        creates: Vec::new(),
        order: Vec::new(),
    };
    for mut item in items {
        item.remove(id_field);
        let known = makes
            .key
            .as_ref()
            .and_then(|key| by_key.get(&text(item.get(key)?)?));
        if let Some(id) = known {
            stamp::apply(target, &mut item, now, false);
            m.order.push(Ok(m.updates.len()));
            m.updates.push((id.clone(), item));
        } else {
            stamp::apply(target, &mut item, now, true);
            m.order.push(Err(m.creates.len()));
            m.creates.push(item);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job() -> Job {
        serde_json::from_value(json!({
            "status": ["/items/*/status"],
            "states": ["pending", "imported"],
            "failed": "failed",
            "failure": {"/items/*/errors": [{"code": "E"}]},
            "done": {"/file": "{base}/files/{id}", "/at": "{finished}"},
            "ms": 1000,
            "source": "test"
        }))
        .unwrap()
    }

    fn started(ms: u64, fails: bool) -> Value {
        let mut m = Map::new();
        m.insert(
            "items".into(),
            json!([{"offer_id": "a"}, {"offer_id": "b"}]),
        );
        start(
            &job(),
            &mut m,
            Timing {
                from_ms: 10_000,
                ms,
                fails,
            },
        );
        Value::Object(m)
    }

    fn at(now_ms: i64) -> Moment {
        Moment {
            now_ms,
            finished: None,
        }
    }

    #[test]
    fn a_job_moves_through_its_states_in_its_time() {
        let j = job();
        let mut running = started(1000, false);
        show(&j, &mut running, at(10_500), "http://s", "7");
        assert_eq!(
            running,
            json!({"items": [{"offer_id": "a", "status": "pending"}, {"offer_id": "b", "status": "pending"}]})
        );
        let mut done = started(1000, false);
        show(&j, &mut done, at(11_000), "http://s", "7");
        assert_eq!(done["items"][1]["status"], "imported");
        assert_eq!(done["file"], "http://s/files/7");
        assert_eq!(
            done["at"], "1970-01-01T00:00:11.000Z",
            "it ended at 10 000 + 1 000 ms"
        );
        assert_eq!(remaining_ms(&started(1000, false), at(10_250)), 750);
        let early = Moment {
            now_ms: 10_250,
            finished: Some(10_100),
        };
        assert_eq!(
            remaining_ms(&started(1000, false), early),
            0,
            "finished by the mark"
        );
        let mut marked = started(1000, false);
        show(&j, &mut marked, early, "", "");
        assert_eq!(marked["at"], "1970-01-01T00:00:10.100Z", "at the mark");
        let mut failed = started(1000, true);
        show(&j, &mut failed, at(12_000), "http://s", "7");
        assert_eq!(failed["items"][0]["status"], "failed");
        assert_eq!(failed["items"][0]["errors"], json!([{"code": "E"}]));
        assert!(failed.get("file").is_none(), "a failed job has no file");
        let mut finished = started(60_000, false);
        let m = Moment {
            now_ms: 10_001,
            finished: Some(10_000),
        };
        show(&j, &mut finished, m, "", "");
        assert_eq!(finished["items"][0]["status"], "imported", "marked done");
        let mut later = started(60_000, false);
        let m = Moment {
            now_ms: 10_001,
            finished: Some(9_999),
        };
        show(&j, &mut later, m, "", "");
        assert_eq!(
            later["items"][0]["status"], "pending",
            "started after the mark"
        );
    }

    #[test]
    fn three_states_share_the_time() {
        let mut j = job();
        j.states = vec![json!("READY"), json!("RUNNING"), json!("SUCCEEDED")];
        j.status = vec!["/status".into()];
        let seen: Vec<Value> = [10_000, 10_499, 10_500, 10_999, 11_000, 9_000]
            .into_iter()
            .map(|t| {
                let mut o = started(1000, false);
                show(&j, &mut o, at(t), "", "");
                o["status"].clone()
            })
            .collect();
        assert_eq!(
            seen,
            ["READY", "READY", "RUNNING", "RUNNING", "SUCCEEDED", "READY"]
        );
        let mut k = j.clone();
        k.shown_when = [("/file".to_owned(), JobEnd::Done)].into_iter().collect();
        let mut running = started(1000, false);
        show(&k, &mut running, at(10_000), "b", "1");
        let mut shown = json!({"file": "x", "status": "s", "__hide": []});
        hide(&running, &mut shown);
        assert_eq!(shown, json!({"status": "s"}), "no file before it is done");
        let mut done = started(1000, false);
        show(&k, &mut done, at(20_000), "b", "1");
        let mut shown = json!({"file": "b/files/1"});
        hide(&done, &mut shown);
        assert_eq!(shown, json!({"file": "b/files/1"}));
        let mut seeded = json!({"status": "FAILED"});
        show(&j, &mut seeded, at(10_000), "", "");
        assert_eq!(
            seeded,
            json!({"status": "FAILED"}),
            "a job without a stamp, as it is"
        );
        let mut zero = started(0, false);
        show(&j, &mut zero, at(10_000), "", "");
        assert_eq!(
            zero["status"], "SUCCEEDED",
            "a job of no time is done at once"
        );
    }

    #[test]
    fn a_job_lists_what_it_made_and_matches_known_keys() {
        let makes: Makes = serde_json::from_value(json!({
            "resource": "products", "input": "/items", "key": "offer_id", "into": "/items",
            "fields": {"offer_id": "offer_id", "product_id": "id"}, "with": {"errors": []},
            "count": "/total"
        }))
        .unwrap();
        let mut task = Map::new();
        list_made(
            &mut task,
            &makes,
            &[json!({"id": 5, "offer_id": "a", "name": "x"})],
        );
        assert_eq!(
            Value::Object(task),
            json!({"items": [{"offer_id": "a", "product_id": 5, "errors": []}], "total": 1})
        );
        let target: Resource = serde_json::from_value(json!({
            "name": "products", "id": {"kind": "sequential", "field": "id"}, "actions": []
        }))
        .unwrap();
        let params = json!({"items": [{"offer_id": "a", "id": 1}, {"offer_id": "b"}, 3]});
        let held = [json!({"id": 9, "offer_id": "b"})];
        let m = making(&target, &makes, &params, &held, 0);
        assert_eq!(m.order, vec![Err(0), Ok(0)]);
        assert_eq!(m.updates[0].0, "9");
        assert_eq!(
            Value::Object(m.creates[0].clone()),
            json!({"offer_id": "a"}),
            "a client does not choose the id"
        );
    }
}
