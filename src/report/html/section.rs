//! Pieces several parts of the page share: a run's colour swatch, a section of charts, and
//! the note that says what an average of several runs' figures are.

use std::fmt::Write as _;

use super::escape;
use super::model::{Averaged, Run};
use super::svg::{self, Chart, PALETTE};

/// The small square in a run's colour that labels it in tables and headings.
pub fn swatch(i: usize) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        PALETTE[svg::series_colour(i)]
    )
}

/// A titled section of charts with a note, or a line saying the results have no data for
/// it.
pub fn render_chart_section(
    out: &mut String,
    id: &str,
    heading: &str,
    note: &str,
    charts: &[Chart],
) {
    let _ = writeln!(out, "<section id=\"{id}\">\n<h2>{}</h2>", escape(heading));
    if charts.is_empty() {
        out.push_str(
            "<p class=\"note\">These results carry no data for this view.</p>\n</section>\n",
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">{}</p>\n<div class=\"charts\">",
        escape(note)
    );
    for chart in charts {
        out.push_str("<figure class=\"chart\">\n");
        out.push_str(&svg::render(chart));
        out.push_str("\n</figure>\n");
    }
    out.push_str("</div>\n</section>\n");
}

/// For each run whose figures stand for several (`-x N`), one note saying what its
/// numbers are, since a table shows the runs' summed counts beside their mean rates (as
/// memtier's AGGREGATED block does) and neither reads as the other: `counts` and `rates`
/// name the table's columns of each kind; `in_table` says whether a run has figures in
/// the table. A merge of files of different run counts says which, and that its rates add
/// one mean run of each. Empty when no run there is such an average.
pub fn averaged_runs_note(
    runs: &[Run],
    labels: &[String],
    in_table: fn(&Run) -> bool,
    counts: &str,
    rates: &str,
) -> String {
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        let Some(averaged) = run.averaged_over_runs.as_ref().filter(|_| in_table(run)) else {
            continue;
        };
        out.push_str("<p class=\"note averaged\">");
        if runs.len() > 1 {
            let _ = write!(out, "{}{}: ", swatch(i), escape(&labels[i]));
        }
        match averaged {
            Averaged::Runs(n) => {
                let _ = writeln!(
                    out,
                    "<strong>{n} runs (-x {n}), aggregated:</strong> {}: all {n} runs summed; {}: \
                     the mean of the {n} runs; latencies: all {n} runs' requests together.</p>",
                    escape(counts),
                    escape(rates)
                );
            }
            Averaged::Mixed(inputs) => {
                let each: Vec<String> = inputs
                    .iter()
                    .map(|(name, n)| {
                        format!(
                            "{}: {n} run{}",
                            escape(name),
                            if *n == 1 { "" } else { "s" }
                        )
                    })
                    .collect();
                let total: u64 = inputs.iter().map(|(_, n)| u64::from(*n)).sum();
                let _ = writeln!(
                    out,
                    "<strong>Files of different run counts merged ({}), aggregated:</strong> {}: \
                     all {total} runs summed; {}: the sum of each file's mean run; latencies: all \
                     {total} runs' requests together.</p>",
                    each.join(", "),
                    escape(counts),
                    escape(rates)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_averaged_note_names_each_aggregate_and_only_where_it_has_figures() {
        let one = Run::default();
        let x3 = Run {
            averaged_over_runs: Some(Averaged::Runs(3)),
            ..Run::default()
        };
        let labels = ["a <1>".to_string(), "b".to_string()];
        assert_eq!(
            averaged_runs_note(
                std::slice::from_ref(&one),
                &labels,
                |_| true,
                "Count",
                "Ops/sec"
            ),
            ""
        );
        let alone = averaged_runs_note(
            std::slice::from_ref(&x3),
            &labels,
            |_| true,
            "Count",
            "Ops/sec",
        );
        assert_eq!(
            alone,
            "<p class=\"note averaged\"><strong>3 runs (-x 3), aggregated:</strong> Count: all 3 \
             runs summed; Ops/sec: the mean of the 3 runs; latencies: all 3 runs' requests \
             together.</p>\n"
        );
        // Beside other runs it names its run, escaped; a table without its figures has no note.
        let both = averaged_runs_note(&[x3.clone(), one], &labels, |_| true, "Count", "Ops/sec");
        assert!(
            both.contains("</span>a &lt;1&gt;: <strong>3 runs"),
            "{both}"
        );
        assert_eq!(both.matches("<p ").count(), 1);
        assert_eq!(
            averaged_runs_note(&[x3], &labels, |_| false, "Count", "Ops/sec"),
            ""
        );
    }

    #[test]
    fn a_merge_of_different_run_counts_names_each_file() {
        let mixed = Run {
            averaged_over_runs: Some(Averaged::Mixed(vec![
                ("x3.json".to_string(), 3),
                ("<1>.json".to_string(), 1),
            ])),
            ..Run::default()
        };
        assert_eq!(
            averaged_runs_note(&[mixed], &[], |_| true, "Count", "Ops/sec"),
            "<p class=\"note averaged\"><strong>Files of different run counts merged (x3.json: 3 \
             runs, &lt;1&gt;.json: 1 run), aggregated:</strong> Count: all 4 runs summed; \
             Ops/sec: the sum of each file's mean run; latencies: all 4 runs' requests \
             together.</p>\n"
        );
    }
}
