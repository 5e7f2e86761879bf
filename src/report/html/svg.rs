//! Line charts as standalone SVG text: nice ticks, a linear or a log "1/(1-p)" percentile x
//! axis, one path per series, a legend and `<title>` tooltips; no script, no ids.
//!
//! Hand-written rather than a plotting crate: the charts need a few hundred lines, the
//! percentile axis is this module's own mapping, and the output is a pure function of the
//! [`Chart`] (same input, same bytes), which the tests and diffs of reports rely on.
//! Colours and dashes are presentation attributes, so a chart copied out of the page still
//! looks the same.

use std::fmt::Write as _;

use super::push_escaped;

/// Width of every chart's view box, in SVG user units (CSS pixels at 100%).
pub const WIDTH: f64 = 560.0;
const MARGIN_LEFT: f64 = 64.0;
/// Room for half of the last x label (`99.9999%`) right of the plot.
const MARGIN_RIGHT: f64 = 36.0;
const MARGIN_TOP: f64 = 34.0;
const PLOT_HEIGHT: f64 = 220.0;
/// Below the plot: tick labels, the x axis label, then the legend.
const X_LABEL_OFFSET: f64 = 36.0;
const LEGEND_OFFSET: f64 = 56.0;
const LEGEND_ROW: f64 = 18.0;
const FONT: &str = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";
/// Rough width of one character at the tick/legend font size (11-12 px), for laying out
/// the legend without measuring text.
const CHAR_WIDTH: f64 = 7.0;
/// The highest percentile the log axis reaches: 99.9999%.
const MAX_NINES: u32 = 6;
/// The lowest: 99%, so a short run still gets a readable axis.
const MIN_NINES: u32 = 2;

/// Series colours: Okabe and Ito's colour-blind-safe set (yellow left out as unreadable
/// on white), then [`GREY`] for reference lines, then Paul Tol's muted set for the 8th to
/// 14th series (a report of more runs than seven gave the 8th the baseline's colour).
pub const PALETTE: [&str; 15] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#332288", "#888888",
    "#882255", "#117733", "#88CCEE", "#AA4499", "#999933", "#44AA99", "#661100",
];
/// Index of the grey in [`PALETTE`].
pub const GREY: usize = 7;
/// How many distinct colours series get before they repeat (grey excluded).
pub const SERIES_COLOURS: usize = 14;

/// The [`PALETTE`] index of the `i`-th series: the colours in order, skipping the grey,
/// repeating after [`SERIES_COLOURS`].
pub fn series_colour(i: usize) -> usize {
    let k = i % SERIES_COLOURS;
    if k < GREY { k } else { k + 1 }
}

/// How the x axis maps data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XScale {
    /// x as given, from zero.
    Linear,
    /// x is a percentile (0 to 100, exclusive), drawn at `log10(1 / (1 - p))` as
    /// HdrHistogram's plotter does: 0%, 90%, 99%, 99.9%, ... equally spaced.
    Percentile,
}

/// The line's dash pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

/// A point with a tooltip: hovering it shows `label`.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub label: String,
    /// Drawn as a dot; otherwise an invisible hover target on the line.
    pub visible: bool,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub name: String,
    /// Tooltip of the whole line (its `<title>`); the name when empty.
    pub tooltip: String,
    /// Index into [`PALETTE`] (taken modulo its length).
    pub color: usize,
    pub stroke: Stroke,
    /// Data points in drawing order; points that are not finite (or, on a percentile
    /// axis, at 100%) are skipped.
    pub points: Vec<(f64, f64)>,
    pub marks: Vec<Mark>,
}

/// A line chart: title, axis labels and series.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: XScale,
    pub series: Vec<Series>,
}

/// Tick positions on a linear axis: evenly spaced values `step` apart, covering the data.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    pub step: f64,
    pub values: Vec<f64>,
}

impl Ticks {
    /// The axis range the ticks span.
    fn range(&self) -> (f64, f64) {
        (
            self.values.first().copied().unwrap_or(0.0),
            self.values.last().copied().unwrap_or(1.0),
        )
    }
}

/// Ticks for data from `lo` to `hi`: about `target` intervals whose step is 1, 2 or 5
/// times a power of ten, the first tick at or below `lo` and the last at or above `hi`.
/// An empty or degenerate range gets the ticks of `0..1` (or `0..hi`).
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let (lo, hi) = if !lo.is_finite() || !hi.is_finite() || hi < lo {
        (0.0, 1.0)
    } else if hi == lo {
        if hi > 0.0 { (0.0, hi) } else { (lo, lo + 1.0) }
    } else {
        (lo, hi)
    };
    let raw = (hi - lo) / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let normalized = raw / magnitude;
    let factor = if normalized <= 1.0 {
        1.0
    } else if normalized <= 2.0 {
        2.0
    } else if normalized <= 5.0 {
        5.0
    } else {
        10.0
    };
    let step = factor * magnitude;
    // A little slack, so 60.000000001 does not add a tick at 70.
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    let last = last.max(first + 1);
    let values = (first..=last).map(|i| i as f64 * step).collect();
    Ticks { step, values }
}

/// A tick's label: as many decimals as the step needs, thousands as `k`, millions as `M`.
pub fn tick_label(value: f64, step: f64) -> String {
    let (divisor, suffix) = if step >= 1e6 {
        (1e6, "M")
    } else if step >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let scaled_step = step / divisor;
    let decimals = if scaled_step >= 1.0 {
        0
    } else {
        (-scaled_step.log10() - 1e-9).ceil().max(0.0) as usize
    };
    // Snap float noise (0.30000000000000004, -0.0) to the tick grid before printing.
    let v = value / divisor;
    if v.abs() < scaled_step * 1e-6 {
        return if decimals == 0 {
            "0".to_string()
        } else {
            format!("{:.decimals$}", 0.0)
        };
    }
    format!("{v:.decimals$}{suffix}")
}

/// Where percentile `percent` (0-100) sits on the log axis: `log10(1 / (1 - p))`, so
/// 0% is 0, 90% is 1, 99% is 2, 99.9% is 3. `None` at 100% and beyond (infinitely far).
pub fn percentile_position(percent: f64) -> Option<f64> {
    if !percent.is_finite() || !(0.0..100.0).contains(&percent) {
        return None;
    }
    Some((100.0 / (100.0 - percent)).log10())
}

/// The label of the log axis's `nines`-th gridline: 0 is `0%`, 1 `90%`, 2 `99%`, 3 `99.9%`.
pub fn nines_label(nines: u32) -> String {
    match nines {
        0 => "0%".to_string(),
        1 => "90%".to_string(),
        2 => "99%".to_string(),
        n => format!("99.{}%", "9".repeat(n as usize - 2)),
    }
}

/// The x axis as drawn: the range in axis units (percentile positions on the log axis) and
/// the gridlines with their labels.
struct XAxis {
    lo: f64,
    hi: f64,
    grid: Vec<(f64, String)>,
}

fn x_axis(chart: &Chart, xs: &[f64]) -> XAxis {
    let max = xs.iter().copied().fold(f64::NAN, f64::max);
    match chart.x_scale {
        XScale::Percentile => {
            let nines = if max.is_finite() {
                (max - 1e-9)
                    .ceil()
                    .clamp(MIN_NINES as f64, MAX_NINES as f64) as u32
            } else {
                MIN_NINES
            };
            XAxis {
                lo: 0.0,
                hi: nines as f64,
                grid: (0..=nines).map(|n| (n as f64, nines_label(n))).collect(),
            }
        }
        XScale::Linear => {
            let min = xs.iter().copied().fold(f64::NAN, f64::min);
            let lo = if min.is_finite() { min.min(0.0) } else { 0.0 };
            let hi = if max.is_finite() { max } else { 1.0 };
            let mut ticks = nice_ticks(lo, hi, 6);
            // Whole-number data (seconds of a run) gets whole ticks: a 2-second run's
            // axis reads 0, 1, 2, not 0, 0.2, 0.4, ...
            if ticks.step < 1.0 && xs.iter().all(|x| x.fract() == 0.0) {
                let (first, last) = (lo.floor() as i64, hi.ceil().max(lo + 1.0) as i64);
                ticks = Ticks {
                    step: 1.0,
                    values: (first..=last).map(|v| v as f64).collect(),
                };
            }
            let (lo, hi) = ticks.range();
            let grid = ticks
                .values
                .iter()
                .map(|&v| (v, tick_label(v, ticks.step)))
                .collect();
            XAxis { lo, hi, grid }
        }
    }
}

/// A data x in axis units, or `None` if it cannot be drawn.
fn axis_x(scale: XScale, x: f64) -> Option<f64> {
    match scale {
        XScale::Linear => x.is_finite().then_some(x),
        XScale::Percentile => percentile_position(x),
    }
}

/// Renders `chart` as one `<svg>` element, scaling to its container's width.
pub fn render(chart: &Chart) -> String {
    let plot_width = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    let scale = chart.x_scale;

    // Points in axis units, per series; the ranges come from what can be drawn.
    let drawable: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .filter_map(|&(x, y)| Some((axis_x(scale, x)?, y)))
                .filter(|&(_, y)| y.is_finite())
                .collect()
        })
        .collect();
    let xs: Vec<f64> = drawable.iter().flatten().map(|p| p.0).collect();
    let y_max = drawable
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(0.0f64, f64::max);
    let x_axis = x_axis(chart, &xs);
    // A little headroom: a line at the data's top (an open loop held at its target rate)
    // that falls on a tick would otherwise run along the frame's top edge, unseen.
    let y_ticks = nice_ticks(0.0, y_max * 1.02, 5);
    let (y_lo, y_hi) = y_ticks.range();

    let px = |x: f64| MARGIN_LEFT + (x - x_axis.lo) / (x_axis.hi - x_axis.lo) * plot_width;
    let py = |y: f64| MARGIN_TOP + PLOT_HEIGHT - (y - y_lo) / (y_hi - y_lo) * PLOT_HEIGHT;

    let legend = legend_layout(&chart.series, plot_width);
    let legend_rows = legend.last().map_or(0, |e| e.row + 1);
    let height = MARGIN_TOP + PLOT_HEIGHT + LEGEND_OFFSET + legend_rows as f64 * LEGEND_ROW;
    let plot_bottom = MARGIN_TOP + PLOT_HEIGHT;
    let plot_right = MARGIN_LEFT + plot_width;

    let mut out = String::with_capacity(4096);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {} {}\" \
         role=\"img\" aria-label=\"",
        num(WIDTH),
        num(height)
    );
    push_escaped(&mut out, &chart.title);
    let _ = write!(
        out,
        "\" font-family=\"{FONT}\" font-size=\"11\" fill=\"#222\">\n<title>"
    );
    push_escaped(&mut out, &chart.title);
    out.push_str("</title>\n");

    // Title.
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">",
        num(MARGIN_LEFT)
    );
    push_escaped(&mut out, &chart.title);
    out.push_str("</text>\n");

    // Gridlines and tick labels.
    out.push_str("<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">\n");
    for &(x, _) in &x_axis.grid {
        let _ = writeln!(
            out,
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>",
            num(px(x)),
            num(MARGIN_TOP),
            num(plot_bottom)
        );
    }
    for &y in &y_ticks.values {
        let _ = writeln!(
            out,
            "<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>",
            num(py(y)),
            num(MARGIN_LEFT),
            num(plot_right)
        );
    }
    out.push_str("</g>\n<g class=\"ticks\" fill=\"#444\">\n");
    for (x, label) in &x_axis.grid {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">",
            num(px(*x)),
            num(plot_bottom + 16.0)
        );
        push_escaped(&mut out, label);
        out.push_str("</text>\n");
    }
    for &y in &y_ticks.values {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">",
            num(MARGIN_LEFT - 6.0),
            num(py(y) + 4.0)
        );
        push_escaped(&mut out, &tick_label(y, y_ticks.step));
        out.push_str("</text>\n");
    }
    out.push_str("</g>\n");

    // Axes and their labels.
    let _ = writeln!(
        out,
        "<path class=\"axes\" d=\"M{l} {t}V{b}H{r}\" stroke=\"#444\" fill=\"none\"/>",
        l = num(MARGIN_LEFT),
        t = num(MARGIN_TOP),
        b = num(plot_bottom),
        r = num(plot_right)
    );
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">",
        num(MARGIN_LEFT + plot_width / 2.0),
        num(plot_bottom + X_LABEL_OFFSET)
    );
    push_escaped(&mut out, &chart.x_label);
    out.push_str("</text>\n");
    let y_mid = MARGIN_TOP + PLOT_HEIGHT / 2.0;
    let _ = write!(
        out,
        "<text x=\"14\" y=\"{0}\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\" \
         font-size=\"12\">",
        num(y_mid)
    );
    push_escaped(&mut out, &chart.y_label);
    out.push_str("</text>\n");

    if xs.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#888\">\
             no data</text>",
            num(MARGIN_LEFT + plot_width / 2.0),
            num(y_mid)
        );
    }

    // Series: a path each (a dot for a single point), then their marks on top.
    for (series, points) in chart.series.iter().zip(&drawable) {
        let color = PALETTE[series.color % PALETTE.len()];
        out.push_str("<g class=\"series\">\n");
        let tooltip = if series.tooltip.is_empty() {
            &series.name
        } else {
            &series.tooltip
        };
        match points.as_slice() {
            [] => {}
            [(x, y)] => {
                let _ = write!(
                    out,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{color}\"><title>",
                    num(px(*x)),
                    num(py(*y))
                );
                push_escaped(&mut out, tooltip);
                out.push_str("</title></circle>\n");
            }
            _ => {
                out.push_str("<path class=\"line\" d=\"");
                for (i, &(x, y)) in points.iter().enumerate() {
                    out.push(if i == 0 { 'M' } else { 'L' });
                    let _ = write!(out, "{} {}", num(px(x)), num(py(y)));
                }
                let _ = write!(
                    out,
                    "\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" \
                     stroke-linejoin=\"round\"{}><title>",
                    dash_attribute(series.stroke)
                );
                push_escaped(&mut out, tooltip);
                out.push_str("</title></path>\n");
            }
        }
        for mark in &series.marks {
            let (Some(x), true) = (axis_x(scale, mark.x), mark.y.is_finite()) else {
                continue;
            };
            let (r, fill) = if mark.visible {
                ("3", color)
            } else {
                ("4", "transparent")
            };
            let _ = write!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"{r}\" fill=\"{fill}\"><title>",
                num(px(x)),
                num(py(mark.y))
            );
            push_escaped(&mut out, &mark.label);
            out.push_str("</title></circle>\n");
        }
        out.push_str("</g>\n");
    }

    // Legend, under the axis label.
    out.push_str("<g class=\"legend\">\n");
    let legend_top = plot_bottom + LEGEND_OFFSET;
    for entry in &legend {
        let series = &chart.series[entry.index];
        let color = PALETTE[series.color % PALETTE.len()];
        let y = legend_top + entry.row as f64 * LEGEND_ROW;
        let x = MARGIN_LEFT + entry.x;
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{1}\" stroke=\"{color}\" \
             stroke-width=\"2\"{}/>",
            num(x),
            num(y - 4.0),
            num(x + 22.0),
            dash_attribute(series.stroke)
        );
        let _ = write!(out, "<text x=\"{}\" y=\"{}\">", num(x + 28.0), num(y));
        push_escaped(&mut out, &entry.shown);
        if entry.shown != series.name {
            out.push_str("<title>");
            push_escaped(&mut out, &series.name);
            out.push_str("</title>");
        }
        out.push_str("</text>\n");
    }
    out.push_str("</g>\n</svg>");
    out
}

/// Where one legend entry goes: its row and its x offset from the plot's left edge.
struct LegendEntry {
    index: usize,
    row: usize,
    x: f64,
    /// The series' name as the entry shows it ([`legend_name`]).
    shown: String,
}

/// Lays legend entries left to right, wrapping at the plot's width.
fn legend_layout(series: &[Series], width: f64) -> Vec<LegendEntry> {
    let mut entries = Vec::with_capacity(series.len());
    let (mut row, mut x) = (0, 0.0);
    for (index, s) in series.iter().enumerate() {
        let shown = legend_name(&s.name, width);
        let w = 28.0 + shown.chars().count() as f64 * CHAR_WIDTH + 18.0;
        if x > 0.0 && x + w > width {
            row += 1;
            x = 0.0;
        }
        entries.push(LegendEntry {
            index,
            row,
            x,
            shown,
        });
        x += w;
    }
    entries
}

/// A series' name as its legend entry shows it: whole when it fits one row of a plot
/// `width` wide, else cut in the middle (`…`), so that the end that tells a run's lines
/// apart (` p50`, ` p99`) stays; the whole name is the entry's tooltip.
fn legend_name(name: &str, width: f64) -> String {
    let room = (((width - 46.0) / CHAR_WIDTH).floor() as usize).max(9);
    let count = name.chars().count();
    if count <= room {
        return name.to_string();
    }
    let tail = room / 2;
    let head = room - tail - 1;
    let mut shown: String = name.chars().take(head).collect();
    shown.push('…');
    shown.extend(name.chars().skip(count - tail));
    shown
}

fn dash_attribute(stroke: Stroke) -> &'static str {
    match stroke {
        Stroke::Solid => "",
        Stroke::Dashed => " stroke-dasharray=\"7 4\"",
        Stroke::Dotted => " stroke-dasharray=\"2 3\"",
    }
}

/// A coordinate with one decimal, without a trailing `.0`: short and deterministic.
fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    match s.strip_suffix(".0") {
        Some("-0") => "0".to_string(),
        Some(whole) => whole.to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourteen_series_get_fourteen_colours_and_none_is_the_grey() {
        let colours: Vec<usize> = (0..SERIES_COLOURS).map(series_colour).collect();
        let mut distinct = colours.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), SERIES_COLOURS);
        assert!(!colours.contains(&GREY));
        assert!(colours.iter().all(|&c| c < PALETTE.len()));
        assert_eq!(
            series_colour(SERIES_COLOURS),
            series_colour(0),
            "then they repeat"
        );
    }

    fn line(points: Vec<(f64, f64)>) -> Series {
        Series {
            name: "GET <run>".to_string(),
            tooltip: String::new(),
            color: 0,
            stroke: Stroke::Solid,
            points,
            marks: Vec::new(),
        }
    }

    fn chart(scale: XScale, series: Vec<Series>) -> Chart {
        Chart {
            title: "t".to_string(),
            x_label: "x".to_string(),
            y_label: "y".to_string(),
            x_scale: scale,
            series,
        }
    }

    #[test]
    fn ticks_are_one_two_or_five_times_a_power_of_ten_and_cover_the_data() {
        assert_eq!(
            nice_ticks(0.0, 59.0, 6).values,
            vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
        );
        let t = nice_ticks(0.0, 0.311, 5);
        assert_eq!(t.step, 0.1);
        assert_eq!(t.values.len(), 5); // 0, 0.1, 0.2, 0.3, 0.4
        assert_eq!(tick_label(t.values[3], t.step), "0.3");
        let t = nice_ticks(0.0, 44_725.0, 5);
        assert_eq!(t.step, 10_000.0);
        assert_eq!(*t.values.last().unwrap(), 50_000.0);
        let t = nice_ticks(0.0, 1.0, 5);
        assert_eq!(t.step, 0.2);
        assert_eq!(t.values.len(), 6);
        // An exact multiple is not padded by another step.
        assert_eq!(*nice_ticks(0.0, 60.0, 6).values.last().unwrap(), 60.0);
        // Degenerate input still gives an axis.
        assert_eq!(nice_ticks(0.0, 0.0, 5).values.first(), Some(&0.0));
        assert!(nice_ticks(0.0, 0.0, 5).values.len() >= 2);
        assert!(nice_ticks(f64::NAN, f64::INFINITY, 5).values.len() >= 2);
        assert_eq!(nice_ticks(0.0, 7.0, 5).values.last(), Some(&8.0));
    }

    #[test]
    fn tick_labels_use_the_decimals_the_step_needs_and_k_or_m() {
        assert_eq!(tick_label(0.0, 0.05), "0.00");
        assert_eq!(tick_label(0.15000000000000002, 0.05), "0.15");
        assert_eq!(tick_label(0.30000000000000004, 0.1), "0.3");
        assert_eq!(tick_label(40.0, 10.0), "40");
        assert_eq!(tick_label(500.0, 500.0), "500");
        assert_eq!(tick_label(20_000.0, 10_000.0), "20k");
        assert_eq!(tick_label(2_500.0, 500.0), "2500");
        assert_eq!(tick_label(1_000.0, 200.0), "1000");
        assert_eq!(tick_label(3_000_000.0, 1_000_000.0), "3M");
        assert_eq!(tick_label(1_500_000.0, 500_000.0), "1500k");
        assert_eq!(tick_label(-1e-17, 0.1), "0.0");
        assert_eq!(tick_label(0.0, 10_000.0), "0");
    }

    #[test]
    fn percentile_axis_puts_each_nine_one_unit_further() {
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(close(percentile_position(0.0), 0.0));
        assert!(close(percentile_position(90.0), 1.0));
        assert!(close(percentile_position(99.0), 2.0));
        assert!(close(percentile_position(99.9), 3.0));
        assert!(close(percentile_position(99.999), 5.0));
        assert!(close(percentile_position(50.0), 2f64.log10()));
        assert_eq!(percentile_position(100.0), None);
        assert_eq!(percentile_position(-1.0), None);
        assert_eq!(percentile_position(f64::NAN), None);
        let labels: Vec<String> = (0..=6).map(nines_label).collect();
        assert_eq!(
            labels,
            ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
        );
    }

    #[test]
    fn percentile_chart_spans_the_nines_the_data_reaches() {
        // 99.95% is past 99.9%: the axis ends at 99.99%.
        let svg = render(&chart(
            XScale::Percentile,
            vec![line(vec![
                (0.0, 0.1),
                (50.0, 0.2),
                (99.95, 0.5),
                (100.0, 9.0),
            ])],
        ));
        assert!(svg.contains(">99.99%</text>"), "{svg}");
        assert!(!svg.contains(">99.999%</text>"));
        // The 100% point is not drawn: the y axis stops just above 0.5 (at 0.6), not at 9.
        assert!(
            svg.contains(">0.6</text>")
                && !svg.contains(">0.8</text>")
                && !svg.contains(">9</text>"),
            "{svg}"
        );
        // Three drawn points: one move, two lines.
        let d = svg.split("d=\"M").nth(2).unwrap();
        assert_eq!(d.split('"').next().unwrap().matches('L').count(), 2);
        // A short run still gets an axis to 99%.
        let svg = render(&chart(
            XScale::Percentile,
            vec![line(vec![(0.0, 1.0), (50.0, 2.0)])],
        ));
        assert!(svg.contains(">99%</text>") && !svg.contains(">99.9%</text>"));
    }

    #[test]
    fn log_axis_maps_each_nine_to_an_equal_step_in_pixels() {
        let svg = render(&chart(
            XScale::Percentile,
            vec![line(vec![
                (0.0, 1.0),
                (90.0, 1.0),
                (99.0, 1.0),
                (99.9, 1.0),
            ])],
        ));
        let path = svg.split("class=\"line\" d=\"").nth(1).unwrap();
        let path = path.split('"').next().unwrap();
        let xs: Vec<f64> = path
            .split(['M', 'L'])
            .filter(|p| !p.is_empty())
            .map(|p| p.split(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(xs.len(), 4);
        assert_eq!(xs[0], MARGIN_LEFT);
        assert_eq!(xs[3], WIDTH - MARGIN_RIGHT);
        let step = xs[1] - xs[0];
        assert!((xs[2] - xs[1] - step).abs() < 0.2 && (xs[3] - xs[2] - step).abs() < 0.2);
    }

    #[test]
    fn text_is_escaped_and_output_is_deterministic() {
        let mut c = chart(XScale::Linear, vec![line(vec![(0.0, 1.0), (1.0, 2.0)])]);
        c.title = "a<b & \"c\"".to_string();
        c.series[0].marks.push(Mark {
            x: 1.0,
            y: 2.0,
            label: "<script>".to_string(),
            visible: true,
        });
        let svg = render(&c);
        assert!(svg.contains("a&lt;b &amp; &quot;c&quot;"));
        assert!(svg.contains("GET &lt;run&gt;"));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(!svg.contains("<script") && !svg.contains("<b "));
        assert_eq!(svg, render(&c));
    }

    #[test]
    fn empty_and_single_point_charts_still_draw() {
        let svg = render(&chart(XScale::Linear, vec![]));
        assert!(svg.contains(">no data</text>"));
        let svg = render(&chart(XScale::Linear, vec![line(vec![(3.0, 2.0)])]));
        assert!(svg.contains("<circle") && !svg.contains("no data"));
        let svg = render(&chart(XScale::Linear, vec![line(vec![(f64::NAN, 2.0)])]));
        assert!(svg.contains("no data") && !svg.contains("NaN"));
    }

    #[test]
    fn legend_wraps_when_the_names_do_not_fit_one_row() {
        let many: Vec<Series> = (0..8)
            .map(|i| Series {
                name: format!("a fairly long series name {i}"),
                ..line(vec![(0.0, 1.0), (1.0, 1.0)])
            })
            .collect();
        let rows = legend_layout(&many, WIDTH - MARGIN_LEFT - MARGIN_RIGHT);
        assert!(rows.last().unwrap().row >= 3);
        assert!(rows.iter().all(|e| e.x + 28.0 < WIDTH));
    }

    #[test]
    fn a_name_too_long_for_a_row_is_cut_in_the_middle_keeping_its_end() {
        let width = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
        assert_eq!(legend_name("GET run.json p99", width), "GET run.json p99");
        let long = format!(
            "Totals {} p99",
            "candidate-redis-7.2.4-io-threads-4-".repeat(4)
        );
        let shown = legend_name(&long, width);
        assert!(shown.ends_with(" p99") && shown.starts_with("Totals ") && shown.contains('…'));
        assert!(shown.chars().count() * CHAR_WIDTH as usize <= (width - 46.0) as usize);
        let series = vec![Series {
            name: long.clone(),
            ..line(vec![(0.0, 1.0), (1.0, 2.0)])
        }];
        let svg = render(&chart(XScale::Linear, series));
        assert!(svg.contains(&format!("<title>{long}</title>")), "{svg}");
    }

    #[test]
    fn whole_number_data_gets_whole_ticks() {
        let seconds = chart(XScale::Linear, vec![line(vec![(0.0, 1.0), (1.0, 2.0)])]);
        let axis = x_axis(&seconds, &[0.0, 1.0]);
        let labels: Vec<&str> = axis.grid.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0", "1"]);
        // Fractional data keeps its fine ticks.
        let axis = x_axis(&seconds, &[0.0, 0.5]);
        assert!(axis.grid.len() > 2, "{:?}", axis.grid);
    }

    #[test]
    fn coordinates_are_short() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(f64::NAN), "0");
    }
}
