//! Runs the benchmark: spawns workers, gathers their per-second stats, stops on time,
//! request count, failure or Ctrl-C, and turns the merged stats into [`Results`].

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use mio::{Poll, Waker};

use crate::client::{VerifyJob, peer_name};
use crate::cluster::{self, Topology};
use crate::config::{Config, StopAt};
use crate::error::Error;
use crate::report::client_stats;
use crate::report::progress::{Progress, progress_line};
use crate::report::statsd::{LiveMetrics, StatsdSink};
use crate::results::latency_at_percentile_ms;
use crate::results::{IntervalSummary, Results, Row, build_row, summarize_interval};
use crate::shape::LoadShape;
use crate::signals;
use crate::stats::{ClientSeries, OpStats, RowName};
use crate::worker::{ClientPlan, WAKE_TOKEN, Worker, WorkerMsg};
use crate::workload::generator::client_seed;
use crate::workload::keys::partition;
use crate::workload::values::{ValuePool, ValueSizer};
use crate::workload::verify::{VerifyReport, WrittenKeys};

/// How often the runner checks for Ctrl-C while waiting for workers.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// What a whole invocation produced: the runs that completed (or were cut short) and why
/// it stopped early, if it did.
pub struct Outcome {
    pub runs: Vec<Results>,
    /// The `--data-verify` check, when one ran.
    pub verification: Option<VerifyReport>,
    /// The first fatal error (unreachable server, connection lost, garbage replies).
    pub error: Option<Error>,
    /// The stop signal (SIGINT/SIGTERM) that interrupted the run, if any.
    pub signal: Option<i32>,
}

/// Runs `config.run_count` benchmark runs, stopping early on a fatal error or a signal,
/// then the `--data-verify` pass if asked for.
pub fn run(config: &Arc<Config>) -> Outcome {
    signals::install();
    let mut outcome = Outcome {
        runs: Vec::new(),
        verification: None,
        error: None,
        signal: None,
    };
    let verifier = config.dataset.verifier.clone();
    let written = match (&verifier, config.dataset.verify_only) {
        (Some(v), false) => match v.new_written_keys() {
            Ok(keys) => Some(Arc::new(keys)),
            Err(message) => {
                outcome.error = Some(Error::usage(message));
                return outcome;
            }
        },
        _ => None,
    };
    let topology = if config.cluster_mode {
        match cluster::discover(config) {
            Ok(topology) => {
                eprintln!(
                    "cluster: {} masters: {}",
                    topology.nodes.len(),
                    topology
                        .nodes
                        .iter()
                        .map(|n| n.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                Some(Arc::new(topology))
            }
            Err(message) => {
                outcome.error = Some(Error::run(message));
                return outcome;
            }
        }
    } else {
        None
    };
    if !config.dataset.verify_only {
        for run_number in 1..=config.run_count {
            let (results, mut error) = run_once(
                config,
                run_number,
                Pass::Benchmark(written.clone()),
                &topology,
            );
            let answered = results.rows.iter().any(|row| row.count > 0);
            if error.is_none() && !answered && signals::received().is_none() {
                // A stalled server must not look like a successful (if slow) benchmark.
                error = Some(format!(
                    "no reply from {} during the run: the server accepted connections but answered nothing",
                    peer_name(&config.endpoint)
                ));
            }
            outcome.runs.push(results);
            outcome.signal = signals::received();
            if error.is_some() || outcome.signal.is_some() {
                outcome.error = error.map(Error::run);
                return outcome;
            }
        }
    }
    if let Some(verifier) = verifier {
        let indices: Vec<u64> = match &written {
            Some(keys) => keys.iter().collect(),
            None => verifier.indices().collect(),
        };
        let job = Arc::new(VerifyJob {
            verifier,
            indices,
            next: AtomicUsize::new(0),
            report: Mutex::new(VerifyReport::new()),
        });
        let mut verify_config = (**config).clone();
        // The check reads every key once, as fast as the server allows.
        verify_config.shape = LoadShape {
            data_offset: config.shape.data_offset,
            connection_timeout: config.shape.connection_timeout,
            reply_timeout: config.shape.reply_timeout,
            ..LoadShape::default()
        };
        verify_config.arbitrary = None;
        verify_config.stop = StopAt::RequestsPerClient(u64::MAX);
        let (_, error) = run_once(
            &Arc::new(verify_config),
            1,
            Pass::Verify(Arc::clone(&job)),
            &topology,
        );
        outcome.signal = signals::received();
        outcome.error = error.map(Error::run);
        let report = job.report.lock().unwrap_or_else(|e| e.into_inner()).clone();
        outcome.verification = Some(report);
    }
    outcome
}

/// What a run is for.
enum Pass {
    /// A benchmark run; SETs mark their keys when a verification follows.
    Benchmark(Option<Arc<WrittenKeys>>),
    /// The `--data-verify` read-back.
    Verify(Arc<VerifyJob>),
}

/// The rows a run reports, in table order: SET/GET/WAIT, or one per `--command` row.
pub fn row_names(config: &Config) -> Vec<RowName> {
    match &config.arbitrary {
        Some(arbitrary) => arbitrary.row_names(),
        None => RowName::builtin(),
    }
}

fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Each client's share of the requests: `-n` each, or one pass over the keys in all.
fn client_requests(config: &Config, client_index: usize) -> Option<u64> {
    match config.stop {
        StopAt::RequestsPerClient(n) => Some(n),
        StopAt::AllKeys => Some(
            partition(
                config.keys.min,
                config.key_range(),
                client_index,
                config.total_clients(),
            )
            .1,
        ),
        StopAt::Time(_) => None,
    }
}

fn run_once(
    config: &Arc<Config>,
    run_number: u32,
    pass: Pass,
    topology: &Option<Arc<Topology>>,
) -> (Results, Option<String>) {
    let verifying = matches!(pass, Pass::Verify(_));
    let (written, verify) = match pass {
        Pass::Benchmark(written) => (written, None),
        Pass::Verify(job) => (None, Some(job)),
    };
    if !verifying {
        eprintln!("[RUN #{run_number}] Preparing benchmark client...");
    }
    let run_seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let max_value = ValueSizer::new(&config.data_size, &config.keys).max_size();
    let values = Arc::new(ValuePool::new(max_value, config.random_data, run_seed));
    let (tx, rx) = crossbeam_channel::unbounded();
    let stop = Arc::new(AtomicBool::new(false));

    if !verifying {
        eprintln!("[RUN #{run_number}] Launching threads now...");
    }
    let names = row_names(config);
    let run_start = Instant::now();
    let start_epoch_ms = epoch_ms(SystemTime::now());
    let deadline = match config.stop {
        StopAt::Time(limit) => Some(run_start + limit),
        _ => None,
    };
    let mut wakers = Vec::with_capacity(config.threads);
    let mut handles = Vec::with_capacity(config.threads);
    let mut spawn_error = None;
    for thread in 0..config.threads {
        let poll = match Poll::new() {
            Ok(poll) => poll,
            Err(err) => {
                spawn_error = Some(format!("cannot create event loop: {err}"));
                break;
            }
        };
        match Waker::new(poll.registry(), WAKE_TOKEN) {
            Ok(waker) => wakers.push(waker),
            Err(err) => {
                spawn_error = Some(format!("cannot create event loop waker: {err}"));
                break;
            }
        }
        let clients = (0..config.clients)
            .map(|c| {
                let index = thread * config.clients + c;
                ClientPlan {
                    index,
                    requests: client_requests(config, index),
                    seed: client_seed(config, index, run_seed),
                }
            })
            .collect();
        let worker = Worker {
            thread,
            poll,
            config: Arc::clone(config),
            values: Arc::clone(&values),
            clients,
            run_start,
            deadline,
            stop: Arc::clone(&stop),
            tx: tx.clone(),
            topology: topology.clone(),
            rows: names.len(),
            written: written.clone(),
            verify: verify.clone(),
        };
        let spawned = thread::Builder::new()
            .name(format!("kvbench-worker-{thread}"))
            .spawn(move || worker.run());
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(err) => {
                spawn_error = Some(format!("cannot start worker thread: {err}"));
                break;
            }
        }
    }
    drop(tx);

    let mut gather = Gatherer::new(
        config,
        run_number,
        names,
        handles.len(),
        start_epoch_ms,
        run_start,
    );
    gather.quiet = verifying;
    if !verifying && let Some(cfg) = &config.output.statsd {
        match StatsdSink::new(cfg) {
            Ok(sink) => {
                sink.annotate_start(config.threads, config.clients, run_number);
                gather.statsd = Some(sink);
            }
            Err(err) => spawn_error = spawn_error.or(Some(err.to_string())),
        }
    }
    let first_error = gather.collect(&rx, &stop, &wakers).or(spawn_error);
    let mut first_error = first_error;
    for (thread, handle) in handles.into_iter().enumerate() {
        if handle.join().is_err() && first_error.is_none() {
            // A bug, not a server problem: say so rather than report partial figures as a
            // success.
            first_error = Some(format!(
                "internal error: worker thread {thread} stopped unexpectedly; its figures are missing"
            ));
        }
    }
    if let Some(sink) = gather.statsd.as_mut() {
        sink.finish(run_number);
    }
    if let Some(prefix) = &config.output.client_stats
        && !verifying
    {
        let mut series = std::mem::take(&mut gather.client_series);
        series.sort_by_key(|(thread, client, _)| (*thread, *client));
        if let Err(err) = client_stats::write_files(prefix, run_number, &series) {
            first_error = first_error.or(Some(err.to_string()));
        }
    }
    if !verifying {
        eprintln!();
    }
    (gather.finish(), first_error)
}

/// Merges worker snapshots second by second, prints progress, and builds the results.
struct Gatherer<'a> {
    config: &'a Config,
    run_number: u32,
    start_epoch_ms: u64,
    run_start: Instant,
    names: Vec<RowName>,
    /// Snapshots not yet complete for all threads, by second.
    pending: BTreeMap<u32, Vec<OpStats>>,
    /// Per thread: the next second it will report; `None` once it finished.
    next_second: Vec<Option<u32>>,
    /// Seconds already summarized.
    done_seconds: u32,
    totals: Vec<OpStats>,
    series: Vec<Vec<IntervalSummary>>,
    totals_series: Vec<IntervalSummary>,
    finish: Option<Instant>,
    interrupted: bool,
    /// No progress line (the verification pass).
    quiet: bool,
    /// `--client-stats`: (thread, client in thread, figures).
    client_series: Vec<(usize, usize, ClientSeries)>,
    /// `--statsd-host`: live metrics once a second.
    statsd: Option<StatsdSink>,
}

impl<'a> Gatherer<'a> {
    fn new(
        config: &'a Config,
        run_number: u32,
        names: Vec<RowName>,
        threads: usize,
        start_epoch_ms: u64,
        run_start: Instant,
    ) -> Self {
        Gatherer {
            config,
            run_number,
            start_epoch_ms,
            run_start,
            totals: (0..names.len()).map(|_| OpStats::new()).collect(),
            series: vec![Vec::new(); names.len()],
            names,
            pending: BTreeMap::new(),
            next_second: vec![Some(0); threads],
            done_seconds: 0,
            totals_series: Vec::new(),
            finish: None,
            interrupted: false,
            quiet: false,
            client_series: Vec::new(),
            statsd: None,
        }
    }

    /// Receives until every worker finished; returns the first failure message.
    fn collect(
        &mut self,
        rx: &Receiver<WorkerMsg>,
        stop: &AtomicBool,
        wakers: &[Waker],
    ) -> Option<String> {
        let mut first_error = None;
        let stop_all = |stop: &AtomicBool| {
            stop.store(true, Ordering::Relaxed);
            for waker in wakers {
                let _ = waker.wake();
            }
        };
        while self.next_second.iter().any(Option::is_some) {
            if signals::received().is_some() && !self.interrupted {
                self.interrupted = true;
                eprintln!(
                    "\n[RUN #{}] Interrupted by user (Ctrl+C) after {:.1} secs, stopping threads...",
                    self.run_number,
                    self.run_start.elapsed().as_secs_f64()
                );
                stop_all(stop);
            }
            match rx.recv_timeout(SIGNAL_POLL) {
                Ok(WorkerMsg::Snapshot {
                    thread,
                    second,
                    stats,
                    connected: _,
                }) => {
                    self.merge_snapshot(second, &stats);
                    if let Some(next) = self.next_second[thread].as_mut() {
                        *next = (*next).max(second + 1);
                    }
                    self.summarize_ready(false);
                }
                Ok(WorkerMsg::ClientSeries { thread, series }) => {
                    self.client_series
                        .extend(series.into_iter().map(|(client, s)| (thread, client, s)));
                }
                Ok(WorkerMsg::Failed { message, .. }) => {
                    if first_error.is_none() {
                        first_error = Some(message);
                        stop_all(stop);
                    }
                }
                Ok(WorkerMsg::Finished {
                    thread,
                    at,
                    second,
                    stats,
                }) => {
                    self.merge_snapshot(second, &stats);
                    self.next_second[thread] = None;
                    self.finish = Some(self.finish.map_or(at, |f| f.max(at)));
                    self.summarize_ready(false);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.summarize_ready(true);
        first_error
    }

    /// Adds one thread's stats of `second` to what is pending for that second.
    fn merge_snapshot(&mut self, second: u32, stats: &[OpStats]) {
        let merged = self
            .pending
            .entry(second)
            .or_insert_with(|| stats.iter().map(|_| OpStats::new()).collect());
        for (into, from) in merged.iter_mut().zip(stats) {
            into.merge(from);
        }
    }

    /// Summarizes every second that all running threads have reported.
    fn summarize_ready(&mut self, all: bool) {
        let limit = if all {
            self.pending
                .keys()
                .next_back()
                .map_or(self.done_seconds, |s| s + 1)
        } else {
            match self.next_second.iter().flatten().min() {
                Some(&limit) => limit,
                None => self
                    .pending
                    .keys()
                    .next_back()
                    .map_or(self.done_seconds, |s| s + 1),
            }
        };
        while self.done_seconds < limit {
            let second = self.done_seconds;
            let stats = self
                .pending
                .remove(&second)
                .unwrap_or_else(|| self.names.iter().map(|_| OpStats::new()).collect());
            if self.is_empty_tail(second, &stats) {
                // The run ended on a second boundary: the "second" after it has no time
                // and no requests, and is no interval at all.
                self.done_seconds += 1;
                continue;
            }
            self.add_second(second, &stats);
            self.done_seconds += 1;
        }
    }

    /// Whether `second` starts at or after the end of a finished run and saw nothing.
    fn is_empty_tail(&self, second: u32, stats: &[OpStats]) -> bool {
        let all_done = self.next_second.iter().all(Option::is_none);
        let ended_by = self
            .finish
            .map(|f| f.saturating_duration_since(self.run_start));
        all_done
            && second > 0
            && stats
                .iter()
                .all(|s| s.count == 0 && s.connection_errors == 0)
            && ended_by.is_some_and(|d| d.as_millis() <= u128::from(second) * 1000 + 1)
    }

    fn add_second(&mut self, second: u32, stats: &[OpStats]) {
        let start = self.start_epoch_ms + u64::from(second) * 1000;
        let end = match self.finish {
            Some(finish) if self.next_second.iter().all(Option::is_none) => {
                let finish_ms = self.start_epoch_ms
                    + finish.saturating_duration_since(self.run_start).as_millis() as u64;
                finish_ms.clamp(start, start + 1000)
            }
            _ => start + 1000,
        };
        let percentiles = &self.config.output.print_percentiles;
        let mut second_total = OpStats::new();
        for (row, row_stats) in stats.iter().enumerate() {
            self.series[row].push(summarize_interval(row_stats, start, end, percentiles));
            self.totals[row].merge(row_stats);
            second_total.merge(row_stats);
        }
        self.totals_series
            .push(summarize_interval(&second_total, start, end, percentiles));
        self.print_progress(&second_total);
    }

    /// The live line on stderr, once per summarized second.
    fn print_progress(&mut self, last_second: &OpStats) {
        if self.quiet {
            return;
        }
        let mut all = OpStats::new();
        for row in &self.totals {
            all.merge(row);
        }
        let elapsed = self.run_start.elapsed();
        let elapsed_secs = elapsed.as_secs_f64().max(1e-9);
        let percent = match self.config.stop {
            StopAt::Time(limit) => elapsed.as_secs_f64() / limit.as_secs_f64().max(1e-9) * 100.0,
            StopAt::RequestsPerClient(n) => {
                all.count as f64 / (n as f64 * self.config.total_clients() as f64) * 100.0
            }
            StopAt::AllKeys => all.count as f64 / self.config.key_range() as f64 * 100.0,
        };
        let progress = Progress {
            run_number: self.run_number,
            percent: percent.clamp(0.0, 100.0),
            elapsed_secs: elapsed.as_secs(),
            threads: self.next_second.iter().filter(|n| n.is_some()).count(),
            connections: self.config.total_clients(),
            ops: all.count,
            ops_per_sec: last_second.count as f64,
            avg_ops_per_sec: all.count as f64 / elapsed_secs,
            bytes_per_sec: (last_second.bytes_rx + last_second.bytes_tx) as f64,
            avg_bytes_per_sec: (all.bytes_rx + all.bytes_tx) as f64 / elapsed_secs,
            latency_ms: last_second.avg_latency_ms(),
            avg_latency_ms: all.avg_latency_ms(),
        };
        let line = progress_line(&progress);
        if let Some(sink) = self.statsd.as_mut() {
            let mut metrics = LiveMetrics::from_progress(&progress);
            if last_second.count > 0 {
                metrics.percentiles = self
                    .config
                    .output
                    .print_percentiles
                    .iter()
                    .map(|&p| (p, latency_at_percentile_ms(&last_second.latency, p)))
                    .collect();
            }
            metrics.connection_errors = all.connection_errors;
            sink.publish(&metrics);
        }
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "{line}\r");
        let _ = stderr.flush();
    }

    /// The run's results: one row per command, then Totals.
    fn finish(self) -> Results {
        let finish = self.finish.unwrap_or_else(Instant::now);
        let duration = finish.saturating_duration_since(self.run_start);
        let mut all = OpStats::new();
        let mut result_rows: Vec<Row> = Vec::with_capacity(self.names.len() + 1);
        let any_hits = self.names.iter().any(|n| n.has_hits);
        for ((name, stats), series) in self.names.into_iter().zip(&self.totals).zip(self.series) {
            all.merge(stats);
            result_rows.push(build_row(name, stats, duration, series));
        }
        // Arbitrary commands have no hits or misses, so neither has their total.
        let totals = RowName::totals(any_hits);
        result_rows.push(build_row(totals, &all, duration, self.totals_series));
        let title = if self.config.run_count > 1 {
            format!("RUN #{} RESULTS", self.run_number)
        } else {
            "ALL STATS".to_string()
        };
        Results {
            title,
            run_number: self.run_number,
            start_epoch_ms: self.start_epoch_ms,
            finish_epoch_ms: self.start_epoch_ms + duration.as_millis() as u64,
            duration_ms: duration.as_millis() as u64,
            interrupted: self.interrupted,
            cluster: self.config.cluster_mode,
            rows: result_rows,
        }
    }
}
