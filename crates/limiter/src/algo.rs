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

/// A step that writes nothing.
fn keep(decision: Decision) -> Step {
    Step {
        write: None,
        decision,
    }
}

fn gcra(state: u64, now: Timestamp, quota: &Quota, op: Op) -> Step {
    let g = Gcra::at(state, now, quota);
    match op {
        Op::Peek | Op::Acquire(0) | Op::Charge(0) => keep(g.view(g.tat)),
        // A plain acquire is a settled one with no margin: its `settled_at` is then the moment
        // the tokens appear, which the horizon test already demands.
        Op::Acquire(n) => g.take(n, 0),
        Op::Settled(n, m) => g.take(n, m.min(MAX_SPAN_US)),
        Op::Penalize(d) => g.penalize(d),
        Op::Refund(n) => g.refund(n),
        Op::Charge(n) => g.charge(n),
        Op::Align(r) => g.align(r),
    }
}

/// A GCRA bucket at one instant: what every operation on it reads.
struct Gcra {
    now: u64,
    /// The emission interval, and the burst's span (`B·T`), in µs.
    t: u64,
    span: u64,
    burst: u32,
    /// The stored schedule (0: none), and the schedule as of now.
    stored: u64,
    tat: u64,
    /// `now + B·T`: a schedule up to it leaves a token.
    horizon: u64,
}

impl Gcra {
    fn at(state: u64, now: Timestamp, quota: &Quota) -> Self {
        let stored = if state & FW_TAG == 0 { state } else { 0 };
        Self {
            now,
            t: quota.interval_micros(),
            span: quota.span_micros(),
            burst: quota.burst(),
            stored,
            tat: stored.max(now),
            horizon: now + quota.span_micros(),
        }
    }

    /// The bucket whose schedule is `tat`.
    fn view(&self, tat: u64) -> Decision {
        let available = self.horizon.saturating_sub(tat) / self.t;
        let retry = (tat + self.t).saturating_sub(self.horizon);
        Decision::from_micros(available >= 1, self.burst, available, retry, tat - self.now)
    }

    /// The schedule moved on to `new_tat` by a request that took its tokens.
    fn taken(&self, new_tat: u64) -> Step {
        Step {
            write: Some(new_tat),
            decision: Decision::from_micros(
                true,
                self.burst,
                (self.horizon - new_tat) / self.t,
                0,
                new_tat - self.now,
            ),
        }
    }

    fn take(&self, n: u32, margin: u64) -> Step {
        let (t, now) = (self.t, self.now);
        let new_tat = self.tat + u64::from(n) * t;
        // Against the stored schedule only: a bucket without state has no slot that just
        // opened, and a schedule long past is settled already. Without a margin the horizon
        // test says all there is to say.
        let settled_at = if self.stored == 0 || margin == 0 {
            0
        } else {
            (self.stored + u64::from(n) * t + margin).saturating_sub(self.span)
        };
        if new_tat <= self.horizon && settled_at <= now {
            return self.taken(new_tat);
        }
        let retry = new_tat
            .saturating_sub(self.horizon)
            .max(settled_at.saturating_sub(now));
        keep(Decision::from_micros(
            false,
            self.burst,
            self.horizon.saturating_sub(self.tat) / t,
            retry,
            self.tat - now,
        ))
    }

    fn penalize(&self, d: u64) -> Step {
        let floor = self.now + d.min(MAX_SPAN_US) + u64::from(self.burst - 1) * self.t;
        if floor > self.stored {
            Step {
                write: Some(floor),
                decision: self.view(floor.max(self.now)),
            }
        } else {
            keep(self.view(self.tat))
        }
    }

    fn refund(&self, n: u32) -> Step {
        if self.stored <= self.now {
            return keep(self.view(self.now));
        }
        let new_tat = self
            .stored
            .saturating_sub(u64::from(n) * self.t)
            .max(self.now);
        Step {
            write: Some(if new_tat <= self.now { 0 } else { new_tat }),
            decision: self.view(new_tat),
        }
    }

    fn charge(&self, n: u32) -> Step {
        // What is not there is owed: the schedule moves on regardless (at most by the longest
        // span a quota may have, which keeps the arithmetic exact in Lua).
        let new_tat = self
            .tat
            .saturating_add(u64::from(n).saturating_mul(self.t))
            .min(self.now + MAX_SPAN_US);
        if new_tat <= self.horizon {
            return self.taken(new_tat);
        }
        Step {
            write: Some(new_tat),
            decision: Decision::from_micros(
                false,
                self.burst,
                0,
                (new_tat + self.t).saturating_sub(self.horizon),
                new_tat - self.now,
            ),
        }
    }

    fn align(&self, r: u32) -> Step {
        // The schedule at which exactly `r` tokens are available now.
        let target = self
            .horizon
            .saturating_sub(u64::from(r.min(self.burst)) * self.t);
        if target > self.tat {
            Step {
                write: Some(target),
                decision: self.view(target),
            }
        } else {
            keep(self.view(self.tat))
        }
    }
}

fn pack(end_ms: u64, count: u64) -> u64 {
    FW_TAG | ((end_ms & END_MASK) << COUNT_BITS) | (count & COUNT_MASK)
}

fn window(state: u64, now: Timestamp, quota: &Quota, op: Op) -> Step {
    let w = Window::at(state, now, quota);
    match op {
        Op::Peek | Op::Acquire(0) | Op::Charge(0) => keep(w.view(w.active, w.end, w.count)),
        Op::Acquire(n) => w.acquire(n),
        Op::Settled(n, margin) => w.settled(n, margin),
        Op::Penalize(d) => w.penalize(d),
        Op::Refund(n) => w.refund(n),
        Op::Charge(n) => w.charge(n),
        Op::Align(r) => w.align(r),
    }
}

/// A fixed window at one instant: what every operation on it reads.
struct Window {
    now: u64,
    now_ms: u64,
    burst: u64,
    limit: u32,
    length_ms: u64,
    /// The end of the window last stored, open or not (0: none).
    previous_end: u64,
    /// Whether a window is open now, its end (ms) and its count.
    active: bool,
    end: u64,
    count: u64,
}

impl Window {
    fn at(state: u64, now: Timestamp, quota: &Quota) -> Self {
        let now_ms = now / 1000;
        let previous_end = if state & FW_TAG != 0 {
            (state >> COUNT_BITS) & END_MASK
        } else {
            0
        };
        let active = state & FW_TAG != 0 && previous_end > now_ms;
        Self {
            now,
            now_ms,
            burst: u64::from(quota.burst()),
            limit: quota.burst(),
            length_ms: quota.span_micros().div_ceil(1000).max(1),
            previous_end,
            active,
            end: if active { previous_end } else { 0 },
            count: if active { state & COUNT_MASK } else { 0 },
        }
    }

    /// Microseconds from now to the end `end` (ms).
    fn until(&self, end: u64) -> u64 {
        (end * 1000).saturating_sub(self.now)
    }

    fn view(&self, active: bool, end: u64, count: u64) -> Decision {
        if !active {
            return Decision::from_micros(true, self.limit, self.burst, 0, 0);
        }
        let allowed = count < self.burst;
        let reset = if count > 0 { self.until(end) } else { 0 };
        Decision::from_micros(
            allowed,
            self.limit,
            self.burst.saturating_sub(count),
            if allowed { 0 } else { self.until(end) },
            reset,
        )
    }

    /// The open window, or the one a request would open now.
    fn opened(&self) -> (u64, u64) {
        if self.active {
            (self.end, self.count)
        } else {
            (self.now_ms + self.length_ms, 0)
        }
    }

    fn acquire(&self, n: u32) -> Step {
        let (end, count) = self.opened();
        let taken = count + u64::from(n);
        if taken <= self.burst {
            return Step {
                write: Some(pack(end, taken)),
                decision: Decision::from_micros(
                    true,
                    self.limit,
                    self.burst - taken,
                    0,
                    self.until(end),
                ),
            };
        }
        keep(Decision::from_micros(
            false,
            self.limit,
            self.burst.saturating_sub(count),
            self.until(end),
            self.until(end),
        ))
    }

    fn settled(&self, n: u32, margin: u64) -> Step {
        // A window that ended less than `margin` ago may not have ended yet where the real
        // bucket is: the next one opens `margin` later here.
        let settles = (self.previous_end * 1000).saturating_add(margin.min(MAX_SPAN_US));
        if !self.active && self.previous_end > 0 && settles > self.now {
            keep(Decision::from_micros(
                false,
                self.limit,
                self.burst,
                settles - self.now,
                0,
            ))
        } else {
            self.acquire(n)
        }
    }

    fn penalize(&self, d: u64) -> Step {
        let target = (self.now + d.min(MAX_SPAN_US))
            .div_ceil(1000)
            .max(if self.active { self.end } else { 0 });
        if target > self.now_ms && (target, self.burst) != (self.end, self.count) {
            Step {
                write: Some(pack(target, self.burst)),
                decision: self.view(true, target, self.burst),
            }
        } else {
            keep(self.view(self.active, self.end, self.count))
        }
    }

    fn refund(&self, n: u32) -> Step {
        if self.active && self.count > 0 {
            let left = self.count.saturating_sub(u64::from(n));
            Step {
                write: Some(pack(self.end, left)),
                decision: self.view(true, self.end, left),
            }
        } else {
            keep(self.view(self.active, self.end, self.count))
        }
    }

    fn charge(&self, n: u32) -> Step {
        let step = self.acquire(n);
        if step.decision.allowed {
            return step;
        }
        let (end, count) = self.opened();
        let taken = count + u64::from(n);
        // The window fills, and stays full a window longer for each burst owed.
        let windows = (taken - self.burst).div_ceil(self.burst);
        let end = end
            .saturating_add(windows.saturating_mul(self.length_ms))
            .min(self.now_ms + MAX_SPAN_US / 1000);
        Step {
            write: Some(pack(end, self.burst)),
            decision: Decision::from_micros(false, self.limit, 0, self.until(end), self.until(end)),
        }
    }

    fn align(&self, r: u32) -> Step {
        // As many used as leave `r`; a window not yet open opens now.
        let used = self.burst - u64::from(r).min(self.burst);
        let (end, count) = self.opened();
        if used > count {
            Step {
                write: Some(pack(end, used)),
                decision: self.view(true, end, used),
            }
        } else {
            keep(self.view(self.active, self.end, self.count))
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
