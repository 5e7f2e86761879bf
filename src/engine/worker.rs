//! One worker thread: a `mio::Poll` driving many clients, with its own stats, clock ticks
//! and client timers.
//!
//! The worker records into per-second stats and, at each second boundary of the run's
//! clock, sends them to the runner as a [`WorkerMsg::Snapshot`]. The poll timeout is the
//! time to the next boundary, the run's deadline or the earliest client timer (start,
//! pacing, back-off, connect timeout), whichever comes first: no timer thread is needed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use mio::{Events, Poll, Token};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::engine::client::{Client, ClientContext, Status, split_token};
use crate::engine::cluster::Topology;
use crate::engine::error_log::ErrorLog;
use crate::engine::generator::OpGenerator;
use crate::engine::resolver::Resolver;
use crate::engine::verify::VerifyJob;
use crate::plan::Plan;
use crate::stats::{ClientSeries, OpStats};
use crate::workload::values::ValuePool;
use crate::workload::verify::WrittenKeys;

/// The token of the runner's waker; client tokens are their index.
pub const WAKE_TOKEN: Token = Token(usize::MAX);

/// What a worker tells the runner.
pub enum WorkerMsg {
    /// Stats of second `second` of the run (0-based) for this thread, and how many of its
    /// connections were up at the end of that second.
    Snapshot {
        thread: usize,
        second: u32,
        stats: Vec<OpStats>,
        connected: u32,
    },
    /// A client failed for good; the run cannot be trusted any more.
    Failed { thread: usize, message: String },
    /// Per-client figures for `--client-stats`: (client index in the thread, series).
    ClientSeries {
        thread: usize,
        series: Vec<(usize, ClientSeries)>,
    },
    /// The thread is done: the stats of its last (partial) second, and when it ended.
    Finished {
        thread: usize,
        at: Instant,
        second: u32,
        stats: Vec<OpStats>,
    },
}

/// One client a worker is to run.
#[derive(Clone, Copy, Debug)]
pub struct ClientPlan {
    /// Index over all threads' clients.
    pub index: usize,
    /// Requests to send, `None` when the run is time-bound.
    pub requests: Option<u64>,
    pub seed: u64,
}

/// Everything a worker thread owns.
pub struct Worker {
    pub thread: usize,
    pub poll: Poll,
    pub plan: Arc<Plan>,
    pub values: Arc<ValuePool>,
    pub clients: Vec<ClientPlan>,
    /// When the first clients start connecting: `run_start`, or earlier with a start
    /// time (they connect, then hold their requests until `run_start`).
    pub connect_from: Instant,
    /// The run's clock: seconds, deadline and ramp-up steps count from here.
    pub run_start: Instant,
    pub deadline: Option<Instant>,
    pub stop: Arc<AtomicBool>,
    pub tx: Sender<WorkerMsg>,
    /// Number of stats rows (built-in SET/GET/WAIT, or one per `--command` row).
    pub rows: usize,
    /// Keys written, for `--data-verify`.
    pub written: Option<Arc<WrittenKeys>>,
    /// Set when this run is the verification pass.
    pub verify: Option<Arc<VerifyJob>>,
    /// The cluster's masters and slot map, in cluster mode.
    pub topology: Option<Arc<Topology>>,
    /// Node names looked up off the event loop, in cluster mode.
    pub resolver: Option<Resolver>,
}

/// Client slots plus the timers they asked for.
struct Slots {
    clients: Vec<Option<Client>>,
    /// `--client-stats` figures of clients already retired.
    series: Vec<(usize, ClientSeries)>,
    /// The timer each slot has armed, so stale heap entries can be skipped.
    armed: Vec<Option<Instant>>,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Scratch list of timers due in one pass.
    due: Vec<(Instant, usize)>,
    active: usize,
}

impl Slots {
    /// Re-arms `slot`'s timer if the client now wants a different one.
    fn arm(&mut self, slot: usize) {
        let want = self.clients[slot].as_ref().and_then(Client::next_timer);
        if want != self.armed[slot] {
            if let Some(at) = want {
                self.timers.push(Reverse((at, slot)));
            }
            self.armed[slot] = want;
        }
    }

    fn next_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    fn connected(&self) -> u32 {
        self.clients
            .iter()
            .flatten()
            .filter(|c| c.is_connected())
            .count() as u32
    }
}

impl Worker {
    /// Runs the thread's clients to completion, deadline or stop; always ends with `Finished`.
    pub fn run(mut self) {
        let mut stats: Vec<OpStats> = (0..self.rows).map(|_| OpStats::new()).collect();
        let mut second: u32 = 0;
        let mut connected = 0;
        if let Err(message) = self.drive(&mut stats, &mut second, &mut connected) {
            let _ = self.tx.send(WorkerMsg::Failed {
                thread: self.thread,
                message,
            });
        }
        let _ = self.tx.send(WorkerMsg::Finished {
            thread: self.thread,
            at: Instant::now(),
            second,
            stats,
        });
    }

    /// When each client of this thread starts connecting: ramp-up steps plus start
    /// jitter; clients of the first step connect from `connect_from`.
    fn start_times(&self) -> Vec<Instant> {
        let shape = &self.plan.load.shape;
        let mut rng = SmallRng::seed_from_u64(self.thread as u64 ^ 0x5eed);
        let mut jitter = Duration::ZERO;
        (0..self.clients.len())
            .map(|i| {
                if i > 0 && shape.conn_jitter_us.1 > 0 {
                    let (lo, hi) = shape.conn_jitter_us;
                    jitter += Duration::from_micros(rng.random_range(lo..=hi));
                }
                match shape.ramp {
                    Some(ramp) if i >= ramp.start => {
                        let steps = (i - ramp.start) / ramp.step + 1;
                        self.run_start + jitter + ramp.step_duration * steps as u32
                    }
                    _ => self.connect_from + jitter,
                }
            })
            .collect()
    }

    /// Builds the clients, runs the event loop, then closes every connection and hands
    /// the runner the `--client-stats` figures, however the loop ended.
    fn drive(
        &mut self,
        stats: &mut [OpStats],
        second: &mut u32,
        connected: &mut u32,
    ) -> Result<(), String> {
        let mut slots = self.make_clients()?;
        let result = self.event_loop(&mut slots, stats, second, connected);
        self.finish(&mut slots, connected);
        if !slots.series.is_empty() {
            let _ = self.tx.send(WorkerMsg::ClientSeries {
                thread: self.thread,
                series: std::mem::take(&mut slots.series),
            });
        }
        result
    }

    fn event_loop(
        &mut self,
        slots: &mut Slots,
        stats: &mut [OpStats],
        second: &mut u32,
        connected: &mut u32,
    ) -> Result<(), String> {
        let mut events = Events::with_capacity(1024);
        let mut errors = ErrorLog::default();
        let mut next_tick = self.run_start + Duration::from_secs(1);
        loop {
            let now = Instant::now();
            let mut ticked = false;
            while now >= next_tick {
                *connected = slots.connected();
                self.send_snapshot(stats, *second, *connected);
                *second += 1;
                next_tick += Duration::from_secs(1);
                ticked = true;
            }
            if ticked {
                self.check_stalls(now, *second, slots, stats, &mut errors)?;
            }
            if slots.active == 0 || self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if self.deadline.is_some_and(|d| now >= d) {
                return Ok(());
            }
            self.fire_timers(now, *second, slots, stats, &mut errors)?;
            let mut wake_at = next_tick;
            if let Some(deadline) = self.deadline {
                wake_at = wake_at.min(deadline);
            }
            if let Some(timer) = slots.next_timer() {
                wake_at = wake_at.min(timer);
            }
            let timeout = wake_at.saturating_duration_since(Instant::now());
            if let Err(err) = self.poll.poll(&mut events, Some(timeout)) {
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("event loop failed: {err}"));
            }
            for event in events.iter() {
                if event.token() == WAKE_TOKEN {
                    continue;
                }
                let (slot, conn) = split_token(event.token());
                let Some(client) = slots.clients.get_mut(slot).and_then(Option::as_mut) else {
                    continue;
                };
                let mut ctx = self.context(stats, &mut errors, *second);
                let status = client.handle_event(conn, event, &self.plan, &mut ctx);
                self.settle(slots, slot, status)?;
            }
        }
    }

    /// What a client may touch while it handles one event or timer.
    fn context<'a>(
        &'a self,
        stats: &'a mut [OpStats],
        errors: &'a mut ErrorLog,
        second: u32,
    ) -> ClientContext<'a> {
        ClientContext {
            stats,
            values: &self.values,
            errors,
            registry: self.poll.registry(),
            written: self.written.as_deref(),
            verify: self.verify.as_deref(),
            resolver: self.resolver.as_ref(),
            second,
        }
    }

    /// Once a second: fails connections whose server stopped answering.
    fn check_stalls(
        &self,
        now: Instant,
        second: u32,
        slots: &mut Slots,
        stats: &mut [OpStats],
        errors: &mut ErrorLog,
    ) -> Result<(), String> {
        for slot in 0..slots.clients.len() {
            let Some(client) = slots.clients[slot].as_mut() else {
                continue;
            };
            let mut ctx = self.context(stats, errors, second);
            let status = client.check_stalled(now, &self.plan, &mut ctx);
            self.settle(slots, slot, status)?;
        }
        Ok(())
    }

    /// Calls every client whose timer is due.
    fn fire_timers(
        &self,
        now: Instant,
        second: u32,
        slots: &mut Slots,
        stats: &mut [OpStats],
        errors: &mut ErrorLog,
    ) -> Result<(), String> {
        // Timers re-armed while firing wait for the next pass, so a client that asks
        // for "now" again cannot trap the worker here.
        let mut due = std::mem::take(&mut slots.due);
        while let Some(&Reverse((at, slot))) = slots.timers.peek() {
            if at > now {
                break;
            }
            slots.timers.pop();
            due.push((at, slot));
        }
        for &(at, slot) in &due {
            if slots.armed[slot] != Some(at) {
                continue; // superseded by a newer timer of the same client
            }
            slots.armed[slot] = None;
            let Some(client) = slots.clients[slot].as_mut() else {
                continue;
            };
            let mut ctx = self.context(stats, errors, second);
            let status = client.on_timer(now, &self.plan, &mut ctx);
            if let Err(message) = self.settle(slots, slot, status) {
                due.clear();
                slots.due = due;
                return Err(message);
            }
        }
        due.clear();
        // Kept for the next pass: no allocation per timer once warmed up.
        slots.due = due;
        Ok(())
    }

    /// Applies a client's status: re-arm its timer, retire it, or fail the thread.
    fn settle(&self, slots: &mut Slots, slot: usize, status: Status) -> Result<(), String> {
        match status {
            Status::Active => {
                slots.arm(slot);
                Ok(())
            }
            Status::Finished => {
                if let Some(mut client) = slots.clients[slot].take() {
                    client.close(self.poll.registry());
                    if let Some(series) = client.take_series() {
                        slots.series.push((slot, series));
                    }
                }
                slots.armed[slot] = None;
                slots.active -= 1;
                Ok(())
            }
            Status::Failed(message) => {
                if let Some(mut client) = slots.clients[slot].take() {
                    client.close(self.poll.registry());
                    if let Some(series) = client.take_series() {
                        slots.series.push((slot, series));
                    }
                }
                Err(message)
            }
        }
    }

    /// Closes every connection at the end of the run.
    fn finish(&self, slots: &mut Slots, connected: &mut u32) {
        *connected = slots.connected();
        for (slot, client) in slots.clients.iter_mut().enumerate() {
            if let Some(client) = client.as_mut() {
                client.close(self.poll.registry());
                if let Some(series) = client.take_series() {
                    slots.series.push((slot, series));
                }
            }
        }
    }

    /// Builds every client, each armed to start at its start time.
    fn make_clients(&self) -> Result<Slots, String> {
        let starts = self.start_times();
        let mut slots = Slots {
            clients: Vec::with_capacity(self.clients.len()),
            series: Vec::new(),
            armed: vec![None; self.clients.len()],
            timers: BinaryHeap::with_capacity(self.clients.len() * 2),
            due: Vec::with_capacity(self.clients.len()),
            active: self.clients.len(),
        };
        for (slot, plan) in self.clients.iter().enumerate() {
            let ops = OpGenerator::new(&self.plan, plan.index, plan.seed)?;
            let mut client = Client::new(
                slot,
                ops,
                plan.requests,
                starts[slot],
                &self.plan,
                self.topology.as_deref(),
            );
            if self.connect_from < self.run_start {
                client.hold_until(self.run_start);
            }
            slots.clients.push(Some(client));
            slots.arm(slot);
        }
        Ok(slots)
    }

    /// Hands the current second's stats to the runner and starts a fresh second.
    fn send_snapshot(&self, stats: &mut [OpStats], second: u32, connected: u32) {
        let snapshot = stats.to_vec();
        for row in stats.iter_mut() {
            row.reset();
        }
        let _ = self.tx.send(WorkerMsg::Snapshot {
            thread: self.thread,
            second,
            stats: snapshot,
            connected,
        });
    }
}
