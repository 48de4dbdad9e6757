//! The two algorithms as pure functions of (stored state, now, quota, operation).
//!
//! Both stores run exactly this arithmetic: the memory store directly, the Redis store through a
//! Lua transcription of it (`redis/limiter.lua`). The state is one `u64`:
//! - `0`: no state (a full bucket);
//! - GCRA: the theoretical arrival time (TAT) in microseconds since the Unix epoch (bit 63 clear);
//! - fixed window: bit 63 set, the window's end in milliseconds in bits 20..63, the count in
//!   bits 0..20.
//!
//! A key used with the other algorithm than its state was written with reads as "no state".

use crate::decision::Decision;
use crate::quota::{MAX_SPAN_US, Quota};
use crate::{clock::Timestamp, quota::Algorithm};

const FW_TAG: u64 = 1 << 63;
const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const END_MASK: u64 = (1 << 43) - 1;

/// What to do to a bucket: the one vocabulary of both stores ([`Store::apply`](crate::Store::apply)).
///
/// Times are whole microseconds (as [`Duration::as_micros`](std::time::Duration::as_micros)
/// gives them); spans beyond about 142 years are cut to that.
///
/// ```
/// use apistend_limiter::{ManualClock, MemoryStore, Op, Quota};
/// use std::time::Duration;
/// let store = MemoryStore::with_clock(ManualClock::new());
/// let q = Quota::new(5, Duration::from_secs(1))?;
/// assert!(store.apply("k", &q, Op::Acquire(1))?.allowed);
/// // An answer that costs 10 (a WB 409): 4 were there, 6 are owed.
/// let after = store.apply("k", &q, Op::Charge(10))?;
/// assert!(!after.allowed);
/// assert_eq!(after.remaining, 0);
/// assert_eq!(after.reset_after, Duration::from_secs(11));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Op {
    /// Take `n` tokens if they are there (`0` is a peek).
    Acquire(u32),
    /// Take `n` tokens if they have been there for at least this many microseconds: a caller whose
    /// requests reach the real bucket after uneven delays waits out that spread.
    Settled(u32, u64),
    /// Report the bucket without changing it.
    Peek,
    /// Allow nothing for this many microseconds, then resume at the nominal rate without a burst.
    Penalize(u64),
    /// Give back `n` tokens of a request that was never sent.
    Refund(u32),
    /// The remote service says this many tokens are left: hold no more than that (a bucket
    /// that holds fewer already is left alone).
    Align(u32),
    /// Take `n` tokens, owing what is missing: never refused, the bucket refills that much later
    /// (an answer that costs more than was taken up front; `allowed` tells whether they were all
    /// there). GCRA: `TAT := max(TAT, now) + n·T`; a fixed window fills and its next window
    /// opens later by a window for each burst owed.
    Charge(u32),
}

impl Op {
    /// Whether the operation takes tokens only if they are there (all or nothing over several
    /// buckets), and how many.
    pub(crate) fn taking(self) -> Option<u32> {
        match self {
            Op::Acquire(n) | Op::Settled(n, _) if n > 0 => Some(n),
            _ => None,
        }
    }
}

/// The decision and the state to store (`None`: leave it; `Some(0)`: forget the key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) write: Option<u64>,
    pub(crate) decision: Decision,
}

pub(crate) fn step(state: u64, now: Timestamp, quota: &Quota, op: Op) -> Step {
    match quota.algorithm() {
        Algorithm::Gcra => gcra(state, now, quota, op),
        Algorithm::FixedWindow => window(state, now, quota, op),
    }
}

/// How long a state is kept after its bucket is full again: [`Op::Settled`] still needs it to
/// hold back a token that appeared less than a margin ago (margins of up to this long).
pub(crate) const SETTLE_GRACE_US: u64 = 1_000_000;

/// Whether a stored state carries no information any more at `now` (its bucket has been full
/// for [`SETTLE_GRACE_US`]).
pub(crate) fn is_spent(state: u64, now: Timestamp) -> bool {
    let now = now.saturating_sub(SETTLE_GRACE_US);
    if state == 0 {
        true
    } else if state & FW_TAG == 0 {
        state <= now
    } else {
        ((state >> COUNT_BITS) & END_MASK) * 1000 <= now
    }
}

fn gcra(state: u64, now: Timestamp, quota: &Quota, op: Op) -> Step {
    let t = quota.interval_micros();
    let span = quota.span_micros();
    let burst = quota.burst();
    let stored = if state & FW_TAG == 0 { state } else { 0 };
    let tat = stored.max(now);
    let horizon = now + span;
    let view = |tat: u64| {
        let available = horizon.saturating_sub(tat) / t;
        let retry = (tat + t).saturating_sub(horizon);
        Decision::from_micros(available >= 1, burst, available, retry, tat - now)
    };
    let keep = |decision| Step {
        write: None,
        decision,
    };
    match op {
        Op::Peek | Op::Acquire(0) | Op::Charge(0) => keep(view(tat)),
        // A plain acquire is a settled one with no margin: its `settled_at` is then the moment
        // the tokens appear, which the horizon test already demands.
        Op::Acquire(n) | Op::Settled(n, _) => {
            let margin = match op {
                Op::Settled(_, m) => m.min(MAX_SPAN_US),
                _ => 0,
            };
            let new_tat = tat + u64::from(n) * t;
            // Against the stored schedule only: a bucket without state has no slot that just
            // opened, and a schedule long past is settled already. Without a margin the horizon
            // test says all there is to say.
            let settled_at = if stored == 0 || margin == 0 {
                0
            } else {
                (stored + u64::from(n) * t + margin).saturating_sub(span)
            };
            if new_tat <= horizon && settled_at <= now {
                Step {
                    write: Some(new_tat),
                    decision: Decision::from_micros(
                        true,
                        burst,
                        (horizon - new_tat) / t,
                        0,
                        new_tat - now,
                    ),
                }
            } else {
                let retry = new_tat
                    .saturating_sub(horizon)
                    .max(settled_at.saturating_sub(now));
                keep(Decision::from_micros(
                    false,
                    burst,
                    horizon.saturating_sub(tat) / t,
                    retry,
                    tat - now,
                ))
            }
        }
        Op::Penalize(d) => {
            let floor = now + d.min(MAX_SPAN_US) + u64::from(burst - 1) * t;
            if floor > stored {
                Step {
                    write: Some(floor),
                    decision: view(floor.max(now)),
                }
            } else {
                keep(view(tat))
            }
        }
        Op::Refund(n) => {
            if stored <= now {
                return keep(view(now));
            }
            let new_tat = stored.saturating_sub(u64::from(n) * t).max(now);
            Step {
                write: Some(if new_tat <= now { 0 } else { new_tat }),
                decision: view(new_tat),
            }
        }
        Op::Charge(n) => {
            // What is not there is owed: the schedule moves on regardless (at most by the
            // longest span a quota may have, which keeps the arithmetic exact in Lua).
            let new_tat = tat
                .saturating_add(u64::from(n).saturating_mul(t))
                .min(now + MAX_SPAN_US);
            let taken = new_tat <= horizon;
            Step {
                write: Some(new_tat),
                decision: Decision::from_micros(
                    taken,
                    burst,
                    horizon.saturating_sub(new_tat) / t,
                    if taken {
                        0
                    } else {
                        (new_tat + t).saturating_sub(horizon)
                    },
                    new_tat - now,
                ),
            }
        }
        Op::Align(r) => {
            // The schedule at which exactly `r` tokens are available now.
            let target = horizon.saturating_sub(u64::from(r.min(burst)) * t);
            if target > tat {
                Step {
                    write: Some(target),
                    decision: view(target),
                }
            } else {
                keep(view(tat))
            }
        }
    }
}

fn pack(end_ms: u64, count: u64) -> u64 {
    FW_TAG | ((end_ms & END_MASK) << COUNT_BITS) | (count & COUNT_MASK)
}

fn window(state: u64, now: Timestamp, quota: &Quota, op: Op) -> Step {
    let burst = u64::from(quota.burst());
    let limit = quota.burst();
    let length_ms = quota.span_micros().div_ceil(1000).max(1);
    let now_ms = now / 1000;
    let previous_end = if state & FW_TAG != 0 {
        (state >> COUNT_BITS) & END_MASK
    } else {
        0
    };
    let (active, end, count) = if state & FW_TAG != 0 && ((state >> COUNT_BITS) & END_MASK) > now_ms
    {
        (true, (state >> COUNT_BITS) & END_MASK, state & COUNT_MASK)
    } else {
        (false, 0, 0)
    };
    let until = |end: u64| (end * 1000).saturating_sub(now);
    let view = |active: bool, end: u64, count: u64| {
        if !active {
            return Decision::from_micros(true, limit, burst, 0, 0);
        }
        let allowed = count < burst;
        let reset = if count > 0 { until(end) } else { 0 };
        Decision::from_micros(
            allowed,
            limit,
            burst.saturating_sub(count),
            if allowed { 0 } else { until(end) },
            reset,
        )
    };
    let keep = |decision| Step {
        write: None,
        decision,
    };
    match op {
        Op::Peek | Op::Acquire(0) | Op::Charge(0) => keep(view(active, end, count)),
        Op::Acquire(n) => {
            let (end, count) = if active {
                (end, count)
            } else {
                (now_ms + length_ms, 0)
            };
            let taken = count + u64::from(n);
            if taken <= burst {
                Step {
                    write: Some(pack(end, taken)),
                    decision: Decision::from_micros(true, limit, burst - taken, 0, until(end)),
                }
            } else {
                keep(Decision::from_micros(
                    false,
                    limit,
                    burst.saturating_sub(count),
                    until(end),
                    until(end),
                ))
            }
        }
        Op::Settled(n, margin) => {
            // A window that ended less than `margin` ago may not have ended yet where the real
            // bucket is: the next one opens `margin` later here.
            let settles = (previous_end * 1000).saturating_add(margin.min(MAX_SPAN_US));
            if !active && previous_end > 0 && settles > now {
                keep(Decision::from_micros(false, limit, burst, settles - now, 0))
            } else {
                window(state, now, quota, Op::Acquire(n))
            }
        }
        Op::Penalize(d) => {
            let target =
                (now + d.min(MAX_SPAN_US))
                    .div_ceil(1000)
                    .max(if active { end } else { 0 });
            if target > now_ms && (target, burst) != (end, count) {
                Step {
                    write: Some(pack(target, burst)),
                    decision: view(true, target, burst),
                }
            } else {
                keep(view(active, end, count))
            }
        }
        Op::Refund(n) => {
            if active && count > 0 {
                let left = count.saturating_sub(u64::from(n));
                Step {
                    write: Some(pack(end, left)),
                    decision: view(true, end, left),
                }
            } else {
                keep(view(active, end, count))
            }
        }
        Op::Charge(n) => {
            let step = window(state, now, quota, Op::Acquire(n));
            if step.decision.allowed {
                return step;
            }
            let (end, count) = if active {
                (end, count)
            } else {
                (now_ms + length_ms, 0)
            };
            let taken = count + u64::from(n);
            // The window fills, and stays full a window longer for each burst owed.
            let windows = (taken - burst).div_ceil(burst);
            let end = end
                .saturating_add(windows.saturating_mul(length_ms))
                .min(now_ms + MAX_SPAN_US / 1000);
            Step {
                write: Some(pack(end, burst)),
                decision: Decision::from_micros(false, limit, 0, until(end), until(end)),
            }
        }
        Op::Align(r) => {
            // As many used as leave `r`; a window not yet open opens now.
            let used = burst - u64::from(r).min(burst);
            let (end, count) = if active {
                (end, count)
            } else {
                (now_ms + length_ms, 0)
            };
            if used > count {
                Step {
                    write: Some(pack(end, used)),
                    decision: view(true, end, used),
                }
            } else {
                keep(view(active, end, count))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const NOW: u64 = 1_767_225_600_000_000;

    fn q(burst: u32, interval_ms: u64) -> Quota {
        Quota::new(burst, Duration::from_millis(interval_ms)).unwrap()
    }

    #[test]
    fn gcra_burst_then_one_per_interval() {
        let quota = q(3, 100);
        let mut s = 0;
        for left in [2, 1, 0] {
            let st = step(s, NOW, &quota, Op::Acquire(1));
            assert!(st.decision.allowed);
            assert_eq!(st.decision.remaining, left);
            s = st.write.unwrap();
        }
        let denied = step(s, NOW, &quota, Op::Acquire(1));
        assert_eq!(denied.write, None, "a denial writes nothing");
        assert_eq!(denied.decision.retry_after, Duration::from_millis(100));
        assert_eq!(denied.decision.reset_after, Duration::from_millis(300));
        assert!(
            step(s, NOW + 100_000, &quota, Op::Acquire(1))
                .decision
                .allowed
        );
        let two = step(s, NOW + 100_000, &quota, Op::Acquire(2));
        assert!(!two.decision.allowed);
        assert_eq!(two.decision.retry_after, Duration::from_millis(100));
    }

    #[test]
    fn gcra_penalize_blocks_then_resumes_without_burst() {
        let quota = q(5, 100);
        let st = step(0, NOW, &quota, Op::Penalize(1_000_000));
        let s = st.write.unwrap();
        assert!(!st.decision.allowed);
        assert_eq!(st.decision.retry_after, Duration::from_secs(1));
        assert!(
            !step(s, NOW + 999_999, &quota, Op::Acquire(1))
                .decision
                .allowed
        );
        let ok = step(s, NOW + 1_000_000, &quota, Op::Acquire(1));
        assert!(ok.decision.allowed);
        let s = ok.write.unwrap();
        assert!(
            !step(s, NOW + 1_000_000, &quota, Op::Acquire(1))
                .decision
                .allowed,
            "no burst after a penalty"
        );
        assert!(
            step(s, NOW + 1_100_000, &quota, Op::Acquire(1))
                .decision
                .allowed
        );
        // draining is penalize(T)
        let drained = step(0, NOW, &quota, Op::Penalize(100_000)).write.unwrap();
        assert!(
            !step(drained, NOW + 99_999, &quota, Op::Acquire(1))
                .decision
                .allowed
        );
    }

    #[test]
    fn gcra_refund_returns_tokens_but_never_beyond_full() {
        let quota = q(2, 100);
        let s = step(0, NOW, &quota, Op::Acquire(2)).write.unwrap();
        let r = step(s, NOW, &quota, Op::Refund(1));
        assert_eq!(r.decision.remaining, 1);
        let r = step(r.write.unwrap(), NOW, &quota, Op::Refund(5));
        assert_eq!(r.write, Some(0));
        assert_eq!(r.decision.remaining, 2);
    }

    #[test]
    fn settled_tokens_wait_out_the_margin_after_their_slot() {
        let gcra = Quota::new(2, Duration::from_millis(100)).unwrap();
        let m = 30_000;
        // No state: no slot opened recently, so nothing to wait for.
        let s = step(0, NOW, &gcra, Op::Settled(1, m));
        assert!(s.decision.allowed);
        // The schedule keeps no memory of how long the bucket was full: by it, the last token of
        // a burst appeared when the first was taken, so it too waits out the margin.
        let last = step(s.write.unwrap(), NOW, &gcra, Op::Settled(1, m));
        assert!(!last.decision.allowed);
        assert_eq!(last.decision.retry_after, Duration::from_micros(m));
        // A burst taken at once: the next token appears at NOW + 100 ms.
        let full = step(0, NOW, &gcra, Op::Acquire(2)).write.unwrap();
        // The next token appears at NOW + 100 ms; settled 30 ms later.
        let early = step(full, NOW + 110_000, &gcra, Op::Settled(1, m));
        assert!(!early.decision.allowed);
        assert_eq!(early.decision.retry_after, Duration::from_micros(20_000));
        assert!(
            step(full, NOW + 110_000, &gcra, Op::Acquire(1))
                .decision
                .allowed
        );
        assert!(
            step(full, NOW + 130_000, &gcra, Op::Settled(1, m))
                .decision
                .allowed
        );

        let fw = Quota::new(2, Duration::from_millis(50))
            .unwrap()
            .with_algorithm(Algorithm::FixedWindow);
        let s = step(0, NOW, &fw, Op::Settled(2, m)).write.unwrap();
        // The window ended at NOW + 100 ms; the next opens 30 ms later here.
        let early = step(s, NOW + 110_000, &fw, Op::Settled(1, m));
        assert!(!early.decision.allowed);
        assert_eq!(early.decision.retry_after, Duration::from_micros(20_000));
        assert!(
            step(s, NOW + 130_000, &fw, Op::Settled(1, m))
                .decision
                .allowed
        );
    }

    #[test]
    fn window_counts_and_opens_at_first_request() {
        let quota = q(2, 500).with_algorithm(Algorithm::FixedWindow); // 2 per second
        let a = step(0, NOW + 300, &quota, Op::Acquire(1));
        let s = a.write.unwrap();
        assert_eq!(
            a.decision.reset_after,
            Duration::from_micros(1_000_000 - 300)
        );
        let s = step(s, NOW + 1_000, &quota, Op::Acquire(1)).write.unwrap();
        let d = step(s, NOW + 2_000, &quota, Op::Acquire(1));
        assert!(!d.decision.allowed);
        assert_eq!(d.write, None);
        assert_eq!(d.decision.retry_after, Duration::from_micros(998_000));
        assert!(
            step(s, NOW + 1_000_000, &quota, Op::Acquire(2))
                .decision
                .allowed
        );
        assert!(is_spent(s, NOW + 1_000_000 + SETTLE_GRACE_US));
        assert!(!is_spent(s, NOW + 999_999 + SETTLE_GRACE_US));
    }

    #[test]
    fn states_of_the_other_algorithm_read_as_empty() {
        let gq = q(1, 100);
        let fq = gq.with_algorithm(Algorithm::FixedWindow);
        let g = step(0, NOW, &gq, Op::Acquire(1)).write.unwrap();
        assert!(step(g, NOW, &fq, Op::Acquire(1)).decision.allowed);
        let f = step(0, NOW, &fq, Op::Acquire(1)).write.unwrap();
        assert!(step(f, NOW, &gq, Op::Acquire(1)).decision.allowed);
    }

    #[test]
    fn align_holds_no_more_than_the_server_reports_and_never_loosens() {
        let quota = q(5, 200);
        let st = step(0, NOW, &quota, Op::Align(1));
        assert_eq!(st.decision.remaining, 1);
        let s = st.write.unwrap();
        // A looser report changes nothing.
        let looser = step(s, NOW, &quota, Op::Align(4));
        assert_eq!((looser.write, looser.decision.remaining), (None, 1));
        // Zero left: the next token in one interval.
        let zero = step(s, NOW, &quota, Op::Align(0));
        assert_eq!(zero.decision.remaining, 0);
        assert_eq!(zero.decision.retry_after, Duration::from_millis(200));
        // A fixed window counts as many used as leave the reported tokens.
        let fw = quota.with_algorithm(crate::quota::Algorithm::FixedWindow);
        let w = step(0, NOW, &fw, Op::Align(2));
        assert_eq!(w.decision.remaining, 2);
        let after = step(w.write.unwrap(), NOW, &fw, Op::Acquire(3));
        assert!(!after.decision.allowed);
    }
}
