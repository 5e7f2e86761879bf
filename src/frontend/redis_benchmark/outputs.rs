//! kvbench's additions to redis-benchmark's output: the tests run so far as one result
//! block (`ALL STATS`, one row per test title, then `Totals`) for `--json-out-file`
//! (kvbench's JSON, which `kvbench merge` and `kvbench report` read) and
//! `--hdr-file-prefix` (HDR histogram files per test and for all of them).

use std::time::Duration;

use super::flags::BenchmarkSpec;
use crate::error::Error;
use crate::report::{self, Destinations, Limit, Rendering, RunInfo};
use crate::results::{Results, Row, ScheduleResult, build_row};
use crate::stats::{OpStats, RowName, ServiceTimes};

/// Percentiles the JSON reports for every row and second.
const PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// Each finished test's results, in the order they ran.
#[derive(Debug, Default)]
pub struct Collected {
    tests: Vec<Results>,
    /// The error that ended the invocation before its last test, if one did: the files
    /// say so (`"Stopped by error"`).
    pub stopped_by: Option<String>,
}

impl Collected {
    /// Keeps a finished test (its one row is named after the test).
    pub fn push(&mut self, results: Results) {
        self.tests.push(results);
    }

    /// Whether anything is to be written.
    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// The tests as one block: one row per test (a title met again under `-l` adds up),
    /// then `Totals` over them all.
    pub fn combined(&self) -> Option<Results> {
        let first = self.tests.first()?;
        let last = self.tests.last()?;
        let mut rows: Vec<(
            RowName,
            OpStats,
            Duration,
            Vec<crate::results::IntervalSummary>,
        )> = Vec::new();
        let mut all = OpStats::new();
        let mut all_series = Vec::new();
        let mut total = Duration::ZERO;
        for test in &self.tests {
            let duration = Duration::from_millis(test.duration_ms);
            total += duration;
            if let Some(totals) = test.totals() {
                all_series.extend(totals.series.iter().cloned());
            }
            for row in test.command_rows() {
                let stats = stats_of(row, duration);
                all.merge(&stats);
                match rows.iter_mut().find(|r| r.0.row == row.name.row) {
                    Some(r) => {
                        r.1.merge(&stats);
                        r.2 += duration;
                        r.3.extend(row.series.iter().cloned());
                    }
                    None => rows.push((row.name.clone(), stats, duration, row.series.clone())),
                }
            }
        }
        let mut out: Vec<Row> = rows
            .into_iter()
            .map(|(name, stats, duration, series)| build_row(name, &stats, duration, series))
            .collect();
        out.push(build_row(RowName::totals(false), &all, total, all_series));
        Some(Results {
            title: "ALL STATS".to_string(),
            run_number: 1,
            start_epoch_ms: first.start_epoch_ms,
            finish_epoch_ms: last.finish_epoch_ms,
            duration_ms: total.as_millis() as u64,
            interrupted: self.tests.iter().any(|t| t.interrupted),
            stopped_by: self.stopped_by.clone(),
            cluster: first.cluster,
            rows: out,
            servers: Vec::new(),
            visibility: None,
            // Under --rps every test kept a schedule at the same target: their health
            // added up, as the memtier front end's `-x` runs' (merge and report tell an
            // open-loop file by it).
            schedule: ScheduleResult::aggregate(
                &self
                    .tests
                    .iter()
                    .filter_map(|t| t.schedule.as_ref())
                    .collect::<Vec<_>>(),
            ),
            // Every test's unanswered requests, the oldest of them all (the memtier front
            // end's -x aggregate adds its runs' so too).
            unanswered: self
                .tests
                .iter()
                .filter_map(|t| t.unanswered)
                .reduce(|mut all, u| {
                    all.merge(&u);
                    all
                }),
        })
    }
}

/// A row's figures back as stats over `duration` (the rates times the duration give the
/// byte and redirection counts again).
fn stats_of(row: &Row, duration: Duration) -> OpStats {
    let secs = duration.as_secs_f64();
    let count_of = |per_sec: f64| (per_sec * secs).round() as u64;
    let mut stats = OpStats::new();
    stats.count = row.count;
    stats.errors = row.errors;
    stats.connection_errors = row.connection_errors;
    stats.moved = count_of(row.moved_per_sec);
    stats.ask = count_of(row.ask_per_sec);
    stats.tryagain = row.tryagain;
    stats.bytes_rx = count_of(row.kb_rx_per_sec * 1024.0);
    stats.bytes_tx = count_of(row.kb_tx_per_sec * 1024.0);
    stats.latency_sum_us = (row.accumulated_latency_ms * 1000.0).round() as u64;
    // Both histograms have kvbench's bounds.
    let _ = stats.latency.add(&row.histogram);
    stats.service = row.service.as_deref().map(|service| {
        Box::new(ServiceTimes {
            sum_us: (service.accumulated_latency_ms * 1000.0).round() as u64,
            histogram: service.histogram.clone(),
        })
    });
    stats
}

/// Writes the JSON file and HDR files `spec` asks for, if any, with the notices memtier's
/// reports print on stderr; `threads` is how many worker threads ran (with `--cluster`,
/// one per master unless `--threads` says otherwise).
pub fn write(spec: &BenchmarkSpec, collected: &Collected, threads: usize) -> Result<(), Error> {
    if spec.json_out_file.is_none() && spec.hdr_file_prefix.is_none() {
        return Ok(());
    }
    let Some(block) = collected.combined() else {
        return Ok(());
    };
    let configuration = configuration(spec);
    let shown: Vec<(&str, String)> = configuration.iter().map(|(k, v)| (*k, v.clone())).collect();
    let rendering = Rendering {
        info: RunInfo {
            threads: threads.max(1),
            connections_per_thread: (spec.clients as usize).div_ceil(threads.max(1)),
            limit: Limit::RequestsPerClient(spec.requests.div_ceil(u64::from(spec.clients))),
            ramp: None,
        },
        percentiles: &PERCENTILES,
        columns: &PERCENTILES,
        hide_histogram: false,
        print_all_runs: false,
        configuration: &shown,
        sweep: None,
    };
    write_files(&destinations(spec), &rendering, &block)
}

/// Checks before the run that the JSON file and HDR files `spec` asks for can be written.
pub fn check(spec: &BenchmarkSpec) -> Result<(), Error> {
    report::check_destinations(&destinations(spec))
}

/// Where the files go (redis-benchmark prints its text report itself).
fn destinations(spec: &BenchmarkSpec) -> Destinations {
    Destinations {
        out_file: None,
        json_out_file: spec.json_out_file.clone(),
        hdr_file_prefix: spec.hdr_file_prefix.clone(),
        announced: false,
        files_only: false,
    }
}

/// The JSON and HDR files, without the text report (redis-benchmark prints its own).
fn write_files(to: &Destinations, rendering: &Rendering<'_>, block: &Results) -> Result<(), Error> {
    let mut failures = report::WriteFailures::default();
    if let Some(prefix) = &to.hdr_file_prefix {
        failures.keep(report::hdr::write_run_files(prefix, block));
    }
    if let Some(path) = &to.json_out_file {
        let json = report::json::render_json(
            rendering.configuration,
            &rendering.info,
            &[block],
            rendering.percentiles,
            false,
        );
        failures.keep(report::write_atomic(path, json.as_bytes()));
    }
    failures.into_result()
}

/// The JSON "configuration" object: the tool and the flags that shape the figures.
fn configuration(spec: &BenchmarkSpec) -> Vec<(&'static str, String)> {
    let json_str = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let (server, port, socket) = match &spec.endpoint {
        super::flags::Endpoint::Tcp { host, port } => {
            (json_str(host), port.to_string(), "null".to_string())
        }
        super::flags::Endpoint::Unix(path) => (
            "null".to_string(),
            "null".to_string(),
            json_str(&path.to_string_lossy()),
        ),
    };
    let tests = match &spec.command {
        Some(_) => "null".to_string(),
        None => json_str(&match &spec.tests {
            super::suite::TestSelection::All => "all".to_string(),
            super::suite::TestSelection::Only(names) => names.join(","),
        }),
    };
    vec![
        ("tool", json_str("redis-benchmark")),
        ("server", server),
        ("port", port),
        ("unix socket", socket),
        ("clients", spec.clients.to_string()),
        ("requests", spec.requests.to_string()),
        ("data size", spec.data_size.to_string()),
        ("pipeline", spec.pipeline.to_string()),
        ("keep alive", spec.keep_alive.to_string()),
        (
            "keyspacelen",
            spec.keyspace.map_or("null".to_string(), |k| k.to_string()),
        ),
        ("threads", spec.threads.to_string()),
        ("cluster mode", spec.cluster.to_string()),
        ("tls", spec.tls.is_some().to_string()),
        ("tests", tests),
        ("command", command_words(spec)),
        (
            "rps",
            spec.rps.map_or("null".to_string(), |r| r.to_string()),
        ),
        (
            "warmup",
            spec.warmup
                .map_or("0".to_string(), |w| format!("{}", w.as_secs_f64())),
        ),
    ]
}

/// A command line's command as the JSON configuration records it: a list of one command
/// line, as the memtier front end's `--command` runs record theirs (so `kvbench report`
/// lists it the same way), its words joined by spaces as the test's title shows them
/// (with `-x`, standard input's content is sent but not shown, and not recorded either);
/// `null` for the built-in tests.
fn command_words(spec: &BenchmarkSpec) -> String {
    let Some(command) = &spec.command else {
        return "null".to_string();
    };
    let shown = command.len() - usize::from(spec.last_arg_from_stdin).min(command.len());
    let words: Vec<String> = command[..shown]
        .iter()
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect();
    serde_json::json!([words.join(" ")]).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::build_row;

    fn test_results(title: &str, latencies: &[u64], start: u64, ms: u64) -> Results {
        let mut stats = OpStats::new();
        for &l in latencies {
            stats.record(l, 30, 5);
        }
        let duration = Duration::from_millis(ms);
        let row = build_row(
            RowName::new(title, title, false),
            &stats,
            duration,
            Vec::new(),
        );
        let totals = build_row(RowName::totals(false), &stats, duration, Vec::new());
        Results {
            title: String::new(),
            run_number: 1,
            start_epoch_ms: start,
            finish_epoch_ms: start + ms,
            duration_ms: ms,
            interrupted: false,
            stopped_by: None,
            cluster: false,
            rows: vec![row, totals],
            servers: Vec::new(),
            visibility: None,
            schedule: None,
            unanswered: None,
        }
    }

    #[test]
    fn tests_become_rows_of_one_block() {
        let mut c = Collected::default();
        assert!(c.combined().is_none());
        c.push(test_results("SET", &[100, 200], 1000, 500));
        c.push(test_results("GET", &[50], 1600, 250));
        c.push(test_results("SET", &[300], 2000, 500));
        let block = c.combined().unwrap();
        let names: Vec<&str> = block.rows.iter().map(|r| r.name.row.as_str()).collect();
        assert_eq!(names, ["SET", "GET", "Totals"]);
        assert_eq!(block.rows[0].count, 3);
        assert_eq!(block.rows[0].histogram.len(), 3);
        assert_eq!(block.rows[2].count, 4);
        assert!((block.rows[2].ops_per_sec - 4.0 / 1.25).abs() < 1e-9);
        assert!((block.rows[2].avg_latency_ms - 0.1625).abs() < 1e-9);
        assert!((block.rows[0].kb_tx_per_sec - 90.0 / 1024.0).abs() < 1e-9);
        assert_eq!((block.start_epoch_ms, block.finish_epoch_ms), (1000, 2500));
        assert_eq!(block.unanswered, None);
    }

    #[test]
    fn the_tests_unanswered_requests_add_up_in_the_block() {
        use crate::results::Unanswered;
        let mut c = Collected::default();
        let mut set = test_results("SET", &[100], 1000, 500);
        set.unanswered = Some(Unanswered {
            requests: 2,
            oldest_age_us: 40,
            rate_flag: "--rps",
        });
        c.push(set);
        c.push(test_results("PING", &[100], 1500, 500));
        let mut get = test_results("GET", &[100], 2000, 3000);
        get.unanswered = Some(Unanswered {
            requests: 50,
            oldest_age_us: 2_500_000,
            rate_flag: "--rps",
        });
        c.push(get);
        let block = c.combined().unwrap();
        assert_eq!(
            block.unanswered,
            Some(Unanswered {
                requests: 52,
                oldest_age_us: 2_500_000,
                rate_flag: "--rps",
            })
        );
        assert!(
            block
                .unanswered_warning()
                .is_some_and(|w| w.starts_with("52 requests were still unanswered")
                    && w.ends_with("(--rps measures stalls)")),
            "{block:?}"
        );
    }
}
