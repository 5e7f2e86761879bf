//! One worker thread: a `mio::Poll` driving many clients, with its own stats, clock ticks
//! and client timers.
//!
//! The worker records into per-second stats and, at each second boundary of the run's
//! clock, sends them to the runner as a [`WorkerMsg::Snapshot`]. The poll timeout is the
//! time to the next boundary, the run's deadline or the earliest client timer (start,
//! back-off, connect timeout), whichever comes first: no timer thread is needed.
//!
//! In open loop, send times need better than the poll timeout's milliseconds: the
//! earliest of the next due position (of the worker's share of a total rate) and the
//! client timers (a connection's own schedule) arms a `timerfd` in the same poll, at
//! that absolute time, and only when it differs from what is armed; the schedule's next
//! few positions are armed on further timers at the same time, so re-arming never moves
//! the machine's earliest timer (expensive on a virtual machine; see `engine::timer`).
//! A due position goes
//! to the next client in turn that has room; when none has, it waits (the schedule is
//! "blocked") and the first client a reply frees takes it, its latency still counted
//! from its intended time.
//!
//! With a warm-up, clients start at the run's start but the seconds, the stats and the
//! deadline count from the end of the warm-up; requests intended before it are recorded
//! where nothing reads them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use mio::event::Event;
use mio::{Events, Poll, Token};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::engine::budget::RequestBudget;
use crate::engine::busy_poll::poll_spinning;
use crate::engine::client::{Client, ClientContext, Status, compact_rows, split_token};
use crate::engine::clock::Stamp;
use crate::engine::cluster::Topology;
use crate::engine::error_log::ErrorLog;
use crate::engine::error_reply::FirstErrorReply;
use crate::engine::generator::OpGenerator;
use crate::engine::progress::WorkerProgress;
use crate::engine::resolver::Resolver;
use crate::engine::schedule::Schedule;
use crate::engine::slots::Slots;
use crate::engine::tally::{Tally, Totals};
use crate::engine::timer::{AHEAD, Alarm};
use crate::engine::verify::VerifyJob;
use crate::plan::{Plan, StopAt};
use crate::results::Unanswered;
use crate::stats::{ClientSeries, OpStats, ScheduleStats};
use crate::workload::values::ValuePool;
use crate::workload::verify::WrittenKeys;

mod seconds;
mod stalls;
mod visibility_wait;

/// The token of the runner's waker; client tokens are their index.
pub const WAKE_TOKEN: Token = Token(usize::MAX);
/// The token of the worker's open-loop timer.
pub const TIMER_TOKEN: Token = Token(usize::MAX - 1);
/// At most this many reads after a timed run's deadline (each a poll that does not
/// wait); they end sooner, at the first that finds no connection ready and no reply
/// waiting unread. A bound only: nothing is sent then, so replies run out.
const MAX_END_READS: u32 = 1000;

/// What a worker tells the runner.
pub enum WorkerMsg {
    /// Stats of second `second` of the run (0-based) for this thread, and how many of its
    /// connections were up at the end of that second.
    Snapshot {
        thread: usize,
        second: u32,
        stats: Vec<OpStats>,
        /// Open loop: how the schedule was kept.
        health: Option<ScheduleStats>,
        connected: u32,
    },
    /// A client failed for good; the run cannot be trusted any more.
    Failed { thread: usize, message: String },
    /// Per-client figures for `--client-stats`: (client index in the thread, series).
    ClientSeries {
        thread: usize,
        series: Vec<(usize, ClientSeries)>,
    },
    /// The thread's load is over (its last request answered, its deadline, a stop or a
    /// failure): the stats of its last (partial) second, and when the load ended, which
    /// is where the run's time ends. In open loop the health counts what the run left
    /// unfinished.
    LoadDone {
        thread: usize,
        at: Instant,
        second: u32,
        stats: Vec<OpStats>,
        health: Option<ScheduleStats>,
        /// Closed loop: what the thread left unanswered.
        unanswered: Unanswered,
    },
    /// The thread is done, after `LoadDone`: what the wait for `--visibility-from`'s
    /// tracked writes after the load settled (their rows as in a snapshot; empty
    /// without a wait).
    Finished {
        thread: usize,
        settled: Vec<OpStats>,
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
    /// When sending starts (and the schedule): ramp-up steps and the warm-up count from
    /// here.
    pub run_start: Instant,
    /// When the warm-up ends and measuring starts (`run_start` without a warm-up): the
    /// run's seconds count from here.
    pub measure_start: Instant,
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
    /// `StopAt::TotalRequests`: the run's shared request budget.
    pub budget: Option<Arc<RequestBudget>>,
    /// Where the error reply that stops the run is kept (`ErrorReplies::Stop`).
    pub error_reply: Arc<FirstErrorReply>,
    /// This worker's live totals, when the plan asks for progress.
    pub progress: Option<Arc<WorkerProgress>>,
    /// Whether a worker of the run has warned of a server not answering: one line for
    /// the run, not one per worker.
    pub stall_warned: Arc<AtomicBool>,
}

impl Worker {
    /// Runs the thread's clients to completion, deadline or stop; always ends with
    /// `LoadDone`, then `Finished`.
    pub fn run(mut self) {
        // A pool's members each have a row after the command rows.
        let rows = self.rows + self.plan.extra_rows();
        let mut tally = Tally::new(&self.plan, rows, self.thread, self.run_start);
        let mut second: u32 = 0;
        let mut connected = 0;
        let mut load_done = false;
        let result = self.drive(&mut tally, &mut second, &mut connected, &mut load_done);
        if !load_done {
            self.send_load_done(&mut tally, second, Unanswered::default());
        }
        if let Err(message) = result {
            let _ = self.tx.send(WorkerMsg::Failed {
                thread: self.thread,
                message,
            });
        }
        // What the wait for tracked writes recorded since `LoadDone`.
        let settled = match tally.settling {
            true => {
                for row in tally.stats.iter_mut() {
                    row.flush_latencies();
                }
                tally.stats
            }
            false => Vec::new(),
        };
        let _ = self.tx.send(WorkerMsg::Finished {
            thread: self.thread,
            settled,
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

    /// Builds the clients, runs the event loop, then counts what the run left unfinished
    /// (open loop: into the schedule's health; closed loop: what it left unanswered) and
    /// says the load is over (`load_done` set once it did); waits for
    /// `--visibility-from`'s tracked writes still waiting (after the load and apart from
    /// it: the run's time, its rates and its seconds end with the load), then closes
    /// every connection and hands the runner the `--client-stats` figures, however the
    /// loop ended.
    fn drive(
        &mut self,
        tally: &mut Tally,
        second: &mut u32,
        connected: &mut u32,
        load_done: &mut bool,
    ) -> Result<(), String> {
        let mut slots = self.make_clients()?;
        let mut errors = ErrorLog::new(Arc::clone(&self.stall_warned));
        let result = self.event_loop(&mut slots, tally, &mut errors, second, connected);
        self.count_unfinished(&mut slots, tally);
        let unanswered = if self.plan.load.pacing.is_open() {
            Unanswered::default()
        } else {
            // A closed loop's figures count answered requests only: a server that stopped
            // answering leaves its requests here and nowhere else.
            let end = self
                .deadline
                .map_or_else(Instant::now, |d| d.min(Instant::now()));
            slots.unanswered(end, self.measure_start, tally.read_at_end)
        };
        self.send_load_done(tally, *second, unanswered);
        *load_done = true;
        // A stop (Ctrl-C) or a failure ends the run at once.
        let result = result.and_then(|()| match self.stop.load(Ordering::Relaxed) {
            true => Ok(()),
            false => self.wait_for_visibility(&mut slots, tally, &mut errors, *second),
        });
        self.finish(&mut slots, connected);
        if !slots.series.is_empty() {
            let _ = self.tx.send(WorkerMsg::ClientSeries {
                thread: self.thread,
                series: std::mem::take(&mut slots.series),
            });
        }
        result
    }

    /// Runs the load until every client is done with it (see [`Client::load_done`]),
    /// the deadline, a stop or a failure.
    fn event_loop(
        &mut self,
        slots: &mut Slots,
        tally: &mut Tally,
        errors: &mut ErrorLog,
        second: &mut u32,
        connected: &mut u32,
    ) -> Result<(), String> {
        let mut events = Events::with_capacity(1024);
        // With `--visibility-from` a client done with its load may still wait for tracked
        // writes: the load is over when every client is done with it.
        let tracking = self.plan.server.visibility.is_some();
        let mut alarm = Alarm::new(&self.poll, TIMER_TOKEN, self.plan.load.pacing.is_open());
        // The client a due position of the shared schedule is offered to first.
        let mut cursor = 0;
        let mut measuring = self.measure_start <= self.run_start;
        let mut next_tick = self.measure_start + Duration::from_secs(1);
        // During the warm-up there are no seconds to report, but a stalled server must
        // still be caught once a second.
        let mut next_warmup_check = self.run_start + Duration::from_secs(1);
        // Twice as often as the observer adds them up: each of its figures then holds a
        // connection count at most half a period old, and its first one (`clients: N` of
        // redis-benchmark -I) counts the connections made since the start, not none.
        let progress_every = self
            .plan
            .outputs
            .progress_every
            .filter(|_| self.progress.is_some())
            .map(|every| every / 2);
        let mut next_progress = progress_every.map(|every| self.run_start + every);
        let mut done = Totals::default();
        let open_loop = self.plan.load.pacing.is_open();
        // The reads after the deadline; set to the bound once one finds nothing to read.
        let mut end_reads = 0;
        // When the last poll returned: the closed loop's "now" for the pass after it (its
        // timers are coarse; the events' handling in between is short), and the receive
        // time of the replies the poll found waiting.
        let mut woke = Stamp::now();
        loop {
            // The open loop's schedule wants the clock itself.
            let now = if open_loop { Instant::now() } else { woke.at };
            if !measuring && now >= self.measure_start {
                measuring = true;
                tally.start_measuring();
            }
            if !measuring && now >= next_warmup_check {
                next_warmup_check += Duration::from_secs(1);
                self.check_stalls(now, *second, slots, tally, errors)?;
            }
            if let (Some(progress), Some(every), Some(at)) =
                (&self.progress, progress_every, next_progress.as_mut())
            {
                let totals = done.plus(&tally.stats[..self.rows]);
                progress.publish(totals.requests, totals.latency_sum_us);
                if now >= *at {
                    progress.publish_connected(slots.connected());
                    while *at <= now {
                        *at += every;
                    }
                }
            }
            let mut ticked = false;
            while now >= next_tick {
                *connected = slots.connected();
                done = done.plus(&tally.stats[..self.rows]);
                self.send_snapshot(tally, *second, *connected);
                *second += 1;
                next_tick += Duration::from_secs(1);
                ticked = true;
            }
            if ticked {
                self.check_stalls(now, *second, slots, tally, errors)?;
            }
            if slots.active == 0 || self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            // Past the deadline the worker reads on, in polls that do not wait, the replies
            // already come, until none is left to read: a wake-up's events take the worker
            // past the deadline while other connections' replies arrive (with a pipeline,
            // in most runs). They were answered, so they are not unanswered: left unread, a
            // closed loop's were in no count at all though the server ran them, and an open
            // loop's were reported in flight. Nothing is sent then (no timer fires, no
            // position is dispatched), so each read only takes replies off what is in
            // flight.
            let past_deadline = tally.time_up || self.deadline.is_some_and(|d| now >= d);
            let final_read = past_deadline && !tracking && end_reads < MAX_END_READS;
            if past_deadline && !final_read {
                return Ok(());
            }
            if tracking && slots.load_done(self.budget.as_deref()) {
                return Ok(());
            }
            if final_read {
                end_reads += 1;
                tally.time_up = true;
            } else {
                self.fire_timers(now, *second, slots, tally, errors)?;
                self.dispatch(now, *second, slots, tally, errors, &mut cursor)?;
                self.settle_spent(slots)?;
                if slots.active == 0 {
                    // The last client settled just now (one with nothing to send finishes
                    // as it starts): end at the top of the loop, not after a poll's timeout.
                    continue;
                }
            }
            let timeout = if final_read {
                Duration::ZERO
            } else {
                let mut wake_at = next_tick;
                if let Some(deadline) = self.deadline {
                    wake_at = wake_at.min(deadline);
                }
                if !measuring {
                    wake_at = wake_at.min(self.measure_start).min(next_warmup_check);
                }
                // What needs waking on time: client timers, and the shared schedule's next
                // positions unless it is blocked (then a reply frees a client, which takes
                // them); the wake-ups after the next are armed too, ahead (see `Alarm`): the
                // earliest few of both.
                let mut wanted = [now; 2 * AHEAD];
                let mut n = if alarm.is_precise() {
                    slots.next_timers(&mut wanted[..AHEAD])
                } else {
                    usize::from(slots.next_timer().map(|t| wanted[0] = t).is_some())
                };
                if let Some(shared) = tally.shared.as_ref().filter(|s| !s.is_blocked()) {
                    wanted[n] = shared.peek();
                    shared.peek_ahead(&mut wanted[n + 1..n + AHEAD]);
                    n += AHEAD;
                }
                wanted[..n].sort_unstable();
                match wanted[..n].first() {
                    Some(&at) if at < wake_at && alarm.is_precise() => {
                        alarm.arm(&wanted[..n], now)?
                    }
                    Some(&at) => wake_at = wake_at.min(at),
                    None => {}
                }
                if let Some(at) = next_progress {
                    wake_at = wake_at.min(at);
                }
                wake_at.saturating_duration_since(now)
            };
            let spin = (self.plan.load.busy_poll)
                .filter(|&s| !final_read && slots.worth_spinning(s, timeout));
            let polled = match spin {
                Some(spin) => poll_spinning(&mut self.poll, &mut events, spin, now + timeout),
                None => self.poll.poll(&mut events, Some(timeout)),
            };
            woke = Stamp::now();
            // Polled past the deadline (a stall across it): replies recorded, nothing sent.
            tally.time_up = end_reads > 0 || self.deadline.is_some_and(|d| woke.at >= d);
            if let Err(err) = polled {
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("event loop failed: {err}"));
            }
            // The first connection's replies were waiting when the poll returned: that is
            // their receive time. Later ones may have come while earlier events were
            // handled (and requests sent since may be answered), so they read the clock.
            let mut first = Some(woke);
            let mut ahead = slots.look_ahead(|| events.iter().map(Event::token));
            // One context for the wake-up's events (made once, not per event: its time_up
            // set by a read past the deadline holds for the rest of them, which send
            // nothing).
            let mut ctx = self.context(tally, errors, *second);
            let mut found_reply = false;
            for event in events.iter() {
                ahead.step(slots);
                if event.token() == WAKE_TOKEN || event.token() == TIMER_TOKEN {
                    continue;
                }
                found_reply = true;
                let (slot, conn) = split_token(event.token());
                let Some(client) = slots.clients.get_mut(slot).and_then(Option::as_mut) else {
                    continue;
                };
                let status = client.handle_event(conn, event, first.take(), &self.plan, &mut ctx);
                self.settle(slots, slot, status)?;
            }
            tally.time_up = ctx.time_up;
            // Done once a poll finds nothing and no reply waits unread (one that came
            // after the poll, a server still answering what was in flight).
            if final_read && !found_reply && !slots.reply_waiting() {
                end_reads = MAX_END_READS;
                tally.read_at_end = true;
            }
        }
    }

    /// Open loop at a total rate: offers each due position to the clients in turn,
    /// starting after the last one served; a client with room sends what is due (up to
    /// its pipeline). Due positions no client could take leave the schedule blocked.
    fn dispatch(
        &self,
        now: Instant,
        second: u32,
        slots: &mut Slots,
        tally: &mut Tally,
        errors: &mut ErrorLog,
        cursor: &mut usize,
    ) -> Result<(), String> {
        // Blocked: no client had room, and none has gained any without an event of its
        // own (a reply, a connect), which takes the backlog itself; no need to look.
        if !tally.due(now) || tally.shared.as_ref().is_some_and(Schedule::is_blocked) {
            return Ok(());
        }
        let n = slots.clients.len();
        for step in 0..n {
            let slot = (*cursor + step) % n;
            let Some(client) = slots.clients[slot].as_mut() else {
                continue;
            };
            if !client.can_take(self.budget.as_deref()) {
                continue;
            }
            let mut ctx = self.context(tally, errors, second);
            let status = client.on_due(&self.plan, &mut ctx);
            self.settle(slots, slot, status)?;
            if !tally.due(now) {
                *cursor = slot + 1;
                return Ok(());
            }
        }
        if let Some(shared) = tally.shared.as_mut() {
            shared.block();
        }
        Ok(())
    }

    /// A shared budget spent: clients with nothing in flight are done. In closed loop
    /// each finds that out itself when it fails to take a request; in open loop a client
    /// may have sent its last request while the budget still had some left, and no
    /// event of its own will come to tell it.
    fn settle_spent(&self, slots: &mut Slots) -> Result<(), String> {
        let budget = self.budget.as_deref();
        if !self.plan.load.pacing.is_open() || budget.is_none_or(RequestBudget::has_left) {
            return Ok(());
        }
        for slot in 0..slots.clients.len() {
            if slots.clients[slot]
                .as_ref()
                .is_some_and(|client| client.is_finished(budget))
            {
                self.settle(slots, slot, Status::Finished)?;
            }
        }
        Ok(())
    }

    /// What a client may touch while it handles one event or timer.
    fn context<'a>(
        &'a self,
        tally: &'a mut Tally,
        errors: &'a mut ErrorLog,
        second: u32,
    ) -> ClientContext<'a> {
        let compact_rows = compact_rows(&mut tally.stats);
        ClientContext {
            stats: &mut tally.stats,
            values: &self.values,
            errors,
            registry: self.poll.registry(),
            written: self.written.as_deref(),
            verify: self.verify.as_deref(),
            resolver: self.resolver.as_ref(),
            second,
            measure_from: self.measure_start,
            discard: tally.discard.as_deref_mut(),
            shared: tally.shared.as_mut(),
            health: tally.health.as_mut(),
            budget: self.budget.as_deref(),
            error_reply: &self.error_reply,
            templates: tally.templates.as_ref(),
            deadline: self.deadline,
            time_up: tally.time_up,
            settling: tally.settling,
            compact_rows,
        }
    }

    /// Calls every client whose timer is due.
    fn fire_timers(
        &self,
        now: Instant,
        second: u32,
        slots: &mut Slots,
        tally: &mut Tally,
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
            let mut ctx = self.context(tally, errors, second);
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

    /// Applies a client's status: re-arm its timer, retire it, or fail the thread. The
    /// common case, a client going on, is inlined into its callers (the worker's loop
    /// settles after every event); retiring is out of line.
    #[inline(always)]
    fn settle(&self, slots: &mut Slots, slot: usize, status: Status) -> Result<(), String> {
        match status {
            Status::Active => {
                slots.arm(slot);
                Ok(())
            }
            Status::Finished => {
                self.retire(slots, slot);
                slots.armed[slot] = None;
                slots.active -= 1;
                Ok(())
            }
            // The failed client stays in its slot: the thread ends now, and the end of the
            // run must still count what it left (its requests in flight, the one a reply
            // timeout gave up on among them, and what it had yet to send), then close it
            // with the others. Retired here, an open-loop run ended by `--reply-timeout`
            // reported nothing unfinished and blamed the schedule or kvbench's CPU.
            Status::Failed(message) => Err(message),
        }
    }

    /// Closes the client in `slot` and keeps its per-client series.
    #[inline(never)]
    fn retire(&self, slots: &mut Slots, slot: usize) {
        if let Some(mut client) = slots.clients[slot].take() {
            client.close(self.poll.registry());
            if let Some(series) = client.take_series() {
                slots.series.push((slot, series));
            }
        }
    }

    /// Open loop, at the end of the run: what was due by then but never answered (the
    /// shared schedule's backlog when the run is time-bound, and each client's).
    fn count_unfinished(&self, slots: &mut Slots, tally: &mut Tally) {
        let Some(health) = tally.health.as_mut() else {
            return;
        };
        let now = Instant::now();
        let end = self.deadline.map_or(now, |d| d.min(now));
        let time_bound = matches!(self.plan.load.stop, StopAt::Time(_));
        let shared = tally
            .shared
            .as_mut()
            .map(|s| (s, time_bound, self.budget.as_deref()));
        slots.count_unfinished(shared, end, self.measure_start, health);
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
                plan.index,
                ops,
                plan.requests,
                starts[slot],
                &self.plan,
                self.topology.as_deref(),
            );
            if self.connect_from < self.run_start {
                client.hold_until(self.run_start, starts[slot]);
            }
            slots.clients.push(Some(client));
            slots.arm(slot);
        }
        Ok(slots)
    }
}
