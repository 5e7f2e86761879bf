//! Runs the benchmark: spawns workers, gathers their per-second stats, stops on time,
//! request count, failure or Ctrl-C, and turns the merged stats into [`Results`]. A
//! rate sweep is a run per step, in rising order, stopped at the first step that breaks
//! the objective.
//!
//! What a run needs from the servers first (the cluster's masters and slot map) is
//! found by [`prepare`]; [`run`] prepares and runs, while a front end that runs several
//! plans against the same servers (one test after another) prepares once and calls
//! [`run_prepared`] for each.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mio::{Poll, Waker};

use crate::engine::budget::RequestBudget;
use crate::engine::cluster::{self, Node, Topology};
use crate::engine::connection;
use crate::engine::error_reply::FirstErrorReply;
use crate::engine::gather::Gatherer;
use crate::engine::generator::client_seed;
use crate::engine::observer::{RunEnd, RunObserver, RunStart, StopSwitch};
use crate::engine::progress::WorkerProgress;
use crate::engine::resolver::Resolver;
use crate::engine::verify::VerifyJob;
use crate::engine::worker::{ClientPlan, WAKE_TOKEN, Worker};
use crate::error::Error;
use crate::plan::{Plan, StopAt};
use crate::results::{Results, SweepReport};
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
    /// A rate sweep's curve (`runs` then holds one run per step that ran).
    pub sweep: Option<SweepReport>,
    /// With [`crate::plan::ErrorReplies::Stop`]: the error reply that ended the run, as
    /// `(server, text)` (`error` then says the same in a sentence).
    pub error_reply: Option<(String, String)>,
}

impl Outcome {
    fn new() -> Outcome {
        Outcome {
            runs: Vec::new(),
            verification: None,
            error: None,
            signal: None,
            sweep: None,
            error_reply: None,
        }
    }
}

/// What runs need from the servers before they start, found once: in cluster mode the
/// masters and the slot map (and a resolver for the names a redirection brings).
pub struct Prepared {
    topology: Option<Arc<Topology>>,
    resolver: Option<Resolver>,
}

impl Prepared {
    /// The cluster's masters as discovered (empty outside cluster mode).
    pub fn masters(&self) -> &[Node] {
        self.topology.as_deref().map_or(&[], |t| &t.nodes)
    }

    /// Puts the masters in the order `order` gives (positions in
    /// [`masters`](Self::masters); those it leaves out follow): clients pinned one per
    /// master by their index (`ClusterRouting::OneMasterPerClient`) take them in this order.
    pub fn order_masters(&mut self, order: &[usize]) {
        if let Some(topology) = &self.topology {
            self.topology = Some(Arc::new(topology.reordered(order)));
        }
    }

    /// The hash slots each master serves, in [`masters`](Self::masters) order.
    pub fn slots_of(&self, master: usize) -> Vec<u16> {
        match &self.topology {
            Some(t) => (0..t.slot_owner.len())
                .filter(|&s| usize::from(t.slot_owner[s]) == master)
                .map(|s| s as u16)
                .collect(),
            None => Vec::new(),
        }
    }
}

/// Discovers what `plan`'s runs need from the servers: in cluster mode the masters and
/// slot map (`CLUSTER SLOTS` on the given node); nothing otherwise. `Err` is one line
/// (also a refill shape the plan's clients cannot keep).
pub fn prepare(plan: &Plan) -> Result<Prepared, String> {
    plan.check_refill()?;
    let topology = if plan.server.cluster_mode {
        Some(Arc::new(cluster::discover(plan)?))
    } else {
        None
    };
    // Names a MOVED or a refreshed slot map brings are looked up off the event loops;
    // the masters found now are known already.
    let resolver = topology.as_ref().map(|t| {
        Resolver::start(
            t.nodes.iter().map(|n| (n.host.clone(), n.port, n.addr)),
            plan.server.address_choice,
        )
    });
    Ok(Prepared { topology, resolver })
}

/// Runs `plan.load.run_count` benchmark runs, stopping early on a fatal error or a signal,
/// then the `--data-verify` pass if asked for. `observer` hears each run's progress.
pub fn run(plan: &Arc<Plan>, observer: &mut dyn RunObserver) -> Outcome {
    signals::install();
    let prepared = match prepare(plan) {
        Ok(prepared) => prepared,
        Err(message) => {
            let mut outcome = Outcome::new();
            // Ctrl-C during discovery ends it at once (its wait fails as "interrupted"):
            // that is an interrupted run with nothing measured, not a failed one.
            outcome.signal = signals::received();
            if outcome.signal.is_some() {
                outcome.runs.push(Results {
                    interrupted: true,
                    ..Results::empty(String::new(), None)
                });
            } else {
                outcome.error = Some(Error::run(message));
            }
            return outcome;
        }
    };
    if !prepared.masters().is_empty() {
        eprintln_safe!(
            "cluster: {} masters: {}",
            prepared.masters().len(),
            prepared
                .masters()
                .iter()
                .map(|n| n.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    run_prepared(plan, &prepared, observer)
}

/// [`run`] with what [`prepare`] found for a plan with the same server part: no
/// discovery, no cluster line on stderr.
pub fn run_prepared(
    plan: &Arc<Plan>,
    cluster: &Prepared,
    observer: &mut dyn RunObserver,
) -> Outcome {
    signals::install();
    let mut outcome = Outcome::new();
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
    // A sweep's steps are runs of plans of their own; otherwise `run_count` runs. Made
    // one at a time: `run_count` may be huge (a run stopped early by Ctrl-C).
    let steps: Box<dyn Iterator<Item = (Arc<Plan>, Option<u64>)>> = match plan.load.sweep {
        Some(sweep) => {
            outcome.sweep = Some(SweepReport::new(
                sweep.slo.map(|slo| (slo.percentile, slo.max_ms)),
                sweep.steps() as usize,
            ));
            Box::new(
                plan.sweep_rates()
                    .into_iter()
                    .enumerate()
                    .map(|(i, rate)| (Arc::new(plan.sweep_step(i, rate)), Some(rate))),
            )
        }
        None => Box::new((0..plan.load.run_count).map(|_| (Arc::clone(plan), None))),
    };
    let error_reply = Arc::new(FirstErrorReply::default());
    if !plan.workload.dataset.verify_only {
        for (run_number, (run_plan, step_rate)) in (1..).zip(steps) {
            let established_before = connection::established_count();
            let (results, mut error) = run_once(
                &run_plan,
                run_number,
                Pass::Benchmark(written.clone()),
                cluster,
                &error_reply,
                observer,
            );
            let answered = results.rows.iter().any(|row| row.count > 0);
            if error.is_none() && !answered && signals::received().is_none() {
                // A stalled server must not look like a successful (if slow) benchmark.
                let failed = results.totals().map_or(0, |t| t.connection_errors);
                let why = if failed > 0 {
                    // Refused or lost every time (--reconnect-on-error kept trying).
                    format!("its connections failed {failed} times (the reasons are above)")
                } else if connection::established_count() == established_before {
                    // A full listen backlog or a firewall dropping SYNs: the connects
                    // never completed, so nothing was accepted to answer.
                    "no connection was ever established (the connects were still pending)"
                        .to_string()
                } else {
                    "the server accepted connections but answered nothing".to_string()
                };
                error = Some(format!(
                    "no reply from {} during the run: {why}",
                    plan.server.endpoint.name()
                ));
            }
            let held = match (outcome.sweep.as_mut(), step_rate) {
                (Some(report), Some(rate)) => report.add(rate, &results),
                _ => true,
            };
            outcome.runs.push(results);
            outcome.signal = signals::received();
            if let (Some(report), Some(_)) = (outcome.sweep.as_mut(), outcome.signal) {
                report.interrupted = true;
            }
            outcome.error_reply = error_reply.get().cloned();
            if error.is_some() || outcome.signal.is_some() {
                outcome.error = error.map(Error::run);
                return outcome;
            }
            if !held {
                break;
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
            cluster,
            &error_reply,
            observer,
        );
        outcome.signal = signals::received();
        outcome.error = error.map(Error::run);
        let mut report = job.report();
        // The benchmark runs returned early on a signal: one seen now came during the pass.
        report.interrupted = outcome.signal.is_some();
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
            eprintln_safe!(
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
        // A shared budget is taken from as requests go out; an idle client sends none.
        StopAt::TotalRequests(_) | StopAt::Idle => Some(0),
        // Each client's stream says its share (the client asks it).
        StopAt::Stream(_) => None,
        StopAt::Time(_) => None,
    }
}

/// One run (a benchmark run, or the verification pass): its results and first error.
fn run_once(
    plan: &Arc<Plan>,
    run_number: u32,
    pass: Pass,
    cluster: &Prepared,
    error_reply: &Arc<FirstErrorReply>,
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
    // The run's clock (its seconds, its deadline, its duration) starts after the warm-up,
    // which starts when sending does (at the start time, if there is one).
    let measure_start = run_start + plan.load.warmup;
    let start_epoch_ms = start_epoch_ms + plan.load.warmup.as_millis() as u64;
    let deadline = match plan.load.stop {
        StopAt::Time(limit) => Some(measure_start + limit),
        _ => None,
    };
    let budget = match plan.load.stop {
        StopAt::TotalRequests(n) => Some(Arc::new(RequestBudget::new(n))),
        _ => None,
    };
    let progress: Vec<Arc<WorkerProgress>> = match plan.outputs.progress_every {
        Some(_) => (0..plan.load.threads)
            .map(|_| Arc::new(WorkerProgress::default()))
            .collect(),
        None => Vec::new(),
    };
    let mut wakers = Vec::with_capacity(plan.load.threads);
    let mut handles = Vec::with_capacity(plan.load.threads);
    let mut spawn_error = None;
    let stall_warned = Arc::new(AtomicBool::new(false));
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
        let first = plan.first_client_of_thread(thread);
        let clients = (0..plan.clients_on_thread(thread))
            .map(|c| {
                let index = first + c;
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
            measure_start,
            deadline,
            stop: Arc::clone(&stop),
            tx: tx.clone(),
            topology: cluster.topology.clone(),
            resolver: cluster.resolver.clone(),
            rows: names.len(),
            written: written.clone(),
            verify: verify.clone(),
            budget: budget.clone(),
            error_reply: Arc::clone(error_reply),
            progress: progress.get(thread).cloned(),
            stall_warned: Arc::clone(&stall_warned),
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
    let wakers = Arc::new(wakers);
    if let Some(budget) = &budget {
        budget.wake_when_spent(Arc::clone(&wakers));
    }
    let switch = StopSwitch {
        stop: Arc::clone(&stop),
        wakers,
    };

    let mut gather = Gatherer::new(
        plan,
        run_number,
        names,
        handles.len(),
        start_epoch_ms,
        measure_start,
        !verifying,
    );
    gather.watch_progress(progress);
    if !verifying {
        observer.stop_switch(&switch);
        let start = RunStart {
            run: run_number,
            threads: plan.load.threads,
            clients_per_thread: plan.load.clients,
            warmup: plan.load.warmup,
            target_rate: plan.target_rate(),
        };
        if let Err(err) = observer.run_started(&start) {
            spawn_error = spawn_error.or(Some(err));
        }
    }
    let mut first_error = gather
        .collect(&rx, &stop, &switch.wakers, observer)
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
