//! Bitrix24's operating-time budget: execution time per method and application (or webhook),
//! summed over ten one-minute baskets. As `settings/how-to-call-rest-api/limits.md` describes
//! them, a basket starts at the first counted call (not at a minute boundary), takes the calls of
//! the minute after it and leaves the sum ten minutes after it started; `operating_reset_at` is
//! when the oldest one leaves (the documentation's call at 1778747192.9 reports 1778747792). The
//! call that crosses the budget still completes; the next one is refused until enough baskets
//! have left.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use std::time::Duration;

use apistend_catalog::OperatingBudget;
use serde_json::{Value, json};

use apistend_answers::clock::{rfc3339_offset, unix_now};

const BASKET_SECS: f64 = 60.0;
const MAX_TRACKED: usize = 100_000;

/// What the `time` block reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OperatingState {
    /// Seconds accumulated in the window.
    pub(crate) operating: f64,
    /// Unix time when the oldest basket leaves the window.
    pub(crate) reset_at: f64,
    /// Unix time from which the method may be called again (now when it may).
    pub(crate) unblock_at: f64,
}

#[derive(Debug)]
pub(crate) struct Operating {
    budget: OperatingBudget,
    /// Per caller and method: (start of the basket, seconds in it), oldest first.
    baskets: Mutex<HashMap<String, VecDeque<(f64, f64)>>>,
}

impl Operating {
    /// The `time` block added to a successful answer (`{"result": …}`), after accounting the
    /// call's processing time to `owner`'s `method` — shared evenly by the `nested` methods a call
    /// runs inside it (a `batch`), when there are some.
    pub(crate) fn time_block(
        &self,
        body: &str,
        owner: &str,
        method: &str,
        nested: &[String],
        started: f64,
        delay: Duration,
    ) -> String {
        let Ok(mut v) = serde_json::from_str::<Value>(body) else {
            return body.to_owned();
        };
        if v.get("result").is_none() {
            return body.to_owned();
        }
        let finish = unix_now();
        let secs = delay.as_secs_f64().max(finish - started);
        let key = format!("{owner}:{method}");
        let state = if nested.is_empty() {
            self.add(&key, started, finish, secs)
        } else {
            #[allow(clippy::cast_precision_loss)] // a batch holds at most a few hundred calls
            let share = secs / nested.len() as f64;
            for m in nested {
                self.add(&format!("{owner}:{m}"), started, finish, share);
            }
            self.check(&key, finish).unwrap_or_else(|s| s)
        };
        let Some(obj) = v.as_object_mut() else {
            return body.to_owned();
        };
        #[allow(clippy::cast_possible_truncation)]
        let reset_at = state.reset_at.floor() as i64;
        obj.insert(
            "time".into(),
            json!({
                "start": started,
                "finish": finish,
                "duration": finish - started,
                "processing": secs,
                "date_start": rfc3339_offset(started),
                "date_finish": rfc3339_offset(finish),
                "operating_reset_at": reset_at,
                "operating": state.operating,
            }),
        );
        v.to_string()
    }

    pub(crate) fn new(budget: OperatingBudget) -> Self {
        Self {
            budget,
            baskets: Mutex::new(HashMap::new()),
        }
    }

    fn window(&self) -> f64 {
        f64::from(self.budget.window_secs)
    }

    fn state(&self, q: &mut VecDeque<(f64, f64)>, now: f64) -> OperatingState {
        let window = self.window();
        while q.front().is_some_and(|(start, _)| start + window <= now) {
            q.pop_front();
        }
        let operating: f64 = q.iter().map(|(_, s)| s).sum();
        let limit = f64::from(self.budget.limit_secs);
        // Blocked: free again when the baskets that have left bring the sum under the limit.
        let mut left = operating;
        let mut unblock_at = now;
        for (start, secs) in q.iter() {
            if left < limit {
                break;
            }
            left -= secs;
            unblock_at = start + window;
        }
        OperatingState {
            operating,
            reset_at: q.front().map_or(now + window, |(start, _)| start + window),
            unblock_at,
        }
    }

    /// Before a call: `Err` with the state when the method is blocked for this caller.
    pub(crate) fn check(&self, who: &str, now: f64) -> Result<OperatingState, OperatingState> {
        let mut map = self.baskets.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(q) = map.get_mut(who) else {
            return Ok(OperatingState {
                operating: 0.0,
                reset_at: now + self.window(),
                unblock_at: now,
            });
        };
        let st = self.state(q, now);
        if st.operating >= f64::from(self.budget.limit_secs) {
            Err(st)
        } else {
            Ok(st)
        }
    }

    /// After a call that started at `started` and took `secs`, reported at `now`.
    pub(crate) fn add(&self, who: &str, started: f64, now: f64, secs: f64) -> OperatingState {
        let mut map = self.baskets.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MAX_TRACKED && !map.contains_key(who) {
            let horizon = now - self.window();
            map.retain(|_, q| q.back().is_some_and(|(start, _)| *start > horizon));
        }
        let q = map.entry(who.to_owned()).or_default();
        match q.back_mut() {
            Some((start, s)) if started < *start + BASKET_SECS => *s += secs,
            _ => q.push_back((started, secs)),
        }
        self.state(q, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_budget_until_enough_baskets_leave() {
        let op = Operating::new(OperatingBudget::new(480, 600));
        let key = "app:crm.deal.list";
        // The documentation's example: a basket that starts at 1778747192.9 leaves at +600.
        let t0 = 1_778_747_192.910_734;
        assert!(op.check(key, t0).is_ok());
        let st = op.add(key, t0, t0 + 0.6, 300.0);
        assert_eq!(st.reset_at.floor(), 1_778_747_792.0);
        // 59 s later: the same basket; 61 s after its start: a new one.
        op.add(key, t0 + 59.0, t0 + 59.5, 40.0);
        let st = op.add(key, t0 + 61.0, t0 + 61.5, 160.0);
        assert!((st.operating - 500.0).abs() < 1e-9);
        assert_eq!(st.reset_at, t0 + 600.0);
        let blocked = op.check(key, t0 + 120.0).unwrap_err();
        assert_eq!(blocked.reset_at, t0 + 600.0);
        assert_eq!(blocked.unblock_at, t0 + 600.0, "340 s leave, 160 s stay");
        assert!(
            op.check("app:crm.deal.get", t0 + 120.0).is_ok(),
            "other methods keep working"
        );
        assert!(
            op.check("other:crm.deal.list", t0 + 120.0).is_ok(),
            "other applications keep working"
        );
        // The first basket leaves at t0 + 600: 160 s left, unblocked.
        let st = op.check(key, t0 + 600.0).unwrap();
        assert!((st.operating - 160.0).abs() < 1e-9);
        assert_eq!(st.reset_at, t0 + 661.0);
    }

    #[test]
    fn a_block_lasts_until_the_sum_is_under_the_limit() {
        let op = Operating::new(OperatingBudget::new(480, 600));
        let key = "hook:crm.item.list";
        let t0 = 1_800_000_000.0;
        // Baskets of 100 s at t0, t0+100, …, t0+400: 500 s; dropping the first leaves 400 s.
        for i in 0..5 {
            let at = t0 + f64::from(i) * 100.0;
            op.add(key, at, at + 1.0, 100.0);
        }
        let blocked = op.check(key, t0 + 450.0).unwrap_err();
        assert_eq!(blocked.unblock_at, t0 + 600.0);
        assert!(op.check(key, t0 + 600.0).is_ok());
    }
}
