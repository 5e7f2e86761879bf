//! Merging rate sweeps step by step: the shards' steps matched by position, the curve
//! judged again on the merged steps, and the files that are not shards of one sweep.

use super::*;

/// A shard's sweep file: one `STEP #i RESULTS (W requests/s)` block per `(whole, share)`
/// rate, each `default.out`'s run with a schedule at the share, and the curve judged
/// against `slo`.
fn sweep_file(rates: &[(u64, u64)], slo: Option<(f64, f64)>) -> String {
    use crate::report::json::render_json_with_sweep;
    use crate::results::test_support::{default_results, sample_configuration};
    use crate::results::{Capacity, ScheduleResult, SweepReport};
    use crate::stats::ScheduleStats;
    let mut report = SweepReport::new(slo, rates.len() + 1);
    let mut steps = Vec::new();
    for (i, &(whole, share)) in rates.iter().enumerate() {
        let mut step = default_results();
        step.title = format!("STEP #{} RESULTS ({whole} requests/s)", i + 1);
        step.run_number = i as u32 + 1;
        let mut health = ScheduleStats::new();
        for n in 0..800 {
            health.record_send(10 + n % 3000, n % 2 == 0);
        }
        health.in_flight_at_end = 2;
        health.unfinished_age.record_n(400, 2).unwrap();
        step.schedule = Some(ScheduleResult::new(
            share,
            "uniform",
            false,
            share as f64,
            health,
            None,
            Capacity {
                connections: 4,
                pipeline: 1,
            },
        ));
        report.add(share, &step);
        steps.push(step);
    }
    let refs: Vec<&Results> = steps.iter().collect();
    let info = RunInfo {
        threads: 2,
        connections_per_thread: 2,
        limit: Limit::Seconds(1),
        ramp: None,
    };
    render_json_with_sweep(
        &sample_configuration(DEFAULT_JSON),
        &info,
        &refs,
        &[50.0, 99.0, 99.9],
        false,
        Some(&report),
    )
}

#[test]
fn sweeps_merge_step_by_step_over_the_steps_every_shard_ran() {
    let held = Some((99.0, 5.0));
    let a = sweep_file(&[(1000, 500), (2000, 1000), (3000, 1500)], held);
    let b = sweep_file(&[(1000, 500), (2000, 1000)], held);
    let m = merged(&[("a.json", &a), ("b.json", &b)]);
    let sweep = m.sweep.as_ref().unwrap();
    assert_eq!(m.steps.len(), 2);
    assert_eq!(m.blocks().len(), 2);
    assert_eq!(m.notes.len(), 1, "{:?}", m.notes);
    assert!(
        m.notes[0].contains("steps after 2 are left out"),
        "{:?}",
        m.notes
    );
    let targets: Vec<u64> = sweep.steps.iter().map(|s| s.target_per_sec).collect();
    assert_eq!(targets, [1000, 2000]);
    assert_eq!(sweep.highest_held(), Some(2000));
    assert_eq!(sweep.planned_steps, 4);
    for (k, step) in m.steps.iter().enumerate() {
        assert_eq!(
            step.title,
            format!("STEP #{} RESULTS ({}000 requests/s)", k + 1, k + 1)
        );
        let totals = step.totals().unwrap();
        assert_eq!(totals.count, 1600);
        let schedule = step.schedule.as_ref().unwrap();
        assert_eq!(schedule.health.sent, 1600);
        assert_eq!(schedule.health.in_flight_at_end, 4);
        assert_eq!(schedule.health.unfinished_age.len(), 4);
        // The curve counts the unfinished requests at their age, as a single sweep does.
        let mut curve = totals.histogram.clone();
        curve.add(&schedule.health.unfinished_age).unwrap();
        assert_eq!(
            sweep.steps[k].percentiles_ms[1],
            latency_at_percentile_ms(&curve, 99.0)
        );
        assert_eq!(sweep.steps[k].unfinished, 4);
    }
    // The merged curve is written and reads back.
    let text = render_json_with_sweep_of(&m);
    let back = json_of("merged.json", &text);
    assert_eq!(back.rate_steps.as_ref().unwrap().steps.len(), 2);
    assert_eq!(back.rate_steps.unwrap().highest_rate_held, Some(2000));

    // Each shard held at its share; the merged step breaks the objective: the curve ends
    // there, as a single sweep stops there.
    let tight = Some((99.0, 0.2));
    let a = sweep_file(&[(1000, 500), (2000, 1000)], None);
    let tight_a = a.replace(
        "\"Planned Steps\"",
        "\"SLO\": \"p99:0.2\"\n\t\t,\"Planned Steps\"",
    );
    let m = merged(&[("a.json", &tight_a), ("b.json", &tight_a)]);
    assert_eq!(m.sweep.as_ref().unwrap().slo, tight);
    assert_eq!(m.steps.len(), 1);
    assert_eq!(m.sweep.as_ref().unwrap().highest_held(), None);
    assert!(m.notes[0].contains("broke the objective"), "{:?}", m.notes);

    // Not shards of one sweep: clear errors.
    let other = sweep_file(&[(1500, 750), (2000, 1000)], held);
    let e = merge_err(&[("a.json", &b), ("c.json", &other)]);
    assert_eq!(
        e,
        "c.json: step 1 is \"STEP #1 RESULTS (1500 requests/s)\" but a.json's is \"STEP #1 RESULTS (1000 requests/s)\": not shards of one sweep"
    );
    let e = merge_err(&[
        ("a.json", &b),
        ("d.json", &sweep_file(&[(1000, 500)], None)),
    ]);
    assert_eq!(
        e,
        "d.json: its sweep's objective (none) differs from a.json's (p99:5): not shards of one sweep"
    );
}

fn render_json_with_sweep_of(m: &MergedResult) -> String {
    let refs: Vec<&Results> = m.blocks().iter().collect();
    crate::report::json::render_json_with_sweep(
        &m.shown(),
        &m.run_info,
        &refs,
        &m.percentiles,
        m.hide_histogram,
        m.sweep.as_ref(),
    )
}
