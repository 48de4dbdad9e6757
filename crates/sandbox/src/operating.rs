//! Bitrix24's operating-time budget: execution time per method and application (or webhook),
//! summed over ten one-minute baskets. The call that crosses the budget still completes; the next
//! one is refused until the oldest basket drops out.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use std::time::Duration;

use apistend_catalog::OperatingBudget;
use serde_json::{Value, json};

use crate::clock::{rfc3339_offset, unix_now};

const BASKET_SECS: f64 = 60.0;
const MAX_TRACKED: usize = 100_000;

/// What the `time` block reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OperatingState {
    /// Seconds accumulated in the window.
    pub(crate) operating: f64,
    /// Unix time when the oldest basket leaves the window.
    pub(crate) reset_at: f64,
}

#[derive(Debug)]
pub(crate) struct Operating {
    budget: OperatingBudget,
    baskets: Mutex<HashMap<String, VecDeque<(i64, f64)>>>,
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
            self.add(&key, finish, secs)
        } else {
            #[allow(clippy::cast_precision_loss)] // a batch holds at most a few hundred calls
            let share = secs / nested.len() as f64;
            for m in nested {
                self.add(&format!("{owner}:{m}"), finish, share);
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

    fn window(&self) -> i64 {
        i64::from(self.budget.window_secs) / 60
    }

    #[allow(clippy::cast_possible_truncation)]
    fn state(&self, q: &mut VecDeque<(i64, f64)>, now: f64) -> OperatingState {
        let minute = (now / BASKET_SECS).floor() as i64;
        while q.front().is_some_and(|(m, _)| *m <= minute - self.window()) {
            q.pop_front();
        }
        let operating = q.iter().map(|(_, s)| s).sum();
        let reset_at = q
            .front()
            .map_or(now + f64::from(self.budget.window_secs), |(m, _)| {
                (m + self.window()) as f64 * BASKET_SECS
            });
        OperatingState {
            operating,
            reset_at,
        }
    }

    /// Before a call: `Err` with the state when the method is blocked for this caller.
    pub(crate) fn check(&self, who: &str, now: f64) -> Result<OperatingState, OperatingState> {
        let mut map = self.baskets.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(q) = map.get_mut(who) else {
            return Ok(OperatingState {
                operating: 0.0,
                reset_at: now + f64::from(self.budget.window_secs),
            });
        };
        let st = self.state(q, now);
        if st.operating >= f64::from(self.budget.limit_secs) {
            Err(st)
        } else {
            Ok(st)
        }
    }

    /// After a call that took `secs`.
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn add(&self, who: &str, now: f64, secs: f64) -> OperatingState {
        let mut map = self.baskets.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MAX_TRACKED && !map.contains_key(who) {
            let horizon = (now / BASKET_SECS).floor() as i64 - self.window();
            map.retain(|_, q| q.back().is_some_and(|(m, _)| *m > horizon));
        }
        let q = map.entry(who.to_owned()).or_default();
        let minute = (now / BASKET_SECS).floor() as i64;
        match q.back_mut() {
            Some((m, s)) if *m == minute => *s += secs,
            _ => q.push_back((minute, secs)),
        }
        self.state(q, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_budget_until_the_oldest_basket_leaves() {
        let op = Operating::new(OperatingBudget::new(480, 600));
        let t0 = 1_800_000_000.0 - 1_800_000_000.0 % 60.0;
        assert!(op.check("app:crm.deal.list", t0).is_ok());
        op.add("app:crm.deal.list", t0, 300.0);
        assert!(op.check("app:crm.deal.list", t0 + 61.0).is_ok());
        let st = op.add("app:crm.deal.list", t0 + 61.0, 200.0);
        assert!((st.operating - 500.0).abs() < 1e-9);
        assert_eq!(st.reset_at, t0 + 600.0);
        let blocked = op.check("app:crm.deal.list", t0 + 120.0).unwrap_err();
        assert_eq!(blocked.reset_at, t0 + 600.0);
        assert!(
            op.check("app:crm.deal.get", t0 + 120.0).is_ok(),
            "other methods keep working"
        );
        assert!(
            op.check("other:crm.deal.list", t0 + 120.0).is_ok(),
            "other applications keep working"
        );
        // The first basket drops out at t0 + 600: 200 s left, unblocked.
        let st = op.check("app:crm.deal.list", t0 + 600.0).unwrap();
        assert!((st.operating - 200.0).abs() < 1e-9);
    }
}
