//! Taking from several buckets at once, all or nothing: a request draws a token from every limit
//! group of its operation, and is refused (taking nothing) when one of them has none.

use std::time::Duration;

use crate::algo::Op;
use crate::clock::micros;
use crate::decision::Decision;
use crate::error::LimiterError;
use crate::quota::Quota;

/// One bucket of a request that draws from several: see [`Store::acquire_all`](crate::store::Store::acquire_all).
#[derive(Debug, Clone, Copy)]
pub struct Draw<'a> {
    /// The bucket.
    pub key: &'a str,
    /// Its quota.
    pub quota: Quota,
    /// Tokens to take from it.
    pub tokens: u32,
    /// Take them only if they have been there this long (see
    /// [`MemoryStore::acquire_settled`](crate::memory::MemoryStore::acquire_settled)); zero for a plain
    /// acquire.
    pub margin: Duration,
}

impl<'a> Draw<'a> {
    /// `tokens` from `key` under `quota`, with no margin.
    pub fn new(key: &'a str, quota: Quota, tokens: u32) -> Self {
        Self {
            key,
            quota,
            tokens,
            margin: Duration::ZERO,
        }
    }

    /// `op`'s draw from `key` (its tokens, and its margin when it is settled).
    pub(crate) fn of(key: &'a str, quota: Quota, op: Op) -> Self {
        let draw = Self::new(key, quota, op.taking().unwrap_or(0));
        match op {
            Op::Settled(_, m) => draw.settled(Duration::from_micros(m)),
            _ => draw,
        }
    }

    /// The engine's operation for it.
    pub(crate) fn op(&self) -> Op {
        if self.margin.is_zero() {
            Op::Acquire(self.tokens)
        } else {
            Op::Settled(self.tokens, micros(self.margin))
        }
    }

    /// The same draw, taken only from tokens that have been there for `margin`.
    #[must_use]
    pub fn settled(mut self, margin: Duration) -> Self {
        self.margin = margin;
        self
    }
}

/// What drawing from several buckets gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drawn {
    /// The refusing bucket's decision, else the first bucket's after the draw.
    pub decision: Decision,
    /// Which draw refused — then nothing was taken from any bucket — or `None` when every
    /// bucket gave its tokens.
    pub refused: Option<usize>,
}

impl Drawn {
    /// Every bucket gave; `decision` is the first's.
    pub(crate) fn taken(decision: Decision) -> Self {
        Self {
            decision,
            refused: None,
        }
    }

    /// Draw `i` refused with `decision`.
    pub(crate) fn refused(i: usize, decision: Decision) -> Self {
        Self {
            decision,
            refused: Some(i),
        }
    }
}

/// The checks made before anything is taken: at least one bucket, and no draw larger than its
/// bucket can ever hold.
pub(crate) fn check(draws: &[Draw<'_>]) -> Result<(), LimiterError> {
    if draws.is_empty() {
        return Err(LimiterError::NothingToDraw);
    }
    draws
        .iter()
        .try_for_each(|d| check_capacity(&d.quota, d.tokens))
}

/// Refuses a draw of `n` that `quota` could never admit (more than its burst).
pub(crate) fn check_capacity(quota: &Quota, n: u32) -> Result<(), LimiterError> {
    if n > quota.burst() {
        Err(LimiterError::InsufficientCapacity {
            requested: n,
            burst: quota.burst(),
        })
    } else {
        Ok(())
    }
}
