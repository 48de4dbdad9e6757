//! Median and spread of a benchmark's rounds.

use serde::Serialize;

/// The median of some rounds and their range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

impl Summary {
    /// Summarizes `values`; `None` when there are none (or one is NaN).
    ///
    /// ```
    /// let s = apistend_bench::stats::Summary::of(&[3.0, 1.0, 2.0]).unwrap();
    /// assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
    /// ```
    #[must_use]
    pub fn of(values: &[f64]) -> Option<Self> {
        let mut v = values.to_vec();
        if v.is_empty() || v.iter().any(|x| x.is_nan()) {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            *v.get(n / 2)?
        } else {
            (v.get(n / 2 - 1)? + v.get(n / 2)?) / 2.0
        };
        Some(Self {
            median,
            min: *v.first()?,
            max: *v.last()?,
        })
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3} ({:.3}–{:.3})", self.median, self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_counts_take_the_mean_of_the_middle_two() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert!((s.median - 2.5).abs() < f64::EPSILON);
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }
}
