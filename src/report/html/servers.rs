//! The page's sections for the servers beyond the one table: a pool's per-server rows (so
//! a slow or failing member stands out) and a replica's visibility lag (a table, its
//! percentile spectrum and its per-second p50/p99). Each section is left out when no run
//! has its data.

use std::fmt::Write as _;

use super::charts::{latency_series, spectrum_series};
use super::escape;
use super::model::{Row, Run};
use super::numbers::{count_text, ms_text, rate_text};
use super::section::{render_chart_section, swatch};
use super::svg::{Chart, XScale, series_colour};

/// A latency cell: `---` for a row that ran nothing or a figure the source lacks.
fn ms_cell(row: &Row, v: Option<f64>) -> String {
    match v.filter(|_| row.count > 0) {
        Some(ms) => ms_text(ms),
        None => "---".to_string(),
    }
}

/// The per-server table: one row per member and run (runs side by side under each
/// member's address when there are several).
pub fn render_servers(out: &mut String, runs: &[Run], labels: &[String]) {
    if runs.iter().all(|r| r.servers.is_empty()) {
        return;
    }
    let several = runs.len() > 1;
    out.push_str(
        "<section id=\"servers\">\n<h2>Per server</h2>\n<p class=\"note\">Each member of the \
         pool, every command together; latencies in milliseconds.</p>\n<div class=\"wide\">\
         <table class=\"servers\">\n<thead><tr><th>Server</th>",
    );
    if several {
        out.push_str("<th class=\"run\">Run</th>");
    }
    out.push_str(
        "<th>Ops/sec</th><th>Errors</th><th>Conn. errors</th><th>Avg. (ms)</th>\
         <th>p50 (ms)</th><th>p99 (ms)</th><th>p99.9 (ms)</th><th>KB/sec</th><th>Count</th>\
         </tr></thead>\n<tbody>\n",
    );
    let mut names: Vec<&str> = Vec::new();
    for row in runs.iter().flat_map(|r| &r.servers) {
        if !names.contains(&row.name.as_str()) {
            names.push(&row.name);
        }
    }
    for name in names {
        for (i, run) in runs.iter().enumerate() {
            let Some(row) = run.servers.iter().find(|r| r.name == name) else {
                continue;
            };
            let _ = write!(out, "<tr><td class=\"name\">{}</td>", escape(name));
            if several {
                let _ = write!(
                    out,
                    "<td class=\"run\">{}{}</td>",
                    swatch(i),
                    escape(&labels[i])
                );
            }
            let failing = if row.errors > 0 || row.connection_errors > 0 {
                " class=\"worse\""
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "<td>{}</td><td{failing}>{}</td><td{failing}>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                rate_text(row.ops_per_sec),
                row.errors,
                row.connection_errors,
                ms_cell(row, row.avg_ms),
                ms_cell(row, row.p50_ms),
                ms_cell(row, row.p99_ms),
                ms_cell(row, row.p999_ms),
                if row.count > 0 {
                    rate_text(row.kb_per_sec)
                } else {
                    "---".to_string()
                },
                count_text(row.count as f64)
            );
        }
    }
    out.push_str("</tbody>\n</table></div>\n</section>\n");
}

/// Replica visibility: per run the writes seen, never seen and left untracked with the
/// lag's percentiles, then the lag's spectrum and its p50/p99 per second.
pub fn render_visibility(out: &mut String, runs: &[Run], labels: &[String]) {
    let with: Vec<(usize, &Run)> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.visibility.is_some())
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"visibility\">\n<h2>Replica visibility</h2>\n<p class=\"note\">How long \
         after its acknowledgement a tracked write became visible on the other endpoint, in \
         milliseconds; writes never seen within the timeout are counted, not timed.</p>\n\
         <div class=\"wide\"><table class=\"visibility\">\n<thead><tr><th class=\"run\">Run</th>\
         <th>Visible writes</th><th>Never seen (timeout)</th><th>Not tracked</th>\
         <th>Avg. (ms)</th><th>p50 (ms)</th><th>p99 (ms)</th><th>p99.9 (ms)</th></tr></thead>\n\
         <tbody>\n",
    );
    for &(i, run) in &with {
        let Some(vis) = &run.visibility else { continue };
        let lag = &vis.lag;
        let timeouts = if vis.timeouts > 0 {
            " class=\"worse\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"run\">{}{}</td><td>{}</td><td{timeouts}>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            swatch(i),
            escape(&labels[i]),
            lag.count,
            vis.timeouts,
            vis.untracked,
            ms_cell(lag, lag.avg_ms),
            ms_cell(lag, lag.p50_ms),
            ms_cell(lag, lag.p99_ms),
            ms_cell(lag, lag.p999_ms)
        );
    }
    out.push_str("</tbody>\n</table></div>\n");

    let mut spectrum = Vec::new();
    let mut per_second = Vec::new();
    for &(i, run) in &with {
        let Some(vis) = &run.visibility else { continue };
        let lag = &vis.lag;
        if let Some(h) = lag.histogram.as_ref().filter(|h| !h.is_empty()) {
            spectrum.push(spectrum_series(&labels[i], h, series_colour(i)));
        }
        if lag.count > 0 && !lag.per_second.is_empty() {
            per_second.extend(latency_series(&labels[i], lag, series_colour(i)));
        }
    }
    let mut charts = Vec::new();
    if !spectrum.is_empty() {
        charts.push(Chart {
            title: "Visibility lag by percentile".to_string(),
            x_label: "percentile".to_string(),
            y_label: "lag (ms)".to_string(),
            x_scale: XScale::Percentile,
            series: spectrum,
        });
    }
    if !per_second.is_empty() {
        charts.push(Chart {
            title: "Visibility lag per second: p50 (solid), p99 (dashed)".to_string(),
            x_label: "second of the run".to_string(),
            y_label: "lag (ms)".to_string(),
            x_scale: XScale::Linear,
            series: per_second,
        });
    }
    // The charts get a section of their own so the page's chart styling applies.
    out.push_str("</section>\n");
    if !charts.is_empty() {
        render_chart_section(
            out,
            "visibility-charts",
            "Replica visibility lag",
            "The lag's percentile spectrum (HdrHistogram's 1/(1-p) axis) and its median and \
             99th percentile in each second.",
            &charts,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::model::{SecondPoint, Visibility};
    use hdrhistogram::Histogram;

    fn lag_row() -> Row {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 100..300 {
            h.record(v).unwrap();
        }
        Row {
            count: 200,
            avg_ms: Some(0.2),
            p50_ms: Some(0.2),
            p99_ms: Some(0.298),
            p999_ms: Some(0.299),
            per_second: (0..3)
                .map(|s| SecondPoint {
                    second: s,
                    ops_per_sec: 66.0,
                    p50_ms: Some(0.2),
                    p99_ms: Some(0.29),
                })
                .collect(),
            histogram: Some(h),
            ..Row::named("Lag")
        }
    }

    #[test]
    fn servers_and_visibility_render_only_with_data() {
        let mut out = String::new();
        let plain = [Run::default()];
        let labels = ["a".to_string()];
        render_servers(&mut out, &plain, &labels);
        render_visibility(&mut out, &plain, &labels);
        assert!(out.is_empty());

        let run = Run {
            servers: vec![
                Row {
                    count: 10,
                    ops_per_sec: 5.0,
                    p50_ms: Some(0.1),
                    ..Row::named("127.0.0.1:11211")
                },
                Row {
                    connection_errors: 3,
                    ..Row::named("127.0.0.1:<dead>")
                },
            ],
            visibility: Some(Visibility {
                lag: lag_row(),
                timeouts: 2,
                untracked: 1,
            }),
            ..Run::default()
        };
        let runs = [run];
        render_servers(&mut out, &runs, &labels);
        assert!(
            out.contains("<td class=\"name\">127.0.0.1:11211</td>"),
            "{out}"
        );
        // Escaped, and a failing member is marked.
        assert!(out.contains("127.0.0.1:&lt;dead&gt;"), "{out}");
        assert!(out.contains("<td class=\"worse\">3</td>"), "{out}");
        out.clear();
        render_visibility(&mut out, &runs, &labels);
        assert!(out.contains("<h2>Replica visibility</h2>"), "{out}");
        assert!(out.contains("<td class=\"worse\">2</td>"), "{out}");
        assert_eq!(out.matches("<svg").count(), 2, "spectrum and per second");
    }
}
