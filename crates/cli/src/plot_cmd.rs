//! `apistend plot`: draws the SVG charts of BENCHMARKS.md (with plotters) from a small JSON
//! description, so that `scripts/bench.sh` regenerates every figure.
//!
//! ```json
//! {"title": "…", "x_label": "workers", "y_label": "achieved / allowed", "kind": "line",
//!  "y2_label": "429s per 100 ok", "y_log": false,
//!  "series": [{"name": "utilization", "points": [[1, 0.98], [2, 0.99]]},
//!             {"name": "429s per 100 ok", "axis": "right", "points": [[1, 0], [2, 0]]}]}
//! ```
//! `kind` is `line` (numeric x) or `bar` (each point's x is an index; `labels` names them).
//! One quantity per axis: a series with `"axis": "right"` is drawn against `y2_label`'s axis.
//! `y_log` (and `y2_log`) put an axis on a log scale, for counts that span orders of magnitude.
//! The legend sits beside the plot, never on its data.
#![allow(clippy::cast_precision_loss)]

use std::ops::Range;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use plotters::chart::DualCoordChartContext;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use serde::Deserialize;

#[derive(Debug, Args)]
pub(crate) struct PlotArgs {
    /// The chart description (JSON; its fields under --help).
    ///
    /// A JSON object; unknown fields are refused:
    ///   title, x_label, y_label   text
    ///   kind                      "line" (numeric x) or "bar" (x is a point's index)
    ///   labels                    the bars' names (kind "bar")
    ///   series                    [{"name": "...", "points": [[x, y], ...], "axis": "right"?}]
    ///   y_max, y_log              the left axis' top and log scale (optional)
    ///   y2_label, y2_max, y2_log  the right axis, for series with "axis": "right"
    /// Example: {"title": "Throughput", "x_label": "workers", "y_label": "requests/s",
    ///   "kind": "line", "series": [{"name": "sandbox", "points": [[1, 980], [2, 1950]]}]}
    #[arg(long, verbatim_doc_comment)]
    input: PathBuf,
    /// The SVG to write.
    #[arg(long)]
    output: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Chart {
    title: String,
    x_label: String,
    y_label: String,
    kind: Kind,
    #[serde(default)]
    labels: Vec<String>,
    series: Vec<Series>,
    /// The top of the left axis (else a little above the data).
    #[serde(default)]
    y_max: Option<f64>,
    #[serde(default)]
    y_log: bool,
    /// The right axis, when a series is drawn against it.
    #[serde(default)]
    y2_label: Option<String>,
    #[serde(default)]
    y2_max: Option<f64>,
    #[serde(default)]
    y2_log: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Line,
    Bar,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Axis {
    #[default]
    Left,
    Right,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Series {
    name: String,
    #[serde(default)]
    axis: Axis,
    /// A marker on each point of a line (off for a dense time series).
    #[serde(default = "markers_on")]
    markers: bool,
    points: Vec<(f64, f64)>,
}

fn markers_on() -> bool {
    true
}

const SIZE: (u32, u32) = (760, 420);
const LEGEND_WIDTH: u32 = 170;
const COLORS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
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

/// The SVG of `c`.
fn render(c: &Chart) -> anyhow::Result<String> {
    if c.series.iter().all(|s| s.points.is_empty()) {
        bail!("the chart has no points");
    }
    if c.series.iter().any(|s| s.axis == Axis::Right) && c.y2_label.is_none() {
        bail!("a series is on the right axis, but the chart has no y2_label");
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, legend) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
        draw(c, &plot)?;
        draw_legend(c, &legend)?;
        root.present()?;
    }
    Ok(svg)
}

/// The x range: the points' (a bar chart's: its slots, -0.5 to n - 0.5).
fn x_range(c: &Chart) -> Range<f64> {
    let xs = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    match c.kind {
        Kind::Bar => -0.5..(hi.max(c.labels.len() as f64 - 1.0) + 0.5),
        Kind::Line if lo >= hi => lo - 1.0..hi + 1.0,
        Kind::Line => lo..hi,
    }
}

/// The y range of `axis`: from 0 (a log axis: from below the smallest positive value) to a
/// little above the largest, or to `max`.
fn y_range(c: &Chart, axis: Axis, max: Option<f64>, log: bool) -> Range<f64> {
    let ys: Vec<f64> = c
        .series
        .iter()
        .filter(|s| s.axis == axis)
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .collect();
    let top = ys.iter().copied().fold(0.0f64, f64::max);
    if log {
        let low = ys
            .iter()
            .copied()
            .filter(|y| *y > 0.0)
            .fold(f64::MAX, f64::min);
        let low = if low == f64::MAX { 1.0 } else { low };
        // Whole decades, so that the ticks fall on 1, 10, 100 …
        let floor = 10f64.powf(low.log10().floor().min(0.0));
        let ceil = 10f64.powf(max.unwrap_or(top).max(1.0).log10().ceil() + 0.05);
        floor..ceil
    } else {
        0.0..max.unwrap_or(if top <= 0.0 { 1.0 } else { top * 1.12 })
    }
}

fn draw(c: &Chart, area: &DrawingArea<SVGBackend<'_>, Shift>) -> anyhow::Result<()> {
    let x = x_range(c);
    let y = y_range(c, Axis::Left, c.y_max, c.y_log);
    let right = c.series.iter().any(|s| s.axis == Axis::Right);
    let y2 = y_range(c, Axis::Right, c.y2_max, c.y2_log);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&c.title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(62)
        .right_y_label_area_size(if right { 62 } else { 0 });
    // Four kinds of axes (linear or log, each side); one drawing routine for all.
    match (c.y_log, c.y2_log) {
        (false, false) => {
            let mut ch = builder
                .build_cartesian_2d(x, y)?
                .set_secondary_coord(x_range(c), y2);
            plot_all(c, &mut ch)
        }
        (true, false) => {
            let mut ch = builder
                .build_cartesian_2d(x, y.log_scale())?
                .set_secondary_coord(x_range(c), y2);
            plot_all(c, &mut ch)
        }
        (false, true) => {
            let mut ch = builder
                .build_cartesian_2d(x, y)?
                .set_secondary_coord(x_range(c), y2.log_scale());
            plot_all(c, &mut ch)
        }
        (true, true) => {
            let mut ch = builder
                .build_cartesian_2d(x, y.log_scale())?
                .set_secondary_coord(x_range(c), y2.log_scale());
            plot_all(c, &mut ch)
        }
    }
}

type Dual<'a, Y1, Y2> = DualCoordChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, Y1>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, Y2>,
>;

/// A number as a tick label: whole numbers without decimals, thousands apart.
fn tick(v: f64) -> String {
    if v.fract().abs() > 1e-9 {
        let s = format!("{v:.2}");
        return s.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    let whole = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(ch);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

fn plot_all<Y1, Y2>(c: &Chart, ch: &mut Dual<'_, Y1, Y2>) -> anyhow::Result<()>
where
    Y1: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y2: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let labels = |x: &f64| {
        let i = x.round();
        if c.kind == Kind::Bar {
            if (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let k = i as usize;
            c.labels.get(k).cloned().unwrap_or_else(|| tick(i))
        } else {
            tick(*x)
        }
    };
    let slots = c.labels.len().max(1);
    let mut mesh = ch.configure_mesh();
    mesh.x_desc(&c.x_label)
        .y_desc(&c.y_label)
        .x_label_formatter(&labels)
        .y_label_formatter(&|v| tick(*v))
        .axis_desc_style(("sans-serif", 14))
        .label_style(("sans-serif", 12))
        .light_line_style(RGBColor(0xee, 0xee, 0xee));
    if c.kind == Kind::Bar {
        mesh.x_labels(slots * 2 + 1).disable_x_mesh();
    }
    mesh.draw()?;
    if let Some(label) = &c.y2_label {
        ch.configure_secondary_axes()
            .y_desc(label)
            .y_label_formatter(&|v| tick(*v))
            .axis_desc_style(("sans-serif", 14))
            .label_style(("sans-serif", 12))
            .draw()?;
    }
    let n = c.series.len().max(1) as f64;
    let width = 0.8 / n;
    for (i, s) in c.series.iter().enumerate() {
        let color = COLORS.get(i % COLORS.len()).copied().unwrap_or(BLACK);
        let offset = -0.4 + width * i as f64;
        match (c.kind, s.axis) {
            (Kind::Line, Axis::Left) => {
                // Earlier lines wider, so that a later one drawn over it leaves it visible.
                let width = 2 + u32::try_from((c.series.len() - i).min(4)).unwrap_or(0);
                ch.draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(width),
                ))?;
                if s.markers {
                    ch.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
                }
            }
            (Kind::Line, Axis::Right) => {
                let dashed = color.stroke_width(1);
                ch.draw_secondary_series(LineSeries::new(s.points.iter().copied(), dashed))?;
                if s.markers {
                    ch.draw_secondary_series(
                        s.points
                            .iter()
                            .map(|&p| TriangleMarker::new(p, 4, color.filled())),
                    )?;
                }
            }
            (Kind::Bar, Axis::Left) => {
                let base = ch.y_range().start;
                ch.draw_series(s.points.iter().map(|&(x, y)| {
                    let x0 = x + offset;
                    Rectangle::new(
                        [(x0, base), (x0 + width * 0.92, y.max(base))],
                        color.filled(),
                    )
                }))?;
            }
            (Kind::Bar, Axis::Right) => {
                let base = 0.0f64.max(1e-9);
                ch.draw_secondary_series(s.points.iter().map(|&(x, y)| {
                    let x0 = x + offset;
                    Rectangle::new(
                        [(x0, base), (x0 + width * 0.92, y.max(base))],
                        color.filled(),
                    )
                }))?;
            }
        }
    }
    Ok(())
}

/// The legend, in its own column beside the plot.
fn draw_legend(c: &Chart, area: &DrawingArea<SVGBackend<'_>, Shift>) -> anyhow::Result<()> {
    let style = ("sans-serif", 13).into_font();
    for (i, s) in c.series.iter().enumerate() {
        let color = COLORS.get(i % COLORS.len()).copied().unwrap_or(BLACK);
        let y = 60 + 24 * i32::try_from(i).unwrap_or(0);
        area.draw(&Rectangle::new([(4, y - 6), (20, y + 6)], color.filled()))?;
        let side = match s.axis {
            Axis::Left => "",
            Axis::Right => " (right)",
        };
        area.draw(&Text::new(
            format!("{}{side}", s.name),
            (26, y - 7),
            style.clone(),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(json: &str) -> Chart {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_chart_with_two_axes_and_a_log_scale_renders_labels_and_both_series() {
        let svg = render(&chart(
            r#"{"title": "t", "x_label": "client", "y_label": "count", "kind": "bar", "y_log": true,
                "labels": ["GCRA", "no limiter"],
                "series": [{"name": "429s", "points": [[0, 0], [1, 744963]]},
                           {"name": "ok", "points": [[0, 54], [1, 54]]}]}"#,
        ))
        .unwrap();
        for has in ["GCRA", "no limiter", "429s", "count", "100"] {
            assert!(svg.contains(has), "{has} in the SVG");
        }
        let svg = render(&chart(
            r#"{"title": "t", "x_label": "workers", "y_label": "achieved / allowed", "kind": "line",
                "y2_label": "429s per 100 ok",
                "series": [{"name": "utilization", "points": [[1, 0.98], [32, 0.98]]},
                           {"name": "429s", "axis": "right", "points": [[1, 0], [32, 3]]}]}"#,
        ))
        .unwrap();
        assert!(svg.contains("429s per 100 ok") && svg.contains("(right)"));
    }

    #[test]
    fn bad_descriptions_are_refused_with_a_reason() {
        let no_points = chart(
            r#"{"title": "t", "x_label": "x", "y_label": "y", "kind": "line", "series": []}"#,
        );
        assert!(render(&no_points).is_err());
        let no_right_label = chart(
            r#"{"title": "t", "x_label": "x", "y_label": "y", "kind": "line",
                "series": [{"name": "a", "axis": "right", "points": [[1, 1]]}]}"#,
        );
        assert!(render(&no_right_label).is_err());
        assert!(serde_json::from_str::<Chart>(r#"{"title": "t", "kind": "pie"}"#).is_err());
    }

    #[test]
    fn ticks_are_round_and_readable() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(1.5), "1.5", "not rounded to a neighbour's label");
        assert_eq!(tick(1000.0), "1\u{2009}000");
        assert_eq!(tick(744_963.0), "744\u{2009}963");
    }
}
