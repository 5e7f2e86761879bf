//! The report as one self-contained HTML page: the header and the runs' badges, then the
//! sections in order (the ALL STATS table from `stats`, the charts, the open-loop, server and
//! visibility sections, the rate sweep, the settings from `configuration`), with inline CSS
//! and SVG only.
//!
//! The page loads nothing: no script, font, image or style sheet from anywhere, and a
//! Content-Security-Policy that forbids it, so it reads the same offline, attached to a
//! ticket or opened years later. Every string from the model is escaped.

use std::fmt::Write as _;

use super::charts::{per_second_charts, spectrum_charts, sweep_charts};
use super::configuration::render_configuration;
use super::model::{RateSweep, Report, Run, SweepStep};
use super::numbers::{ms_text, rate_text, ratio};
use super::section::{render_chart_section, swatch};
use super::stats::render_stats;
use super::{escape, push_escaped};
use super::{open_loop, servers};

const STYLE: &str = "
:root { color-scheme: light; }
body { font-family: 'DejaVu Sans', Verdana, Helvetica, Arial, sans-serif; color: #222;
  background: #fff; margin: 0 auto; padding: 16px 24px 32px; max-width: 1240px;
  font-size: 14px; line-height: 1.4; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 16px 0 6px; }
p.note { color: #555; margin: 4px 0 10px; }
p.warning { color: #8a1c1c; background: #fdf0f0; border-left: 3px solid #c62828;
  padding: 4px 8px; margin: 4px 0 10px; }
ol.runs { margin: 4px 0; padding-left: 22px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px;
  margin-right: 6px; vertical-align: -1px; }
p.verdict { font-weight: 600; margin: 4px 0 8px; }
table.sweep td.worse { color: #c62828; font-weight: 600; }
.badge { font-size: 12px; color: #8a4b00; background: #fff1dc; border-radius: 3px;
  padding: 0 5px; margin-left: 6px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right;
  white-space: nowrap; }
th { background: #f4f6f8; font-weight: 600; border-bottom: 1px solid #ccc; }
th:first-child, td.name, td.key { text-align: left; }
td.run, th.run { text-align: left; }
td.run { white-space: normal; overflow-wrap: break-word; min-width: 6em; max-width: 18em; }
table.schedule th { white-space: normal; max-width: 7.5em; vertical-align: bottom; }
.wide { overflow-x: auto; }
tbody.group { border-top: 2px solid #ccc; }
tr.ratio td { color: #555; font-size: 13px; }
tr.ratio td.better { color: #1a7f37; font-weight: 600; }
tr.ratio td.worse { color: #c62828; font-weight: 600; }
table.servers td.worse, table.visibility td.worse, table.schedule td.worse { color: #c62828; font-weight: 600; }
td.differs { background: #fff6e0; }
th.command, td.command { text-align: left; }
td.command { font-family: 'DejaVu Sans Mono', monospace; white-space: pre-wrap;
  overflow-wrap: anywhere; min-width: 16em; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(520px, 100%), 1fr));
  gap: 12px 20px; }
figure.chart { margin: 0; }
svg.chart { width: 100%; height: auto; display: block; }
.kv { column-width: 330px; column-gap: 24px; font-size: 13px; }
.kv div { break-inside: avoid; padding: 1px 0; border-bottom: 1px dotted #e4e4e4; }
.kv .k { color: #555; }
.kv .v { float: right; font-family: 'DejaVu Sans Mono', monospace; margin-left: 12px; }
details summary { cursor: pointer; color: #0b5394; margin: 6px 0; }
footer { margin-top: 32px; color: #777; font-size: 12px; }
@media print { figure.chart, tbody.group { break-inside: avoid; } }
";

/// Renders `report` as a complete HTML document.
pub fn render_page(report: &Report) -> String {
    let runs = &report.runs;
    let labels = display_labels(runs);
    let title = if report.title.is_empty() {
        "kvbench report"
    } else {
        &report.title
    };

    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    let _ = writeln!(
        out,
        "<meta name=\"generator\" content=\"kvbench {}\">",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");

    let _ = writeln!(out, "<header>\n<h1>{}</h1>", escape(title));
    render_run_list(&mut out, runs, &labels);
    render_warnings(&mut out, runs, &labels);
    out.push_str("</header>\n");

    if runs.is_empty() {
        out.push_str("<p class=\"note\">No results to show.</p>\n");
    } else {
        // A file with only a rate sweep has no table rows: no empty table, no empty views.
        if runs.iter().any(|r| !r.rows.is_empty()) {
            render_stats(&mut out, runs, &labels);
            let spectra = spectrum_charts(runs, &labels);
            render_chart_section(
                &mut out,
                "spectrum",
                "Latency percentile spectrum",
                "The whole run's latency at each percentile. The x axis is HdrHistogram's: \
                 1/(1-p) on a log scale, so 90%, 99%, 99.9% ... are equally spaced and the tail \
                 gets the room it deserves. Dots mark p50, p90, p99, p99.9, ... and the worst \
                 request (drawn at 1 - 1/count).",
                &spectra,
            );
            let per_second = per_second_charts(runs, &labels);
            render_chart_section(
                &mut out,
                "per-second",
                "Per second",
                "Requests completed in each second of the run, and that second's median and \
                 99th percentile latency.",
                &per_second,
            );
        }
        open_loop::render_open_loop(&mut out, runs, &labels);
        servers::render_servers(&mut out, runs, &labels);
        servers::render_visibility(&mut out, runs, &labels);
        let sweeps = sweep_charts(runs, &labels);
        if !sweeps.is_empty() {
            render_chart_section(
                &mut out,
                "sweep",
                "Rate sweep",
                "The same load at rising target rates: where the achieved rate leaves the \
                 diagonal, the server is saturated; latency shows what each rate costs.",
                &sweeps,
            );
            render_sweep_tables(&mut out, runs, &labels);
        }
        render_configuration(&mut out, runs, &labels);
    }

    let _ = writeln!(
        out,
        "<footer>Written by kvbench {}. One self-contained file: no script, nothing loaded \
         from anywhere.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// The runs' names as shown: the label, `run N` when empty, and a `(2)` suffix on a label
/// already taken, so every legend entry names one run.
pub fn display_labels(runs: &[Run]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::with_capacity(runs.len());
    for (i, run) in runs.iter().enumerate() {
        let base = if run.label.trim().is_empty() {
            format!("run {}", i + 1)
        } else {
            run.label.clone()
        };
        let mut label = base.clone();
        let mut n = 2;
        while labels.contains(&label) {
            label = format!("{base} ({n})");
            n += 1;
        }
        labels.push(label);
    }
    labels
}

fn render_run_list(out: &mut String, runs: &[Run], labels: &[String]) {
    match runs {
        [] => {}
        [run] => {
            let _ = write!(
                out,
                "<p class=\"runs\">Run: <strong>{}</strong>",
                escape(&labels[0])
            );
            out.push_str(&badges(run));
            out.push_str("</p>\n");
        }
        _ => {
            let _ = writeln!(
                out,
                "<p class=\"runs\">{} runs; ratios are to the first, the baseline:</p>\n<ol class=\"runs\">",
                runs.len()
            );
            for (i, (run, label)) in runs.iter().zip(labels).enumerate() {
                let _ = write!(out, "<li>{}{}", swatch(i), escape(label));
                if i == 0 {
                    out.push_str(" <em>(baseline)</em>");
                }
                out.push_str(&badges(run));
                out.push_str("</li>\n");
            }
            out.push_str("</ol>\n");
        }
    }
}

/// Each run's warning that its unanswered requests hide a stall, in full under the run
/// list: its figures read as a healthy run's (a badge's hover is too easy to miss), and
/// the words say what to use instead. Named by run when there are several.
fn render_warnings(out: &mut String, runs: &[Run], labels: &[String]) {
    for (run, label) in runs.iter().zip(labels) {
        let Some(warning) = &run.unanswered_warning else {
            continue;
        };
        out.push_str("<p class=\"warning\"><strong>");
        if runs.len() > 1 {
            push_escaped(out, label);
            out.push_str(": ");
        }
        out.push_str("warning:</strong> ");
        push_escaped(out, warning);
        out.push_str("</p>\n");
    }
}

/// What a reader should know before trusting a run's figures: it was interrupted, an
/// error ended it early (the error's text on hover), requests were left unanswered in a
/// stall (the warning in full below the list), connections failed (a server gone mid-run
/// leaves figures that look like a short, healthy run), or the server answered with
/// errors.
fn badges(run: &Run) -> String {
    let mut out = String::new();
    if run.interrupted {
        out.push_str("<span class=\"badge\">interrupted</span>");
    }
    if run.unanswered_warning.is_some() {
        out.push_str("<span class=\"badge\">stalled: requests unanswered</span>");
    }
    if let Some(error) = &run.stopped_by {
        out.push_str("<span class=\"badge\" title=\"");
        push_escaped(&mut out, error);
        out.push_str("\">ended early: ");
        push_escaped(&mut out, &shorten(error, 60));
        out.push_str("</span>");
    }
    if let Some(totals) = run.rows.iter().find(|r| r.is_totals()) {
        let counts = [
            (
                totals.connection_errors,
                "connection error",
                "connection errors",
            ),
            (totals.errors, "error reply", "error replies"),
        ];
        for (n, one, many) in counts.into_iter().filter(|&(n, _, _)| n > 0) {
            let what = if n == 1 { one } else { many };
            let _ = write!(out, "<span class=\"badge\">{n} {what}</span>");
        }
    }
    out
}

/// `text` cut to `max` characters, the cut marked with an ellipsis.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn render_sweep_tables(out: &mut String, runs: &[Run], labels: &[String]) {
    for (i, run) in runs.iter().enumerate() {
        let Some(sweep) = run.sweep.as_ref().filter(|s| !s.steps.is_empty()) else {
            continue;
        };
        let _ = writeln!(out, "<h3>{}{}</h3>", swatch(i), escape(&labels[i]));
        if let Some(verdict) = sweep_verdict(sweep) {
            let _ = writeln!(out, "<p class=\"verdict\">{}</p>", escape(&verdict));
        }
        let counted = |f: fn(&SweepStep) -> Option<u64>| sweep.steps.iter().any(|s| f(s).is_some());
        let (late, unfinished) = (counted(|s| s.late), counted(|s| s.unfinished));
        let held = sweep.slo.as_deref().map(slo_words);
        out.push_str(
            "<table class=\"sweep\"><thead><tr><th>Target requests/s</th>\
             <th>Achieved requests/s</th><th>Achieved ÷ target</th><th>p50 (ms)</th>\
             <th>p99 (ms)</th><th>p99.9 (ms)</th>",
        );
        for (shown, name) in [(late, "Late"), (unfinished, "Unfinished")] {
            if shown {
                let _ = write!(out, "<th>{name}</th>");
            }
        }
        if let Some(words) = &held {
            let _ = write!(out, "<th>{}</th>", escape(words));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for s in &sweep.steps {
            let share = ratio(s.achieved_ops_per_sec, s.target_ops_per_sec)
                .map_or("—".to_string(), |r| format!("{:.1}%", r * 100.0));
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{share}</td><td>{}</td><td>{}</td><td>{}</td>",
                rate_text(s.target_ops_per_sec),
                rate_text(s.achieved_ops_per_sec),
                ms_text(s.p50_ms),
                ms_text(s.p99_ms),
                ms_text(s.p999_ms)
            );
            for (shown, value) in [(late, s.late), (unfinished, s.unfinished)] {
                if shown {
                    let _ = write!(
                        out,
                        "<td>{}</td>",
                        value.map_or("—".to_string(), |v| v.to_string())
                    );
                }
            }
            if held.is_some() {
                out.push_str(match s.held {
                    Some(true) => "<td>held</td>",
                    Some(false) => "<td class=\"worse\">broken</td>",
                    None => "<td>—</td>",
                });
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
    }
}

/// `p99:5` as the text output words it: `p99 <= 5 ms`.
fn slo_words(slo: &str) -> String {
    match slo.split_once(':') {
        Some((percentile, ms)) => format!("{percentile} <= {ms} ms"),
        None => slo.to_string(),
    }
}

/// A sweep with an objective, in the text output's words: the highest rate that held it
/// (or that none did), and where it stopped when it stopped early.
fn sweep_verdict(sweep: &RateSweep) -> Option<String> {
    let words = slo_words(sweep.slo.as_deref()?);
    let mut verdict = match sweep.highest_rate_held {
        Some(rate) => format!("Highest rate that held {words}: {rate} requests/s"),
        None => format!("No rate held {words}: the first step broke it"),
    };
    let ran = sweep.steps.len() as u64;
    if let Some(planned) = sweep.planned_steps.filter(|&p| p > ran) {
        let _ = write!(verdict, " (stopped after {ran} of {planned} planned steps)");
    }
    if let Some(shard) = &sweep.shard {
        let _ = write!(
            verdict,
            ": this shard's share (shard {shard}); kvbench merge of the shards' files gives \
             the whole curve"
        );
    }
    Some(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::model::{RateSweep, Row, SecondPoint, SweepStep};
    use hdrhistogram::Histogram;

    #[test]
    fn an_early_end_is_a_badge_with_the_whole_error_on_hover() {
        let error = "connection to 127.0.0.1:6379 failed: connection reset by peer <&>";
        let run = Run {
            stopped_by: Some(error.to_string()),
            ..Run::default()
        };
        let badge = badges(&run);
        assert!(
            badge.contains("title=\"connection to 127.0.0.1:6379 failed: connection reset by peer &lt;&amp;&gt;\""),
            "{badge}"
        );
        // Cut to 60 characters on the badge itself, the cut marked.
        assert!(
            badge.contains(
                ">ended early: connection to 127.0.0.1:6379 failed: connection reset by pe…</span>"
            ),
            "{badge}"
        );
        assert_eq!(shorten("short", 60), "short");
        assert!(badges(&Run::default()).is_empty());
    }

    #[test]
    fn a_hidden_stall_is_a_badge_and_its_warning_in_full_escaped() {
        let warning =
            "10 requests were still unanswered when the run ended <&> (--rate measures stalls)";
        let mut frozen = run("frozen.json", 1000.0, 0.2, "1");
        frozen.unanswered_warning = Some(warning.to_string());
        let page = |runs: Vec<Run>| {
            render_page(&Report {
                title: String::new(),
                runs,
            })
        };
        let html = page(vec![frozen.clone()]);
        let escaped = "10 requests were still unanswered when the run ended &lt;&amp;&gt; (--rate measures stalls)";
        assert!(
            html.contains(&format!(
                "<p class=\"warning\"><strong>warning:</strong> {escaped}</p>\n</header>"
            )),
            "{html}"
        );
        assert!(html.contains("<span class=\"badge\">stalled: requests unanswered</span>"));
        assert!(!html.contains(warning));
        // Beside another run it is named by its run; the other has none.
        let html = page(vec![run("base<1>.json", 1000.0, 0.2, "1"), frozen]);
        assert_eq!(count(&html, "<p class=\"warning\">"), 1, "{html}");
        assert!(
            html.contains(&format!(
                "<p class=\"warning\"><strong>frozen.json: warning:</strong> {escaped}</p>"
            )),
            "{html}"
        );
        assert_eq!(count(&html, "stalled: requests unanswered"), 1);
        // Without it, nothing of it on the page.
        let plain = page(vec![run("run.json", 1000.0, 0.2, "1")]);
        assert!(!plain.contains("<p class=\"warning\">") && !plain.contains("stalled"));
    }

    fn row(name: &str, count: u64, ops: f64, p99: f64, hits: bool) -> Row {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 0..count {
            h.record(50 + v % 200).unwrap();
        }
        Row {
            count,
            ops_per_sec: ops,
            hits_per_sec: hits.then_some(ops / 10.0),
            misses_per_sec: hits.then_some(ops * 0.9),
            avg_ms: Some(0.09),
            p50_ms: Some(0.08),
            p99_ms: Some(p99),
            p999_ms: Some(0.3),
            kb_per_sec: ops / 20.0,
            per_second: (0..5)
                .map(|s| SecondPoint {
                    second: s,
                    ops_per_sec: ops,
                    p50_ms: Some(0.08),
                    p99_ms: Some(p99),
                })
                .collect(),
            histogram: Some(h),
            ..Row::named(name)
        }
    }

    fn run(label: &str, ops: f64, p99: f64, pipeline: &str) -> Run {
        Run {
            label: label.to_string(),
            config: vec![
                ("server".to_string(), "127.0.0.1".to_string()),
                ("pipeline".to_string(), pipeline.to_string()),
                ("key_prefix".to_string(), "<memtier-&>".to_string()),
            ],
            interrupted: false,
            stopped_by: None,
            rows: vec![
                row("Sets", 400, ops / 2.0, p99, false),
                row("Gets", 400, ops / 2.0, p99, true),
                Row {
                    count: 0,
                    avg_ms: None,
                    ..Row::named("Waits")
                },
                row("Totals", 800, ops, p99, true),
            ],
            ..Run::default()
        }
    }

    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    #[test]
    fn two_run_page_has_side_by_side_table_ratios_and_overlaid_charts() {
        let report = Report {
            title: String::new(),
            runs: vec![
                run("before.json", 1000.0, 0.2, "1"),
                run("after <new>.json", 2000.0, 0.1, "8"),
            ],
        };
        let html = render_page(&report);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.ends_with("</html>\n"));
        assert!(html.contains("<title>kvbench report</title>"));
        // Nothing is loaded from anywhere.
        for banned in ["<script", "src=", "href=", "url(", "@import", "<link"] {
            assert!(!html.contains(banned), "{banned}");
        }
        assert!(html.contains("default-src 'none'"));
        // Labels escaped everywhere.
        assert!(html.contains("after &lt;new&gt;.json"));
        assert!(!html.contains("after <new>"));
        assert!(html.contains("&lt;memtier-&amp;&gt;"));

        // Side by side: one group per row type, ratio rows to the baseline.
        assert_eq!(count(&html, "<tbody class=\"group\">"), 4);
        assert_eq!(count(&html, "<tr class=\"ratio\">"), 3); // none for Waits
        assert!(html.contains("rowspan=\"2\"><strong>Waits"));
        // Ops/sec doubled (better), p99 halved (better), the Waits row has no ratio.
        assert!(html.contains("<td class=\"better\">2.00×</td>"));
        assert!(html.contains("<td class=\"better\">0.50×</td>"));
        assert!(!html.contains("class=\"worse\""));
        assert!(html.contains("<td>---</td>"));
        assert!(html.contains("<td>—</td>")); // no hits ratio for Sets
        // A row that never ran is `---` after its Ops/sec, KB/sec too, as in the text
        // table: one 0.00 per run's line.
        let waits = html.split("<strong>Waits").nth(1).unwrap();
        let waits = waits.split("</tbody>").next().unwrap();
        assert_eq!(waits.matches("<td>0.00</td>").count(), 2, "{waits}");

        // Charts: per row with data (Totals, Sets, Gets) throughput + latency, and a
        // spectrum each; every chart has one line per run (two per run for latency).
        assert_eq!(count(&html, "<svg "), 3 * 2 + 3);
        assert_eq!(count(&html, "<path class=\"line\""), 3 * 2 + 3 * 4 + 3 * 2);
        let totals_spectrum = html.find("Totals: latency by percentile").unwrap();
        assert!(totals_spectrum > html.find("id=\"spectrum\"").unwrap());
        assert!(html.contains(">99.9%</text>"));

        // Configuration: the differing setting shown up front and marked.
        assert!(html.contains("1 setting differs:"));
        assert!(html.contains("<td class=\"differs\">8</td>"));
        assert!(html.contains("<summary>All 3 settings</summary>"));
        assert!(!html.contains("id=\"sweep\""));
        // Deterministic.
        assert_eq!(html, render_page(&report));
    }

    #[test]
    fn one_command_in_both_tools_spellings_is_one_row() {
        // A redis-benchmark file (SET, GET) beside a memtier one (Sets, Gets).
        let mut rb = run("rb.json", 1000.0, 0.2, "1");
        rb.rows = vec![
            row("SET", 400, 500.0, 0.2, false),
            row("GET", 400, 500.0, 0.2, true),
            row("Totals", 800, 1000.0, 0.2, true),
        ];
        let report = Report {
            title: String::new(),
            runs: vec![rb, run("memtier.json", 2000.0, 0.1, "1")],
        };
        let html = render_page(&report);
        // SET, GET, Waits (memtier's only) and Totals: four groups, not six; the
        // baseline's spelling names each.
        assert_eq!(count(&html, "<tbody class=\"group\">"), 4);
        assert!(html.contains("rowspan=\"3\"><strong>SET"), "{html}");
        assert!(!html.contains("<strong>Sets"));
        assert_eq!(count(&html, "<tr class=\"ratio\">"), 3);
    }

    #[test]
    fn a_regression_is_red_and_a_neutral_column_plain() {
        let report = Report {
            title: "A & B".to_string(),
            runs: vec![run("a", 2000.0, 0.1, "1"), run("b", 1000.0, 0.2, "1")],
        };
        let html = render_page(&report);
        assert!(html.contains("<title>A &amp; B</title>"));
        assert!(html.contains("<td class=\"worse\">0.50×</td>")); // ops/sec
        assert!(html.contains("<td class=\"worse\">2.00×</td>")); // p99
        assert!(html.contains("<td>0.50×</td>")); // KB/sec: neither
        assert!(html.contains("Every setting is the same in all runs."));
    }

    #[test]
    fn one_run_page_overlays_rows_and_lists_settings() {
        let mut one = run("run.json", 1000.0, 0.2, "1");
        one.interrupted = true;
        one.sweep = Some(RateSweep {
            steps: vec![
                SweepStep {
                    target_ops_per_sec: 1000.0,
                    achieved_ops_per_sec: 1000.0,
                    p50_ms: 0.1,
                    p99_ms: 0.2,
                    p999_ms: 0.3,
                    late: Some(0),
                    unfinished: Some(0),
                    held: Some(true),
                },
                SweepStep {
                    target_ops_per_sec: 2000.0,
                    achieved_ops_per_sec: 1500.0,
                    p50_ms: 1.0,
                    p99_ms: 5.0,
                    p999_ms: 9.0,
                    late: Some(700),
                    unfinished: Some(12),
                    held: Some(false),
                },
            ],
            slo: Some("p99:2".to_string()),
            highest_rate_held: Some(1000),
            planned_steps: Some(3),
            shard: None,
        });
        let html = render_page(&Report {
            title: String::new(),
            runs: vec![one],
        });
        assert!(html.contains("<span class=\"badge\">interrupted</span>"));
        assert!(!html.contains("connection error"));
        let mut broken = run("broken.json", 1000.0, 0.2, "1");
        for r in broken.rows.iter_mut().filter(|r| r.is_totals()) {
            (r.connection_errors, r.errors) = (2, 1);
        }
        let page = render_page(&Report {
            title: String::new(),
            runs: vec![broken],
        });
        assert!(page.contains(
            "<span class=\"badge\">2 connection errors</span><span class=\"badge\">1 error reply</span>"
        ));
        assert!(!html.contains("<tr class=\"ratio\">"));
        assert!(html.contains("<th>Hits/sec</th>"));
        // Throughput, latency, one spectrum, two sweep charts.
        assert_eq!(count(&html, "<svg "), 5);
        assert!(html.contains("<td>75.0%</td>"));
        // The objective's verdict in the text output's words, and a column per step.
        assert!(html.contains(
            "<p class=\"verdict\">Highest rate that held p99 &lt;= 2 ms: 1000 requests/s \
             (stopped after 2 of 3 planned steps)</p>"
        ));
        assert!(html.contains("<th>Late</th><th>Unfinished</th><th>p99 &lt;= 2 ms</th>"));
        assert!(html.contains("<td>700</td><td>12</td><td class=\"worse\">broken</td>"));
        assert!(html.contains("<td>0</td><td>0</td><td>held</td>"));
        assert!(html.contains("<span class=\"k\">pipeline</span><span class=\"v\">1</span>"));
    }

    #[test]
    fn arbitrary_commands_have_no_hits_columns_and_labels_are_unique() {
        let mut a = run("same", 1000.0, 0.2, "1");
        for r in &mut a.rows {
            r.hits_per_sec = None;
            r.misses_per_sec = None;
        }
        let b = Run {
            label: "same".to_string(),
            ..a.clone()
        };
        let c = Run {
            label: " ".to_string(),
            ..a.clone()
        };
        assert_eq!(
            display_labels(&[a.clone(), b.clone(), c.clone()]),
            ["same", "same (2)", "run 3"]
        );
        let html = render_page(&Report {
            title: String::new(),
            runs: vec![a, b, c],
        });
        assert!(!html.contains("Hits/sec"));
        assert!(html.contains("same (2) ÷ same"));
    }

    #[test]
    fn a_shards_sweep_says_its_rates_are_the_shards_share() {
        let sweep = RateSweep {
            slo: Some("p99:5".to_string()),
            highest_rate_held: Some(600),
            shard: Some("0/2".to_string()),
            ..RateSweep::default()
        };
        assert_eq!(
            sweep_verdict(&sweep).as_deref(),
            Some(
                "Highest rate that held p99 <= 5 ms: 600 requests/s: this shard's share \
                 (shard 0/2); kvbench merge of the shards' files gives the whole curve"
            )
        );
    }

    #[test]
    fn a_sweep_only_run_shows_no_empty_table_or_views() {
        let sweep_only = Run {
            label: "sweep.json".to_string(),
            sweep: Some(RateSweep {
                steps: vec![SweepStep {
                    target_ops_per_sec: 1000.0,
                    achieved_ops_per_sec: 990.0,
                    p50_ms: 0.1,
                    p99_ms: 0.2,
                    p999_ms: 0.3,
                    late: None,
                    unfinished: None,
                    held: None,
                }],
                ..RateSweep::default()
            }),
            ..Run::default()
        };
        let html = render_page(&Report {
            title: String::new(),
            runs: vec![sweep_only],
        });
        assert!(!html.contains("id=\"stats\"") && !html.contains("id=\"spectrum\""));
        assert!(html.contains("id=\"sweep\""));
        assert_eq!(count(&html, "<svg "), 2);
        // No objective: no verdict, no Late, Unfinished or held columns.
        assert!(!html.contains("class=\"verdict\"") && !html.contains("<th>Late</th>"));
    }

    #[test]
    fn an_empty_report_is_still_a_page() {
        let html = render_page(&Report::default());
        assert!(html.contains("No results to show."));
        assert!(html.ends_with("</html>\n"));
    }
}
