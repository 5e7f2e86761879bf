//! The page's ALL STATS table: memtier's columns for one run, or every run side by side,
//! row type by row type, each followed by its ratio to the baseline.

use std::fmt::Write as _;

use super::charts::row_names;
use super::escape;
use super::model::{Row, Run, same_row_name};
use super::numbers::{count_text, ms_text, rate_text, ratio, ratio_text};
use super::section::{averaged_runs_note, swatch};

/// Whether a larger value of a column is better, worse, or neither (for ratio colours).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Better {
    Higher,
    Lower,
    Neither,
}

/// One numeric column of the ALL STATS table.
struct Column {
    header: &'static str,
    better: Better,
    value: fn(&Row) -> Option<f64>,
    text: fn(f64) -> String,
}

/// The row's latency, or `None` when it ran no requests (the table shows `---`).
fn latency(row: &Row, v: Option<f64>) -> Option<f64> {
    if row.count == 0 { None } else { v }
}

fn columns(runs: &[Run]) -> Vec<Column> {
    let any_hits = runs
        .iter()
        .flat_map(|r| &r.rows)
        .any(|r| r.hits_per_sec.is_some() || r.misses_per_sec.is_some());
    let mut cols = vec![Column {
        header: "Ops/sec",
        better: Better::Higher,
        value: |r| Some(r.ops_per_sec),
        text: rate_text,
    }];
    if any_hits {
        cols.push(Column {
            header: "Hits/sec",
            better: Better::Neither,
            value: |r| r.hits_per_sec,
            text: rate_text,
        });
        cols.push(Column {
            header: "Misses/sec",
            better: Better::Neither,
            value: |r| r.misses_per_sec,
            text: rate_text,
        });
    }
    cols.extend([
        Column {
            header: "Avg. (ms)",
            better: Better::Lower,
            value: |r| latency(r, r.avg_ms),
            text: ms_text,
        },
        Column {
            header: "p50 (ms)",
            better: Better::Lower,
            value: |r| latency(r, r.p50_ms),
            text: ms_text,
        },
        Column {
            header: "p99 (ms)",
            better: Better::Lower,
            value: |r| latency(r, r.p99_ms),
            text: ms_text,
        },
        Column {
            header: "p99.9 (ms)",
            better: Better::Lower,
            value: |r| latency(r, r.p999_ms),
            text: ms_text,
        },
        Column {
            header: "KB/sec",
            better: Better::Neither,
            // `---` for a row that never ran, as the text table shows it.
            value: |r| latency(r, Some(r.kb_per_sec)),
            text: rate_text,
        },
    ]);
    if runs.iter().flat_map(|r| &r.rows).any(|r| r.tryagain > 0) {
        cols.push(Column {
            header: "TRYAGAIN",
            better: Better::Lower,
            value: |r| Some(r.tryagain as f64),
            text: count_text,
        });
    }
    cols.push(Column {
        header: "Count",
        better: Better::Neither,
        value: |r| Some(r.count as f64),
        text: count_text,
    });
    cols
}

fn push_value_cells(out: &mut String, row: Option<&Row>, cols: &[Column]) {
    for col in cols {
        match row.and_then(|r| (col.value)(r)) {
            Some(v) => {
                let _ = write!(out, "<td>{}</td>", (col.text)(v));
            }
            None => out.push_str("<td>---</td>"),
        }
    }
}

/// ALL STATS: the table of the one run, or every run side by side, row type by row type,
/// each followed by its ratio to the baseline.
pub fn render_stats(out: &mut String, runs: &[Run], labels: &[String]) {
    let cols = columns(runs);
    out.push_str(
        "<section id=\"stats\">\n<h2>ALL STATS</h2>\n<p class=\"note\">Latencies in \
         milliseconds.</p>\n",
    );
    let headers = |wanted: fn(&str) -> bool| -> String {
        let chosen: Vec<&str> = cols
            .iter()
            .map(|c| c.header)
            .filter(|h| wanted(h))
            .collect();
        chosen.join(", ")
    };
    out.push_str(&averaged_runs_note(
        runs,
        labels,
        |run| !run.rows.is_empty(),
        &headers(|h| !h.ends_with("/sec") && !h.ends_with("(ms)")),
        &headers(|h| h.ends_with("/sec")),
    ));
    out.push_str("<div class=\"wide\"><table class=\"stats\">\n<thead><tr><th>Type</th>");
    if runs.len() > 1 {
        out.push_str("<th class=\"run\">Run</th>");
    }
    for col in &cols {
        let _ = write!(out, "<th>{}</th>", col.header);
    }
    out.push_str("</tr></thead>\n");

    if let [run] = runs {
        out.push_str("<tbody>\n");
        for row in &run.rows {
            let _ = write!(out, "<tr><td class=\"name\">{}</td>", escape(&row.name));
            push_value_cells(out, Some(row), &cols);
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table></div>\n</section>\n");
        return;
    }

    for name in row_names(runs) {
        let rows: Vec<Option<&Row>> = runs
            .iter()
            .map(|run| run.rows.iter().find(|r| same_row_name(&r.name, &name)))
            .collect();
        // A type no run sent (Waits, usually) has nothing to compare.
        let compared = rows.iter().any(|r| r.is_some_and(|r| r.count > 0));
        let lines = if compared {
            runs.len() * 2 - 1
        } else {
            runs.len()
        };
        let _ = write!(
            out,
            "<tbody class=\"group\">\n<tr><td class=\"name\" rowspan=\"{lines}\"><strong>{}</strong></td>",
            escape(&name)
        );
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                out.push_str("<tr>");
            }
            let _ = write!(
                out,
                "<td class=\"run\">{}{}</td>",
                swatch(i),
                escape(&labels[i])
            );
            push_value_cells(out, *row, &cols);
            out.push_str("</tr>\n");
        }
        let base = rows[0];
        for (i, row) in rows.iter().enumerate().skip(1).filter(|_| compared) {
            let _ = write!(
                out,
                "<tr class=\"ratio\"><td class=\"run\">{} ÷ {}</td>",
                escape(&labels[i]),
                escape(&labels[0])
            );
            for col in &cols {
                let value = row.and_then(|r| (col.value)(r));
                let base_value = base.and_then(|r| (col.value)(r));
                match value.zip(base_value).and_then(|(v, b)| ratio(v, b)) {
                    Some(r) => {
                        let _ = write!(
                            out,
                            "<td{}>{}</td>",
                            ratio_class(r, col.better),
                            ratio_text(r)
                        );
                    }
                    None => out.push_str("<td>—</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></div>\n");
    out.push_str(
        "<p class=\"note\">Ratios are each run's figure divided by the baseline's: green where \
         the change is an improvement (more requests per second, lower latency), red where it \
         is a regression, by more than 1%.</p>\n</section>\n",
    );
}

/// ` class="better"` / ` class="worse"` for a ratio more than 1% away from 1, by the
/// column's sense of better.
fn ratio_class(r: f64, better: Better) -> &'static str {
    let up = r > 1.01;
    let down = r < 0.99;
    match better {
        Better::Higher if up => " class=\"better\"",
        Better::Higher if down => " class=\"worse\"",
        Better::Lower if down => " class=\"better\"",
        Better::Lower if up => " class=\"worse\"",
        _ => "",
    }
}
