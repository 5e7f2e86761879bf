//! Runs the benchmark: spawns workers, gathers their per-second stats, stops on time,
//! request count, failure or Ctrl-C, and turns the merged stats into [`Results`].

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mio::{Poll, Waker};

use crate::engine::cluster::{self, Topology};
use crate::engine::gather::Gatherer;
use crate::engine::generator::client_seed;
use crate::engine::observer::{RunEnd, RunObserver, RunStart};
use crate::engine::resolver::Resolver;
use crate::engine::verify::VerifyJob;
use crate::engine::worker::{ClientPlan, WAKE_TOKEN, Worker};
use crate::error::Error;
use crate::plan::{Plan, StopAt};
use crate::results::Results;
use crate::signals;
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

/// Runs `plan.load.run_count` benchmark runs, stopping early on a fatal error or a signal,
/// then the `--data-verify` pass if asked for. `observer` hears each run's progress.
pub fn run(plan: &Arc<Plan>, observer: &mut dyn RunObserver) -> Outcome {
    signals::install();
    let mut outcome = Outcome {
        runs: Vec::new(),
        verification: None,
        error: None,
        signal: None,
    };
    let verifier = plan.workload.dataset.verifier.clone();
    let written = match (&verifier, plan.workload.dataset.verify_only) {
        (Some(v), false) => match v.new_written_keys() {
            Some(keys) => Some(Arc::new(keys)),
            None => {
                // The front end checks the key range fits; a plan that slipped past says so.
                outcome.error = Some(Error::usage(format!(
                    "data verification cannot track {} keys",
                    v.index_count()
                )));
                return outcome;
            }
        },
        _ => None,
    };
    let topology = if plan.server.cluster_mode {
        match cluster::discover(plan) {
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
    // Names a MOVED or a refreshed slot map brings are looked up off the event loops;
    // the masters found now are known already.
    let resolver = topology
        .as_ref()
        .map(|t| Resolver::start(t.nodes.iter().map(|n| (n.host.clone(), n.port, n.addr))));
    let cluster = Cluster {
        topology: topology.clone(),
        resolver,
    };
    if !plan.workload.dataset.verify_only {
        for run_number in 1..=plan.load.run_count {
            let (results, mut error) = run_once(
                plan,
                run_number,
                Pass::Benchmark(written.clone()),
                &cluster,
                observer,
            );
            let answered = results.rows.iter().any(|row| row.count > 0);
            if error.is_none() && !answered && signals::received().is_none() {
                // A stalled server must not look like a successful (if slow) benchmark.
                error = Some(format!(
                    "no reply from {} during the run: the server accepted connections but answered nothing",
                    plan.server.endpoint.name()
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
        let job = Arc::new(VerifyJob::new(verifier, indices));
        let (_, error) = run_once(
            &Arc::new(plan.verification_plan()),
            1,
            Pass::Verify(Arc::clone(&job)),
            &cluster,
            observer,
        );
        outcome.signal = signals::received();
        outcome.error = error.map(Error::run);
        outcome.verification = Some(job.report());
    }
    outcome
}

/// The cluster's masters, slot map and name resolver (cluster mode only).
struct Cluster {
    topology: Option<Arc<Topology>>,
    resolver: Option<Resolver>,
}

/// What a run is for.
enum Pass {
    /// A benchmark run; SETs mark their keys when a verification follows.
    Benchmark(Option<Arc<WrittenKeys>>),
    /// The `--data-verify` read-back.
    Verify(Arc<VerifyJob>),
}

fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// When a run's clients connect and when its clock starts.
struct Start {
    connect_from: Instant,
    /// The run's clock: its seconds, deadline and duration count from here.
    run_start: Instant,
    start_epoch_ms: u64,
}

/// At once, or with a start time: connect now, start the clock (and sending) at that
/// time. A time already past (connecting to a cluster took longer) starts at once, with
/// a warning, rather than pretend to have started on time.
fn start(at: Option<SystemTime>) -> Start {
    let (now, wall) = (Instant::now(), SystemTime::now());
    let at_once = Start {
        connect_from: now,
        run_start: now,
        start_epoch_ms: epoch_ms(wall),
    };
    let Some(at) = at else {
        return at_once;
    };
    match at.duration_since(wall) {
        Ok(ahead) => Start {
            connect_from: now,
            run_start: now + ahead,
            start_epoch_ms: epoch_ms(at),
        },
        Err(late) => {
            eprintln!(
                "warning: the start time passed {} ms before the run could begin: starting now",
                late.duration().as_millis()
            );
            at_once
        }
    }
}

/// Each client's share of the requests: `-n` each, or one pass over the keys in all
/// (over every shard's clients, when the workload is split).
fn client_requests(plan: &Plan, client_index: usize) -> Option<u64> {
    match plan.load.stop {
        StopAt::RequestsPerClient(n) => Some(n),
        StopAt::AllKeys => {
            let (index, count) = plan.client_of_all_shards(client_index);
            Some(partition(plan.workload.keys.min, plan.key_range(), index, count).1)
        }
        StopAt::Time(_) => None,
    }
}

/// One run (a benchmark run, or the verification pass): its results and first error.
fn run_once(
    plan: &Arc<Plan>,
    run_number: u32,
    pass: Pass,
    cluster: &Cluster,
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
    let max_value = ValueSizer::new(&plan.workload.data_size, &plan.workload.keys).max_size();
    let values = Arc::new(ValuePool::new(
        max_value,
        plan.workload.random_data,
        run_seed,
    ));
    let (tx, rx) = crossbeam_channel::unbounded();
    let stop = Arc::new(AtomicBool::new(false));

    let names = plan.row_names();
    let start_at = plan.load.start_at.filter(|_| run_number == 1 && !verifying);
    let Start {
        connect_from,
        run_start,
        start_epoch_ms,
    } = start(start_at);
    let deadline = match plan.load.stop {
        StopAt::Time(limit) => Some(run_start + limit),
        _ => None,
    };
    let mut wakers = Vec::with_capacity(plan.load.threads);
    let mut handles = Vec::with_capacity(plan.load.threads);
    let mut spawn_error = None;
    for thread in 0..plan.load.threads {
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
        let clients = (0..plan.load.clients)
            .map(|c| {
                let index = thread * plan.load.clients + c;
                ClientPlan {
                    index,
                    requests: client_requests(plan, index),
                    seed: client_seed(plan, index, run_seed),
                }
            })
            .collect();
        let worker = Worker {
            thread,
            poll,
            plan: Arc::clone(plan),
            values: Arc::clone(&values),
            clients,
            connect_from,
            run_start,
            deadline,
            stop: Arc::clone(&stop),
            tx: tx.clone(),
            topology: cluster.topology.clone(),
            resolver: cluster.resolver.clone(),
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
        plan,
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
            threads: plan.load.threads,
            clients_per_thread: plan.load.clients,
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
