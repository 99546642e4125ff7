//! `--plot FILE.svg`: predicted against measured, one scatter panel per quantity, as one SVG
//! (plotters, SVG backend only: text is written as SVG `<text>` elements, no font library).
//!
//! The panels: time (the prediction against the median of the single launches' CUDA events, as
//! the tables' first error column), then each Nsight Compute counter with at least one non-zero
//! measurement, in the tables' order. One point per launch that has both values, the y = x
//! diagonal for reference, and the counter's short label with its MAPE as the title. Both axes of
//! a panel share one range, so that the diagonal is the panel's diagonal; they are logarithmic
//! when the values span more than 2 decades, and then launches with a zero (or negative) value
//! are left out and counted under the x axis. Values an axis cannot span are left out and
//! counted too: beyond [`MAX_PLOTTED`] in magnitude, or non-zero below [`MIN_PLOTTED`] (a
//! counter of 1e281 looped forever in plotters' axis code, a subnormal one grew its memory without
//! bound). Pure: a [`Report`] in, SVG text out; [`fn@write`] checks where it goes (`target`).

use crate::compare::{self, Accuracy, Measured};
use crate::report::Report;
use anyhow::{anyhow, Context, Result};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

mod target;

/// Values spanning more than this ratio (2 decades) get logarithmic axes.
pub const LOG_SPAN: f64 = 100.0;

/// The largest magnitude a point may have (counters and times are far below it).
pub const MAX_PLOTTED: f64 = 1e100;
/// The smallest non-zero magnitude a point may have.
pub const MIN_PLOTTED: f64 = 1e-100;

/// Width and height of one panel in pixels.
const PANEL: (u32, u32) = (380, 360);
/// Height of a title line above the grid.
const TITLE_LINE: u32 = 24;
/// Most panels per row.
const MAX_COLUMNS: usize = 6;
/// The y = x diagonal's colour (no other line has it).
const DIAGONAL: RGBColor = RGBColor(120, 120, 120);
/// The points' colour.
const POINT: RGBColor = RGBColor(31, 119, 180);

/// One scatter panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// The quantity's short label (`IDC requests`).
    pub label: String,
    /// Mean absolute percentage error over every launch with both values.
    pub mape: Option<f64>,
    /// (measured, predicted) of the launches drawn.
    pub points: Vec<(f64, f64)>,
    /// Launches with both values left out because one is not positive (log axes only).
    pub skipped: usize,
    /// Launches with both values left out because one is not finite or beyond what an axis
    /// spans ([`MAX_PLOTTED`], [`MIN_PLOTTED`]).
    pub unplottable: usize,
    /// Logarithmic axes.
    pub log: bool,
    /// The range of both axes.
    pub range: (f64, f64),
}

impl Panel {
    /// A panel of (measured, predicted) `pairs`: log axes when the positive pairs span more than
    /// [`LOG_SPAN`], and then only the positive pairs are drawn.
    pub fn new(label: &str, mape: Option<f64>, pairs: &[(f64, f64)]) -> Panel {
        let plottable = |v: f64| v == 0.0 || (MIN_PLOTTED..=MAX_PLOTTED).contains(&v.abs());
        let finite: Vec<(f64, f64)> = pairs
            .iter()
            .copied()
            .filter(|&(m, p)| plottable(m) && plottable(p))
            .collect();
        let unplottable = pairs.len() - finite.len();
        let positive: Vec<(f64, f64)> = finite
            .iter()
            .copied()
            .filter(|&(m, p)| m > 0.0 && p > 0.0)
            .collect();
        let (lo, hi) = bounds(&positive);
        let log = !positive.is_empty() && hi / lo > LOG_SPAN;
        let (points, skipped) = if log {
            (positive, finite.len() - positive_len(&finite))
        } else {
            (finite, 0)
        };
        let range = if log {
            log_range(lo, hi)
        } else {
            let (lo, hi) = bounds(&points);
            linear_range(lo, hi)
        };
        Panel {
            label: label.to_string(),
            mape,
            points,
            skipped,
            unplottable,
            log,
            range,
        }
    }

    /// The panel's title: label and MAPE.
    pub fn title(&self) -> String {
        match self.mape {
            Some(m) => format!("{}: MAPE {m:.1}%", self.label),
            None => format!("{}: MAPE -", self.label),
        }
    }
}

fn positive_len(pairs: &[(f64, f64)]) -> usize {
    pairs.iter().filter(|&&(m, p)| m > 0.0 && p > 0.0).count()
}

/// Smallest and largest value of both coordinates; (0, 0) when there are none.
fn bounds(pairs: &[(f64, f64)]) -> (f64, f64) {
    let values = pairs.iter().flat_map(|&(m, p)| [m, p]);
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 0.0)
    }
}

/// `lo..hi` widened by 5% of the span on each side (or of the value, when all are equal).
fn linear_range(lo: f64, hi: f64) -> (f64, f64) {
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.05
    } else if lo != 0.0 {
        lo.abs() * 0.05
    } else {
        1.0
    };
    (lo - pad, hi + pad)
}

/// Positive `lo..hi` widened by a tenth of a decade (or 5% of the decades spanned) on each side.
fn log_range(lo: f64, hi: f64) -> (f64, f64) {
    let decades = (hi / lo).log10();
    let pad = 10f64.powf((decades * 0.05).max(0.1));
    (lo / pad, hi * pad)
}

/// The panels of a report: time, then each counter with a non-zero measurement.
pub fn panels(r: &Report) -> Vec<Panel> {
    let launches = || r.workloads.iter().flat_map(|w| &w.launches);
    let time: Vec<(f64, f64)> = launches()
        .filter_map(|l| {
            let m = Measured::Median.of(l.time_us.as_ref()?);
            Some((m, compare::predicted_us(l)?))
        })
        .collect();
    let mut out = vec![];
    if !time.is_empty() {
        let a = compare::time_accuracy(r, Measured::Median);
        out.push(Panel::new("time (µs, event median)", a.mape, &time));
    }
    for (metric, a) in compare::metric_accuracy(r) {
        if !launches().any(|l| l.measured.get(&metric).is_some_and(|&v| v != 0.0)) {
            continue;
        }
        let pairs: Vec<(f64, f64)> = launches()
            .filter_map(|l| Some((*l.measured.get(&metric)?, *l.predicted.get(&metric)?)))
            .collect();
        let Accuracy { mape, .. } = a;
        out.push(Panel::new(compare::label(&metric), mape, &pairs));
    }
    out
}

/// `v` in few characters with an SI suffix (`1.5k`, `20M`), for log-axis decades.
pub fn si(v: f64) -> String {
    const SUFFIXES: [(f64, &str); 5] =
        [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let a = v.abs();
    for (scale, s) in SUFFIXES {
        if a >= scale {
            return format!("{}{s}", trim(v / scale, 2));
        }
    }
    trim(v, if a >= 1.0 || a == 0.0 { 2 } else { 6 })
}

/// `v` with at most `decimals` decimals, trailing zeros removed.
fn trim(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Tick labels of a linear axis over `lo..hi`: one SI scale for the axis (from 10,000 up: up to
/// 4 digits are written out), enough decimals to tell ticks about a fifth of the span apart, and
/// `0` for zero.
fn linear_labeller(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let top = lo.abs().max(hi.abs());
    let exp3 = if top >= 1e4 {
        ((top.log10() / 3.0).floor() as i32).min(5)
    } else {
        0
    };
    let scale = 10f64.powi(3 * exp3);
    let suffix = ["", "k", "M", "G", "T", "P"][exp3 as usize];
    let step = (hi - lo) / 5.0 / scale;
    let decimals = if step > 0.0 {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        0
    };
    move |v: &f64| {
        let x = v / scale;
        if x.abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
            "0".to_string()
        } else {
            format!("{x:.decimals$}{suffix}")
        }
    }
}

/// Tick labels of a log axis: decades only (the other ticks keep their grid line).
fn log_label(v: &f64) -> String {
    let e = v.log10();
    if (e - e.round()).abs() < 1e-6 {
        si(10f64.powf(e.round()))
    } else {
        String::new()
    }
}

/// The panels of `r` as one SVG: two title lines, then the panels in a grid.
pub fn svg(r: &Report) -> Result<String> {
    let panels = panels(r);
    let launches: usize = r.workloads.iter().map(|w| w.launches.len()).sum();
    let title = [
        "predicted (y) against measured (x), one point per launch".to_string(),
        format!(
            "{}, {launches} launches, predictions from {}",
            r.device.name, r.config
        ),
    ];
    render(&title, &panels)
}

/// Refuses `path` for `--plot` unless it is a `.svg` file name that is none of `inputs` (the
/// files the command reads or writes: the report, the config) and is new, or `force` is set;
/// commands call it before their work, [`fn@write`] again before writing.
pub fn check_target(path: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    target::check(path, inputs, force)
}

/// Writes [`svg`] of `r` to `path`, a new `.svg` file that is none of `inputs` (the files the
/// command read or wrote: the report, the config), or an existing one with `force`
/// ([`check_target`]).
pub fn write(r: &Report, path: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    target::check(path, inputs, force)?;
    let text = svg(r)?;
    target::write_new(path, &text, force)
        .with_context(|| format!("--plot {}: cannot write it", crate::cmd::shown(path)))
}

/// `panels` under the `title` lines, in a grid of at most 6 columns.
pub fn render(title: &[String], panels: &[Panel]) -> Result<String> {
    let n = panels.len().max(1);
    let columns = ((n as f64).sqrt().ceil() as usize).clamp(1, MAX_COLUMNS);
    let rows = n.div_ceil(columns);
    let width = PANEL.0 * columns as u32;
    let title_height = TITLE_LINE * title.len() as u32 + 10;
    let size = (width, PANEL.1 * rows as u32 + title_height);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (top, body) = root.split_vertically(title_height);
        // plotters' estimate of a character's width is about 0.45 of the font size: shrink the
        // title until its longest line fits.
        let longest = title.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let size = (f64::from(width) * 0.9 / (0.45 * longest.max(1) as f64)).min(22.0);
        let style = TextStyle::from(("sans-serif", size).into_font())
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, line) in title.iter().enumerate() {
            let y = 6 + (TITLE_LINE * i as u32) as i32;
            top.draw(&Text::new(line.as_str(), ((width / 2) as i32, y), &style))
                .map_err(plot_error)?;
        }
        if panels.is_empty() {
            body.draw(&Text::new(
                "nothing to plot: no launch has both a prediction and a measurement",
                (20, 20),
                ("sans-serif", 18),
            ))
            .map_err(plot_error)?;
        }
        for (area, panel) in body.split_evenly((rows, columns)).iter().zip(panels) {
            draw_panel(area, panel)?;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

fn plot_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("cannot draw the plot: {e}")
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(p.title(), ("sans-serif", 17))
        .margin(8)
        .margin_right(18)
        .x_label_area_size(44)
        .y_label_area_size(56);
    let (lo, hi) = p.range;
    if p.log {
        let mut chart = builder
            .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
            .map_err(plot_error)?;
        fill(&mut chart, p, &log_label)
    } else {
        let mut chart = builder
            .build_cartesian_2d(lo..hi, lo..hi)
            .map_err(plot_error)?;
        fill(&mut chart, p, &linear_labeller(lo, hi))
    }
}

/// Mesh, diagonal and points of one panel.
fn fill<DB: DrawingBackend, X>(
    chart: &mut ChartContext<DB, Cartesian2d<X, X>>,
    p: &Panel,
    label: &dyn Fn(&f64) -> String,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let x_desc = match (p.skipped, p.unplottable) {
        (0, 0) => "measured".to_string(),
        (k, 0) => format!("measured ({k} with a zero not shown)"),
        (0, u) => format!("measured ({u} beyond 1e100 or below 1e-100 not shown)"),
        (k, u) => format!("measured ({k} with a zero, {u} beyond 1e+-100 not shown)"),
    };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("predicted")
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(label)
        .y_label_formatter(label)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()
        .map_err(plot_error)?;
    let (lo, hi) = p.range;
    chart
        .draw_series(LineSeries::new(
            [(lo, lo), (hi, hi)],
            DIAGONAL.stroke_width(1),
        ))
        .map_err(plot_error)?;
    let dot = POINT.mix(0.65).filled();
    chart
        .draw_series(p.points.iter().map(|&(m, pr)| Circle::new((m, pr), 3, dot)))
        .map_err(plot_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;
    use crate::report::LaunchReport;
    use crate::stats::TimeStats;
    use std::collections::BTreeMap;

    fn launch(label: &str, t_us: (f64, f64), counters: &[(&str, f64, f64)]) -> LaunchReport {
        let mut predicted: BTreeMap<String, f64> =
            [(compare::TIME_METRIC.to_string(), t_us.0 * 1000.0)].into();
        let mut measured = BTreeMap::new();
        for &(name, p, m) in counters {
            predicted.insert(name.to_string(), p);
            measured.insert(name.to_string(), m);
        }
        LaunchReport {
            label: label.into(),
            kernel: "k".into(),
            predicted,
            measured,
            time_us: TimeStats::from_samples(&[t_us.1], t_us.1),
            outputs_match: true,
            mismatches: vec![],
        }
    }

    /// Three launches: IDC requests on linear axes, L2 read sectors over 6 decades with a zero
    /// measurement and a negative prediction, DRAM bytes never measured non-zero.
    fn synthetic() -> Report {
        let mut r = sample();
        let (idc, l2, dram) = (
            "idc__requests.sum",
            "lts__t_sectors_srcunit_tex_op_read.sum",
            "dram__bytes_read.sum",
        );
        r.workloads[0].launches = vec![
            launch(
                "a",
                (10.0, 12.0),
                &[(idc, 100.0, 110.0), (l2, 10.0, 12.0), (dram, 5.0, 0.0)],
            ),
            launch(
                "b",
                (20.0, 18.0),
                &[(idc, 200.0, 190.0), (l2, 1e6, 1.2e6), (dram, 0.0, 0.0)],
            ),
            launch(
                "c",
                (40.0, 41.0),
                &[(idc, 300.0, 300.0), (l2, -3.0, 0.0), (dram, 1.0, 0.0)],
            ),
        ];
        r
    }

    #[test]
    fn panels_cover_time_and_counters_with_a_non_zero_measurement() {
        let p = panels(&synthetic());
        let labels: Vec<&str> = p.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            ["time (µs, event median)", "IDC requests", "L2 read sectors"]
        );
        // Time and IDC requests span less than 2 decades: linear, every launch.
        assert!(!p[0].log && !p[1].log);
        assert_eq!(p[0].points, [(12.0, 10.0), (18.0, 20.0), (41.0, 40.0)]);
        assert_eq!(p[1].points.len(), 3);
        assert!(
            p[1].title().starts_with("IDC requests: MAPE "),
            "{}",
            p[1].title()
        );
        let mape = (100.0 * 10.0 / 110.0 + 100.0 * 10.0 / 190.0) / 3.0;
        assert_eq!(p[1].title(), format!("IDC requests: MAPE {mape:.1}%"));
        // L2 spans 5 decades: log axes, the launch with a zero and a negative value left out.
        assert!(p[2].log);
        assert_eq!(p[2].points, [(12.0, 10.0), (1.2e6, 1e6)]);
        assert_eq!(p[2].skipped, 1);
        let (lo, hi) = p[2].range;
        assert!(lo > 0.0 && lo < 10.0 && hi > 1.2e6, "{lo} {hi}");
    }

    #[test]
    fn the_svg_has_one_marker_per_point_and_a_diagonal_per_panel() {
        let r = synthetic();
        let p = panels(&r);
        let text = svg(&r).unwrap();
        assert!(text.starts_with("<svg"), "{}", &text[..100]);
        let points: usize = p.iter().map(|p| p.points.len()).sum();
        assert_eq!(points, 8);
        assert_eq!(text.matches("<circle").count(), points);
        // One diagonal per panel, from corner to corner (the mesh lines are polylines too, in
        // other colours).
        let diagonals: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke=\"#787878\""))
            .collect();
        assert_eq!(diagonals.len(), p.len(), "{diagonals:?}");
        assert!(text.contains("IDC requests: MAPE"));
        assert!(text.contains("L2 read sectors: MAPE"));
        assert!(text.contains("measured (1 with a zero not shown)"));
        assert!(!text.contains("DRAM bytes read"));
        // Log axes are labelled at decades only.
        assert!(text.contains("\n1M\n</text>"), "decade labels");
    }

    #[test]
    fn a_report_without_launches_still_renders() {
        let mut r = sample();
        r.workloads.clear();
        assert!(panels(&r).is_empty());
        let text = svg(&r).unwrap();
        assert!(text.contains("nothing to plot"));
        assert_eq!(text.matches("<circle").count(), 0);
    }

    #[test]
    fn ranges_and_labels() {
        // Equal values and zeros get a non-empty range.
        let p = Panel::new("x", None, &[(5.0, 5.0)]);
        assert!(p.range.0 < 5.0 && p.range.1 > 5.0 && !p.log);
        let p = Panel::new("x", None, &[(0.0, 0.0)]);
        assert_eq!(p.range, (-1.0, 1.0));
        // Only zeros and negatives: linear, nothing skipped.
        let p = Panel::new("x", None, &[(0.0, -5.0), (0.0, 1e9)]);
        assert!(!p.log && p.points.len() == 2 && p.skipped == 0);
        assert_eq!(p.title(), "x: MAPE -");
        assert_eq!(si(1e6), "1M");
        assert_eq!(si(2500.0), "2.5k");
        assert_eq!(si(0.01), "0.01");
        assert_eq!(si(100.0), "100");
        assert_eq!(log_label(&1000.0), "1k");
        assert_eq!(log_label(&3000.0), "");
        let l = linear_labeller(1.5e6, 1.7e6);
        assert_eq!(l(&1.6e6), "1.60M");
        let l = linear_labeller(0.0, 40.0);
        assert_eq!(l(&20.0), "20");
        assert_eq!(l(&-1e-12), "0");
        let l = linear_labeller(-50.0, 1050.0);
        assert_eq!(
            (l(&0.0), l(&200.0), l(&1000.0)),
            ("0".into(), "200".into(), "1000".into())
        );
        let l = linear_labeller(-3e6, 66e6);
        assert_eq!((l(&0.0), l(&20e6)), ("0".into(), "20M".into()));
    }

    /// Issue 40: 1e281 looped forever in plotters' axis code, a subnormal grew memory without
    /// bound; both are left out and counted, and the panel renders.
    #[test]
    fn values_no_axis_spans_are_left_out_and_counted() {
        let pairs = [
            (1e281, 1.0),
            (5e-324, 1.0),
            (1.0, f64::NAN),
            (1.0, 2.0),
            (0.0, 3.0),
        ];
        let p = Panel::new("x", None, &pairs);
        assert_eq!(p.points, [(1.0, 2.0), (0.0, 3.0)]);
        assert_eq!((p.unplottable, p.skipped), (3, 0));
        let svg = render(&["t".into()], &[p]).unwrap();
        assert!(
            svg.contains("3 beyond 1e100 or below 1e-100 not shown"),
            "{svg}"
        );
    }
}
