//! What a call draws from, and how it waits and pays: plan, acquire, penalize, the margin
//! before a token is taken, the wait ceiling, backoff.

use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use apistend_catalog::{CallSite, LimitGroup, Method, RateValue, namespace};
use apistend_limiter::{Draw, Quota};
use http::HeaderMap;

use super::core::Core;
use crate::config::ClientConfig;
use crate::error::{ClientError, RefusedBy};
use crate::hint::server_hint;
use crate::learn::{Bucket, LearnedFrom, Report};
use crate::metrics::{Counters, RetryCause, inc};

impl Core {
    /// Records one latency: the ceiling jumps up to it, and otherwise loses 1/8 per request.
    pub(crate) fn record_latency(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let _ = self
            .latency_ceiling_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some(us.max(old - old / 8))
            });
    }

    fn latency_ceiling(&self) -> Duration {
        Duration::from_micros(self.latency_ceiling_us.load(Ordering::Relaxed))
    }
}

impl Core {
    /// `path` as the catalog sees it: without the path of the base URL (`/wb` in
    /// `http://127.0.0.1:8080/wb`), for a request that arrives with a whole URI (the tower layer).
    pub(crate) fn relative_path<'p>(&self, path: &'p str) -> &'p str {
        path.strip_prefix(self.base_path.as_str())
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
            .unwrap_or(path)
    }

    /// The service's definition in the client's catalog.
    pub(crate) fn definition(&self) -> &apistend_catalog::Service {
        &self.definition
    }

    pub(crate) fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// What an answer reports of the server's bucket (the headers its definition names): the
    /// learner takes the tokens left and the limit (see [`crate::learn`]); and when the server
    /// holds fewer tokens than the local model did after this call's acquisition, the shared
    /// bucket of the first group drops to match — one atomic store operation, only then. The
    /// server's word only ever makes the model stricter. For a service that reports nothing, a
    /// success lets a rate its rejections narrowed grow back.
    ///
    /// # Errors
    /// A fail-closed store that cannot answer.
    pub(crate) async fn observe(
        &self,
        plan: &Draws<'_>,
        status: u16,
        headers: &HeaderMap,
    ) -> Result<(), ClientError> {
        let (Some(bucket), Some(quota)) = (plan.first_bucket(), plan.quota(0)) else {
            return Ok(());
        };
        let def = self.definition();
        let header = |name: &str| headers.get(name)?.to_str().ok();
        let remaining = def.reported(RateValue::Remaining, header);
        let limit = def.reported(RateValue::Limit, header);
        let window = def
            .reported(RateValue::WindowMs, header)
            .map(|ms| Duration::from_millis(u64::from(ms)));
        let now = Instant::now();
        let changed = if remaining.is_some() || limit.is_some() {
            let report = Report {
                remaining,
                limit,
                window,
                weight: plan.weight,
            };
            self.learner.reported(bucket, report, now)
        } else if !def.reports(RateValue::Remaining) && status < 400 {
            self.learner.succeeded(bucket, now)
        } else {
            None
        };
        if let Some(q) = changed {
            self.handles.learned(bucket.group, &q);
            self.publish_learned(bucket).await;
        }
        let Some(reported) = remaining else {
            return Ok(());
        };
        if reported >= plan.local_remaining.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.store.align(bucket.key, &quota, reported).await?;
        self.handles.aligned(bucket.group);
        Ok(())
    }

    /// Counts a retry (the client's counters and metric), as `send` and the layer's policy do.
    pub(crate) fn count_retry(&self, cause: RetryCause) {
        self.handles.retry(&self.counters, cause);
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Whether a request of `method path` may be sent again when the service may have applied
    /// it: the catalog's word on its operation ([`apistend_catalog::repeatable`]).
    pub(crate) fn repeatable(&self, method: Method, path: &str) -> bool {
        let op_path = operation_path(self.definition(), &self.mount, path);
        let operation = self
            .catalog
            .resolve(self.service, method, &op_path, None)
            .and_then(|r| r.operation);
        apistend_catalog::repeatable(operation, method, &op_path)
    }

    /// The limit groups of `method path`, their bucket keys, the wait ceiling, and the tokens
    /// the call takes — by the items of `body` (its JSON) where the operation is weighed so
    /// (Yandex Market's price updates: one per offer).
    pub(crate) fn plan(&self, method: Method, path: &str, body: &[u8]) -> Draws<'_> {
        let op_path = operation_path(self.definition(), &self.mount, path);
        let resolved = self.catalog.resolve(self.service, method, &op_path, None);
        let operation = resolved.and_then(|r| r.operation);
        let site = CallSite {
            operation,
            path: &op_path,
            host: None,
        };
        // The client's buckets are its account's, whatever a group's scope.
        let (groups, keys): (Vec<&LimitGroup>, Vec<String>) = resolved
            .iter()
            .flat_map(|r| r.bucket_keys(namespace::CLIENT, site, |_| self.account.as_str().into()))
            .unzip();
        let ceiling = groups
            .iter()
            .map(|g| ceiling(&self.config, g))
            .max()
            .unwrap_or(self.config.max_wait);
        let first = groups.first().map(|g| g.quota);
        // The account's slots, whatever a limit's scope (one client is one user of it), of the
        // limits that hold this call (Yandex Market's 12 for a price update, not its 4).
        let slots = self
            .definition()
            .in_flight_for(operation)
            .map(|l| {
                let key = l.slots_key(
                    namespace::CLIENT_IN_FLIGHT,
                    &self.account,
                    self.service,
                    &site,
                );
                (key, l.slots)
            })
            .collect();
        let plan = Draws {
            groups,
            keys,
            first: std::sync::Mutex::new(first),
            ceiling,
            // The operation's weight as its definition gives it (MoySklad's 4), or by the
            // body's items: what the server takes for the request. The body is read only for an
            // operation weighed by its items.
            weight: operation.map_or(1, |o| match &o.weight_from {
                Some(_) => o.weight_for(serde_json::from_slice(body).ok().as_ref()),
                None => o.weight,
            }),
            local_remaining: std::sync::atomic::AtomicU32::new(u32::MAX),
            op_path,
            slots,
        };
        self.refresh(&plan);
        plan
    }

    /// The first (most specific) group's quota as it is enforced now — the catalog's, or the
    /// one learned from the server's answers, which the headers report on — kept in `plan` for
    /// what follows the acquisition. Read again before each try: a call may wait for seconds
    /// while the learner narrows the rate.
    fn refresh(&self, plan: &Draws<'_>) -> Option<Quota> {
        let bucket = plan.first_bucket()?;
        let (quota, expired) = self.learner.quota(bucket, Instant::now());
        if expired {
            self.handles.learned(bucket.group, &quota);
        }
        *plan.first.lock().unwrap_or_else(PoisonError::into_inner) = Some(quota);
        Some(quota)
    }

    /// Takes a token from every group of `plan`, waiting up to its ceiling (and `deadline`) in
    /// all; returns the time waited.
    ///
    /// # Cancel safety
    /// Dropping the future while it waits takes nothing (a refused draw takes from no group).
    pub(crate) async fn acquire(
        &self,
        plan: &Draws<'_>,
        deadline: Option<Instant>,
    ) -> Result<Duration, ClientError> {
        let c = self;
        let (groups, keys, ceiling) = (&plan.groups, &plan.keys, plan.ceiling);
        let start = Instant::now();
        loop {
            c.follow_learned(plan).await;
            let first = c.refresh(plan);
            // All groups or none; only a token that has been there for the margin is taken: see
            // `margin`.
            let draws: Vec<Draw<'_>> = groups
                .iter()
                .zip(keys)
                .enumerate()
                .map(|(i, (g, k))| {
                    let q = first.filter(|_| i == 0).unwrap_or(g.quota);
                    Draw::new(k, q, plan.weight.min(q.burst()))
                        .settled(margin(&q, c.latency_ceiling()))
                })
                .collect();
            let wait = if draws.is_empty() {
                None
            } else {
                let drawn = c.store.acquire_all(&draws).await?;
                match drawn.refused {
                    None => {
                        plan.local_remaining
                            .store(drawn.decision.remaining, Ordering::Relaxed);
                        None
                    }
                    Some(i) => groups.get(i).map(|g| (drawn.decision.retry_after, *g)),
                }
            };
            let Some((wait, group)) = wait else {
                let waited = start.elapsed();
                inc(&c.counters.acquisitions);
                c.counters.waited_micros.fetch_add(
                    u64::try_from(waited.as_micros()).unwrap_or(u64::MAX),
                    std::sync::atomic::Ordering::Relaxed,
                );
                for h in groups.iter().filter_map(|g| c.handles.group(&g.id)) {
                    h.acquisitions.increment(1);
                    h.local_wait.record(waited.as_secs_f64());
                }
                return Ok(waited);
            };
            // Jitter, so that waiters woken together do not race in lockstep.
            let wait = wait + Duration::from_millis(fastrand::u64(0..3));
            let refuse = start.elapsed() + wait > ceiling
                || deadline.is_some_and(|d| Instant::now() + wait > d);
            if refuse {
                inc(&c.counters.local_refusals);
                if let Some(h) = c.handles.group(&group.id) {
                    h.local_refusals.increment(1);
                }
                return Err(ClientError::RateLimited {
                    retry_after: wait,
                    refused_by: RefusedBy::Local,
                });
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// A rate-limit answer to a call the limiter allowed: every group of `plan` pauses for
    /// `max(server hint, min(max(one refill, backoff), ceiling))`, shared by every process of
    /// the account: never shorter than the server asked (a pause past the ceiling refuses the
    /// call instead). Returns the pause.
    pub(crate) async fn penalize(
        &self,
        plan: &Draws<'_>,
        status: u16,
        headers: &HeaderMap,
        attempt: u32,
    ) -> Result<Duration, ClientError> {
        let sid = self.service.as_str();
        inc(&self.counters.server_rate_limits);
        let hint = server_hint(self.definition(), headers, SystemTime::now()).unwrap_or_default();
        let first_interval = plan
            .quota(0)
            .map_or(Duration::from_secs(1), |q| q.interval());
        // The server's word is a floor the ceiling does not cut: a pause past the ceiling is a
        // refusal of the call (the next acquire's), never a request sent early.
        let pause = hint.max(
            first_interval
                .max(backoff(self.config.retry_base, attempt))
                .min(plan.ceiling),
        );
        // The rate narrows (AIMD); where the service reports tokens left, the rejection is also
        // the evidence that lets the learner measure the server's rate from the reports.
        let from = if self.definition().reports(RateValue::Remaining) {
            LearnedFrom::Headers
        } else {
            LearnedFrom::Rejections
        };
        let mut learned = None;
        if let (Some(bucket), Some(sent)) = (plan.first_bucket(), plan.quota(0))
            && let Some(q) = self.learner.rejected(bucket, sent, Instant::now(), from)
        {
            self.handles.learned(bucket.group, &q);
            self.publish_learned(bucket).await;
            learned = Some(q);
        }
        for (i, (g, k)) in plan.groups.iter().zip(&plan.keys).enumerate() {
            // The pause is kept in the quota the next acquisition reads it with: a bucket's
            // schedule read under another quota would end the pause early.
            let quota = &match (i, learned) {
                (0, Some(q)) => q,
                _ => plan.quota(i).unwrap_or(g.quota),
            };
            let h = self.handles.group(&g.id);
            if let Some(h) = h {
                h.unexpected_429.increment(1);
            }
            self.store.penalize(k, quota, pause).await?;
            inc(&self.counters.penalties);
            if let Some(h) = h {
                h.penalties.increment(1);
            }
        }
        tracing::warn!(service = sid, account = %self.account, status, ?pause, "rate-limited by the server although the local limiter allowed; penalized the shared bucket");
        Ok(pause)
    }
}

/// What a call draws from: its limit groups, their bucket keys, its wait ceiling, and the
/// tokens it takes from each.
pub(crate) struct Draws<'a> {
    pub(crate) groups: Vec<&'a LimitGroup>,
    pub(crate) keys: Vec<String>,
    /// The first group's quota as last acquired under (the catalog's, or one learned from the
    /// server); the others' are the catalog's.
    first: std::sync::Mutex<Option<Quota>>,
    pub(crate) ceiling: Duration,
    pub(crate) weight: u32,
    /// Tokens the first group's bucket held after this call's last acquisition (`u32::MAX`
    /// before one): a server reporting fewer is believed ([`Core::observe`]).
    pub(crate) local_remaining: std::sync::atomic::AtomicU32,
    /// The operation's path as the catalog has it (Bitrix24's method as `/rest/{method}`): what
    /// an operating-time budget is kept per.
    pub(crate) op_path: String,
    /// The key and the slots of each of the service's in-flight limits the call holds one of.
    pub(crate) slots: Vec<(String, apistend_limiter::Slots)>,
}

impl Draws<'_> {
    /// The first group's bucket, as the learner knows it.
    pub(super) fn first_bucket(&self) -> Option<Bucket<'_>> {
        let (g, k) = (self.groups.first()?, self.keys.first()?);
        Some(Bucket {
            key: k,
            group: &g.id,
            catalog: g.quota,
        })
    }

    /// Group `i`'s quota as this call last acquired under it.
    pub(crate) fn quota(&self, i: usize) -> Option<Quota> {
        if i == 0 {
            *self.first.lock().unwrap_or_else(PoisonError::into_inner)
        } else {
            self.groups.get(i).map(|g| g.quota)
        }
    }
}

/// How long a token must have been available before it is taken: the recent latency ceiling,
/// and at least T/10 (2 to 100 ms); at most 1 s (the engine keeps a full bucket's schedule that
/// long).
///
/// The server's bucket runs the same arithmetic as ours but sees each request a little later, and
/// not equally later: a request delayed more than the next one shifts the server's schedule by the
/// difference. A request sent the instant its slot opens can then arrive before the server's slot
/// and draw a 429. No request arrives later than its answer returns, so the latency of recent
/// requests bounds that shift; T/10 covers other processes of the account, whose latencies this
/// one does not see. With a burst above one token the margin costs latency only (the bucket's
/// schedule advances by T per request, not from the moment the token is taken); a bucket of one
/// token restarts its schedule at each request, so there every interval is stretched by the
/// margin: the price of never arriving early where the server's schedule follows the arrivals.
pub(crate) fn margin(quota: &Quota, latency_ceiling: Duration) -> Duration {
    let floor = (quota.interval() / 10).clamp(Duration::from_millis(2), Duration::from_millis(100));
    floor.max(latency_ceiling).min(Duration::from_secs(1))
}

/// `base·2^(attempt−1) + jitter[0, base)`.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let jitter = Duration::from_micros(fastrand::u64(
        0..u64::try_from(base.as_micros()).unwrap_or(1).max(1),
    ));
    exp + jitter
}

/// The longest a call waits locally for a token: max(configured, one refill + 5 s); for limits
/// of one request per period, two periods + 5 s, so the loser of a race at the boundary lives to
/// the next slot.
pub(crate) fn ceiling(config: &ClientConfig, group: &LimitGroup) -> Duration {
    let t = group.quota.interval();
    let one_per_period = group
        .documented
        .map_or(group.quota.burst() == 1, |(_, limit)| limit == 1);
    let floor = if one_per_period { t * 2 } else { t } + Duration::from_secs(5);
    config.max_wait.max(floor)
}

pub(super) fn until_unix(at: f64) -> Duration {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    Duration::from_secs_f64((at - now).clamp(0.0, 86_400.0))
}

/// The catalog path of a request path (relative to the base URL, whose own path past the
/// service's prefix — [`Service::mount`](apistend_catalog::Service::mount) — is part of the
/// operation's): a webhook path (Bitrix24's
/// `/rest/{user}/{code}/crm.deal.list.json`) is `/rest/crm.deal.list`; other paths are the mount
/// and themselves.
pub(super) fn operation_path(
    service: &apistend_catalog::Service,
    mount: &str,
    path: &str,
) -> String {
    let path = path.split('?').next().unwrap_or(path);
    if service.has_webhook_paths() {
        let method = path.rsplit('/').next().unwrap_or("");
        let method = method.trim_end_matches(".json").trim_end_matches(".xml");
        return format!("/rest/{method}");
    }
    format!("{mount}{path}")
}

#[cfg(test)]
mod tests {
    use apistend_catalog::Catalog;

    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_below_base() {
        let base = Duration::from_millis(500);
        for attempt in 1..=4 {
            let d = backoff(base, attempt);
            let exp = base * (1 << (attempt - 1));
            assert!(d >= exp && d < exp + base, "{attempt}: {d:?}");
        }
    }

    #[test]
    fn the_margin_covers_recent_latency_within_bounds() {
        let q = |ms| Quota::new(1, Duration::from_millis(ms)).unwrap();
        let ms = Duration::from_millis;
        assert_eq!(margin(&q(600), Duration::ZERO), ms(60));
        assert_eq!(margin(&q(5), Duration::ZERO), ms(2));
        assert_eq!(margin(&q(60_000), Duration::ZERO), ms(100));
        assert_eq!(margin(&q(600), ms(250)), ms(250));
        assert_eq!(
            margin(&q(600), Duration::from_secs(9)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn ceilings_follow_the_decision_record() {
        let c = Catalog::builtin().unwrap();
        let config = ClientConfig {
            max_wait: Duration::from_secs(30),
            ..ClientConfig::default()
        };
        let wb = c.service(c.service_id("wb").unwrap()).unwrap();
        // "1 минута | 1 запрос | 1 минута | 10 запросов": two periods + 5 s.
        let news = wb
            .group("common-api.get.api-communications-v2-news")
            .unwrap();
        assert_eq!(ceiling(&config, news), Duration::from_secs(125));
        // Content: 600 ms interval: the configured 30 s.
        assert_eq!(
            ceiling(&config, wb.group("content-api.kontent").unwrap()),
            Duration::from_secs(30)
        );
        assert_eq!(
            operation_path(
                c.service(c.service_id("b24").unwrap()).unwrap(),
                "",
                "/rest/1/abc/crm.deal.list.json"
            ),
            "/rest/crm.deal.list"
        );
    }

    #[test]
    fn a_base_urls_own_path_is_part_of_the_operations() {
        let c = Catalog::builtin().unwrap();
        let ms = c.service(c.service_id("moysklad").unwrap()).unwrap();
        let op = operation_path(
            ms,
            ms.mount("/moysklad/api/remap/1.2"),
            "/entity/product?limit=1",
        );
        let r = c.resolve(ms.id, Method::Get, &op, None).unwrap();
        assert_eq!(r.operation.map(|o| o.weight), Some(4), "{op}");
    }
}
