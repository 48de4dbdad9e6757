//! A live feed's page of buckets in the order a person looks for: those its sandbox's requests
//! touched in the last minutes first, the most drained of them first, then the others in catalog
//! order (`order=catalog`: catalog order only). What was touched, and the levels the requests
//! left, come from the request journal when the feed opens and from the requests it sees after;
//! a bucket's row carries its past the first time the feed shows it, so a row that appears
//! after the traffic (another filter, another page) shows what happened before.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use apistend_catalog::ServiceId;
use apistend_limiter::Decision;

use super::buckets::{BucketRow, buckets_of};
use super::feed::BucketOrder;
use super::schema::BucketFilter;
use crate::journal::Touch;
use crate::state::AppState;
use crate::tenants::SandboxRecord;

/// How long a bucket counts as active after its last request, and how far back its past goes.
pub(super) const ACTIVE_MS: u64 = 5 * 60 * 1000;

/// Active buckets ordered first, at most (the most recently touched): each is read from the
/// store on every tick.
const MAX_ACTIVE: usize = 500;

/// Points of a bucket's past sent, at most (the latest).
const MAX_POINTS: usize = 600;

/// A level a request left: (at_ms, remaining, limit).
type Level = (u64, u32, u32);

/// One bucket's recent activity.
#[derive(Debug, Default)]
struct Active {
    last_ms: u64,
    /// Its levels from the journal, until the feed has shown them.
    past: Option<Vec<Level>>,
}

/// The buckets a feed knows were touched lately: key → (service, group) → activity.
#[derive(Debug, Default)]
pub(super) struct Activity {
    keys: HashMap<Arc<str>, HashMap<(ServiceId, usize), Active>>,
}

impl Activity {
    /// What the journal's `touches` (oldest first) say.
    pub(super) fn of(touches: Vec<Touch>) -> Self {
        let mut a = Self::default();
        for t in touches {
            let active = a.entry(&t.key, t.service, t.group);
            active.last_ms = active.last_ms.max(t.at_ms);
            active
                .past
                .get_or_insert_with(Vec::new)
                .push((t.at_ms, t.remaining, t.limit));
        }
        a
    }

    fn entry(&mut self, key: &Arc<str>, service: ServiceId, group: usize) -> &mut Active {
        self.keys
            .entry(Arc::clone(key))
            .or_default()
            .entry((service, group))
            .or_default()
    }

    /// A request the feed saw.
    pub(super) fn saw(&mut self, key: &Arc<str>, service: ServiceId, group: usize, at_ms: u64) {
        let active = self.entry(key, service, group);
        active.last_ms = active.last_ms.max(at_ms);
    }

    /// Forgets what was last touched more than [`ACTIVE_MS`] before `now_ms`.
    pub(super) fn expire(&mut self, now_ms: u64) {
        let since = now_ms.saturating_sub(ACTIVE_MS);
        for groups in self.keys.values_mut() {
            groups.retain(|_, a| a.last_ms >= since);
        }
        self.keys.retain(|_, groups| !groups.is_empty());
    }

    #[cfg(test)]
    fn get(&self, key: &str, service: ServiceId, group: usize) -> Option<&Active> {
        self.keys.get(key)?.get(&(service, group))
    }

    /// When the bucket was last touched, if lately.
    #[cfg(test)]
    fn last_ms(&self, key: &str, service: ServiceId, group: usize) -> Option<u64> {
        self.get(key, service, group).map(|a| a.last_ms)
    }

    /// `row`'s bucket's activity.
    fn of_row(&mut self, state: &AppState, row: &BucketRow) -> Option<&mut Active> {
        let svc = state.catalog.service(row.service)?;
        let group = svc.groups.iter().position(|g| g.id == row.group)?;
        self.keys
            .get_mut(row.key.as_str())?
            .get_mut(&(row.service, group))
    }

    /// What a feed's row of `row`'s bucket carries: when it was last touched, if lately, and —
    /// once — its past as `[at_ms, remaining, limit]` points: the levels its requests left and,
    /// where the quota's refill would have filled it before the next request, the moment it was
    /// full again.
    pub(super) fn shown(
        &mut self,
        state: &AppState,
        row: &BucketRow,
        now_ms: u64,
    ) -> (Option<u64>, Option<Vec<[u64; 3]>>) {
        let Some(active) = self.of_row(state, row) else {
            return (None, None);
        };
        let per_token_ms = row.quota.interval_micros().div_ceil(1000);
        let past = active.past.take().map(|p| series(&p, per_token_ms, now_ms));
        (Some(active.last_ms), past)
    }
}

/// The levels, with the moments of refill to full between them (one token every
/// `per_token_ms`: the quota's refill under its default algorithm; a windowed quota refills at
/// once at the window's end, drawn here as the same slope).
fn series(levels: &[Level], per_token_ms: u64, now_ms: u64) -> Vec<[u64; 3]> {
    let mut out = Vec::with_capacity(levels.len() * 2);
    for (i, &(at, remaining, limit)) in levels.iter().enumerate() {
        out.push([at, u64::from(remaining), u64::from(limit)]);
        let next = levels.get(i + 1).map_or(now_ms, |l| l.0);
        let full_at = at.saturating_add(u64::from(limit.saturating_sub(remaining)) * per_token_ms);
        if remaining < limit && full_at < next {
            out.push([full_at, u64::from(limit), u64::from(limit)]);
        }
    }
    let cut = out.len().saturating_sub(MAX_POINTS);
    out.drain(..cut);
    out
}

/// A page of the feed: its rows, read from the store (or the store's error), and whether more
/// follow.
pub(super) struct Page {
    pub(super) rows: Vec<(BucketRow, Decision)>,
    pub(super) more: bool,
}

/// Rows `offset..offset + limit` of the sandbox's buckets `filter` matches, in `order`.
///
/// # Errors
/// The store's, when it does not answer.
pub(super) async fn page(
    state: &AppState,
    s: &SandboxRecord,
    filter: &BucketFilter,
    activity: &Activity,
    order: BucketOrder,
    offset: usize,
    limit: usize,
) -> Result<Page, apistend_limiter::LimiterError> {
    let mut first: Vec<(BucketRow, Decision, u64)> = Vec::new();
    if order == BucketOrder::Activity {
        for (row, last) in activity.rows(state, s, filter) {
            let d = state.store.peek(&row.bucket, &row.quota).await?;
            first.push((row, d, last));
        }
        // The most drained first; of two as drained, the one touched last.
        let share = |d: &Decision| u64::from(d.remaining) * 1_000_000 / u64::from(d.limit.max(1));
        first.sort_by(|a, b| share(&a.1).cmp(&share(&b.1)).then(b.2.cmp(&a.2)));
    }
    let shown: HashSet<String> = first.iter().map(|f| f.0.bucket.clone()).collect();
    let rest = buckets_of(state, s, filter).filter(|r| !shown.contains(&r.bucket));
    let all = first
        .into_iter()
        .map(|(r, d, _)| (r, Some(d)))
        .chain(rest.map(|r| (r, None)));
    let mut rows = Vec::new();
    let mut more = false;
    for (row, d) in all.skip(offset) {
        if rows.len() == limit {
            more = true;
            break;
        }
        let d = match d {
            Some(d) => d,
            None => state.store.peek(&row.bucket, &row.quota).await?,
        };
        rows.push((row, d));
    }
    Ok(Page { rows, more })
}

impl Activity {
    /// The rows of the active buckets `filter` matches, each with when it was last touched: the
    /// [`MAX_ACTIVE`] touched last. Built from what was touched, not by walking every bucket of
    /// the sandbox (thousands of keys, hundreds of groups each).
    fn rows(
        &self,
        state: &AppState,
        s: &SandboxRecord,
        filter: &BucketFilter,
    ) -> Vec<(BucketRow, u64)> {
        let mut touched: Vec<(&str, ServiceId, usize, u64)> = self
            .keys
            .iter()
            .filter(|(key, _)| filter.key.as_deref().is_none_or(|want| want == &***key))
            .flat_map(|(key, groups)| {
                groups
                    .iter()
                    .map(move |(&(svc, g), a)| (&**key, svc, g, a.last_ms))
            })
            .collect();
        touched.sort_by_key(|t| std::cmp::Reverse(t.3));
        let mut out = Vec::new();
        for (key, service, group, last) in touched {
            let Some(svc) = state.catalog.service(service) else {
                continue;
            };
            let Some(g) = svc.groups.get(group) else {
                continue;
            };
            if filter
                .service
                .as_deref()
                .is_some_and(|want| want != service.as_str())
                || filter.group.as_deref().is_some_and(|want| want != g.id)
            {
                continue;
            }
            let one = BucketFilter::page(
                Some(key.to_owned()),
                Some(service.as_str().to_owned()),
                Some(g.id.clone()),
            );
            // None: a key revoked since, or a group whose buckets are per host (not listed).
            if let Some(row) = buckets_of(state, s, &one).next() {
                out.push((row, last));
            }
            if out.len() == MAX_ACTIVE {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_past_shows_each_level_and_the_refill_to_full_between_requests() {
        // 4 tokens, one back every 100 ms: drained at 1000, one taken at 1500 (full again at
        // 1400 before it), then 1 left at 1600; now at 1700 it has not filled yet.
        let levels = [(1000, 0, 4), (1500, 3, 4), (1600, 1, 4)];
        assert_eq!(
            series(&levels, 100, 1700),
            vec![[1000, 0, 4], [1400, 4, 4], [1500, 3, 4], [1600, 1, 4],]
        );
        // Later, it did.
        assert_eq!(
            series(&levels[2..], 100, 2000),
            vec![[1600, 1, 4], [1900, 4, 4]]
        );
    }

    #[test]
    fn activity_is_forgotten_after_five_minutes_and_the_past_is_given_once() {
        let key: Arc<str> = Arc::from("k");
        // Two services of the catalog, whichever they are.
        let catalog = apistend_catalog::Catalog::builtin().unwrap();
        let (one, two) = (catalog.services()[0].id, catalog.services()[1].id);
        let t = |at_ms| Touch {
            key: Arc::clone(&key),
            service: one,
            group: 2,
            at_ms,
            remaining: 1,
            limit: 2,
        };
        let mut a = Activity::of(vec![t(1_000), t(2_000)]);
        assert_eq!(a.last_ms("k", one, 2), Some(2_000));
        assert_eq!(a.last_ms("k", one, 3), None);
        assert!(a.get("k", one, 2).unwrap().past.is_some());
        a.saw(&key, two, 0, 200_000);
        a.expire(2_000 + ACTIVE_MS + 1);
        assert_eq!(a.last_ms("k", one, 2), None);
        assert_eq!(a.last_ms("k", two, 0), Some(200_000));
    }
}
