//! The report's charts as [`Chart`] values, built from the model: throughput and latency per
//! second, latency percentile spectra, and a rate sweep's curves.
//!
//! One run: one chart per quantity, a line per row (`Sets`, `Gets`, `Totals`). Several runs:
//! one chart per row and quantity, a line per run, so before and after sit on the same axes.
//! A run's colour is the same in every chart.

use hdrhistogram::Histogram;

use super::model::{
    RateSweep, Row, Run, SecondPoint, SweepStep, is_totals_name, names_in_table_order,
    same_row_name,
};
use super::numbers::rate_text;
use super::svg::{self, Chart, GREY, Mark, Series, Stroke, XScale};
use crate::results::value_at_percentile_us;

/// Per-second tooltips stop past this many points: the page stays small for long runs.
const MAX_MARKS_PER_SERIES: usize = 600;
/// Spacing of the spectrum's samples on the log axis: 40 per decade of `1/(1-p)`.
const SPECTRUM_STEP: f64 = 0.025;
/// The spectrum's axis ends at 99.9999%.
const SPECTRUM_MAX_NINES: f64 = 6.0;
/// The percentiles the spectrum marks with a dot and a tooltip.
const MARKED_PERCENTILES: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999];

/// The row names of all runs in table order (first seen first, `Totals` last).
pub fn row_names(runs: &[Run]) -> Vec<String> {
    names_in_table_order(runs.iter().flat_map(|r| &r.rows))
}

/// Row names for charts: `Totals` first (the headline), then the commands.
fn chart_row_names(runs: &[Run]) -> Vec<String> {
    let mut names = row_names(runs);
    if names.last().is_some_and(|n| is_totals_name(n)) {
        names.rotate_right(1);
    }
    names
}

fn row<'a>(run: &'a Run, name: &str) -> Option<&'a Row> {
    run.rows.iter().find(|r| same_row_name(&r.name, name))
}

/// The colour of the `i`-th line of a chart (run or row).
fn colour(i: usize) -> usize {
    svg::series_colour(i)
}

/// Throughput and p50/p99 latency per second. `labels` name the runs.
pub fn per_second_charts(runs: &[Run], labels: &[String]) -> Vec<Chart> {
    let has_series = |r: &Row| r.count > 0 && !r.per_second.is_empty();
    let throughput = |title: String, series| Chart {
        title,
        x_label: "second of the run".to_string(),
        y_label: "requests / s".to_string(),
        x_scale: XScale::Linear,
        series,
    };
    let latency = |title: String, series| Chart {
        title,
        x_label: "second of the run".to_string(),
        y_label: "latency (ms)".to_string(),
        x_scale: XScale::Linear,
        series,
    };
    match runs {
        [] => Vec::new(),
        [run] => {
            let rows: Vec<&Row> = run.rows.iter().filter(|r| has_series(r)).collect();
            if rows.is_empty() {
                return Vec::new();
            }
            let ops = rows
                .iter()
                .enumerate()
                .map(|(i, r)| throughput_series(&r.name, r, colour(i)))
                .collect();
            let lat = rows
                .iter()
                .enumerate()
                .flat_map(|(i, r)| latency_series(&r.name, r, colour(i)))
                .collect();
            vec![
                throughput("Throughput per second".to_string(), ops),
                latency(
                    "Latency per second: p50 (solid), p99 (dashed)".to_string(),
                    lat,
                ),
            ]
        }
        _ => {
            let mut charts = Vec::new();
            for name in chart_row_names(runs) {
                let rows: Vec<(usize, &Row)> = runs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, run)| Some((i, row(run, &name)?)))
                    .filter(|(_, r)| has_series(r))
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                let ops = rows
                    .iter()
                    .map(|&(i, r)| throughput_series(&labels[i], r, colour(i)))
                    .collect();
                let lat = rows
                    .iter()
                    .flat_map(|&(i, r)| latency_series(&labels[i], r, colour(i)))
                    .collect();
                charts.push(throughput(format!("{name}: throughput per second"), ops));
                charts.push(latency(
                    format!("{name}: latency per second, p50 (solid), p99 (dashed)"),
                    lat,
                ));
            }
            charts
        }
    }
}

fn throughput_series(name: &str, row: &Row, color: usize) -> Series {
    let points: Vec<(f64, f64)> = row
        .per_second
        .iter()
        .map(|p| (p.second as f64, p.ops_per_sec))
        .collect();
    let marks = if points.len() <= MAX_MARKS_PER_SERIES {
        row.per_second
            .iter()
            .map(|p| Mark {
                x: p.second as f64,
                y: p.ops_per_sec,
                label: format!(
                    "{name}, second {}: {} requests/s",
                    p.second,
                    rate_text(p.ops_per_sec)
                ),
                visible: false,
            })
            .collect()
    } else {
        Vec::new()
    };
    Series {
        name: name.to_string(),
        tooltip: format!(
            "{name}: {} requests/s over the run",
            rate_text(row.ops_per_sec)
        ),
        color,
        stroke: Stroke::Solid,
        points,
        marks,
    }
}

/// The p50 (solid) and p99 (dashed) lines of one row; seconds without requests are gaps
/// in neither line: they are left out, and the line joins its neighbours.
pub(super) fn latency_series(name: &str, row: &Row, color: usize) -> [Series; 2] {
    let line = |which: &str, stroke, get: fn(&SecondPoint) -> Option<f64>| {
        let points: Vec<(f64, f64)> = row
            .per_second
            .iter()
            .filter_map(|p| Some((p.second as f64, get(p)?)))
            .collect();
        let marks = if points.len() <= MAX_MARKS_PER_SERIES {
            points
                .iter()
                .map(|&(x, y)| Mark {
                    x,
                    y,
                    label: format!("{name}, second {x}: {which} {y:.3} ms"),
                    visible: false,
                })
                .collect()
        } else {
            Vec::new()
        };
        Series {
            name: format!("{name} {which}"),
            tooltip: String::new(),
            color,
            stroke,
            points,
            marks,
        }
    };
    [
        line("p50", Stroke::Solid, |p| p.p50_ms),
        line("p99", Stroke::Dashed, |p| p.p99_ms),
    ]
}

/// The latency percentile curve of a histogram in microseconds, as (percentile 0-100,
/// latency ms) points: samples evenly spaced on the log `1/(1-p)` axis up to the worst
/// request, which is drawn at `1 - 1/count` (the one-in-count request), as HdrHistogram's
/// plots show it. Empty for an empty histogram.
pub fn spectrum_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let count = h.len();
    if count == 0 {
        return Vec::new();
    }
    let end = (count as f64).log10().min(SPECTRUM_MAX_NINES);
    let percent_at = |position: f64| 100.0 * (1.0 - 10f64.powf(-position));
    let mut points = Vec::new();
    let mut k = 0u32;
    loop {
        let position = f64::from(k) * SPECTRUM_STEP;
        if position >= end - 1e-9 {
            break;
        }
        let p = percent_at(position);
        points.push((p, value_at_percentile_us(h, p) as f64 / 1000.0));
        k += 1;
    }
    let last = if end > 0.0 { percent_at(end) } else { 0.0 };
    points.push((last, h.max() as f64 / 1000.0));
    points
}

/// The row's histogram, if it holds any request.
fn hist(row: &Row) -> Option<&Histogram<u64>> {
    row.histogram.as_ref().filter(|h| !h.is_empty())
}

pub(super) fn spectrum_series(name: &str, h: &Histogram<u64>, color: usize) -> Series {
    let count = h.len();
    let end = (count as f64).log10();
    let mut marks: Vec<Mark> = MARKED_PERCENTILES
        .iter()
        .filter(|&&p| super::svg::percentile_position(p).is_some_and(|x| x <= end + 1e-9))
        .map(|&p| {
            let ms = value_at_percentile_us(h, p) as f64 / 1000.0;
            Mark {
                x: p,
                y: ms,
                label: format!("{name}: p{p} = {ms:.3} ms"),
                visible: true,
            }
        })
        .collect();
    let points = spectrum_points(h);
    if let Some(&(p, max)) = points.last() {
        marks.push(Mark {
            x: p,
            y: max,
            label: format!("{name}: max = {max:.3} ms (the slowest of {count} requests)"),
            visible: true,
        });
    }
    Series {
        name: name.to_string(),
        tooltip: format!("{name}: {count} requests"),
        color,
        stroke: Stroke::Solid,
        points,
        marks,
    }
}

/// The latency percentile spectrum on the log axis: one chart with a line per row for one
/// run, one chart per row with a line per run for several.
pub fn spectrum_charts(runs: &[Run], labels: &[String]) -> Vec<Chart> {
    let chart = |title: String, series| Chart {
        title,
        x_label: "percentile".to_string(),
        y_label: "latency (ms)".to_string(),
        x_scale: XScale::Percentile,
        series,
    };
    match runs {
        [] => Vec::new(),
        [run] => {
            let series: Vec<Series> = run
                .rows
                .iter()
                .filter_map(|r| Some((r, hist(r)?)))
                .enumerate()
                .map(|(i, (r, h))| spectrum_series(&r.name, h, colour(i)))
                .collect();
            if series.is_empty() {
                return Vec::new();
            }
            vec![chart("Latency by percentile".to_string(), series)]
        }
        _ => chart_row_names(runs)
            .into_iter()
            .filter_map(|name| {
                let series: Vec<Series> = runs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, run)| {
                        let h = hist(row(run, &name)?)?;
                        Some(spectrum_series(&labels[i], h, colour(i)))
                    })
                    .collect();
                (!series.is_empty())
                    .then(|| chart(format!("{name}: latency by percentile"), series))
            })
            .collect(),
    }
}

/// Reads one latency of a sweep step.
type StepLatency = fn(&SweepStep) -> f64;

/// A rate sweep's two views: achieved against target rate (with the ideal diagonal), and
/// latency against achieved rate (p50 solid, p99 dashed, p99.9 dotted).
pub fn sweep_charts(runs: &[Run], labels: &[String]) -> Vec<Chart> {
    let swept: Vec<(usize, &RateSweep)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.sweep.as_ref().filter(|s| !s.steps.is_empty())?)))
        .collect();
    if swept.is_empty() {
        return Vec::new();
    }
    let mut achieved: Vec<Series> = Vec::new();
    let mut latency: Vec<Series> = Vec::new();
    let mut max_target = 0.0f64;
    for &(i, sweep) in &swept {
        let label = &labels[i];
        let steps = &sweep.steps;
        max_target = steps
            .iter()
            .map(|s| s.target_ops_per_sec)
            .fold(max_target, f64::max);
        let marks = steps
            .iter()
            .map(|s| Mark {
                x: s.target_ops_per_sec,
                y: s.achieved_ops_per_sec,
                label: format!(
                    "{label}: asked {} requests/s, achieved {}",
                    rate_text(s.target_ops_per_sec),
                    rate_text(s.achieved_ops_per_sec)
                ),
                visible: true,
            })
            .collect();
        achieved.push(Series {
            name: label.clone(),
            tooltip: String::new(),
            color: colour(i),
            stroke: Stroke::Solid,
            points: steps
                .iter()
                .map(|s| (s.target_ops_per_sec, s.achieved_ops_per_sec))
                .collect(),
            marks,
        });
        let percentiles: [(&str, Stroke, StepLatency); 3] = [
            ("p50", Stroke::Solid, |s| s.p50_ms),
            ("p99", Stroke::Dashed, |s| s.p99_ms),
            ("p99.9", Stroke::Dotted, |s| s.p999_ms),
        ];
        for (which, stroke, get) in percentiles {
            latency.push(Series {
                name: format!("{label} {which}"),
                tooltip: String::new(),
                color: colour(i),
                stroke,
                points: steps
                    .iter()
                    .map(|s| (s.achieved_ops_per_sec, get(s)))
                    .collect(),
                marks: steps
                    .iter()
                    .map(|s| Mark {
                        x: s.achieved_ops_per_sec,
                        y: get(s),
                        label: format!(
                            "{label}: {which} {:.3} ms at {} requests/s",
                            get(s),
                            rate_text(s.achieved_ops_per_sec)
                        ),
                        visible: false,
                    })
                    .collect(),
            });
        }
    }
    achieved.push(Series {
        name: "achieved = target".to_string(),
        tooltip: String::new(),
        color: GREY,
        stroke: Stroke::Dashed,
        points: vec![(0.0, 0.0), (max_target, max_target)],
        marks: Vec::new(),
    });
    vec![
        Chart {
            title: "Rate sweep: achieved against target rate".to_string(),
            x_label: "target requests / s".to_string(),
            y_label: "achieved requests / s".to_string(),
            x_scale: XScale::Linear,
            series: achieved,
        },
        Chart {
            title: "Rate sweep: latency against achieved rate".to_string(),
            x_label: "achieved requests / s".to_string(),
            y_label: "latency (ms)".to_string(),
            x_scale: XScale::Linear,
            series: latency,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    fn run(label: &str, rows: &[&str]) -> Run {
        Run {
            label: label.to_string(),
            rows: rows
                .iter()
                .map(|name| Row {
                    count: 1000,
                    per_second: (0..3)
                        .map(|s| SecondPoint {
                            second: s,
                            ops_per_sec: 100.0,
                            p50_ms: Some(0.1),
                            p99_ms: (s != 1).then_some(0.5),
                        })
                        .collect(),
                    histogram: Some(histogram(1..=1000)),
                    ..Row::named(name)
                })
                .collect(),
            ..Run::default()
        }
    }

    #[test]
    fn spectrum_is_monotonic_and_ends_at_the_worst_request() {
        let h = histogram(1..=1000);
        let points = spectrum_points(&h);
        assert_eq!(points[0], (0.0, 0.001));
        // 3 decades at 40 samples each, then the max.
        assert_eq!(points.len(), 121);
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
        );
        let &(p, max) = points.last().unwrap();
        assert!((p - 99.9).abs() < 1e-9);
        assert_eq!(max, h.max() as f64 / 1000.0);
        // 1..=1000 µs evenly: the latency at p% is p/100 ms (to the histogram's precision).
        for &(p, ms) in &points {
            assert!((ms - p / 100.0).abs() < 0.002, "{p} {ms}");
        }
        assert!(spectrum_points(&histogram([])).is_empty());
        assert_eq!(spectrum_points(&histogram([7])), vec![(0.0, 0.007)]);
    }

    #[test]
    fn spectrum_stops_at_six_nines() {
        let mut h = histogram([]);
        h.record_n(100, 10_000_000).unwrap();
        let last = spectrum_points(&h).last().unwrap().0;
        assert!((last - 99.9999).abs() < 1e-9, "{last}");
    }

    #[test]
    fn one_run_overlays_rows_several_runs_get_a_chart_per_row() {
        let one = [run("a", &["Sets", "Gets", "Totals"])];
        let labels = ["a".to_string(), "b".to_string()];
        let charts = per_second_charts(&one, &labels);
        assert_eq!(charts.len(), 2);
        assert_eq!(charts[0].series.len(), 3);
        assert_eq!(charts[1].series.len(), 6);
        // The p99 line skips the second without a p99.
        assert_eq!(charts[1].series[1].points.len(), 2);
        assert_eq!(spectrum_charts(&one, &labels).len(), 1);

        let two = [
            run("a", &["Sets", "Gets", "Totals"]),
            run("b", &["Gets", "Totals"]),
        ];
        let charts = per_second_charts(&two, &labels);
        let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
        assert!(titles[0].starts_with("Totals: throughput"), "{titles:?}");
        assert_eq!(charts.len(), 6);
        let spectra = spectrum_charts(&two, &labels);
        assert_eq!(spectra.len(), 3);
        assert_eq!(spectra[0].series.len(), 2); // Totals of a and b
        assert_eq!(spectra[1].series.len(), 1); // Sets only in a
        assert_eq!(spectra[0].series[1].name, "b");
        assert_eq!(spectra[0].series[1].color, 1);
    }

    #[test]
    fn rows_without_data_draw_nothing() {
        let mut r = run("a", &["Waits"]);
        r.rows[0].count = 0;
        r.rows[0].histogram = Some(histogram([]));
        let labels = ["a".to_string()];
        assert!(per_second_charts(std::slice::from_ref(&r), &labels).is_empty());
        assert!(spectrum_charts(&[r], &labels).is_empty());
    }

    #[test]
    fn row_names_keep_table_order_with_totals_last() {
        let runs = [
            run("a", &["Sets", "Totals"]),
            run("b", &["Gets", "Totals", "Hsets"]),
        ];
        assert_eq!(row_names(&runs), ["Sets", "Gets", "Hsets", "Totals"]);
        assert_eq!(chart_row_names(&runs), ["Totals", "Sets", "Gets", "Hsets"]);
    }
}
