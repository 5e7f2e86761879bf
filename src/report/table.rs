//! The text report memtier prints on stdout (or `-o FILE`): run header, one table per
//! results block and the request latency distribution.

use std::fmt::Write as _;

use crate::report::hdr::{TICKS_PER_HALF_DISTANCE, percentile_ticks};
use crate::report::open_loop::render_open_loop;
use crate::report::{LATENCY_WIDTH, NOT_APPLICABLE, RATE_WIDTH, name_width, push_latency_headers};
use crate::report::{Limit, RunInfo, finite};
use crate::results::{Results, Row, latency_at_percentile_ms};

/// The lines printed once before all tables, each value `%-10u`:
///
/// ```text
/// 2         Threads
/// 2         Connections per thread
/// 200       Requests per client
/// ```
pub fn render_header(info: &RunInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<10}Threads", info.threads);
    let _ = writeln!(
        out,
        "{:<10}Connections per thread",
        info.connections_per_thread
    );
    let _ = match info.limit {
        Limit::RequestsPerClient(n) => writeln!(out, "{n:<10}Requests per client"),
        Limit::Seconds(s) => writeln!(out, "{s:<10}Seconds"),
    };
    out
}

/// The whole text report: the header, two blank lines, then each block (see
/// [`crate::report::report_blocks`]) with two blank lines between blocks.
pub fn render_report(
    info: &RunInfo,
    blocks: &[&Results],
    percentiles: &[f64],
    hide_histogram: bool,
) -> String {
    let mut out = render_header(info);
    out.push_str("\n\n");
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        out.push_str(&render_results(block, percentiles, hide_histogram));
    }
    out
}

/// One results block: title, `=` rule, header, `-` rule, a line per row (each ending in a
/// space), in open loop the service-time table and the schedule (see
/// [`crate::report::open_loop`]), then unless `hide_histogram` two blank lines and the
/// latency distribution.
///
/// ```text
/// ALL STATS
/// ==========...
/// Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency ...       KB/sec
/// ----------...
/// Sets        22362.61          ---          ---         0.09158         0.08700 ...      1723.71
/// ```
///
/// Hits/sec and Misses/sec show `---` on rows without hits and disappear when no row has
/// hits (arbitrary commands). A row that ran zero times shows `---` for its latencies and
/// KB/sec, as memtier's Waits row does.
pub fn render_results(results: &Results, percentiles: &[f64], hide_histogram: bool) -> String {
    let show_hits = results.rows.iter().any(|r| r.name.has_hits);
    let type_width = name_width(&results.rows);

    let mut header = String::new();
    let _ = write!(header, "{:<type_width$} ", "Type");
    let _ = write!(header, "{:>RATE_WIDTH$} ", "Ops/sec");
    if show_hits {
        let _ = write!(header, "{:>RATE_WIDTH$} ", "Hits/sec");
        let _ = write!(header, "{:>RATE_WIDTH$} ", "Misses/sec");
    }
    if results.cluster {
        let _ = write!(header, "{:>RATE_WIDTH$} ", "MOVED/sec");
        let _ = write!(header, "{:>RATE_WIDTH$} ", "ASK/sec");
        let _ = write!(header, "{:>RATE_WIDTH$} ", "TRYAGAIN/sec");
    }
    push_latency_headers(&mut header, percentiles);
    let _ = write!(header, "{:>RATE_WIDTH$} ", "KB/sec");
    let width = header.chars().count();

    let mut out = String::new();
    out.push_str(&results.title);
    out.push('\n');
    out.push_str(&"=".repeat(width));
    out.push('\n');
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(width));
    out.push('\n');
    for row in &results.rows {
        push_row(
            &mut out,
            row,
            type_width,
            show_hits,
            results.cluster,
            percentiles,
        );
    }
    out.push_str(&render_open_loop(results, percentiles));
    out.push_str(&render_servers(results, percentiles));
    out.push_str(&render_visibility(results, percentiles));

    if !hide_histogram {
        out.push_str("\n\n");
        out.push_str(&render_distribution(results));
    }
    out
}

fn push_row(
    out: &mut String,
    row: &Row,
    type_width: usize,
    show_hits: bool,
    cluster: bool,
    percentiles: &[f64],
) {
    let rate = |out: &mut String, x: f64| {
        let _ = write!(out, "{:>RATE_WIDTH$.2} ", finite(x));
    };
    let latency = |out: &mut String, x: f64| {
        let _ = write!(out, "{:>LATENCY_WIDTH$.5} ", finite(x));
    };
    let ran = row.count > 0;

    let _ = write!(out, "{:<type_width$} ", row.name.row);
    rate(out, row.ops_per_sec);
    if show_hits {
        if row.name.has_hits {
            rate(out, row.hits_per_sec);
            rate(out, row.misses_per_sec);
        } else {
            let _ = write!(
                out,
                "{NOT_APPLICABLE:>RATE_WIDTH$} {NOT_APPLICABLE:>RATE_WIDTH$} "
            );
        }
    }
    if cluster {
        rate(out, row.moved_per_sec);
        rate(out, row.ask_per_sec);
        rate(out, row.tryagain_per_sec);
    }
    if ran {
        latency(out, row.avg_latency_ms);
        for &p in percentiles {
            latency(out, latency_at_percentile_ms(&row.histogram, p));
        }
        rate(out, row.kb_per_sec);
    } else {
        for _ in 0..=percentiles.len() {
            let _ = write!(out, "{NOT_APPLICABLE:>LATENCY_WIDTH$} ");
        }
        let _ = write!(out, "{NOT_APPLICABLE:>RATE_WIDTH$} ");
    }
    out.push('\n');
}

/// A pool's block after the table: one row per server, every command together, so a
/// slow or dead member stands out (empty without a pool):
///
/// ```text
/// PER SERVER
/// ==================================================================== ...
/// Server                Ops/sec     Errors  Conn. Errors  Avg. Latency  p50.00 ...  KB/sec
/// -------------------------------------------------------------------- ...
/// 127.0.0.1:11211      33012.55          0             0       0.58100 ...  2231.10
/// ```
pub fn render_servers(results: &Results, percentiles: &[f64]) -> String {
    if results.servers.is_empty() {
        return String::new();
    }
    let name_width = name_width(&results.servers);
    let mut header = String::new();
    let _ = write!(header, "{:<name_width$} ", "Server");
    let _ = write!(header, "{:>RATE_WIDTH$} ", "Ops/sec");
    let _ = write!(header, "{:>RATE_WIDTH$} ", "Errors");
    let _ = write!(header, "{:>RATE_WIDTH$} ", "Conn. Errors");
    push_latency_headers(&mut header, percentiles);
    let _ = write!(header, "{:>RATE_WIDTH$} ", "KB/sec");
    let width = header.chars().count();
    let mut out = String::from("\n\nPER SERVER\n");
    out.push_str(&"=".repeat(width));
    out.push('\n');
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(width));
    out.push('\n');
    for row in &results.servers {
        let _ = write!(out, "{:<name_width$} ", row.name.row);
        let _ = write!(out, "{:>RATE_WIDTH$.2} ", finite(row.ops_per_sec));
        let _ = write!(out, "{:>RATE_WIDTH$} ", row.errors);
        let _ = write!(out, "{:>RATE_WIDTH$} ", row.connection_errors);
        if row.count > 0 {
            let _ = write!(out, "{:>LATENCY_WIDTH$.5} ", finite(row.avg_latency_ms));
            for &p in percentiles {
                let ms = latency_at_percentile_ms(&row.histogram, p);
                let _ = write!(out, "{:>LATENCY_WIDTH$.5} ", finite(ms));
            }
            let _ = write!(out, "{:>RATE_WIDTH$.2} ", finite(row.kb_per_sec));
        } else {
            for _ in 0..=percentiles.len() {
                let _ = write!(out, "{NOT_APPLICABLE:>LATENCY_WIDTH$} ");
            }
            let _ = write!(out, "{NOT_APPLICABLE:>RATE_WIDTH$} ");
        }
        out.push('\n');
    }
    out
}

/// `--visibility-from`: one block after the table, the lag from a tracked write's
/// acknowledgement until the other endpoint showed it (empty otherwise):
///
/// ```text
/// REPLICA VISIBILITY
/// Visible writes: 1520   Never seen (timeout): 0   Not tracked (too many waiting): 0
/// Lag (msec): avg 0.41200   p50 0.35100   p99 1.20700   p99.9 2.01500   max 2.30300
/// ```
pub fn render_visibility(results: &Results, percentiles: &[f64]) -> String {
    let Some(vis) = results.visibility.as_deref() else {
        return String::new();
    };
    let row = &vis.lag;
    let mut out = String::from("\n\nREPLICA VISIBILITY\n");
    let _ = writeln!(
        out,
        "Visible writes: {}   Never seen (timeout): {}   Not tracked (too many waiting): {}",
        row.count, vis.timeouts, vis.untracked
    );
    if row.count > 0 {
        let _ = write!(out, "Lag (msec): avg {:.5}", finite(row.avg_latency_ms));
        for &p in percentiles {
            let ms = latency_at_percentile_ms(&row.histogram, p);
            let _ = write!(out, "   p{} {:.5}", finite(p), finite(ms));
        }
        let _ = writeln!(out, "   max {:.5}", finite(row.max_latency_ms));
    }
    out
}

/// The "Request Latency Distribution" section: each command that ran (not Totals), walked in
/// percentile ticks as `%-6s %8.3f %12.3f` (name, msec, percent), `---` between commands.
///
/// Commands that never ran are left out (memtier prints `WAIT 0.000 100.000` for them,
/// a point that was never measured).
pub fn render_distribution(results: &Results) -> String {
    let mut out = String::from("Request Latency Distribution\n");
    out.push_str("Type     <= msec         Percent\n");
    out.push_str(&"-".repeat(72));
    out.push('\n');
    let mut first = true;
    for row in results.command_rows() {
        if !first {
            out.push_str("---\n");
        }
        first = false;
        if row.count == 0 {
            // As memtier prints a command that never ran (`WAIT      0.000      100.000`).
            let _ = writeln!(out, "{:<6} {:8.3} {:12.3}", row.name.hist, 0.0, 100.0);
            continue;
        }
        for t in percentile_ticks(&row.histogram, TICKS_PER_HALF_DISTANCE) {
            let _ = writeln!(
                out,
                "{:<6} {:8.3} {:12.3}",
                row.name.hist,
                t.value as f64 / 1000.0,
                t.percentile
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::report_blocks;
    use crate::results::test_support::*;

    const PCTS: [f64; 3] = [50.0, 99.0, 99.9];

    fn info(threads: usize, conns: usize, limit: Limit) -> RunInfo {
        RunInfo {
            threads,
            connections_per_thread: conns,
            limit,
            ramp: None,
        }
    }

    /// `default.out` without memtier's `WAIT 0.000 100.000` point for a command that never ran.

    #[test]
    fn default_table_lines_match_sample_byte_for_byte() {
        let ours = render_results(&default_results(), &PCTS, true);
        let theirs: Vec<&str> = DEFAULT_OUT.lines().skip(5).take(8).collect();
        let ours: Vec<&str> = ours.lines().collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours[1].len(), 124);
    }

    #[test]
    fn whole_default_report_matches_sample() {
        let run = default_results();
        let ours = render_report(
            &info(2, 2, Limit::RequestsPerClient(200)),
            &[&run],
            &PCTS,
            false,
        );
        // The whole file, WAIT's one-line distribution included.
        assert_eq!(ours, DEFAULT_OUT);
    }

    #[test]
    fn arbitrary_commands_drop_hits_columns() {
        let run = arbitrary_results();
        let ours = render_report(
            &info(1, 2, Limit::RequestsPerClient(100)),
            &[&run],
            &PCTS,
            true,
        );
        assert_eq!(ours, ARBITRARY_OUT);
        assert_eq!(ours.lines().nth(6).map(str::len), Some(98));
    }

    #[test]
    fn three_runs_report_matches_sample_except_the_worst_block() {
        let runs = runs3_results();
        let blocks = report_blocks(&runs, true);
        let refs: Vec<&Results> = blocks.iter().map(|b| b.as_ref()).collect();
        let ours = render_report(
            &info(1, 2, Limit::RequestsPerClient(100)),
            &refs,
            &PCTS,
            true,
        );
        // memtier prints its best run as the worst; ours is run #2, the slowest.
        let run2 = RUNS3_OUT
            .split("\n\n\n")
            .find(|b| b.starts_with("RUN #2 RESULTS"))
            .unwrap()
            .replace("RUN #2 RESULTS", "WORST RUN RESULTS");
        let expected: Vec<String> = RUNS3_OUT
            .split("\n\n\n")
            .map(|b| {
                if b.starts_with("WORST RUN RESULTS") {
                    run2.clone()
                } else {
                    b.to_string()
                }
            })
            .collect();
        assert_eq!(ours, expected.join("\n\n\n"));
    }

    #[test]
    fn without_print_all_runs_only_best_worst_aggregate() {
        let runs = runs3_results();
        let blocks = report_blocks(&runs, false);
        let titles: Vec<&str> = blocks.iter().map(|b| b.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "BEST RUN RESULTS",
                "WORST RUN RESULTS",
                "AGGREGATED AVERAGE RESULTS (3 runs)"
            ]
        );
    }

    #[test]
    fn a_run_cut_short_is_no_candidate_for_best_worst_or_average() {
        let total_ops_per_sec = |r: &Results| r.totals().map_or(0.0, |t| t.ops_per_sec);
        let mut runs = runs3_results();
        let fastest = (0..3)
            .max_by(|&a, &b| total_ops_per_sec(&runs[a]).total_cmp(&total_ops_per_sec(&runs[b])))
            .unwrap();
        runs[fastest].interrupted = true;
        let blocks = report_blocks(&runs, false);
        // The run cut short is shown on its own, first, without --print-all-runs too.
        assert_eq!(blocks.len(), 4);
        assert_eq!(blocks[0].title, runs[fastest].title);
        let best = &blocks[1];
        assert_ne!(
            total_ops_per_sec(best),
            total_ops_per_sec(&runs[fastest]),
            "the interrupted run was picked as the best"
        );
        assert_eq!(blocks[3].title, "AGGREGATED AVERAGE RESULTS (2 runs)");
        assert!(
            blocks[3].interrupted,
            "the aggregate says the command was cut short"
        );
        // With every run cut short, they are all compared (and none is shown apart).
        runs.iter_mut()
            .for_each(|r| r.stopped_by = Some("gone".into()));
        let blocks = report_blocks(&runs, false);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[2].title, "AGGREGATED AVERAGE RESULTS (3 runs)");
    }

    #[test]
    fn header_for_timed_runs_says_seconds() {
        assert_eq!(
            render_header(&info(1, 1, Limit::Seconds(3))),
            "1         Threads\n1         Connections per thread\n3         Seconds\n"
        );
    }

    #[test]
    fn custom_percentiles_label_columns() {
        let run = default_results();
        let out = render_results(&run, &[50.0, 90.0, 99.99], true);
        let header = out.lines().nth(2).unwrap();
        assert!(
            header.contains("     p50 Latency     p90 Latency  p99.99 Latency       KB/sec "),
            "{header}"
        );
        let rule = out.lines().nth(1).unwrap();
        assert_eq!(rule.len(), header.len());
    }

    #[test]
    fn nan_figures_print_as_zero() {
        let mut run = default_results();
        run.rows[0].ops_per_sec = f64::NAN;
        run.rows[0].kb_per_sec = f64::INFINITY;
        let out = render_results(&run, &PCTS, false);
        assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
        assert!(out.contains("\nSets            0.00          ---"), "{out}");
    }
}
