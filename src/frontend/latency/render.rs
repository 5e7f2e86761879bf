//! The text of `kvbench latency`: redis-cli's lines for each output format, byte for
//! byte, plus kvbench's `--precision=us` figures and `--percentiles`.
//!
//! ```text
//! standard (redrawn in place)  ESC[0GESC[2Kmin: 0, max: 1, avg: 0.19 (427 samples)
//! standard --history           ESC[0GESC[2Kmin: 0, max: 1, avg: 0.18 (1449 samples) -- 15.01 seconds range
//! --raw                        0 1 0.15 99
//! --csv                        0,1,0.17,99
//! --json                       {"min": 0, "max": 1, "avg": 0.17, "count": 99}
//! ```
//!
//! In milliseconds (redis-cli's unit) min is rounded down and max up to whole
//! milliseconds, so the true figures lie between them, as redis-cli's millisecond clock
//! readings do; the average is the exact mean. `--precision=us` prints microseconds: whole
//! for min and max (the samples' resolution), two decimals for the average.
//!
//! Percentiles follow the figures: `, p99: 0.412` in the standard format (milliseconds with
//! three decimals, or whole microseconds), one more field each in raw and CSV, one more key
//! each in JSON. Machine-format history lines carry the window's length in seconds as the
//! field after the count (`"seconds"` in JSON) instead of redis-cli's separate
//! ` -- 15.00 seconds range` line, so every line parses on its own.

use std::fmt::Write as _;

use super::spectrum::{self, Palette};
use super::window_stats::WindowStats;
use super::windows::Print;

/// Moves the cursor to the left edge and clears the line: how redis-cli redraws in place.
const REDRAW: &str = "\x1b[0G\x1b[2K";

/// How figures are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `min: 0, max: 1, avg: 0.19 (427 samples)`, for people.
    Standard,
    /// `0 1 0.15 99`.
    Raw,
    /// `0,1,0.17,99`.
    Csv,
    /// `{"min": 0, "max": 1, "avg": 0.17, "count": 99}`.
    Json,
}

/// The unit of the figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Whole milliseconds for min and max, as redis-cli prints them.
    Ms,
    /// Microseconds.
    Us,
}

/// Everything that decides how a window's figures are written.
#[derive(Clone, Debug, PartialEq)]
pub struct Style {
    pub format: Format,
    pub precision: Precision,
    /// Percentiles (0-100) to append, in the order given.
    pub percentiles: Vec<f64>,
    /// Colours of the `--dist` spectrum.
    pub palette: Palette,
}

impl Style {
    /// The text for one [`Print`], appended to `out`.
    pub fn render(&self, print: &Print<'_>, out: &mut String) {
        match print {
            Print::Nothing => {}
            Print::Redraw(stats) => {
                out.push_str(REDRAW);
                self.figures(stats, None, out);
            }
            Print::Window { stats, seconds } => {
                if self.format == Format::Standard {
                    out.push_str(REDRAW);
                    self.figures(stats, None, out);
                    let _ = writeln!(out, " -- {seconds:.2} seconds range");
                } else {
                    self.figures(stats, Some(*seconds), out);
                    out.push('\n');
                }
            }
            Print::Once(stats) => {
                self.figures(stats, None, out);
                out.push('\n');
            }
            Print::Spectrum {
                spectrum: counts,
                stats,
                legend,
            } => {
                if *legend {
                    spectrum::render_legend(self.palette, out);
                }
                spectrum::render_line(counts, self.palette, out);
                if !self.percentiles.is_empty() {
                    out.push(' ');
                    self.standard_percentiles(stats, "", out);
                }
                out.push('\n');
            }
            Print::EndLine => out.push('\n'),
        }
    }

    /// One window's figures in this style, without a line end; `seconds` is the window's
    /// length where a machine format carries it.
    pub fn figures(&self, stats: &WindowStats, seconds: Option<f64>, out: &mut String) {
        let (min, max, avg) = self.min_max_avg(stats);
        let count = stats.count();
        match self.format {
            Format::Standard => {
                let _ = write!(
                    out,
                    "min: {min}, max: {max}, avg: {avg:.2} ({count} samples)"
                );
                self.standard_percentiles(stats, ", ", out);
            }
            Format::Raw | Format::Csv => {
                let sep = if self.format == Format::Raw { ' ' } else { ',' };
                let _ = write!(out, "{min}{sep}{max}{sep}{avg:.2}{sep}{count}");
                if let Some(seconds) = seconds {
                    let _ = write!(out, "{sep}{seconds:.2}");
                }
                for &p in &self.percentiles {
                    out.push(sep);
                    self.percentile_value(stats, p, out);
                }
            }
            // A window with no sample (a stalled server) has no figures: null, where
            // the text formats print zeros as redis-cli does.
            Format::Json if count == 0 => {
                out.push_str("{\"min\": null, \"max\": null, \"avg\": null, \"count\": 0");
                if let Some(seconds) = seconds {
                    let _ = write!(out, ", \"seconds\": {seconds:.2}");
                }
                for &p in &self.percentiles {
                    let _ = write!(out, ", \"p{p}\": null");
                }
                out.push('}');
            }
            Format::Json => {
                let _ = write!(
                    out,
                    "{{\"min\": {min}, \"max\": {max}, \"avg\": {avg:.2}, \"count\": {count}"
                );
                if let Some(seconds) = seconds {
                    let _ = write!(out, ", \"seconds\": {seconds:.2}");
                }
                for &p in &self.percentiles {
                    let _ = write!(out, ", \"p{p}\": ");
                    self.percentile_value(stats, p, out);
                }
                out.push('}');
            }
        }
    }

    /// min, max (whole units) and the mean in the chosen unit.
    fn min_max_avg(&self, stats: &WindowStats) -> (u64, u64, f64) {
        match self.precision {
            Precision::Ms => (
                stats.min_us() / 1000,
                stats.max_us().div_ceil(1000),
                stats.mean_us() / 1000.0,
            ),
            Precision::Us => (stats.min_us(), stats.max_us(), stats.mean_us()),
        }
    }

    /// Percentiles as `p50: 0.131, p99: 0.412`, the first one preceded by `first`.
    fn standard_percentiles(&self, stats: &WindowStats, first: &str, out: &mut String) {
        for (i, &p) in self.percentiles.iter().enumerate() {
            out.push_str(if i == 0 { first } else { ", " });
            let _ = write!(out, "p{p}: ");
            self.percentile_value(stats, p, out);
        }
    }

    /// One percentile: milliseconds with three decimals (microsecond resolution) or whole
    /// microseconds.
    fn percentile_value(&self, stats: &WindowStats, p: f64, out: &mut String) {
        let us = stats.percentile_us(p);
        match self.precision {
            Precision::Ms => {
                let _ = write!(out, "{:.3}", us as f64 / 1000.0);
            }
            Precision::Us => {
                let _ = write!(out, "{us}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(format: Format) -> Style {
        Style {
            format,
            precision: Precision::Ms,
            percentiles: Vec::new(),
            palette: Palette::Colour,
        }
    }

    fn stats_of(samples_us: &[u64]) -> WindowStats {
        let mut w = WindowStats::new();
        for &s in samples_us {
            w.record(s);
        }
        w
    }

    /// Whole-millisecond samples whose figures print as redis-cli's `min max avg count`:
    /// `count - 1` samples of `min` ms, then one of `max` ms, then the rest of the total.
    fn samples_for(min: u64, max: u64, avg: f64, count: u64) -> Vec<u64> {
        let total = (avg * count as f64).round() as u64;
        let mut ms = vec![min; count as usize];
        let mut left = total - min * count;
        // Put `max` in once, then spread what remains one millisecond at a time.
        ms[0] = max;
        left -= max - min;
        for slot in ms.iter_mut().skip(1) {
            if left == 0 {
                break;
            }
            let add = left.min(max - min);
            *slot += add;
            left -= add;
        }
        assert_eq!(left, 0, "figures not reachable");
        ms.into_iter().map(|m| m * 1000).collect()
    }

    fn render(style: &Style, print: &Print<'_>) -> String {
        let mut out = String::new();
        style.render(print, &mut out);
        out
    }

    /// Parses `0 5 0.32 96`, `0,3,0.20,50` or the JSON line into (min, max, avg, count).
    fn parse_line(line: &str) -> (u64, u64, f64, u64) {
        let fields: Vec<String> = line
            .trim()
            .trim_matches(|c| c == '{' || c == '}')
            .split([' ', ','])
            .filter(|f| !f.is_empty() && !f.starts_with('"'))
            .map(str::to_string)
            .collect();
        (
            fields[0].parse().expect("min"),
            fields[1].parse().expect("max"),
            fields[2].parse().expect("avg"),
            fields[3].parse().expect("count"),
        )
    }

    #[test]
    fn one_shot_lines_match_redis_cli_byte_for_byte() {
        for (fixture, format) in [
            (include_str!("testdata/once_raw.txt"), Format::Raw),
            (include_str!("testdata/once_csv.txt"), Format::Csv),
            (include_str!("testdata/once_json.txt"), Format::Json),
        ] {
            let (min, max, avg, count) = parse_line(fixture);
            let stats = stats_of(&samples_for(min, max, avg, count));
            assert_eq!(render(&style(format), &Print::Once(&stats)), fixture);
        }
    }

    #[test]
    fn redraw_and_history_lines_in_the_standard_format() {
        let stats = stats_of(&[1_000, 0, 0, 0]);
        let s = style(Format::Standard);
        assert_eq!(
            render(&s, &Print::Redraw(&stats)),
            "\x1b[0G\x1b[2Kmin: 0, max: 1, avg: 0.25 (4 samples)"
        );
        assert_eq!(
            render(
                &s,
                &Print::Window {
                    stats: &stats,
                    seconds: 15.005_001
                }
            ),
            "\x1b[0G\x1b[2Kmin: 0, max: 1, avg: 0.25 (4 samples) -- 15.01 seconds range\n"
        );
        assert_eq!(render(&s, &Print::EndLine), "\n");
        assert_eq!(render(&s, &Print::Nothing), "");
    }

    #[test]
    fn machine_history_lines_carry_the_window_length() {
        let stats = stats_of(&[120, 480, 2_500]);
        let window = Print::Window {
            stats: &stats,
            seconds: 1.004,
        };
        assert_eq!(render(&style(Format::Raw), &window), "0 3 1.03 3 1.00\n");
        assert_eq!(render(&style(Format::Csv), &window), "0,3,1.03,3,1.00\n");
        assert_eq!(
            render(&style(Format::Json), &window),
            "{\"min\": 0, \"max\": 3, \"avg\": 1.03, \"count\": 3, \"seconds\": 1.00}\n"
        );
    }

    #[test]
    fn milliseconds_round_min_down_and_max_up_around_the_true_figures() {
        let stats = stats_of(&[999, 1_001, 300]);
        let mut out = String::new();
        style(Format::Raw).figures(&stats, None, &mut out);
        // 0.3 ms .. 1.001 ms lies within 0 .. 2; the mean is exact: 2300 / 3 µs.
        assert_eq!(out, "0 2 0.77 3");
    }

    #[test]
    fn microsecond_precision_and_percentiles() {
        let samples: Vec<u64> = (1..=1000).collect();
        let stats = stats_of(&samples);
        let mut s = style(Format::Standard);
        s.precision = Precision::Us;
        s.percentiles = vec![50.0, 99.0, 99.9];
        let mut out = String::new();
        s.figures(&stats, None, &mut out);
        assert_eq!(
            out,
            "min: 1, max: 1000, avg: 500.50 (1000 samples), p50: 500, p99: 990, p99.9: 999"
        );

        s.format = Format::Csv;
        out.clear();
        s.figures(&stats, Some(2.0), &mut out);
        assert_eq!(out, "1,1000,500.50,1000,2.00,500,990,999");

        s.format = Format::Json;
        s.precision = Precision::Ms;
        s.percentiles = vec![50.0, 99.9];
        out.clear();
        s.figures(&stats, None, &mut out);
        assert_eq!(
            out,
            "{\"min\": 0, \"max\": 1, \"avg\": 0.50, \"count\": 1000, \"p50\": 0.500, \"p99.9\": 0.999}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(parsed["p99.9"], 0.999);

        s.format = Format::Raw;
        out.clear();
        s.figures(&stats, None, &mut out);
        assert_eq!(out, "0 1 0.50 1000 0.500 0.999");
    }

    #[test]
    fn an_empty_window_is_null_in_json_and_zeros_in_text_never_nan() {
        let stats = WindowStats::new();
        let mut s = style(Format::Json);
        s.percentiles = vec![99.0];
        let mut out = String::new();
        s.figures(&stats, Some(15.0), &mut out);
        assert_eq!(
            out,
            "{\"min\": null, \"max\": null, \"avg\": null, \"count\": 0, \"seconds\": 15.00, \"p99\": null}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert!(parsed["avg"].is_null());
        s.format = Format::Raw;
        out.clear();
        s.figures(&stats, Some(15.0), &mut out);
        assert_eq!(out, "0 0 0.00 0 15.00 0.000");
    }

    #[test]
    fn spectrum_with_legend_and_percentiles() {
        let mut counts = spectrum::Spectrum::new();
        counts.record(80);
        let stats = stats_of(&[80]);
        let mut s = style(Format::Standard);
        s.palette = Palette::Mono;
        s.percentiles = vec![99.0];
        let out = render(
            &s,
            &Print::Spectrum {
                spectrum: &counts,
                stats: &stats,
                legend: true,
            },
        );
        let legend_fixture: String = include_str!("testdata/dist_mono.txt")
            .split_inclusive('\n')
            .take(8)
            .collect();
        let line = out.strip_prefix(&legend_fixture).expect("legend first");
        assert!(line.starts_with("\x1b[38;5;0m\x1b[48;5;0m.\x1b[48;5;253m-"));
        assert!(
            line.ends_with("\x1b[48;5;0m?\x1b[0m p99: 0.080\n"),
            "{line:?}"
        );
    }
}
