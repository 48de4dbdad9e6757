//! `apistend plot`: draws the SVG charts of BENCHMARKS.md from a small JSON description, so that
//! `scripts/bench.sh` regenerates every figure without a plotting library.
//!
//! ```json
//! {"title": "…", "x_label": "…", "y_label": "…", "kind": "line",
//!  "series": [{"name": "GCRA", "points": [[1, 0.98], [2, 0.99]]}]}
//! ```
//! `kind` is `line` (numeric x) or `bar` (each point's x is an index; `labels` names them).
#![allow(clippy::cast_precision_loss)]

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use serde::Deserialize;

#[derive(Debug, Args)]
pub(crate) struct PlotArgs {
    /// The chart description (JSON).
    #[arg(long)]
    input: PathBuf,
    /// The SVG to write.
    #[arg(long)]
    output: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Chart {
    title: String,
    x_label: String,
    y_label: String,
    kind: String,
    #[serde(default)]
    labels: Vec<String>,
    series: Vec<Series>,
    #[serde(default)]
    y_max: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

const W: f64 = 640.0;
const H: f64 = 400.0;
const L: f64 = 70.0;
const R: f64 = 150.0;
const T: f64 = 40.0;
const B: f64 = 50.0;
const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

pub(crate) fn run(args: &PlotArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.input)
        .with_context(|| format!("reading {}", args.input.display()))?;
    let chart: Chart = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a chart description", args.input.display()))?;
    let svg = render(&chart)?;
    std::fs::write(&args.output, svg)
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn render(c: &Chart) -> anyhow::Result<String> {
    let points = c.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        bail!("the chart has no points");
    }
    let bar = c.kind == "bar";
    if bar {
        x0 -= 0.5;
        x1 += 0.5;
    } else if x0 == x1 {
        x1 = x0 + 1.0;
    }
    let y1 = c.y_max.unwrap_or(if y1 <= 0.0 { 1.0 } else { y1 * 1.1 });
    let px = |x: f64| L + (x - x0) / (x1 - x0) * (W - L - R);
    let py = |y: f64| H - B - y / y1 * (H - T - B);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        (L + W - R) / 2.0,
        esc(&c.title)
    );
    for i in 0..=5 {
        let y = y1 * f64::from(i) / 5.0;
        let _ = write!(
            s,
            r##"<line x1="{L}" x2="{}" y1="{py}" y2="{py}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            W - R,
            L - 6.0,
            py(y) + 4.0,
            fmt_num(y),
            py = py(y)
        );
    }
    let _ = write!(
        s,
        r#"<line x1="{L}" x2="{L}" y1="{T}" y2="{}" stroke="black"/><line x1="{L}" x2="{}" y1="{}" y2="{}" stroke="black"/>"#,
        H - B,
        W - R,
        H - B,
        H - B
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (L + W - R) / 2.0,
        H - 12.0,
        esc(&c.x_label)
    );
    let _ = write!(
        s,
        r#"<text transform="translate(18 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (T + H - B) / 2.0,
        esc(&c.y_label)
    );
    let n = c.series.len().max(1) as f64;
    for (i, series) in c.series.iter().enumerate() {
        let color = COLORS.get(i % COLORS.len()).copied().unwrap_or("black");
        if bar {
            let slot = (W - L - R) / (x1 - x0) * 0.8;
            let w = slot / n;
            for &(x, y) in &series.points {
                let left = px(x) - slot / 2.0 + w * i as f64;
                let _ = write!(
                    s,
                    r#"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>"#,
                    py(y),
                    w * 0.95,
                    (H - B) - py(y)
                );
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                    left + w / 2.0,
                    py(y) - 3.0,
                    fmt_num(y)
                );
            }
        } else {
            let pts: Vec<String> = series
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                pts.join(" ")
            );
            for &(x, y) in &series.points {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                    px(x),
                    py(y)
                );
            }
        }
        let ly = T + 18.0 * i as f64 + 10.0;
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="12" height="12" fill="{color}"/><text x="{}" y="{}">{}</text>"#,
            W - R + 12.0,
            ly - 10.0,
            W - R + 30.0,
            ly,
            esc(&series.name)
        );
    }
    if bar {
        for (i, label) in c.labels.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                px(i as f64),
                H - B + 16.0,
                esc(label)
            );
        }
    } else {
        let mut xs: Vec<f64> = c
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        for x in xs {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                px(x),
                H - B + 16.0,
                fmt_num(x)
            );
        }
    }
    s.push_str("</svg>\n");
    Ok(s)
}

fn fmt_num(v: f64) -> String {
    if (v.fract() == 0.0 && v.abs() < 1e9) || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
