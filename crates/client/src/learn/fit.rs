//! The least-squares fit of a rate from the server's reports: running sums of each series, and
//! series pooled with one intercept each.

use std::time::Instant;

/// Running sums of one series' points.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Sums {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
    yy: f64,
}

impl Sums {
    pub(super) fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.xy += x * y;
        self.yy += y * y;
    }

    /// The series centred on its own means (its own intercept).
    pub(super) fn fit(&self) -> Fit {
        if self.n < 2.0 {
            return Fit::default();
        }
        Fit {
            n: self.n,
            series: 1.0,
            sxx: self.xx - self.x * self.x / self.n,
            sxy: self.xy - self.x * self.y / self.n,
            syy: self.yy - self.y * self.y / self.n,
        }
    }
}

/// Centred sums of one or more series: a common slope, one intercept each.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Fit {
    n: f64,
    series: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
}

impl Fit {
    pub(super) fn plus(self, o: Self) -> Self {
        Self {
            n: self.n + o.n,
            series: self.series + o.series,
            sxx: self.sxx + o.sxx,
            sxy: self.sxy + o.sxy,
            syy: self.syy + o.syy,
        }
    }

    pub(super) fn scaled(self, k: f64) -> Self {
        Self {
            n: self.n * k,
            series: self.series * k,
            sxx: self.sxx * k,
            sxy: self.sxy * k,
            syy: self.syy * k,
        }
    }

    /// The common slope and its standard error, once there are points to spare.
    pub(super) fn slope(&self) -> Option<(f64, f64)> {
        let dof = self.n - self.series - 1.0;
        if dof < 4.0 || self.sxx <= f64::EPSILON {
            return None;
        }
        let b = self.sxy / self.sxx;
        let rss = (self.syy - b * self.sxy).max(0.0);
        Some((b, (rss / dof / self.sxx).sqrt()))
    }
}

/// One unbroken series of reports.
#[derive(Debug)]
pub(super) struct Series {
    pub(super) start: Instant,
    /// Tokens the server admitted since `start`.
    pub(super) admitted: u64,
    pub(super) sums: Sums,
}
