//! The page's open-loop section: each run's schedule (target, achieved, late sends, send
//! lag) and its service times beside the response times of the main table, so a reader
//! sees whether latency came from the server (service time) or from waiting (response
//! time minus service time). Left out when no run had a rate.

use std::fmt::Write as _;

use super::escape;
use super::model::{Row, Run, names_in_table_order, same_row_name};
use super::numbers::{count_text, ms_text, rate_text};
use super::section::{averaged_runs_note, swatch};

/// A latency cell: `---` for a figure the run lacks.
fn ms_cell(v: Option<f64>) -> String {
    v.map_or_else(|| "---".to_string(), ms_text)
}

/// The schedule table and the service-time table, one row per run (and command).
pub fn render_open_loop(out: &mut String, runs: &[Run], labels: &[String]) {
    if runs
        .iter()
        .all(|r| r.schedule.is_none() && r.service.is_empty())
    {
        return;
    }
    out.push_str(
        "<section id=\"open-loop\">\n<h2>Open loop</h2>\n<p class=\"note\">Requests sent on a \
         schedule. The tables above give response time (from when a request should have been \
         sent); service time here counts from when it was sent. Send lag is actual minus \
         intended send time; late means more than 1 ms.</p>\n",
    );
    out.push_str(&averaged_runs_note(
        runs,
        labels,
        |run| run.schedule.is_some() || !run.service.is_empty(),
        "Sent, Late, Unsent and In flight at end, Count",
        "Achieved, Ops/sec",
    ));
    out.push_str(
        "<div class=\"wide\"><table class=\"schedule\">\n<thead><tr><th class=\"run\">Run</th><th>Target</th>\
         <th>Achieved</th><th>Sent</th><th>Late</th><th>Late: waiting for a connection</th>\
         <th>Late: waiting for kvbench</th><th>Unsent at end</th><th>In flight at end</th>\
         <th>Lag p50 (ms)</th><th>Lag p99 (ms)</th><th>Lag p99.9 (ms)</th></tr></thead>\n\
         <tbody>\n",
    );
    for (i, run) in runs.iter().enumerate() {
        let Some(s) = &run.schedule else { continue };
        // The target is the whole run's either way; `--rate-limiting` only set it per
        // connection.
        let per = if s.per_connection {
            " in all, set per connection"
        } else {
            ""
        };
        let short = s.achieved_per_sec < 0.99 * s.target_per_sec as f64;
        let achieved_class = if short { " class=\"worse\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr><td class=\"run\">{}{}</td><td>{}/s{per} ({})</td><td{achieved_class}>{}/s</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            swatch(i),
            escape(&labels[i]),
            s.target_per_sec,
            escape(&s.arrival),
            rate_text(s.achieved_per_sec),
            count_text(s.sent as f64),
            count_text(s.late as f64),
            count_text(s.late_waiting_for_connection as f64),
            count_text(s.late.saturating_sub(s.late_waiting_for_connection) as f64),
            count_text(s.unsent_at_end as f64),
            count_text(s.in_flight_at_end as f64),
            ms_cell(s.lag_p50_ms),
            ms_cell(s.lag_p99_ms),
            ms_cell(s.lag_p999_ms),
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
    render_service(out, runs, labels);
    out.push_str("</section>\n");
}

/// Service time per command, the runs' rows of one command together (as in the main
/// table), so runs compare line by line.
fn render_service(out: &mut String, runs: &[Run], labels: &[String]) {
    if runs.iter().all(|r| r.service.is_empty()) {
        return;
    }
    out.push_str(
        "<h3>Service time</h3>\n<div class=\"wide\"><table class=\"service\">\n<thead><tr>\
         <th>Type</th><th class=\"run\">Run</th><th>Ops/sec</th><th>Avg. (ms)</th>\
         <th>p50 (ms)</th><th>p99 (ms)</th><th>p99.9 (ms)</th><th>Count</th></tr></thead>\n\
         <tbody>\n",
    );
    for name in names_in_table_order(runs.iter().flat_map(|r| &r.service)) {
        for (i, run) in runs.iter().enumerate() {
            if let Some(row) = run.service.iter().find(|r| same_row_name(&r.name, &name)) {
                service_line(out, row, i, &labels[i]);
            }
        }
    }
    out.push_str("</tbody>\n</table></div>\n");
}

fn service_line(out: &mut String, row: &Row, run: usize, label: &str) {
    let ran = row.count > 0;
    let cell = |v: Option<f64>| ms_cell(v.filter(|_| ran));
    let _ = writeln!(
        out,
        "<tr><td class=\"name\">{}</td><td class=\"run\">{}{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        escape(&row.name),
        swatch(run),
        escape(label),
        rate_text(row.ops_per_sec),
        cell(row.avg_ms),
        cell(row.p50_ms),
        cell(row.p99_ms),
        cell(row.p999_ms),
        count_text(row.count as f64),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::Schedule;

    fn open_loop_run() -> Run {
        let mut gets = Row::named("Gets");
        gets.count = 2000;
        gets.ops_per_sec = 1000.0;
        gets.avg_ms = Some(0.08);
        gets.p50_ms = Some(0.071);
        gets.p99_ms = Some(0.25);
        gets.p999_ms = Some(0.9);
        Run {
            label: "a.json".to_string(),
            service: vec![gets],
            schedule: Some(Schedule {
                target_per_sec: 1000,
                arrival: "uniform".to_string(),
                achieved_per_sec: 999.5,
                sent: 2000,
                late: 3,
                late_waiting_for_connection: 1,
                unsent_at_end: 7,
                in_flight_at_end: 2,
                lag_p50_ms: Some(0.03),
                lag_p99_ms: Some(0.094),
                lag_p999_ms: None,
                ..Schedule::default()
            }),
            ..Run::default()
        }
    }

    #[test]
    fn a_closed_loop_run_has_no_open_loop_section() {
        let mut out = String::new();
        render_open_loop(&mut out, &[Run::default()], &["x".to_string()]);
        assert!(out.is_empty());
    }

    #[test]
    fn schedule_and_service_rows_are_shown() {
        let mut out = String::new();
        render_open_loop(&mut out, &[open_loop_run()], &["a.json".to_string()]);
        assert!(out.contains("<section id=\"open-loop\">"), "{out}");
        assert!(out.contains("1000/s (uniform)"), "{out}");
        assert!(out.contains("<td>0.094</td><td>---</td>"), "{out}");
        // Late: 1 for a connection, 2 for kvbench; 7 unsent and 2 in flight at the end.
        assert!(
            out.contains("<td>3</td><td>1</td><td>2</td><td>7</td><td>2</td>"),
            "{out}"
        );
        assert!(out.contains("<td class=\"name\">Gets</td>"), "{out}");
        assert!(
            out.contains("<td>0.071</td><td>0.250</td><td>0.900</td>"),
            "{out}"
        );
        assert!(
            !out.contains("class=\"worse\""),
            "999.5 of 1000 is on target: {out}"
        );
    }

    #[test]
    fn service_rows_are_grouped_by_command_totals_last() {
        let row = |name: &str| {
            let mut r = Row::named(name);
            r.count = 10;
            r
        };
        let a = Run {
            service: vec![row("Sets"), row("Gets"), row("Totals")],
            ..open_loop_run()
        };
        // memtier's names against kvbench redis-benchmark's: the same commands.
        let b = Run {
            service: vec![row("Totals"), row("GET"), row("SET")],
            ..open_loop_run()
        };
        let mut out = String::new();
        render_open_loop(&mut out, &[a, b], &["a".to_string(), "b".to_string()]);
        let order: Vec<&str> = out
            .split("<td class=\"name\">")
            .skip(1)
            .map(|rest| &rest[..rest.find('<').unwrap()])
            .collect();
        assert_eq!(order, ["Sets", "SET", "Gets", "GET", "Totals", "Totals"]);
    }

    #[test]
    fn a_missed_target_is_marked() {
        let mut run = open_loop_run();
        if let Some(s) = run.schedule.as_mut() {
            s.achieved_per_sec = 600.0;
        }
        let mut out = String::new();
        render_open_loop(&mut out, &[run], &["a.json".to_string()]);
        assert!(out.contains("<td class=\"worse\">"), "{out}");
    }

    #[test]
    fn a_rate_set_per_connection_reads_as_the_whole_runs() {
        // `--rate-limiting=200` on four connections: the file's target is 800 in all.
        let mut run = open_loop_run();
        if let Some(s) = run.schedule.as_mut() {
            s.target_per_sec = 800;
            s.per_connection = true;
            s.achieved_per_sec = 500.0;
        }
        let mut out = String::new();
        render_open_loop(&mut out, &[run], &["a.json".to_string()]);
        assert!(
            out.contains("800/s in all, set per connection (uniform)"),
            "{out}"
        );
        assert!(out.contains("<td class=\"worse\">"), "short of 800: {out}");
    }
}
