//! The bucket-fill histogram (`apistend_bucket_fill_ratio`): how much of the bucket a request
//! left, counted per fixed bound with one atomic increment, and rendered in the Prometheus
//! histogram format. Why it is not one of the exporter's histograms: see the module above.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use metrics::Label;

/// Upper bounds of the histogram (the share of the bucket left after a request).
const FILL_BOUNDS: [f64; 6] = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9];

/// One group's counts: per bound (the last: above every bound), and the sum of shares in
/// millionths.
#[derive(Debug, Default)]
pub(crate) struct FillCells {
    counts: [AtomicU64; FILL_BOUNDS.len() + 1],
    sum_micros: AtomicU64,
}

impl FillCells {
    /// One request that left `remaining` of `limit`.
    pub(crate) fn record(&self, remaining: u32, limit: u32) {
        let share = f64::from(remaining.min(limit)) / f64::from(limit.max(1));
        let slot = FILL_BOUNDS
            .iter()
            .position(|b| share <= *b)
            .unwrap_or(FILL_BOUNDS.len());
        if let Some(c) = self.counts.get(slot) {
            c.fetch_add(1, Ordering::Relaxed);
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ share ≤ 1
        self.sum_micros
            .fetch_add((share * 1e6) as u64, Ordering::Relaxed);
    }
}

/// Appends the histogram of every group that saw a request; `labels(s, g)` names group `g` of
/// service `s`.
pub(crate) fn render(
    out: &mut String,
    cells: &[Vec<FillCells>],
    labels: impl Fn(usize, usize) -> Vec<Label>,
) {
    let mut header = false;
    for (s, groups) in cells.iter().enumerate() {
        for (g, c) in groups.iter().enumerate() {
            let counts: Vec<u64> = c.counts.iter().map(|n| n.load(Ordering::Relaxed)).collect();
            let total: u64 = counts.iter().sum();
            if total == 0 {
                continue;
            }
            if !header {
                let _ = writeln!(
                    out,
                    "# HELP apistend_bucket_fill_ratio Share of the bucket left after each request, by service and limit group.\n# TYPE apistend_bucket_fill_ratio histogram"
                );
                header = true;
            }
            let labels: Vec<String> = labels(s, g)
                .iter()
                .map(|l| format!("{}=\"{}\"", l.key(), escape(l.value())))
                .collect();
            let labels = labels.join(",");
            let mut cumulative = 0;
            for (bound, n) in FILL_BOUNDS.iter().zip(&counts) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "apistend_bucket_fill_ratio_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "apistend_bucket_fill_ratio_bucket{{{labels},le=\"+Inf\"}} {total}"
            );
            #[allow(clippy::cast_precision_loss)]
            let sum = c.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "apistend_bucket_fill_ratio_sum{{{labels}}} {sum}");
            let _ = writeln!(out, "apistend_bucket_fill_ratio_count{{{labels}}} {total}");
        }
    }
}

/// A label value as the text format wants it: backslash, quote and newline escaped.
pub(super) fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
