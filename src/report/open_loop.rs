//! The text report's open-loop sections: the SERVICE TIME table beside each block's
//! response-time table, the OPEN LOOP SCHEDULE lines, and a rate sweep's RATE STEPS
//! curve.
//!
//! ```text
//! SERVICE TIME (sent -> reply; the table above is response time: intended send -> reply)
//! ===========================================================================================
//! Type         Ops/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency     Max Latency
//! -------------------------------------------------------------------------------------------
//! Sets          200.00         0.09100         0.08700         0.23100         0.31100         0.40000
//!
//! OPEN LOOP SCHEDULE
//! Target        2000 requests/s in all (uniform arrivals)
//! Achieved      1999.87 requests/s (99.99% of target)
//! ...
//! ```

use std::fmt::Write as _;

use crate::report::finite;
use crate::report::{LATENCY_WIDTH, NOT_APPLICABLE, RATE_WIDTH, name_width, push_latency_headers};
use crate::results::{
    Results, Row, ScheduleResult, SweepReport, latency_at_percentile_ms, sweep::CURVE_PERCENTILES,
};

/// The open-loop sections of one results block (empty in closed loop): the service-time
/// table and the schedule's lines, each preceded by a blank line.
pub fn render_open_loop(results: &Results, percentiles: &[f64]) -> String {
    let mut out = String::new();
    if results.rows.iter().any(|r| r.service.is_some()) {
        out.push('\n');
        out.push_str(&render_service_table(results, percentiles));
    }
    if let Some(schedule) = &results.schedule {
        out.push('\n');
        out.push_str(&render_schedule(schedule, percentiles));
    }
    out
}

/// The SERVICE TIME table: per row the rate and the service-time figures.
pub fn render_service_table(results: &Results, percentiles: &[f64]) -> String {
    let type_width = name_width(&results.rows);
    let mut header = String::new();
    let _ = write!(header, "{:<type_width$} ", "Type");
    let _ = write!(header, "{:>RATE_WIDTH$} ", "Ops/sec");
    push_latency_headers(&mut header, percentiles);
    let _ = write!(header, "{:>LATENCY_WIDTH$} ", "Max Latency");
    let width = header.chars().count();

    let mut out = String::from(
        "SERVICE TIME (actual send -> reply; the table above is response time: intended send -> reply)\n",
    );
    out.push_str(&"=".repeat(width));
    out.push('\n');
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(width));
    out.push('\n');
    for row in &results.rows {
        push_service_row(&mut out, row, type_width, percentiles);
    }
    out
}

fn push_service_row(out: &mut String, row: &Row, type_width: usize, percentiles: &[f64]) {
    let _ = write!(out, "{:<type_width$} ", row.name.row);
    let _ = write!(out, "{:>RATE_WIDTH$.2} ", finite(row.ops_per_sec));
    match row.service.as_deref() {
        Some(service) if row.count > 0 && !service.histogram.is_empty() => {
            let latency = |out: &mut String, x: f64| {
                let _ = write!(out, "{:>LATENCY_WIDTH$.5} ", finite(x));
            };
            latency(out, service.avg_latency_ms);
            for &p in percentiles {
                latency(out, latency_at_percentile_ms(&service.histogram, p));
            }
            latency(out, service.max_latency_ms);
        }
        _ => {
            for _ in 0..percentiles.len() + 2 {
                let _ = write!(out, "{NOT_APPLICABLE:>LATENCY_WIDTH$} ");
            }
        }
    }
    out.push('\n');
}

/// The OPEN LOOP SCHEDULE lines: target, achieved, late sends, send lag, what was left
/// unfinished and, when the target was missed, why.
pub fn render_schedule(s: &ScheduleResult, percentiles: &[f64]) -> String {
    let h = &s.health;
    let mut out = String::from("OPEN LOOP SCHEDULE\n");
    let line = |out: &mut String, label: &str, text: &str| {
        let _ = writeln!(out, "{label:<14}{text}");
    };
    let target = if s.per_connection {
        format!(
            "{} requests/s in all, set per connection ({} arrivals)",
            s.target_per_sec, s.arrival
        )
    } else {
        format!(
            "{} requests/s in all ({} arrivals)",
            s.target_per_sec, s.arrival
        )
    };
    line(&mut out, "Target", &target);
    line(
        &mut out,
        "Achieved",
        &format!(
            "{:.2} requests/s ({:.2}% of target)",
            finite(s.achieved_per_sec),
            finite(s.achieved_percent())
        ),
    );
    line(
        &mut out,
        "Sent late",
        &format!(
            "{} of {} ({:.2}%) more than 1 ms after their intended time: {} waiting for a \
             connection, {} for the generator",
            h.late,
            h.sent,
            finite(s.late_percent()),
            h.late_blocked,
            h.late_generator()
        ),
    );
    let mut lag = String::new();
    for &p in percentiles {
        let _ = write!(
            lag,
            "p{} {:.3} ms, ",
            finite(p),
            latency_at_percentile_ms(&h.lag, p)
        );
    }
    let max_ms = if h.lag.is_empty() {
        0.0
    } else {
        h.lag.max() as f64 / 1000.0
    };
    let _ = write!(lag, "max {max_ms:.3} ms (actual send - intended send)");
    line(&mut out, "Send lag", &lag);
    line(
        &mut out,
        "Unfinished",
        &format!(
            "{} due but never sent, {} in flight when the run ended",
            h.unsent_at_end, h.in_flight_at_end
        ),
    );
    if let Some(behind) = &s.behind {
        line(&mut out, "Behind target", &behind.reason());
    }
    out
}

/// The RATE STEPS curve of a sweep, and its verdict.
///
/// ```text
/// RATE STEPS (response time, ms; unanswered requests count at their age when the step ended)
///     Target     Achieved          p50          p99        p99.9         Late   Unfinished   p99 <= 5 ms
///       1000       999.87        0.101        0.254        0.512            0            0          held
/// Highest rate that held p99 <= 5 ms: 1000 requests/s (stopped at the first step that broke it).
/// ```
pub fn render_sweep(report: &SweepReport) -> String {
    let mut out = String::from(
        "RATE STEPS (response time, ms; unanswered requests count at their age when the step ended)\n",
    );
    let sharded = !report.whole_rates.is_empty();
    if sharded {
        out.push_str(
            "This is one shard: each step ran its share (Target) of the whole rate; merge the shards' JSON files (kvbench merge) for the whole curve.\n",
        );
    }
    let slo_label = report
        .slo
        .map(|(p, ms)| format!("p{} <= {} ms", finite(p), finite(ms)));
    let mut header = String::new();
    if sharded {
        let _ = write!(header, "{:>10} ", "Whole rate");
    }
    let _ = write!(header, "{:>10} {:>12}", "Target", "Achieved");
    for p in CURVE_PERCENTILES {
        let _ = write!(header, " {:>12}", format!("p{}", finite(p)));
    }
    let _ = write!(header, " {:>12} {:>12}", "Late", "Unfinished");
    if let Some(label) = &slo_label {
        let _ = write!(header, " {label:>14}");
    }
    out.push_str(&header);
    out.push('\n');
    for (i, step) in report.steps.iter().enumerate() {
        if sharded {
            let whole = report.whole_rate(i).unwrap_or(step.target_per_sec);
            let _ = write!(out, "{whole:>10} ");
        }
        let _ = write!(
            out,
            "{:>10} {:>12.2}",
            step.target_per_sec,
            finite(step.achieved_per_sec)
        );
        for ms in step.percentiles_ms {
            let _ = write!(out, " {:>12.3}", finite(ms));
        }
        let _ = write!(out, " {:>12} {:>12}", step.late, step.unfinished);
        if let Some(held) = step.held {
            let _ = write!(out, " {:>14}", if held { "held" } else { "broken" });
        }
        out.push('\n');
    }
    if let Some(label) = slo_label {
        // Rates as the user named them: the whole rate of a shard's step.
        let whole = |target: u64| {
            report
                .steps
                .iter()
                .position(|s| s.target_per_sec == target)
                .and_then(|i| report.whole_rate(i))
                .map_or_else(
                    || format!("{target} requests/s"),
                    |w| format!("{w} requests/s (this shard's share: {target})"),
                )
        };
        let ran = report.steps.len();
        let planned = ran.max(report.planned_steps);
        let verdict = match (
            report.highest_held().map(whole),
            report.first_broken().map(|b| whole(b.target_per_sec)),
        ) {
            // Cut short: what held so far is no verdict on the rates not tried.
            (Some(rate), None) if report.interrupted => format!(
                "Interrupted in step {ran} of {planned}: the highest rate that held {label} so \
                 far is {rate}; the rates above it were not tried."
            ),
            (None, None) if report.interrupted => {
                format!("Interrupted in step {ran} of {planned}: no rate is known to hold {label}.")
            }
            (Some(rate), Some(broken)) => format!(
                "Highest rate that held {label}: {rate} (stopped at {broken}, the first step that \
                 broke it)."
            ),
            (Some(rate), None) => {
                format!("Highest rate that held {label}: {rate} (every step held it).")
            }
            (None, Some(broken)) => {
                format!("No rate held {label}: the first step ({broken}) broke it.")
            }
            (None, None) => format!("No step completed, so no rate is known to hold {label}."),
        };
        out.push_str(&verdict);
        out.push('\n');
    } else if report.interrupted {
        let _ = writeln!(
            out,
            "Interrupted in step {} of {}: the rates above it were not tried.",
            report.steps.len(),
            report.steps.len().max(report.planned_steps)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::default_results;
    use crate::results::{Capacity, ServiceRow};
    use crate::stats::ScheduleStats;

    fn open_loop_results() -> Results {
        let mut run = default_results();
        for row in &mut run.rows {
            let h = row.histogram.clone();
            row.service = Some(Box::new(ServiceRow {
                avg_latency_ms: 0.05,
                accumulated_latency_ms: 0.05 * row.count as f64,
                min_latency_ms: 0.01,
                max_latency_ms: 0.3,
                histogram: h,
            }));
        }
        let mut health = ScheduleStats::new();
        for _ in 0..98 {
            health.record_send(20, false);
        }
        health.record_send(5000, true);
        health.record_send(3000, false);
        health.in_flight_at_end = 2;
        run.schedule = Some(ScheduleResult::new(
            2000,
            "uniform",
            false,
            1999.0,
            health,
            None,
            Capacity {
                connections: 10,
                pipeline: 1,
            },
        ));
        run
    }

    #[test]
    fn service_table_lines_up_with_its_header() {
        let run = open_loop_results();
        let text = render_service_table(&run, &[50.0, 99.0, 99.9]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("SERVICE TIME"));
        assert_eq!(lines[1].len(), lines[2].len());
        assert!(lines[2].ends_with("    Max Latency "), "{}", lines[2]);
        // Waits never ran: dashes.
        let waits = lines.iter().find(|l| l.starts_with("Waits")).unwrap();
        assert!(waits.contains("---"), "{waits}");
        for line in &lines[3..] {
            assert_eq!(line.len(), lines[2].len(), "{line}");
        }
    }

    #[test]
    fn schedule_lines_say_late_lag_and_unfinished() {
        let run = open_loop_results();
        let text = render_open_loop(&run, &[50.0, 99.0]);
        assert!(text.contains("\nOPEN LOOP SCHEDULE\n"), "{text}");
        assert!(text.contains("Target        2000 requests/s in all (uniform arrivals)\n"));
        assert!(text.contains("Achieved      1999.00 requests/s (99.95% of target)\n"));
        assert!(
            text.contains("Sent late     2 of 100 (2.00%) more than 1 ms after their intended time: 1 waiting for a connection, 1 for the generator\n"),
            "{text}"
        );
        assert!(
            text.contains("Send lag      p50 0.020 ms, p99 3.001 ms, max 5.003 ms"),
            "{text}"
        );
        assert!(
            text.contains("Unfinished    0 due but never sent, 2 in flight when the run ended\n")
        );
        assert!(!text.contains("Behind target"));
    }

    #[test]
    fn an_interrupted_sweep_gives_no_verdict_on_the_rates_not_tried() {
        let mut report = SweepReport::new(Some((99.0, 1.0)), 5);
        let mut fast = open_loop_results();
        fast.rows.last_mut().unwrap().histogram = {
            let mut h = crate::stats::new_histogram();
            h.record_n(200, 100).unwrap();
            h
        };
        report.add(500, &fast);
        report.add(1000, &fast);
        report.interrupted = true;
        let text = render_sweep(&report);
        assert_eq!(
            text.lines().last(),
            Some(
                "Interrupted in step 2 of 5: the highest rate that held p99 <= 1 ms so far is \
                 1000 requests/s; the rates above it were not tried."
            ),
            "{text}"
        );
        assert!(!text.contains("every step held it"), "{text}");
        report.slo = None;
        assert_eq!(
            render_sweep(&report).lines().last(),
            Some("Interrupted in step 2 of 5: the rates above it were not tried.")
        );
    }

    #[test]
    fn closed_loop_blocks_have_no_open_loop_sections() {
        assert_eq!(render_open_loop(&default_results(), &[50.0]), "");
    }

    #[test]
    fn sweep_curve_states_the_highest_rate_that_held() {
        let mut report = SweepReport::new(Some((99.0, 1.0)), 3);
        let mut fast = open_loop_results();
        fast.rows.last_mut().unwrap().histogram = {
            let mut h = crate::stats::new_histogram();
            h.record_n(200, 100).unwrap();
            h
        };
        let mut slow = fast.clone();
        slow.rows.last_mut().unwrap().histogram = {
            let mut h = crate::stats::new_histogram();
            h.record_n(9000, 100).unwrap();
            h
        };
        report.add(1000, &fast);
        report.add(2000, &slow);
        let text = render_sweep(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].ends_with("p99 <= 1 ms"), "{}", lines[1]);
        assert!(lines[2].trim_start().starts_with("1000") && lines[2].ends_with("held"));
        assert!(lines[3].ends_with("broken"), "{}", lines[3]);
        assert_eq!(
            lines[4],
            "Highest rate that held p99 <= 1 ms: 1000 requests/s (stopped at 2000 requests/s, the first step that broke it)."
        );

        // A shard's curve names the whole rates the user asked for beside its shares.
        report.whole_rates = vec![2000, 4000];
        let text = render_sweep(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("This is one shard"), "{}", lines[1]);
        assert!(
            lines[2].starts_with("Whole rate     Target"),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].starts_with("      2000       1000 "),
            "{}",
            lines[3]
        );
        assert_eq!(
            lines[5],
            "Highest rate that held p99 <= 1 ms: 2000 requests/s (this shard's share: 1000) (stopped at 4000 requests/s (this shard's share: 2000), the first step that broke it)."
        );
    }
}
