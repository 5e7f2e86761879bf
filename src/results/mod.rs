//! The figures of finished runs as every report shows them: rows of rates, latencies and series.
//!
//! The runner turns raw merged [`OpStats`] into one [`Results`] per run
//! (`ALL STATS`, `RUN #i RESULTS`) with [`build_row`] and [`summarize_interval`], and
//! [`best_worst_aggregate`] builds BEST, WORST and AGGREGATED AVERAGE from several.
//! Reports (`report::{table,json,hdr}`) read only these.

pub mod histograms;
pub mod schedule;
pub mod sweep;
#[cfg(test)]
pub(crate) mod test_support;
pub mod unanswered;

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::stats::{OpStats, RowName, ServiceTimes};

pub use histograms::{
    compress_histogram, decode_histogram, latency_at_percentile_ms, value_at_percentile_us,
};
pub use schedule::{Behind, Capacity, ScheduleResult};
pub use sweep::{SweepReport, SweepStep};
pub use unanswered::Unanswered;

/// One second (or the last partial second) of one row.
#[derive(Clone, Debug, Default)]
pub struct IntervalSummary {
    /// Start and end of the interval, milliseconds since the Unix epoch.
    pub start_epoch_ms: u64,
    pub end_epoch_ms: u64,
    pub count: u64,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    pub avg_latency_ms: f64,
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    /// Latencies at `OutputConfig::print_percentiles`, same order, in milliseconds.
    pub percentiles_ms: Vec<f64>,
    /// Highest latency in the interval, microseconds (the `.hgrm` Interval_Max column).
    pub max_latency_us: u64,
    /// The interval's histogram, V2 compressed and base64 encoded (`HISTF...`).
    pub compressed_histogram: String,
    /// Open loop: the same figures for service time (the ones above are response times).
    pub service: Option<Box<ServiceInterval>>,
}

/// Service times of one interval of one row (open loop).
#[derive(Clone, Debug, Default)]
pub struct ServiceInterval {
    pub avg_latency_ms: f64,
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    /// At the same percentiles as the response times, milliseconds.
    pub percentiles_ms: Vec<f64>,
    pub max_latency_us: u64,
    pub compressed_histogram: String,
}

/// Service times of a whole row (open loop).
#[derive(Clone, Debug)]
pub struct ServiceRow {
    pub avg_latency_ms: f64,
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    /// Microseconds.
    pub histogram: Histogram<u64>,
}

impl ServiceRow {
    fn from_times(times: &ServiceTimes) -> ServiceRow {
        let h = &times.histogram;
        ServiceRow {
            avg_latency_ms: times.avg_ms(),
            accumulated_latency_ms: times.sum_us as f64 / 1000.0,
            min_latency_ms: min_ms(h),
            max_latency_ms: max_ms(h),
            histogram: h.clone(),
        }
    }
}

/// One row of a results table, with everything JSON and HDR files need.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: RowName,
    pub count: u64,
    pub ops_per_sec: f64,
    pub hits_per_sec: f64,
    pub misses_per_sec: f64,
    /// Cluster `MOVED` / `ASK` redirections per second (cluster mode only).
    pub moved_per_sec: f64,
    pub ask_per_sec: f64,
    /// Cluster `-TRYAGAIN` replies (each retried after a back-off), and per second.
    pub tryagain: u64,
    pub tryagain_per_sec: f64,
    pub connection_errors: u64,
    pub connection_errors_per_sec: f64,
    /// Error replies received.
    pub errors: u64,
    pub avg_latency_ms: f64,
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    pub kb_per_sec: f64,
    pub kb_rx_per_sec: f64,
    pub kb_tx_per_sec: f64,
    /// Whole-run latency histogram, microseconds (response times in open loop).
    pub histogram: Histogram<u64>,
    /// One entry per second of the run.
    pub series: Vec<IntervalSummary>,
    /// Open loop: service times (actual send → reply).
    pub service: Option<Box<ServiceRow>>,
}

/// Replica visibility over a run.
#[derive(Clone, Debug)]
pub struct VisibilityResult {
    /// The lag from a tracked write's acknowledgement until the other endpoint showed
    /// it: count (visible writes), latencies, per-second series, histogram.
    pub lag: Row,
    /// Tracked writes never seen within the timeout.
    pub timeouts: u64,
    /// Writes that would have been tracked but found too many waiting already.
    pub untracked: u64,
}

/// One titled block of results: `ALL STATS`, `RUN #2 RESULTS`, `BEST RUN RESULTS`, ...
#[derive(Clone, Debug)]
pub struct Results {
    pub title: String,
    /// 1-based run number, used in HDR file names (`_run_N`); aggregates use the best run's.
    pub run_number: u32,
    pub start_epoch_ms: u64,
    pub finish_epoch_ms: u64,
    pub duration_ms: u64,
    pub interrupted: bool,
    /// The error that ended the run before its end (a server gone, a write failed): the
    /// figures are the run's so far. The front end sets it; the JSON says it.
    pub stopped_by: Option<String>,
    /// From a `--cluster-mode` run: the table and JSON add MOVED/sec and ASK/sec.
    pub cluster: bool,
    /// Command rows in display order, `Totals` last.
    pub rows: Vec<Row>,
    /// A pool: one row per member (`host:port`, every command together), in the order
    /// given; empty otherwise.
    pub servers: Vec<Row>,
    /// `--visibility-from`: the replica visibility lag.
    pub visibility: Option<Box<VisibilityResult>>,
    /// Open loop: how the schedule was kept.
    pub schedule: Option<ScheduleResult>,
    /// Closed loop: the requests still unanswered when the run ended, if any.
    pub unanswered: Option<Unanswered>,
}

impl Results {
    /// The per-command rows: every row but the last (`Totals`).
    pub fn command_rows(&self) -> &[Row] {
        let n = self.rows.len().saturating_sub(1);
        &self.rows[..n]
    }

    /// The `Totals` row (the last one), if the results have any rows.
    pub fn totals(&self) -> Option<&Row> {
        self.rows.last()
    }

    /// Closed loop: the warning (without `warning: `) when the requests the run left
    /// unanswered hide a stall, the oldest older than its slowest answer (see
    /// [`Unanswered::hides_a_stall`]).
    pub fn unanswered_warning(&self) -> Option<String> {
        let unanswered = self.unanswered?;
        let slowest_us = self
            .totals()
            .filter(|t| !t.histogram.is_empty())
            .map_or(0, |t| t.histogram.max());
        unanswered
            .hides_a_stall(slowest_us)
            .then(|| unanswered.warning(slowest_us))
    }

    /// Whether any reply was counted: results worth writing even when an error or a
    /// signal cut the run short.
    pub fn answered(&self) -> bool {
        self.rows.iter().any(|row| row.count > 0)
    }

    /// A run with no rows, titled `title`: what a run that could not start (cluster
    /// discovery failed) writes, with `stopped_by` saying why.
    pub fn empty(title: String, stopped_by: Option<String>) -> Results {
        Results {
            title,
            run_number: 1,
            start_epoch_ms: 0,
            finish_epoch_ms: 0,
            duration_ms: 0,
            interrupted: false,
            stopped_by,
            cluster: false,
            rows: Vec::new(),
            servers: Vec::new(),
            visibility: None,
            schedule: None,
            unanswered: None,
        }
    }
}

/// Title of the block that averages `run_count` runs.
pub fn aggregate_title(run_count: usize) -> String {
    format!("AGGREGATED AVERAGE RESULTS ({run_count} runs)")
}

/// Per-second rate of `amount` over `secs`; 0 (never NaN or infinite) for a zero duration.
fn rate(amount: f64, secs: f64) -> f64 {
    if secs > 0.0 && amount.is_finite() {
        amount / secs
    } else {
        0.0
    }
}

fn min_ms(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.min() as f64 / 1000.0
    }
}

fn max_ms(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.max() as f64 / 1000.0
    }
}

/// Summarizes one interval (normally one second) of one row for the JSON "Time-Serie" and
/// the `.hgrm` log. `percentiles` are `OutputConfig::print_percentiles`.
///
/// An empty interval gets no compressed histogram (the `.hgrm` writer skips it anyway),
/// which spares a deflate per idle command per second.
pub fn summarize_interval(
    stats: &OpStats,
    start_epoch_ms: u64,
    end_epoch_ms: u64,
    percentiles: &[f64],
) -> IntervalSummary {
    let h = &stats.latency;
    let empty = stats.count == 0 || h.is_empty();
    IntervalSummary {
        start_epoch_ms,
        end_epoch_ms,
        count: stats.count,
        bytes_rx: stats.bytes_rx,
        bytes_tx: stats.bytes_tx,
        avg_latency_ms: stats.avg_latency_ms(),
        accumulated_latency_ms: stats.latency_sum_us as f64 / 1000.0,
        min_latency_ms: min_ms(h),
        max_latency_ms: max_ms(h),
        percentiles_ms: percentiles
            .iter()
            .map(|&p| latency_at_percentile_ms(h, p))
            .collect(),
        max_latency_us: if h.is_empty() { 0 } else { h.max() },
        compressed_histogram: if empty {
            String::new()
        } else {
            compress_histogram(h)
        },
        service: stats.service.as_deref().map(|service| {
            let h = &service.histogram;
            Box::new(ServiceInterval {
                avg_latency_ms: service.avg_ms(),
                accumulated_latency_ms: service.sum_us as f64 / 1000.0,
                min_latency_ms: min_ms(h),
                max_latency_ms: max_ms(h),
                percentiles_ms: percentiles
                    .iter()
                    .map(|&p| latency_at_percentile_ms(h, p))
                    .collect(),
                max_latency_us: if h.is_empty() { 0 } else { h.max() },
                compressed_histogram: if h.is_empty() {
                    String::new()
                } else {
                    compress_histogram(h)
                },
            })
        }),
    }
}

/// Builds a table row from a whole run's merged stats.
///
/// Rates are counts (or KiB) divided by `duration` in seconds; a zero duration gives rates
/// of 0, never NaN or infinity. `Totals` is built the same way from the merge of all rows,
/// so its average latency is the true one.
pub fn build_row(
    name: RowName,
    stats: &OpStats,
    duration: Duration,
    series: Vec<IntervalSummary>,
) -> Row {
    let secs = duration.as_secs_f64();
    let h = &stats.latency;
    Row {
        name,
        count: stats.count,
        ops_per_sec: rate(stats.count as f64, secs),
        hits_per_sec: rate(stats.hits as f64, secs),
        misses_per_sec: rate(stats.misses as f64, secs),
        moved_per_sec: rate(stats.moved as f64, secs),
        ask_per_sec: rate(stats.ask as f64, secs),
        tryagain: stats.tryagain,
        tryagain_per_sec: rate(stats.tryagain as f64, secs),
        connection_errors: stats.connection_errors,
        connection_errors_per_sec: rate(stats.connection_errors as f64, secs),
        errors: stats.errors,
        avg_latency_ms: stats.avg_latency_ms(),
        accumulated_latency_ms: stats.latency_sum_us as f64 / 1000.0,
        min_latency_ms: min_ms(h),
        max_latency_ms: max_ms(h),
        kb_per_sec: rate((stats.bytes_rx + stats.bytes_tx) as f64 / 1024.0, secs),
        kb_rx_per_sec: rate(stats.bytes_rx as f64 / 1024.0, secs),
        kb_tx_per_sec: rate(stats.bytes_tx as f64 / 1024.0, secs),
        histogram: h.clone(),
        series,
        service: stats
            .service
            .as_deref()
            .map(|times| Box::new(ServiceRow::from_times(times))),
    }
}

/// Ops/sec of a run's `Totals` row (its last row); 0 for a run without rows.
fn total_ops_per_sec(r: &Results) -> f64 {
    r.rows.last().map_or(0.0, |row| row.ops_per_sec)
}

/// Adds `from` into `into`, re-recording value by value when the two histograms' bounds
/// differ so far that `add` refuses.
fn merge_histogram(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    if into.add(from).is_err() {
        for v in from.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// Averages one row (matched by name) over all runs, as [`best_worst_aggregate`] describes;
/// a run that lacks the row counts as a rate of 0.
fn aggregate_row(name: &RowName, runs: &[Results]) -> Row {
    let n = runs.len().max(1) as f64;
    let rows: Vec<&Row> = runs
        .iter()
        .filter_map(|r| r.rows.iter().find(|row| row.name.row == name.row))
        .collect();
    let mean = |f: fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
    let count: u64 = rows.iter().map(|r| r.count).sum();
    let accumulated: f64 = rows.iter().map(|r| r.accumulated_latency_ms).sum();
    let mut histogram = rows
        .first()
        .map(|r| r.histogram.clone())
        .unwrap_or_else(crate::stats::new_histogram);
    histogram.reset();
    for r in &rows {
        merge_histogram(&mut histogram, &r.histogram);
    }
    let mut service: Option<ServiceTimes> = None;
    for r in &rows {
        if let Some(s) = r.service.as_deref() {
            let into = service.get_or_insert_with(ServiceTimes::default);
            into.sum_us += (s.accumulated_latency_ms * 1000.0).round() as u64;
            merge_histogram(&mut into.histogram, &s.histogram);
        }
    }
    Row {
        name: name.clone(),
        count,
        ops_per_sec: mean(|r| r.ops_per_sec),
        hits_per_sec: mean(|r| r.hits_per_sec),
        misses_per_sec: mean(|r| r.misses_per_sec),
        moved_per_sec: mean(|r| r.moved_per_sec),
        ask_per_sec: mean(|r| r.ask_per_sec),
        tryagain: rows.iter().map(|r| r.tryagain).sum(),
        tryagain_per_sec: mean(|r| r.tryagain_per_sec),
        connection_errors: rows.iter().map(|r| r.connection_errors).sum(),
        connection_errors_per_sec: mean(|r| r.connection_errors_per_sec),
        errors: rows.iter().map(|r| r.errors).sum(),
        avg_latency_ms: if count == 0 {
            0.0
        } else {
            accumulated / count as f64
        },
        accumulated_latency_ms: accumulated,
        min_latency_ms: min_ms(&histogram),
        max_latency_ms: max_ms(&histogram),
        kb_per_sec: mean(|r| r.kb_per_sec),
        kb_rx_per_sec: mean(|r| r.kb_rx_per_sec),
        kb_tx_per_sec: mean(|r| r.kb_tx_per_sec),
        histogram,
        // Seconds of different runs do not line up; memtier leaves this empty too.
        series: Vec::new(),
        service: service.map(|times| Box::new(ServiceRow::from_times(&times))),
    }
}

/// BEST, WORST and AGGREGATED AVERAGE of several runs (`-x N`), titled for the reports.
///
/// Best and worst are the runs with the highest and lowest `Totals` ops/sec (the first one
/// on a tie); memtier prints its best run as the worst too, a bug not copied.
///
/// The aggregate has the rows in the order they first appear, `Totals` last. Per row,
/// counts, errors and accumulated latency are summed; rates (ops, hits, misses, KB,
/// connection errors per second) are the mean over the runs, as memtier computes them;
/// the average latency is summed latency over summed count (the mean of the runs' averages
/// when counts are equal, as with `-n`, and the true mean otherwise); percentiles, min and
/// max come from the merged histograms (memtier writes zeros for its aggregated `Totals`).
/// It has no time series. Its runtime spans the earliest start to the latest finish, its
/// duration is the sum of the runs' durations, it is interrupted if any run was, and it
/// carries the best run's number. With no runs all three results are empty (no rows).
pub fn best_worst_aggregate(runs: &[Results]) -> (Results, Results, Results) {
    let empty = |title: String| Results {
        run_number: 0,
        ..Results::empty(title, None)
    };
    let Some(first) = runs.first() else {
        return (
            empty("BEST RUN RESULTS".into()),
            empty("WORST RUN RESULTS".into()),
            empty(aggregate_title(0)),
        );
    };
    let mut best = first;
    let mut worst = first;
    for r in &runs[1..] {
        if total_ops_per_sec(r) > total_ops_per_sec(best) {
            best = r;
        }
        if total_ops_per_sec(r) < total_ops_per_sec(worst) {
            worst = r;
        }
    }

    let mut names: Vec<&RowName> = Vec::new();
    let mut totals: Option<&RowName> = None;
    for r in runs {
        let last = r.rows.len().saturating_sub(1);
        for (i, row) in r.rows.iter().enumerate() {
            if i == last {
                totals.get_or_insert(&row.name);
            } else if !names.iter().any(|n| n.row == row.name.row) {
                names.push(&row.name);
            }
        }
    }
    names.extend(totals);
    let aggregate = Results {
        title: aggregate_title(runs.len()),
        run_number: best.run_number,
        start_epoch_ms: runs.iter().map(|r| r.start_epoch_ms).min().unwrap_or(0),
        finish_epoch_ms: runs.iter().map(|r| r.finish_epoch_ms).max().unwrap_or(0),
        duration_ms: runs.iter().map(|r| r.duration_ms).sum(),
        interrupted: runs.iter().any(|r| r.interrupted),
        stopped_by: runs.iter().rev().find_map(|r| r.stopped_by.clone()),
        cluster: runs.iter().any(|r| r.cluster),
        rows: names.iter().map(|n| aggregate_row(n, runs)).collect(),
        servers: Vec::new(),
        visibility: None,
        schedule: ScheduleResult::aggregate(
            &runs
                .iter()
                .filter_map(|r| r.schedule.as_ref())
                .collect::<Vec<_>>(),
        ),
        // Every run's unanswered requests, the oldest of them all.
        unanswered: runs
            .iter()
            .filter_map(|r| r.unanswered)
            .reduce(|mut all, u| {
                all.merge(&u);
                all
            }),
    };

    let titled = |r: &Results, title: &str| Results {
        title: title.to_string(),
        ..r.clone()
    };
    (
        titled(best, "BEST RUN RESULTS"),
        titled(worst, "WORST RUN RESULTS"),
        aggregate,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::{
        DEFAULT_JSON, decode, name, row, runs3_results, sample_totals_histogram,
    };

    fn stats(latencies_us: &[u64], bytes_tx: u64, bytes_rx: u64) -> OpStats {
        let mut s = OpStats::new();
        for &l in latencies_us {
            s.record(l, bytes_tx, bytes_rx);
        }
        s
    }

    #[test]
    fn decodes_memtier_compressed_histogram() {
        let v: serde_json::Value = serde_json::from_str(DEFAULT_JSON).unwrap();
        let s = v["ALL STATS"]["Sets"]["Percentile Latencies"]["Histogram log format"]
            ["Compressed Histogram"]
            .as_str()
            .unwrap();
        let h = decode(s);
        assert_eq!(h.len(), 400);
        assert_eq!(h.max(), 311);
        // And ours encodes memtier's histogram back to a string that decodes the same.
        let again = decode(&compress_histogram(&h));
        assert_eq!(again, h);
    }

    #[test]
    fn compressed_histogram_round_trips() {
        let s = stats(&[5, 80, 80, 1_500, 2_000_000], 10, 20);
        let text = compress_histogram(&s.latency);
        assert!(text.starts_with("HISTF"), "{text}");
        assert!(text.len().is_multiple_of(4), "padded base64");
        let h = decode(&text);
        assert_eq!(h.len(), 5);
        assert_eq!(h, s.latency);
    }

    #[test]
    fn percentiles_round_the_rank_like_memtier() {
        let h = sample_totals_histogram();
        // 800 samples: p99.9 is the 799th value (303), not the 800th (311).
        assert_eq!(value_at_percentile_us(&h, 99.9), 303);
        assert_eq!(h.value_at_quantile(0.999), 311);
        assert_eq!(latency_at_percentile_ms(&h, 50.0), 0.087);
        assert_eq!(latency_at_percentile_ms(&h, 99.0), 0.223);
        assert_eq!(latency_at_percentile_ms(&h, 100.0), 0.311);
        assert_eq!(
            latency_at_percentile_ms(&crate::stats::new_histogram(), 50.0),
            0.0
        );
        assert_eq!(value_at_percentile_us(&h, f64::NAN), 311);
    }

    #[test]
    fn build_row_computes_rates_over_the_duration() {
        let mut s = stats(&[100, 200, 300, 400], 1024, 512);
        s.hits = 3;
        s.misses = 1;
        s.connection_errors = 2;
        let r = build_row(
            name("Gets", "GET", true),
            &s,
            Duration::from_millis(500),
            Vec::new(),
        );
        assert_eq!(r.count, 4);
        assert_eq!(r.ops_per_sec, 8.0);
        assert_eq!(r.hits_per_sec, 6.0);
        assert_eq!(r.misses_per_sec, 2.0);
        assert_eq!(r.connection_errors_per_sec, 4.0);
        assert_eq!(r.kb_per_sec, 12.0);
        assert_eq!(r.kb_tx_per_sec, 8.0);
        assert_eq!(r.kb_rx_per_sec, 4.0);
        assert_eq!(r.avg_latency_ms, 0.25);
        assert_eq!(r.accumulated_latency_ms, 1.0);
        assert_eq!(r.min_latency_ms, 0.1);
        assert_eq!(r.max_latency_ms, 0.4);
        assert_eq!(r.histogram.len(), 4);
    }

    #[test]
    fn build_row_with_zero_duration_or_nothing_recorded_is_all_zero() {
        let s = stats(&[100], 10, 10);
        let r = build_row(name("Sets", "SET", false), &s, Duration::ZERO, Vec::new());
        assert_eq!(
            (r.ops_per_sec, r.kb_per_sec, r.hits_per_sec),
            (0.0, 0.0, 0.0)
        );
        let r = build_row(
            name("Waits", "WAIT", false),
            &OpStats::new(),
            Duration::from_secs(1),
            Vec::new(),
        );
        for x in [
            r.ops_per_sec,
            r.avg_latency_ms,
            r.min_latency_ms,
            r.max_latency_ms,
            r.kb_per_sec,
        ] {
            assert_eq!(x, 0.0);
        }
    }

    #[test]
    fn interval_summary_has_percentiles_and_histogram() {
        let s = stats(&[100, 200, 300, 400], 7, 3);
        let i = summarize_interval(&s, 1000, 2000, &[50.0, 99.0]);
        assert_eq!((i.start_epoch_ms, i.end_epoch_ms, i.count), (1000, 2000, 4));
        assert_eq!((i.bytes_tx, i.bytes_rx), (28, 12));
        assert_eq!(i.avg_latency_ms, 0.25);
        assert_eq!(i.percentiles_ms, vec![0.2, 0.4]);
        assert_eq!(i.max_latency_us, 400);
        assert_eq!(decode(&i.compressed_histogram).len(), 4);

        let empty = summarize_interval(&OpStats::new(), 0, 1000, &[50.0]);
        assert_eq!(empty.percentiles_ms, vec![0.0]);
        assert!(empty.compressed_histogram.is_empty());
        assert_eq!(empty.avg_latency_ms, 0.0);
    }

    fn run(n: u32, ops: f64, latencies_us: &[u64]) -> Results {
        let s = stats(latencies_us, 1, 1);
        let mut sets = build_row(
            name("Sets", "SET", false),
            &s,
            Duration::from_secs(1),
            Vec::new(),
        );
        sets.ops_per_sec = ops;
        let mut totals = sets.clone();
        totals.name = name("Totals", "FULL_RUN", true);
        Results {
            title: format!("RUN #{n} RESULTS"),
            run_number: n,
            start_epoch_ms: 1000 * u64::from(n),
            finish_epoch_ms: 1000 * u64::from(n) + 500,
            duration_ms: 500,
            interrupted: n == 2,
            stopped_by: None,
            cluster: false,
            rows: vec![sets, totals],
            servers: Vec::new(),
            visibility: None,
            schedule: None,
            unanswered: None,
        }
    }

    #[test]
    fn best_and_worst_are_picked_by_total_ops() {
        let runs = vec![
            run(1, 200.0, &[100]),
            run(2, 300.0, &[200]),
            run(3, 100.0, &[300, 300]),
        ];
        let (best, worst, agg) = best_worst_aggregate(&runs);
        assert_eq!(
            (best.title.as_str(), best.run_number),
            ("BEST RUN RESULTS", 2)
        );
        assert_eq!(
            (worst.title.as_str(), worst.run_number),
            ("WORST RUN RESULTS", 3)
        );
        assert_eq!(agg.title, "AGGREGATED AVERAGE RESULTS (3 runs)");
        assert_eq!(agg.run_number, 2);
        let names: Vec<&str> = agg.rows.iter().map(|r| r.name.row.as_str()).collect();
        assert_eq!(names, ["Sets", "Totals"]);
        let t = &agg.rows[1];
        assert_eq!(t.count, 4);
        assert_eq!(t.ops_per_sec, 200.0);
        // Summed latency over summed count: (100 + 200 + 600) us / 4.
        assert_eq!(t.avg_latency_ms, 0.225);
        assert_eq!((t.min_latency_ms, t.max_latency_ms), (0.1, 0.3));
        assert_eq!(t.histogram.len(), 4);
        assert!(t.series.is_empty());
        assert_eq!(
            (agg.start_epoch_ms, agg.finish_epoch_ms, agg.duration_ms),
            (1000, 3500, 1500)
        );
        assert!(agg.interrupted);
    }

    #[test]
    fn aggregate_of_memtier_runs_matches_its_text() {
        let (best, worst, agg) = best_worst_aggregate(&runs3_results());
        assert_eq!(best.run_number, 1);
        assert_eq!(worst.run_number, 2);
        let sets = &agg.rows[0];
        assert_eq!(
            format!("{:.2} {:.5}", sets.ops_per_sec, sets.avg_latency_ms),
            "6054.91 0.05427"
        );
        let totals = agg.totals().unwrap();
        assert_eq!(totals.count, 600);
        assert_eq!(latency_at_percentile_ms(&totals.histogram, 99.0), 0.175);
    }

    #[test]
    fn ties_keep_the_first_run_and_no_runs_give_empty_results() {
        let runs = vec![run(1, 100.0, &[100]), run(2, 100.0, &[100])];
        let (best, worst, _) = best_worst_aggregate(&runs);
        assert_eq!((best.run_number, worst.run_number), (1, 1));
        let (best, worst, agg) = best_worst_aggregate(&[]);
        assert!(best.rows.is_empty() && worst.rows.is_empty() && agg.rows.is_empty());
    }

    #[test]
    fn aggregate_of_a_row_that_never_ran_stays_zero() {
        let mut runs = runs3_results();
        for r in &mut runs {
            r.rows[0] = row(
                name("Sets", "SET", false),
                0,
                (0.0, 0.0, 0.0, 0.0, 0.0),
                crate::stats::new_histogram(),
            );
        }
        let (_, _, agg) = best_worst_aggregate(&runs);
        let sets = &agg.rows[0];
        assert_eq!(
            (sets.count, sets.avg_latency_ms, sets.max_latency_ms),
            (0, 0.0, 0.0)
        );
    }
}
