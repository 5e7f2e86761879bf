//! One benchmark client: its connections (one, or one per cluster master) and what it
//! does on each event or timer. The jobs are split by file:
//!
//! - `context`: what the client may touch of its worker's while it handles an event;
//! - `send`: what to send next, open-loop positions, encoding into a connection;
//! - `record`: what a reply means (latency, hits, errors, SCAN cursors, verification);
//! - `route`: which connection a key goes to, MOVED/ASK, the slot map's refresh;
//! - `plain`: the closed loop's common case, sent and recorded without the rest's branches;
//! - `pinned`: a client pinned to one cluster master, its slots and slot tags;
//! - `reconnect`: what a connection failure means: the end, or a back-off.
//! - `txn`: a request stream's batches as MULTI/EXEC transactions, recorded at EXEC.
//! - `held`: cluster mode: copies of stream commands in flight, to resend after MOVED/ASK.
//! - `visibility`: replica visibility, the polls of tracked writes on the other endpoint.
//! - `waiting`: whether a reply may come at any moment (busy polling), what is left to send.
//! - `watchdog`: a connection without replies for longer than `--reply-timeout`.
//!
//! Timers (start, its own schedule, back-off, connect timeout, a pending name lookup) are
//! the worker's: the client only says when it next wants to be woken
//! ([`Client::next_timer`]). Under a total rate the worker's schedule is shared: the
//! worker hands a due position to a client with room ([`Client::on_due`]), and a client
//! freed by a reply takes the positions that fell due meanwhile.

mod backlog;
mod context;
pub use context::ClientContext;
mod counts;
mod encode;
mod held;
mod pinned;
mod plain;
pub use plain::{compact_rows, plain_templates};
mod plain_routed;
mod reconnect;
mod record;
mod route;
mod router;
mod send;
mod txn;
mod visibility;
pub use visibility::longest_visibility_wait;
mod waiting;
mod wake;
mod watchdog;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::{Registry, Token};

use crate::debug_log;
use crate::engine::budget::RequestBudget;
use crate::engine::clock::{Stamp, send_time_after_read};
use crate::engine::cluster::{PrefixedSlots, Topology};
use crate::engine::connection::{Connection, Failure, Phase};
use crate::engine::generator::OpGenerator;
use crate::engine::prefetch::{ROW_LINES, lines, prefetch_slice};
use crate::engine::schedule::Schedule;
use crate::plan::{self, BatchWrap, ClusterRouting, Plan, Reconnect, RequestStream, StopAt};
use crate::protocol::KeyBatch;
use crate::stats::{ClientSeries, ScheduleStats};
use crate::workload::args::Args;
use crate::workload::commands::ScanState;

use backlog::Backlog;
use pinned::Pinned;
use route::Parked;
use router::Router;
use send::{Due, Held, Pacing, Resend, Retry};
use txn::Transaction;
use visibility::Visibility;

/// Most connections one client may hold (cluster masters, redirect targets): a worker
/// token is `client slot × this + connection index`.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 64;

/// The worker token of connection `conn` of the client in `slot`.
pub fn token_of(slot: usize, conn: usize) -> Token {
    Token(slot * MAX_CONNECTIONS_PER_CLIENT + conn)
}

/// The client slot and connection index of a worker token.
pub fn split_token(token: Token) -> (usize, usize) {
    (
        token.0 / MAX_CONNECTIONS_PER_CLIENT,
        token.0 % MAX_CONNECTIONS_PER_CLIENT,
    )
}

/// What a client reports to its worker after handling an event or a timer.
#[derive(Debug, PartialEq, Eq)]
pub enum Status {
    Active,
    /// Every request was sent and answered.
    Finished,
    /// The client cannot go on; the message is for the user.
    Failed(String),
}

// A client starts a line, so its hot fields take the fewest lines they can; a slot's
// client is the client itself (its `Option` lives in a niche, not in front of it). A
// field added in front of the hot ones, or a hot one grown, fails here: a visit would
// wait for more memory (the first layout spread them over 14 of a client's 21 lines).
const _: () = assert!(align_of::<Client>() == 64);
const _: () = assert!(size_of::<Option<Client>>() == size_of::<Client>());
const _: () = assert!(Client::HOT_LINES <= 8);

/// One benchmark client.
///
/// Laid out in declaration order (`repr(C)`), on a cache line of its own: the fields a
/// plain closed-loop visit to one server (SETs and GETs from the templates) reads come
/// first, ending with the generator (whose own hot fields lead it), so that such a visit
/// touches the first [`HOT_LINES`](Self::HOT_LINES) lines and the worker asks for just
/// those ahead of it (see [`prefetch`](crate::engine::prefetch)); the other fields
/// follow. Other plain shapes read a few of those too: a request template's numbered
/// draws, a router's backlog, a pool's key buffer.
#[repr(C, align(64))]
pub struct Client {
    // The plain visit's fields.
    conns: Vec<Connection>,
    /// Requests still to generate; `None` for time-bound runs.
    remaining: Option<u64>,
    reconnect_interval: Option<u64>,
    /// A pool: the stats row of member 0 (members' rows follow the command rows).
    server_rows: Option<usize>,
    pipeline: usize,
    /// Replica visibility: tracked writes, polled over the last connection.
    visibility: Option<Box<Visibility>>,
    /// Connected early for a start time: no request goes out before it.
    hold: Option<Instant>,
    /// No new request before this (the last reply plus the think time).
    resume_at: Option<Instant>,
    /// Requests answered `-TRYAGAIN`, waiting out their back-off.
    retries: Vec<Retry>,
    /// Cluster mode: redirections waiting for their target's name to be looked up.
    parked: Vec<Parked>,
    /// Requests to send again after a redirection.
    resends: VecDeque<Resend>,
    /// Which connection a key goes to: one server, cluster slots, or a pool.
    router: Router,
    /// A generated request waiting for its connection (not ready, or pipeline full).
    held: Option<Held>,
    /// The plain closed loop (see `plain`): decided once, when the client is made.
    plain: bool,
    /// Replies may be recorded the plain way as far as the client's own shape goes (see
    /// [`records_plainly`](Self::records_plainly)): decided once, when it is made.
    records_plain: bool,
    /// [`plan::Refill::WholeBatch`]: the next requests go out only when none is in flight.
    whole_batch: bool,
    /// `StopAt::Idle`: connect, send nothing, never finish.
    idle: bool,
    /// How a batch goes out (plain, or wrapped in MULTI/EXEC): asked per request for
    /// room by a client routing by key.
    wrap: BatchWrap,
    ops: OpGenerator,
    // The rest: other shapes of run, set-up and the general path.
    slot: usize,
    /// Cluster mode: when the topology was last asked for again after a MOVED.
    last_refresh: Option<Instant>,
    /// Cluster mode, one master per client: that master's slots.
    pinned: Option<Pinned>,
    reconnect: Option<Reconnect>,
    connection_timeout: Option<Duration>,
    pacing: Pacing,
    /// Closed loop with a think time: how long to wait after each reply.
    think_time: Option<Duration>,
    /// A client routing by key: generated requests queued per connection for room.
    backlog: Backlog,
    key_buf: Vec<u8>,
    multi_keys: KeyBatch,
    command_keys: KeyBatch,
    scan: Option<ScanState>,
    /// This client's own per-second figures, when the plan asks for them.
    series: Option<Box<ClientSeries>>,
    /// The front end's request stream, when the plan's workload is one.
    stream: Option<Box<dyn RequestStream>>,
    /// The stream's command generated last (held or being sent).
    stream_cmd: Args,
    /// Whether that command ends its batch.
    stream_ends_batch: bool,
    /// Open loop, a stream's batch under way: the position its first command took, which
    /// the rest of the batch goes out at (see `take_due`).
    stream_batch_due: Option<Due>,
    /// Cluster mode, a stream of plain batches: its commands in flight, for resends.
    stream_copies: Option<Box<held::HeldCommands>>,
    /// The open or unanswered MULTI/EXEC batch.
    txn: Transaction,
    /// The start time `hold` waits for, until the first connection is ready: one ready
    /// well after it (a slow handshake) is said, as its first requests go out late.
    start_time: Option<Instant>,
}

/// A connection ready this long after a start time it connected early for is said.
const LATE_FOR_THE_START: Duration = Duration::from_millis(100);

impl Client {
    /// Cache lines at the start of a client that a plain visit reads and writes: its
    /// hot fields and its generator's (see [`prefetch`](crate::engine::prefetch)).
    pub const HOT_LINES: usize = lines(std::mem::offset_of!(Client, ops) + OpGenerator::HOT_BYTES);

    /// A client in worker slot `slot` (client `index` of all threads') that starts
    /// connecting at `start_at`; `requests` is its share of the requests; `topology` is
    /// the cluster's, in cluster mode.
    #[allow(clippy::too_many_arguments)] // where it sits, what it sends, how much, and to whom
    pub fn new(
        slot: usize,
        index: usize,
        ops: OpGenerator,
        requests: Option<u64>,
        start_at: Instant,
        plan: &Plan,
        topology: Option<&Topology>,
    ) -> Client {
        let mut pinned = None;
        let (conns, router) = match topology {
            Some(topo) if plan.server.cluster_routing == ClusterRouting::OneMasterPerClient => {
                // One connection, to master `index mod masters`; no slot routing.
                let master = index % topo.nodes.len().max(1);
                pinned = Some(Pinned::new(topo, master));
                let node = &topo.nodes[master];
                (
                    vec![Connection::new(node.endpoint(), node.name(), plan)],
                    Router::Single,
                )
            }
            Some(topo) => {
                let conns = topo
                    .nodes
                    .iter()
                    .take(MAX_CONNECTIONS_PER_CLIENT)
                    .map(|node| Connection::new(node.endpoint(), node.name(), plan))
                    .collect();
                let prefixed = PrefixedSlots::new(plan.workload.keys.prefix.as_bytes());
                (conns, Router::Slots(topo.slot_owner.clone(), prefixed))
            }
            None => match &plan.server.pool {
                Some(pool) => (
                    pool.members
                        .iter()
                        .take(MAX_CONNECTIONS_PER_CLIENT)
                        .map(|m| Connection::new(m.endpoint.clone(), m.endpoint.name(), plan))
                        .collect(),
                    Router::Pool(Arc::clone(pool)),
                ),
                None => (
                    vec![Connection::new(
                        plan.server.endpoint.clone(),
                        plan.server.endpoint.name(),
                        plan,
                    )],
                    Router::Single,
                ),
            },
        };
        let server_rows = router.pool().map(|_| plan.row_names().len());
        let mut conns: Vec<Connection> = conns;
        let visibility = plan.server.visibility.as_ref().map(|probe| {
            conns.push(Connection::new(
                probe.endpoint.clone(),
                probe.endpoint.name(),
                plan,
            ));
            let row = plan.row_names().len() + plan.server_rows();
            Box::new(Visibility::new(probe, conns.len() - 1, row))
        });
        let shape = &plan.load.shape;
        let stream = plan
            .workload
            .stream
            .as_ref()
            .map(|s| s.factory.client(index, plan.total_clients()));
        // A stream knows its client's share.
        let requests = match &stream {
            Some(stream) => Some(stream.remaining()),
            None => requests,
        };
        let mut client = Client {
            slot,
            conns,
            router,
            server_rows,
            last_refresh: None,
            parked: Vec::new(),
            pinned,
            idle: plan.load.stop == StopAt::Idle,
            reconnect: shape.reconnect,
            reconnect_interval: shape.reconnect_interval,
            connection_timeout: shape.connection_timeout,
            pacing: match plan.load.pacing {
                plan::Pacing::Closed => Pacing::Closed,
                plan::Pacing::Total(_) => Pacing::Shared,
                // Client `index` runs share `index` of the rate times the clients, so every
                // connection sends at the rate and their sends interleave evenly.
                plan::Pacing::PerConnection(rate) => {
                    let clients = plan.total_clients() as u64;
                    let all = plan::Rate {
                        per_sec: rate.per_sec.saturating_mul(clients),
                        ..rate
                    };
                    Pacing::Own(Schedule::new(all, start_at, index as u64, clients))
                }
            },
            think_time: shape.think_time,
            resume_at: None,
            ops,
            held: None,
            backlog: Backlog::new(plan.load.pipeline),
            resends: VecDeque::new(),
            retries: Vec::new(),
            key_buf: Vec::with_capacity(plan.workload.keys.prefix.len() + 20),
            multi_keys: KeyBatch::new(),
            command_keys: KeyBatch::new(),
            scan: plan
                .workload
                .arbitrary
                .as_ref()
                .and_then(|a| a.scan_max_iterations)
                .map(ScanState::new),
            remaining: requests,
            pipeline: plan.load.pipeline,
            whole_batch: shape.refill == plan::Refill::WholeBatch,
            series: plan
                .outputs
                .client_series
                .then(|| Box::new(ClientSeries::new(plan.row_names().len()))),
            visibility,
            stream,
            stream_cmd: Args::new(),
            stream_ends_batch: false,
            stream_batch_due: None,
            wrap: plan
                .workload
                .stream
                .as_ref()
                .map(|s| s.wrap)
                .unwrap_or_default(),
            stream_copies: plan
                .workload
                .stream
                .as_ref()
                .filter(|s| plan.server.cluster_mode && s.wrap == BatchWrap::Plain)
                .map(|_| Box::default()),
            txn: Transaction::default(),
            hold: None,
            start_time: None,
            plain: false,
            records_plain: false,
        };
        client.plain = client.is_plain();
        client.records_plain = client.may_record_plainly(plan);
        for conn in &mut client.conns {
            conn.start_at(start_at);
        }
        client
    }

    /// Sends nothing before `at` (a start time): the client connects and authenticates
    /// as usual, then waits. `connects_at`: when it starts connecting; one that starts
    /// before `at` is expected ready by then (a ramp's later clients are not).
    pub fn hold_until(&mut self, at: Instant, connects_at: Instant) {
        self.hold = Some(at);
        self.start_time = (connects_at < at).then_some(at);
    }

    /// This client's per-client series, taken at the end of the run.
    pub fn take_series(&mut self) -> Option<ClientSeries> {
        self.series.take().map(|series| *series)
    }

    /// This client's connections (one, or one per cluster node).
    pub fn connections(&self) -> &[Connection] {
        &self.conns
    }

    /// Whether a connection is up and carrying load (for "active clients").
    pub fn is_connected(&self) -> bool {
        self.conns.iter().any(Connection::is_ready)
    }

    /// Closes every connection for good (end of run or of this client).
    pub fn close(&mut self, registry: &Registry) {
        for conn in &mut self.conns {
            conn.close(registry);
        }
    }

    /// Handles a timer set by [`Client::next_timer`].
    pub fn on_timer(&mut self, now: Instant, plan: &Plan, ctx: &mut ClientContext) -> Status {
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            let due = conn.is_due(now);
            let result = match conn.phase() {
                Phase::Idle | Phase::Backoff if due => self.open(i, plan, ctx),
                Phase::Connecting | Phase::Handshaking if due => Err(self.timed_out(i, plan)),
                _ => Ok(()),
            };
            if let Err(failure) = result
                && let Some(status) = self.connection_failed(i, failure, plan, ctx)
            {
                return status;
            }
        }
        if let Some(status) = self.unpark(plan, ctx) {
            return status;
        }
        self.send_and_settle(None, plan, ctx)
    }

    /// Handles one readiness event of connection `conn`. `ready_at`: when the replies it
    /// reads first are known to have been waiting (their receive time), if known. The
    /// plain closed loop stamps the requests it sends in the same visit with the clock
    /// reading taken after its last read (see [`clock`](crate::engine::clock)).
    pub fn handle_event(
        &mut self,
        conn: usize,
        event: &Event,
        ready_at: Option<Stamp>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Status {
        if conn >= self.conns.len() {
            return Status::Active;
        }
        // The plain path's rows (SET, GET), asked for before the read (`engine::prefetch`).
        prefetch_slice(&ctx.stats[..ctx.stats.len().min(2)], ROW_LINES);
        // (The plain closed loop has no schedule: its visit leaves `pacing`'s line alone.)
        if !self.plain
            && matches!(self.pacing, Pacing::Own(_))
            && !(0..self.work_conns()).any(|i| self.has_room(i))
            && let Pacing::Own(schedule) = &mut self.pacing
        {
            // Every connection is full: positions due now waited for a reply, not for
            // the generator (cleared once the backlog is gone).
            schedule.block();
        }
        let read_at = match self.drive(conn, event, ready_at, plan, ctx) {
            Ok(Some((received, polled))) => {
                // Replies recorded the general way may have printed (`-D -D`, error
                // lines): the next batch reads the clock after that.
                send_time_after_read(received, polled).filter(|_| self.records_plainly(ctx))
            }
            Ok(None) => None,
            Err(failure) => {
                if let Some(status) = self.connection_failed(conn, failure, plan, ctx) {
                    return status;
                }
                None
            }
        };
        self.send_and_settle(read_at, plan, ctx)
    }

    /// Asks the processor for connection `conn`'s memory (see
    /// [`prefetch`](crate::engine::prefetch)).
    #[inline(always)]
    pub fn prefetch_connection(&self, conn: usize) {
        if let Some(conn) = self.conns.get(conn) {
            prefetch_slice(std::slice::from_ref(conn), Connection::HOT_LINES);
        }
    }

    /// Whether the client can send one more request now (open loop at a total rate: the
    /// worker looks for a client that can take a due position): it has a share left,
    /// or the run's shared budget has.
    pub fn can_take(&self, budget: Option<&RequestBudget>) -> bool {
        (self.remaining != Some(0) || budget.is_some_and(RequestBudget::has_left))
            && self.held.is_none()
            && !self.awaits_batch()
            && (0..self.work_conns()).any(|i| self.has_room(i))
    }

    /// Whole-batch refill: whether the batch sent last still has requests in flight (so
    /// nothing new goes out yet). Such a client has one work connection (the plan refuses
    /// more), the first.
    pub(super) fn awaits_batch(&self) -> bool {
        self.whole_batch && self.conns.first().is_some_and(|c| c.in_flight() > 0)
    }

    /// The connections that carry the workload (all but the visibility one).
    fn work_conns(&self) -> usize {
        self.conns.len() - usize::from(self.visibility.is_some())
    }

    /// A position of the worker's schedule is due: send what is due.
    pub fn on_due(&mut self, plan: &Plan, ctx: &mut ClientContext) -> Status {
        self.send_and_settle(None, plan, ctx)
    }

    /// At the end of an open-loop run: counts what this client leaves unanswered into
    /// `health`, with each request's age at `end` (requests intended before
    /// `measure_from` are warm-up and left out): requests in flight, a request waiting
    /// for its connection or a redirection, and its own schedule's backlog.
    pub fn count_unfinished(
        &mut self,
        end: Instant,
        measure_from: Instant,
        health: &mut ScheduleStats,
    ) {
        let age_us = |t: Instant| end.saturating_duration_since(t).as_micros() as u64;
        for conn in &self.conns {
            for t in conn.intended_in_flight().filter(|&t| t >= measure_from) {
                health.in_flight_at_end += 1;
                health.unfinished_age.saturating_record(age_us(t));
            }
        }
        let waiting = self
            .held
            .iter()
            .chain(self.backlog.iter())
            .filter_map(|h| h.due.map(|d| d.at))
            .chain(self.resends.iter().filter_map(|r| r.intended))
            .chain(self.retries.iter().filter_map(|r| r.intended));
        for t in waiting.filter(|&t| t >= measure_from) {
            health.unsent_at_end += 1;
            health.unfinished_age.saturating_record(age_us(t));
        }
        if let Pacing::Own(schedule) = &mut self.pacing {
            let left = self.remaining.unwrap_or(u64::MAX);
            schedule.count_backlog(end, measure_from, left, health);
        }
    }

    /// Fills and flushes every connection, then says whether the client is done.
    /// `read_at`: the clock reading of this visit's last read, if it made one.
    fn send_and_settle(
        &mut self,
        read_at: Option<Stamp>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Status {
        self.fill(read_at, plan, ctx);
        // After the load (`ctx.settling`) the polls go on though nothing else goes out.
        if self.visibility.is_some() && (!ctx.time_up || ctx.settling) {
            self.poll_visibility(plan, ctx);
        }
        for i in 0..self.conns.len() {
            if !self.conns[i].has_output() {
                continue;
            }
            if let Err(failure) = self.conns[i].flush(ctx.registry)
                && let Some(status) = self.connection_failed(i, failure, plan, ctx)
            {
                return status;
            }
        }
        if self.is_finished(ctx.budget) {
            Status::Finished
        } else {
            Status::Active
        }
    }

    fn has_work(&self, budget: Option<&RequestBudget>) -> bool {
        self.has_load_work(budget) || self.visibility.as_ref().is_some_and(|v| v.is_waiting())
    }

    /// Whether the workload has anything left to send (tracked writes waiting for the
    /// other endpoint are not the workload's).
    fn has_load_work(&self, budget: Option<&RequestBudget>) -> bool {
        // The hot fields' questions first (a client of the shared budget asks on every
        // visit, its own share spent): see `Client`'s layout.
        self.remaining != Some(0)
            || self.held.is_some()
            || budget.is_some_and(RequestBudget::has_left)
            || !self.resends.is_empty()
            || !self.parked.is_empty()
            || !self.retries.is_empty()
            || self.idle
            || !self.backlog.is_empty()
    }

    /// Whether the client's load is over: nothing of the workload left to send or in
    /// flight. Replica-visibility polls may still be, on the other endpoint's connection
    /// or on the primary's: the worker waits for them after the load, apart from it (see
    /// `engine::worker::visibility_wait`).
    pub fn load_done(&self, budget: Option<&RequestBudget>) -> bool {
        !self.has_load_work(budget)
            && self.conns[..self.work_conns()]
                .iter()
                .all(|c| c.is_idle() || !c.work_in_flight())
    }

    /// Whether the client has nothing left to send and nothing in flight. A visibility
    /// poll still in flight once no tracked write waits for it was given up (its endpoint
    /// stopped answering): it holds nothing up.
    pub fn is_finished(&self, budget: Option<&RequestBudget>) -> bool {
        let given_up = self.visibility.as_ref().map(|v| v.conn);
        !self.has_work(budget)
            && self
                .conns
                .iter()
                .enumerate()
                .all(|(i, c)| c.is_idle() || given_up == Some(i))
    }

    /// Connect progress and replies on connection `i`; `ready_at` as for
    /// [`handle_event`](Self::handle_event). Returns the last read's receive time and
    /// whether it was the poll's (`ready_at`), if it read anything.
    fn drive(
        &mut self,
        i: usize,
        event: &Event,
        ready_at: Option<Stamp>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<Option<(Stamp, bool)>, Failure> {
        if self.conns[i].progress_connect(plan)? {
            self.connection_ready(i, ctx);
        }
        let mut last_read = None;
        if event.is_readable() || event.is_read_closed() || event.is_error() {
            let peer_closed = event.is_read_closed();
            // Only the first read takes `ready_at`: a second one (the buffer was full) may
            // take bytes that came later, and reads the clock.
            let mut given = ready_at;
            loop {
                let polled = given.is_some();
                let Some((n, space, received)) = self.conns[i].read_some(given.take())? else {
                    break;
                };
                last_read = Some((received, polled));
                // Read after the deadline: the time is up, even if the poll came before it
                // (a stall between the two). What the read answers is still recorded, but
                // nothing follows from it: no resend, slot-map refresh or reconnect.
                ctx.time_up |= ctx.deadline.is_some_and(|d| received.at >= d);
                let was_ready = self.conns[i].is_ready();
                self.take_answers(i, received, plan, ctx)?;
                if !was_ready && self.conns[i].is_ready() {
                    self.connection_ready(i, ctx);
                }
                // A short read means the socket was drained; with edge-triggered
                // polling the next reply raises a new event, so skip the EAGAIN read.
                if !peer_closed && (!self.conns[i].waiting() || n < space) {
                    break;
                }
            }
        }
        let conn = &self.conns[i];
        // The interval first: without one (nearly every run) nothing else is asked.
        if self
            .reconnect_interval
            .is_some_and(|every| conn.sent_on_connection() >= every)
            && conn.is_ready()
            && conn.is_idle()
            && !ctx.time_up
            && self.has_work(ctx.budget)
        {
            // Reconnect after this many requests: every reply is in, so nothing is lost.
            self.conns[i].close(ctx.registry);
            self.open(i, plan, ctx)?;
        }
        Ok(last_read)
    }

    fn connection_ready(&mut self, i: usize, ctx: &mut ClientContext) {
        // In open loop the positions that fell due while the connection was down are
        // sent now, late, and counted so: the schedule does not pause for a reconnect.
        debug_log!(1, "connection to {} ready", self.conns[i].peer());
        if let Some(planned) = self.start_time.take() {
            let late = Instant::now().saturating_duration_since(planned);
            if late > LATE_FOR_THE_START {
                ctx.errors.report(format_args!(
                    "warning: the connection to {} was ready {:.3} s after the start time: \
                     this client's first requests went out that late",
                    self.conns[i].peer(),
                    late.as_secs_f64()
                ));
            }
        }
        // Ready after the deadline (a stall across it, after the poll's clock reading):
        // nothing goes out on it, as after a read past the deadline.
        ctx.time_up |= ctx.deadline.is_some_and(|d| Instant::now() >= d);
    }
}
