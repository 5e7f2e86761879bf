//! A rate sweep's latency–throughput curve: per step the target, the achieved rate and
//! the response-time percentiles, and whether the step held the service-level objective.
//!
//! A step's percentiles count the requests it left unanswered at their age when the step
//! ended (a lower bound of their response time): a step that falls behind cannot look
//! better for the requests it never finished.

use hdrhistogram::Histogram;

use crate::results::{Results, value_at_percentile_us};

/// The percentiles every step shows.
pub const CURVE_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// One step of the curve.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepStep {
    /// Requests per second aimed at.
    pub target_per_sec: u64,
    /// Requests answered per second.
    pub achieved_per_sec: f64,
    /// Response time at [`CURVE_PERCENTILES`], milliseconds.
    pub percentiles_ms: [f64; 3],
    /// Requests sent late (more than 1 ms after their intended time).
    pub late: u64,
    /// Requests the step ended before answering.
    pub unfinished: u64,
    /// The objective's percentile in this step, milliseconds (with an objective).
    pub slo_value_ms: Option<f64>,
    /// Whether the step held the objective (with an objective).
    pub held: Option<bool>,
}

/// The whole curve and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepReport {
    pub steps: Vec<SweepStep>,
    /// `(percentile, bound in ms)`, when an objective was given.
    pub slo: Option<(f64, f64)>,
    /// Steps that were planned (the sweep stops at the first one that breaks the
    /// objective, so `steps` may hold fewer).
    pub planned_steps: usize,
    /// Under `--shard`: each step's rate for the whole workload (what the user asked for),
    /// of which `steps[i].target_per_sec` is this process's share; empty otherwise.
    pub whole_rates: Vec<u64>,
    /// Ctrl-C (or SIGTERM) ended the sweep in its last step: the rates above it were not
    /// tried, and that step ran only part of its time.
    pub interrupted: bool,
}

impl SweepReport {
    /// An empty curve of `planned_steps` steps, judged against `slo`.
    pub fn new(slo: Option<(f64, f64)>, planned_steps: usize) -> SweepReport {
        SweepReport {
            steps: Vec::new(),
            slo,
            planned_steps,
            whole_rates: Vec::new(),
            interrupted: false,
        }
    }

    /// The whole workload's rate of step `index` when this process ran a share of it.
    pub fn whole_rate(&self, index: usize) -> Option<u64> {
        self.whole_rates.get(index).copied()
    }

    /// Adds the step whose results are `run`, aiming at `target_per_sec`; returns
    /// whether it held the objective (true without one).
    pub fn add(&mut self, target_per_sec: u64, run: &Results) -> bool {
        let step = evaluate(target_per_sec, run, self.slo);
        let held = step.held.unwrap_or(true);
        self.steps.push(step);
        held
    }

    /// The highest target rate whose step held the objective (steps run in rising
    /// order, and the sweep stops at the first that breaks it).
    pub fn highest_held(&self) -> Option<u64> {
        self.steps
            .iter()
            .filter(|s| s.held == Some(true))
            .map(|s| s.target_per_sec)
            .max()
    }

    /// The step that broke the objective, if one did.
    pub fn first_broken(&self) -> Option<&SweepStep> {
        self.steps.iter().find(|s| s.held == Some(false))
    }
}

/// Response times of the run's Totals, with its unanswered requests at their age.
fn response_times(run: &Results) -> Histogram<u64> {
    let mut h = run
        .totals()
        .map(|t| t.histogram.clone())
        .unwrap_or_else(crate::stats::new_histogram);
    if let Some(schedule) = &run.schedule {
        // Same bounds: both come from `stats::new_histogram`.
        let _ = h.add(&schedule.health.unfinished_age);
    }
    h
}

fn evaluate(target_per_sec: u64, run: &Results, slo: Option<(f64, f64)>) -> SweepStep {
    let h = response_times(run);
    let ms = |p: f64| value_at_percentile_us(&h, p) as f64 / 1000.0;
    let (late, unfinished) = run
        .schedule
        .as_ref()
        .map_or((0, 0), |s| (s.health.late, s.health.unfinished()));
    let slo_value_ms = slo.map(|(p, _)| ms(p));
    SweepStep {
        target_per_sec,
        achieved_per_sec: run.totals().map_or(0.0, |t| t.ops_per_sec),
        percentiles_ms: CURVE_PERCENTILES.map(ms),
        late,
        unfinished,
        slo_value_ms,
        held: slo
            .zip(slo_value_ms)
            .map(|((_, bound), value)| value <= bound && !h.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::{name, zero_row};
    use crate::results::{Capacity, ScheduleResult};
    use crate::stats::{ScheduleStats, new_histogram};

    fn step(latency_us: u64, unfinished_age_us: Option<u64>) -> Results {
        let mut h = new_histogram();
        h.record_n(latency_us, 1000).unwrap();
        let mut health = ScheduleStats::new();
        if let Some(age) = unfinished_age_us {
            health.in_flight_at_end = 50;
            health.unfinished_age.record_n(age, 50).unwrap();
        }
        let totals = crate::results::Row {
            name: name("Totals", "FULL_RUN", false),
            count: 1000,
            ops_per_sec: 1000.0,
            histogram: h,
            ..zero_row()
        };
        let cap = Capacity {
            connections: 1,
            pipeline: 1,
        };
        Results {
            title: String::new(),
            run_number: 1,
            start_epoch_ms: 0,
            finish_epoch_ms: 1000,
            duration_ms: 1000,
            interrupted: false,
            stopped_by: None,
            cluster: false,
            rows: vec![totals],
            servers: Vec::new(),
            visibility: None,
            schedule: Some(ScheduleResult::new(
                1000, "uniform", false, 1000.0, health, None, cap,
            )),
            unanswered: None,
        }
    }

    #[test]
    fn steps_hold_until_the_objective_breaks() {
        let mut report = SweepReport::new(Some((99.0, 1.0)), 3);
        assert!(report.add(1000, &step(500, None)));
        assert!(!report.add(2000, &step(5000, None)));
        assert_eq!(report.highest_held(), Some(1000));
        assert_eq!(report.first_broken().map(|s| s.target_per_sec), Some(2000));
        assert_eq!(report.steps[0].percentiles_ms[1], 0.5);
        let broken = report.steps[1].slo_value_ms.unwrap();
        assert!((broken - 5.0).abs() < 0.01, "{broken}");
    }

    #[test]
    fn unanswered_requests_count_at_their_age() {
        // 1000 answered in 0.5 ms, 50 still waiting after 800 ms: p99 is theirs.
        let mut report = SweepReport::new(Some((99.0, 1.0)), 1);
        assert!(!report.add(1000, &step(500, Some(800_000))));
        let s = &report.steps[0];
        assert_eq!(s.unfinished, 50);
        assert!(s.percentiles_ms[1] > 799.0, "{:?}", s.percentiles_ms);
        assert_eq!(report.highest_held(), None);
    }

    #[test]
    fn without_an_objective_every_step_holds() {
        let mut report = SweepReport::new(None, 2);
        assert!(report.add(1000, &step(50_000, None)));
        assert_eq!(report.steps[0].held, None);
        assert_eq!(report.highest_held(), None);
    }
}
