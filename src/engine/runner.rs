//! Runs the benchmark: spawns workers, gathers their per-second stats, stops on time,
//! request count, failure or Ctrl-C, and turns the merged stats into [`Results`].

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::thread;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mio::{Poll, Waker};

use crate::config::{Config, StopAt};
use crate::engine::client::{VerifyJob, peer_name};
use crate::engine::cluster::{self, Topology};
use crate::engine::gather::Gatherer;
use crate::engine::generator::client_seed;
use crate::engine::observer::{RunEnd, RunObserver, RunStart};
use crate::engine::worker::{ClientPlan, WAKE_TOKEN, Worker};
use crate::error::Error;
use crate::results::Results;
use crate::shape::LoadShape;
use crate::signals;
use crate::stats::RowName;
use crate::workload::keys::partition;
use crate::workload::values::{ValuePool, ValueSizer};
use crate::workload::verify::{VerifyReport, WrittenKeys};

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
/// then the `--data-verify` pass if asked for. `observer` hears each run's progress.
pub fn run(config: &Arc<Config>, observer: &mut dyn RunObserver) -> Outcome {
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
                observer,
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
            observer,
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

/// One run (a benchmark run, or the verification pass): its results and first error.
fn run_once(
    config: &Arc<Config>,
    run_number: u32,
    pass: Pass,
    topology: &Option<Arc<Topology>>,
    observer: &mut dyn RunObserver,
) -> (Results, Option<String>) {
    let verifying = matches!(pass, Pass::Verify(_));
    let (written, verify) = match pass {
        Pass::Benchmark(written) => (written, None),
        Pass::Verify(job) => (None, Some(job)),
    };
    if !verifying {
        observer.run_starting(run_number);
    }
    let run_seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let max_value = ValueSizer::new(&config.data_size, &config.keys).max_size();
    let values = Arc::new(ValuePool::new(max_value, config.random_data, run_seed));
    let (tx, rx) = crossbeam_channel::unbounded();
    let stop = Arc::new(AtomicBool::new(false));

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
        !verifying,
    );
    if !verifying {
        let start = RunStart {
            run: run_number,
            threads: config.threads,
            clients_per_thread: config.clients,
        };
        if let Err(err) = observer.run_started(&start) {
            spawn_error = spawn_error.or(Some(err));
        }
    }
    let mut first_error = gather
        .collect(&rx, &stop, &wakers, observer)
        .or(spawn_error);
    for (thread, handle) in handles.into_iter().enumerate() {
        if handle.join().is_err() && first_error.is_none() {
            // A bug, not a server problem: say so rather than report partial figures as a
            // success.
            first_error = Some(format!(
                "internal error: worker thread {thread} stopped unexpectedly; its figures are missing"
            ));
        }
    }
    if !verifying {
        let mut client_series = std::mem::take(&mut gather.client_series);
        client_series.sort_by_key(|(thread, client, _)| (*thread, *client));
        let mut end = RunEnd {
            run: run_number,
            client_series,
        };
        if let Err(err) = observer.run_finished(&mut end) {
            first_error = first_error.or(Some(err));
        }
    }
    (gather.finish(), first_error)
}
