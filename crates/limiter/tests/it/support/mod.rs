//! Shared test support: a plain reference model of both algorithms, written straight from
//! docs/architecture.md (the engine's semantics) and independent of the engine's code.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::collections::HashMap;

/// One operation of a random sequence.
#[derive(Debug, Clone, Copy)]
pub enum RefOp {
    Acquire(u32),
    /// Take `n` tokens only if they have been available for this many µs.
    Settled(u32, u64),
    Penalize(u64),
    Refund(u32),
    /// The remote service says this many tokens are left.
    Align(u32),
    /// Take `n` tokens, owing what is missing.
    Charge(u32),
}

/// The longest span a quota may have, in µs (the engine's cap on what a bucket may owe).
pub const MAX_SPAN_US: u64 = 1 << 52;

/// The figures the model predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefDecision {
    pub allowed: bool,
    pub remaining: u64,
    pub retry_us: u64,
}

/// GCRA as docs/architecture.md states it: one TAT per key.
#[derive(Debug, Default, Clone)]
pub struct RefGcra {
    tat: HashMap<String, i128>,
}

impl RefGcra {
    pub fn apply(&mut self, key: &str, now: u64, burst: u32, t: u64, op: RefOp) -> RefDecision {
        let now = i128::from(now);
        let (b, t) = (i128::from(burst), i128::from(t));
        let stored = self.tat.get(key).copied().unwrap_or(0);
        let tat = stored.max(now);
        let tokens = |tat: i128| ((now + b * t - tat).max(0) / t) as u64;
        // The bucket as it stands at schedule `cur` (at least now).
        let report = |cur: i128| {
            let avail = tokens(cur);
            RefDecision {
                allowed: avail >= 1,
                remaining: avail,
                retry_us: (cur + t - b * t - now).max(0) as u64,
            }
        };
        match op {
            RefOp::Acquire(n) => {
                let new = tat + i128::from(n) * t;
                if new - b * t <= now {
                    self.tat.insert(key.to_owned(), new);
                    RefDecision {
                        allowed: true,
                        remaining: tokens(new),
                        retry_us: 0,
                    }
                } else {
                    RefDecision {
                        allowed: false,
                        remaining: tokens(tat),
                        retry_us: (new - b * t - now) as u64,
                    }
                }
            }
            RefOp::Settled(n, m) => {
                let new = tat + i128::from(n) * t;
                // When the n tokens became available (none is pending without state).
                let since = stored + i128::from(n) * t - b * t;
                let settled = stored == 0 || since + i128::from(m) <= now;
                if new - b * t <= now && settled {
                    self.tat.insert(key.to_owned(), new);
                    RefDecision {
                        allowed: true,
                        remaining: tokens(new),
                        retry_us: 0,
                    }
                } else {
                    let wait = (new - b * t - now).max(since + i128::from(m) - now);
                    RefDecision {
                        allowed: false,
                        remaining: tokens(tat),
                        retry_us: wait.max(0) as u64,
                    }
                }
            }
            RefOp::Penalize(d) => {
                let new = stored.max(now + i128::from(d) + (b - 1) * t);
                self.tat.insert(key.to_owned(), new);
                report(new.max(now))
            }
            RefOp::Align(r) => {
                // The schedule at which exactly r tokens are there now, if that is later.
                let target = now + (b - i128::from(r).min(b)) * t;
                if target > tat {
                    self.tat.insert(key.to_owned(), target);
                }
                report(self.tat.get(key).copied().unwrap_or(0).max(now))
            }
            RefOp::Charge(0) => report(tat),
            RefOp::Charge(n) => {
                let new = (tat + i128::from(n) * t).min(now + i128::from(MAX_SPAN_US));
                self.tat.insert(key.to_owned(), new);
                let horizon = now + b * t;
                RefDecision {
                    allowed: new <= horizon,
                    remaining: tokens(new),
                    retry_us: if new <= horizon {
                        0
                    } else {
                        (new + t - horizon) as u64
                    },
                }
            }
            RefOp::Refund(n) => {
                if stored > now {
                    let back = stored - i128::from(n) * t;
                    // Refunded to a full bucket: the key is forgotten (no slot opened recently).
                    if back <= now {
                        self.tat.remove(key);
                    } else {
                        self.tat.insert(key.to_owned(), back);
                    }
                }
                report(self.tat.get(key).copied().unwrap_or(0).max(now))
            }
        }
    }
}

/// A fixed window of `burst` per `burst × t` that opens (at millisecond granularity) with the first
/// request — the decision record's INCR + PEXPIRE.
#[derive(Debug, Default, Clone)]
pub struct RefWindow {
    windows: HashMap<String, (u64, u64)>, // key -> (end_ms, count)
}

impl RefWindow {
    /// Like `acquire`, but a window that ended less than `m` µs ago still holds.
    pub fn settled(
        &mut self,
        key: &str,
        now: u64,
        burst: u32,
        t: u64,
        n: u32,
        m: u64,
    ) -> RefDecision {
        if let Some(&(end, _)) = self.windows.get(key)
            && end * 1000 <= now
            && end * 1000 + m > now
        {
            return RefDecision {
                allowed: false,
                remaining: u64::from(burst),
                retry_us: end * 1000 + m - now,
            };
        }
        self.acquire(key, now, burst, t, n)
    }

    /// Takes `n`, owing what is missing: a full window stays full a window longer for each burst
    /// owed.
    pub fn charge(&mut self, key: &str, now: u64, burst: u32, t: u64, n: u32) -> RefDecision {
        let len_ms = (u64::from(burst) * t).div_ceil(1000).max(1);
        let now_ms = now / 1000;
        let (end, count) = match self.windows.get(key) {
            Some(&(end, count)) if end > now_ms => (end, count),
            _ => (now_ms + len_ms, 0),
        };
        let taken = count + u64::from(n);
        if taken <= u64::from(burst) {
            self.windows.insert(key.to_owned(), (end, taken));
            return RefDecision {
                allowed: true,
                remaining: u64::from(burst) - taken,
                retry_us: 0,
            };
        }
        let windows = (taken - u64::from(burst)).div_ceil(u64::from(burst));
        let end = (end + windows * len_ms).min(now_ms + MAX_SPAN_US / 1000);
        self.windows.insert(key.to_owned(), (end, u64::from(burst)));
        RefDecision {
            allowed: false,
            remaining: 0,
            retry_us: end * 1000 - now,
        }
    }

    pub fn acquire(&mut self, key: &str, now: u64, burst: u32, t: u64, n: u32) -> RefDecision {
        let len_ms = (u64::from(burst) * t).div_ceil(1000).max(1);
        let now_ms = now / 1000;
        let (end, count) = match self.windows.get(key) {
            Some(&(end, count)) if end > now_ms => (end, count),
            _ => (now_ms + len_ms, 0),
        };
        if count + u64::from(n) <= u64::from(burst) {
            self.windows
                .insert(key.to_owned(), (end, count + u64::from(n)));
            RefDecision {
                allowed: true,
                remaining: u64::from(burst) - count - u64::from(n),
                retry_us: 0,
            }
        } else {
            RefDecision {
                allowed: false,
                remaining: u64::from(burst) - count,
                retry_us: end * 1000 - now,
            }
        }
    }
}

/// Whether a list of admitted `(time µs, tokens)` ever exceeds `burst + d/t` in a window of
/// length `d`; returns the first violation.
pub fn bound_violation(admitted: &[(u64, u32)], burst: u32, t: u64) -> Option<(u64, u64, u64)> {
    for (i, &(start, _)) in admitted.iter().enumerate() {
        let mut sum = 0u64;
        for &(time, n) in admitted.iter().skip(i) {
            sum += u64::from(n);
            let d = time - start;
            if sum > u64::from(burst) + d / t {
                return Some((start, time, sum));
            }
        }
    }
    None
}
