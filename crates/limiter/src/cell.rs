//! The lock-free hot path: one compare-and-swap loop on one atomic word per key.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::algo::{self, Op};
use crate::clock::Timestamp;
use crate::decision::Decision;
use crate::quota::Quota;

/// An atomic state word. Abstracted so that the same loop runs under `shuttle` in tests.
pub(crate) trait StateCell {
    fn load(&self) -> u64;
    fn compare_exchange_weak(&self, current: u64, new: u64) -> Result<u64, u64>;
}

impl StateCell for AtomicU64 {
    #[inline]
    fn load(&self) -> u64 {
        AtomicU64::load(self, Ordering::Acquire)
    }

    #[inline]
    fn compare_exchange_weak(&self, current: u64, new: u64) -> Result<u64, u64> {
        AtomicU64::compare_exchange_weak(self, current, new, Ordering::AcqRel, Ordering::Acquire)
    }
}

/// Applies `op` atomically; also tells the word before and after when it wrote one (for
/// [`restore`]). A step that writes nothing (a denial, a peek) costs a single load.
#[inline]
pub(crate) fn update<C: StateCell>(
    cell: &C,
    now: Timestamp,
    quota: &Quota,
    op: Op,
) -> (Decision, Option<(u64, u64)>) {
    let mut current = cell.load();
    loop {
        let step = algo::step(current, now, quota, op);
        let Some(new) = step.write else {
            return (step.decision, None);
        };
        match cell.compare_exchange_weak(current, new) {
            Ok(_) => return (step.decision, Some((current, new))),
            Err(actual) => current = actual,
        }
    }
}

/// Puts `before` back if the word still holds `after` (nobody decided on it since); `false`
/// when it had moved on, and the caller must undo by an operation instead.
pub(crate) fn restore<C: StateCell>(cell: &C, before: u64, after: u64) -> bool {
    loop {
        match cell.compare_exchange_weak(after, before) {
            Ok(_) => return true,
            // A weak exchange may fail spuriously while the word is unchanged.
            Err(actual) if actual == after => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod shuttle_tests {
    use super::*;
    use shuttle::sync::Arc;
    use shuttle::sync::atomic::{AtomicU32, AtomicU64 as ShuttleAtomic, Ordering as SO};
    use std::time::Duration;

    impl StateCell for ShuttleAtomic {
        fn load(&self) -> u64 {
            ShuttleAtomic::load(self, SO::Acquire)
        }
        fn compare_exchange_weak(&self, current: u64, new: u64) -> Result<u64, u64> {
            ShuttleAtomic::compare_exchange_weak(self, current, new, SO::AcqRel, SO::Acquire)
        }
    }

    /// Three threads race for a bucket of 4 (two tokens each at most); whatever the interleaving,
    /// exactly 4 tokens are admitted and the stored TAT accounts for exactly those.
    #[test]
    fn racing_acquires_admit_exactly_the_burst() {
        shuttle::check_random(
            || {
                let quota = Quota::new(4, Duration::from_millis(10)).unwrap();
                let now = 1_000_000_000;
                let cell = Arc::new(ShuttleAtomic::new(0));
                let admitted = Arc::new(AtomicU32::new(0));
                let threads: Vec<_> = (0..3)
                    .map(|_| {
                        let (cell, admitted) = (cell.clone(), admitted.clone());
                        shuttle::thread::spawn(move || {
                            for _ in 0..2 {
                                if update(&*cell, now, &quota, Op::Acquire(1)).0.allowed {
                                    admitted.fetch_add(1, SO::SeqCst);
                                }
                            }
                        })
                    })
                    .collect();
                for t in threads {
                    t.join().unwrap();
                }
                assert_eq!(admitted.load(SO::SeqCst), 4);
                assert_eq!(ShuttleAtomic::load(&cell, SO::SeqCst), now + 4 * 10_000);
            },
            2_000,
        );
    }

    /// A penalty racing with acquires is never lost: afterwards nothing is admitted before it ends.
    #[test]
    fn penalty_is_never_lost_in_a_race() {
        shuttle::check_random(
            || {
                let quota = Quota::new(3, Duration::from_millis(10)).unwrap();
                let now = 1_000_000_000;
                let cell = Arc::new(ShuttleAtomic::new(0));
                let c2 = cell.clone();
                let t = shuttle::thread::spawn(move || {
                    update(&*c2, now, &quota, Op::Acquire(1));
                    update(&*c2, now, &quota, Op::Acquire(1));
                });
                update(&*cell, now, &quota, Op::Penalize(500_000));
                t.join().unwrap();
                let later = now + 499_999;
                assert!(!update(&*cell, later, &quota, Op::Peek).0.allowed);
            },
            2_000,
        );
    }

    /// A draw that gave a token and then has to undo it (a later group refused) races with
    /// other acquires: whether its restore wins or falls back to a refund, afterwards exactly the
    /// others' admitted tokens are taken.
    #[test]
    fn an_undone_draw_leaves_exactly_the_others_tokens_taken() {
        shuttle::check_random(
            || {
                let quota = Quota::new(3, Duration::from_millis(10)).unwrap();
                let now = 1_000_000_000;
                let cell = Arc::new(ShuttleAtomic::new(0));
                let admitted = Arc::new(AtomicU32::new(0));
                let others: Vec<_> = (0..2)
                    .map(|_| {
                        let (cell, admitted) = (cell.clone(), admitted.clone());
                        shuttle::thread::spawn(move || {
                            if update(&*cell, now, &quota, Op::Acquire(1)).0.allowed {
                                admitted.fetch_add(1, SO::SeqCst);
                            }
                        })
                    })
                    .collect();
                let (taken, write) = update(&*cell, now, &quota, Op::Acquire(1));
                if taken.allowed {
                    let (before, after) = write.unwrap();
                    if !restore(&*cell, before, after) {
                        update(&*cell, now, &quota, Op::Refund(1));
                    }
                }
                for t in others {
                    t.join().unwrap();
                }
                let left = update(&*cell, now, &quota, Op::Peek).0.remaining;
                assert_eq!(left, 3 - admitted.load(SO::SeqCst));
            },
            2_000,
        );
    }
}
