//! `GET /api/v1/sandboxes/{id}/events`: a sandbox's live feed, as server-sent events.
//!
//! - `buckets`, every `interval_ms`: one page of the sandbox's buckets (full ones too) and their
//!   levels; `key`, `service`, `group` filter it on the server, `offset`/`limit` page it, `order`
//!   orders it (by default those touched lately first, the most drained first: [`activity`]),
//!   and a bucket's first appearance carries its past from the request journal;
//! - `rates`, at the same pace: requests answered and refused per limit group since the last;
//! - `refusal`, as it happens: a rate-limit answer, or a request refused as its description does
//!   not allow it (its reason in `x-apistend-invalid`), as it was sent (headers, start of the body).
//!
//! The feed sees the requests this instance answers; buckets are read from the shared store.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use apistend_catalog::ServiceId;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::activity::{self, ACTIVE_MS, Activity};
use super::buckets::bucket_json;
use super::extract::ApiQuery;
use super::feed::{BucketOrder, FeedEventName as Name, FeedQuery};
use super::problem::ApiError;
use super::schema::BucketFilter;
use super::schema::Errors;
use crate::state::AppState;
use crate::watch::{Feed, Seen};

/// Buckets in one page of the feed, unless it asks for fewer (at most [`MAX_PAGE`]).
const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 500;

#[utoipa::path(get, path = "/api/v1/sandboxes/{id}/events", tag = "buckets",
    params(("id" = String, Path), FeedQuery),
    responses((status = 200, content_type = "text/event-stream", body = super::feed::FeedEvent,
        description = "`buckets` (a page of levels) and `rates` (requests and refusals per group) \
            every `interval_ms`, and each `refusal` as it was sent; JSON in each event's data"),
        Errors))]
/// A sandbox's live feed, as server-sent events.
pub(super) async fn events(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<FeedQuery>,
) -> Result<Sse<impl stream::Stream<Item = Result<Event, Infallible>>>, ApiError> {
    if state.tenants.get(&id).is_none() {
        return Err(ApiError::NotFound(format!("no sandbox {id:?}")));
    }
    let interval = q.interval_ms.unwrap_or(1000);
    if !(200..=60_000).contains(&interval) {
        return Err(ApiError::Unprocessable(format!(
            "interval_ms: from 200 to 60000, got {interval}"
        )));
    }
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::Unprocessable(format!(
            "limit: from 1 to {MAX_PAGE}, got {limit}"
        )));
    }
    // What the sandbox's requests touched lately, before this feed opened (a journal that does
    // not answer leaves the order to what the feed sees).
    let since = apistend_answers::clock::unix_now_us() / 1000 - ACTIVE_MS;
    let activity = Activity::of(state.journal.touches(&id, since).await.unwrap_or_default());
    let mut ticker = tokio::time::interval(Duration::from_millis(interval));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let run = Run {
        feed: state.watch.subscribe(),
        filter: BucketFilter::page(q.key, q.service, q.group),
        offset: q.offset,
        limit,
        order: q.order.unwrap_or_default(),
        activity,
        interval,
        state,
        sandbox: id,
        ticker,
        counts: BTreeMap::new(),
        missed: 0,
        pending: Vec::new(),
        done: false,
    };
    let events = stream::unfold(run, |mut run| async move {
        let e = run.next().await?;
        Some((Ok::<_, Infallible>(e), run))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// What woke a feed up.
enum Woke {
    Seen(Result<Arc<Seen>, RecvError>),
    Tick,
    Stop,
}

/// One open feed.
struct Run {
    feed: Feed,
    filter: BucketFilter,
    offset: usize,
    limit: usize,
    order: BucketOrder,
    /// The buckets touched lately, and their past until shown.
    activity: Activity,
    interval: u64,
    state: Arc<AppState>,
    sandbox: String,
    ticker: tokio::time::Interval,
    /// (service, group) → (answered, refused) since the last `rates`.
    counts: BTreeMap<(ServiceId, usize), (u64, u64)>,
    missed: u64,
    /// Events made and not yet sent (in reverse order).
    pending: Vec<Event>,
    done: bool,
}

impl Run {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.pending.pop() {
                return Some(e);
            }
            if self.done {
                return None;
            }
            let woke = tokio::select! {
                got = self.feed.rx.recv() => Woke::Seen(got),
                _ = self.ticker.tick() => Woke::Tick,
                _ = self.feed.stopping.wait_for(|s| *s) => Woke::Stop,
            };
            match woke {
                Woke::Seen(Ok(seen)) if *seen.sandbox == *self.sandbox => {
                    if let Some(e) = self.saw(&seen) {
                        return Some(e);
                    }
                }
                Woke::Seen(Ok(_)) => {}
                Woke::Seen(Err(RecvError::Lagged(n))) => self.missed += n,
                Woke::Seen(Err(RecvError::Closed)) | Woke::Stop => self.done = true,
                Woke::Tick => self.tick().await,
            }
        }
    }

    /// Counts a request; a refusal is an event of its own.
    fn saw(&mut self, seen: &Seen) -> Option<Event> {
        self.activity
            .saw(&seen.key, seen.service, seen.group, seen.at_ms);
        let c = self.counts.entry((seen.service, seen.group)).or_default();
        c.0 += 1;
        let refusal = seen.refusal.as_ref()?;
        c.1 += 1;
        let headers: serde_json::Map<String, Value> = refusal
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        Some(event(
            Name::Refusal,
            &json!({
                "at_ms": seen.at_ms, "key": &*seen.key, "service": seen.service.as_str(),
                "group": self.group_name(seen.service, seen.group), "method": seen.method.as_str(),
                "path": seen.path, "status": seen.status, "headers": headers, "body": refusal.body,
            }),
        ))
    }

    fn group_name(&self, service: ServiceId, group: usize) -> Option<String> {
        let svc = self.state.catalog.service(service)?;
        svc.groups.get(group).map(|g| g.id.clone())
    }

    /// The `buckets` and `rates` of this interval (or `gone`, when the sandbox was deleted).
    async fn tick(&mut self) {
        let at_ms = apistend_answers::clock::unix_now_us() / 1000;
        let Some(s) = self.state.tenants.get(&self.sandbox) else {
            self.pending
                .push(event(Name::Gone, &json!({"sandbox": self.sandbox})));
            self.done = true;
            return;
        };
        let groups: Vec<Value> = std::mem::take(&mut self.counts)
            .into_iter()
            .map(|((svc, g), (answered, refused))| {
                json!({"service": svc.as_str(), "group": self.group_name(svc, g),
                       "answered": answered, "refused": refused})
            })
            .collect();
        let rates = json!({"at_ms": at_ms, "interval_ms": self.interval, "groups": groups,
                           "missed": std::mem::take(&mut self.missed)});
        self.activity.expire(at_ms);
        let page = activity::page(
            &self.state,
            &s,
            &self.filter,
            &self.activity,
            self.order,
            self.offset,
            self.limit,
        )
        .await;
        let (rows, more) = match page {
            Ok(page) => {
                let rows: Vec<_> = page
                    .rows
                    .iter()
                    .map(|(b, d)| {
                        let mut row = bucket_json(&self.state, b, d);
                        (row.last_request_ms, row.history) =
                            self.activity.shown(&self.state, b, at_ms);
                        row
                    })
                    .collect();
                (rows, page.more)
            }
            Err(e) => {
                self.pending
                    .push(event(Name::Error, &json!({"detail": e.to_string()})));
                (Vec::new(), false)
            }
        };
        // Sent in this order: buckets, then rates.
        self.pending.push(event(Name::Rates, &rates));
        self.pending.push(event(
            Name::Buckets,
            &json!({"at_ms": at_ms, "offset": self.offset, "more": more, "buckets": rows}),
        ));
    }
}

fn event(name: Name, data: &Value) -> Event {
    Event::default().event(name.as_str()).data(data.to_string())
}
