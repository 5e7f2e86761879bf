//! One benchmark client: what it sends next, on which connection, and what it records.
//!
//! A client owns one [`Connection`] — or, in `--cluster-mode`, one per master, with the
//! slot map that routes each key to its master. It generates requests (SET/GET, WAIT,
//! arbitrary commands, verification reads), paces them (`--rate-limiting`), keeps each
//! connection's pipeline full, records every reply in the worker's stats, follows
//! MOVED/ASK redirections, and decides what a connection error means: the end of the
//! run, or a back-off and a reconnect.
//!
//! Timers (start, pacing, back-off, connect timeout) are the worker's: the client only
//! says when it next wants to be woken ([`Client::next_timer`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::{Registry, Token};

use crate::debug_log;
use crate::engine::cluster::{self, Redirect, Topology};
use crate::engine::connection::{Answer, Connection, Pending, Phase, flags};
use crate::engine::generator::{Op, OpGenerator};
use crate::plan::Reconnect;
use crate::plan::{Endpoint, Plan};
use crate::protocol::KeyBatch;
use crate::protocol::ReplyKind;
use crate::protocol::resp_value::{self, first_bulk};
use crate::stats::{ClientSeries, OpStats, rows};
use crate::workload::commands::{ScanState, scan_cursor};
use crate::workload::keys::write_key;
use crate::workload::values::ValuePool;
use crate::workload::verify::{Verifier, VerifyReport, WrittenKeys};

/// Most connections one client may hold (cluster masters, redirect targets): a worker
/// token is `client slot × this + connection index`.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 64;
/// Marks an error from [`record_answer`] that no reconnect can fix.
const FATAL: &str = "\u{0}fatal\u{0}";
/// Pause between reconnect attempts without a back-off factor (memtier's).
const BASE_RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// Longest pause between reconnect attempts, whatever the back-off factor (memtier's).
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(60);

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

/// Everything a client needs from its worker while handling one event.
pub struct ClientContext<'a> {
    /// The worker's stats for the current second, indexed by stats row.
    pub stats: &'a mut [OpStats],
    pub values: &'a ValuePool,
    pub errors: &'a mut ErrorLog,
    pub registry: &'a Registry,
    /// Keys written so far, when `--data-verify` will check them afterwards.
    pub written: Option<&'a WrittenKeys>,
    /// The verification pass, when this run is one.
    pub verify: Option<&'a VerifyJob>,
    /// The run's current second (0-based), for `--client-stats`.
    pub second: u32,
}

/// The verification pass: the keys to read back, shared by all clients, and the report.
pub struct VerifyJob {
    pub verifier: Arc<Verifier>,
    pub indices: Vec<u64>,
    pub next: AtomicUsize,
    pub report: Mutex<VerifyReport>,
}

impl VerifyJob {
    fn take(&self) -> Option<u64> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.indices.get(i).copied()
    }
}

/// Prints server error replies and reconnects on stderr at most once a second, so a
/// flood of errors neither floods the terminal nor slows the worker.
#[derive(Default)]
pub struct ErrorLog {
    last_print: Option<Instant>,
    suppressed: u64,
}

impl ErrorLog {
    fn report(&mut self, what: std::fmt::Arguments) {
        let now = Instant::now();
        if self
            .last_print
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            self.suppressed += 1;
            return;
        }
        let more = if self.suppressed > 0 {
            format!(" ({} more since the last report)", self.suppressed)
        } else {
            String::new()
        };
        eprintln!("\n{what}{more}");
        self.last_print = Some(now);
        self.suppressed = 0;
    }
}

/// Paces a client to `--rate-limiting` requests per second. Each request has an
/// intended send time; latency counts from it, so a slow server cannot hide queueing.
#[derive(Clone, Copy, Debug)]
struct Pacer {
    interval: Duration,
    next: Instant,
}

/// One benchmark client.
pub struct Client {
    slot: usize,
    conns: Vec<Connection>,
    /// Cluster mode: the connection serving each hash slot (`u16::MAX`: none).
    slot_owner: Option<Vec<u16>>,
    /// Cluster mode: when the topology was last asked for again after a MOVED.
    last_refresh: Option<Instant>,
    reconnect: Option<Reconnect>,
    reconnect_interval: Option<u64>,
    connection_timeout: Option<Duration>,
    pacer: Option<Pacer>,
    ops: OpGenerator,
    /// A generated request waiting for its connection (not ready, or pipeline full).
    held: Option<Op>,
    /// Requests to resend after a redirection: (connection, request, flags).
    resends: VecDeque<(usize, Op, u8)>,
    key_buf: Vec<u8>,
    multi_keys: KeyBatch,
    command_keys: KeyBatch,
    scan: Option<ScanState>,
    /// Requests still to generate; `None` for time-bound runs.
    remaining: Option<u64>,
    pipeline: usize,
    /// This client's own per-second figures, with `--client-stats`.
    series: Option<Box<ClientSeries>>,
}

impl Client {
    /// A client in worker slot `slot` that starts connecting at `start_at`; `requests`
    /// is its share of `-n`; `topology` is the cluster's, in `--cluster-mode`.
    pub fn new(
        slot: usize,
        ops: OpGenerator,
        requests: Option<u64>,
        start_at: Instant,
        plan: &Plan,
        topology: Option<&Topology>,
    ) -> Client {
        let (conns, slot_owner) = match topology {
            Some(topo) => {
                let conns = topo
                    .nodes
                    .iter()
                    .take(MAX_CONNECTIONS_PER_CLIENT)
                    .map(|node| Connection::new(node.endpoint(), node.name(), plan))
                    .collect();
                (conns, Some(topo.slot_owner.clone()))
            }
            None => (
                vec![Connection::new(
                    plan.server.endpoint.clone(),
                    peer_name(&plan.server.endpoint),
                    plan,
                )],
                None,
            ),
        };
        let mut client = Client {
            slot,
            conns,
            slot_owner,
            last_refresh: None,
            reconnect: plan.load.shape.reconnect,
            reconnect_interval: plan.load.shape.reconnect_interval,
            connection_timeout: plan.load.shape.connection_timeout,
            pacer: plan.load.shape.rate_limit.map(|rate| Pacer {
                interval: Duration::from_secs(1) / rate,
                next: start_at,
            }),
            ops,
            held: None,
            resends: VecDeque::new(),
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
            series: plan
                .outputs
                .client_series
                .then(|| Box::new(ClientSeries::new())),
        };
        for conn in &mut client.conns {
            conn.phase_timer = Some(start_at);
        }
        client
    }

    /// This client's `--client-stats` figures, taken at the end of the run.
    pub fn take_series(&mut self) -> Option<ClientSeries> {
        self.series.take().map(|series| *series)
    }

    /// Whether a connection is up and carrying load (for "active clients").
    pub fn is_connected(&self) -> bool {
        self.conns.iter().any(Connection::is_ready)
    }

    /// When the worker should next call [`Client::on_timer`], if at all.
    pub fn next_timer(&self) -> Option<Instant> {
        let conn_timer = self
            .conns
            .iter()
            .filter(|c| c.phase != Phase::Ready)
            .filter_map(|c| c.phase_timer)
            .min();
        // Only when a request could go out at that time: a full pipeline waits for a
        // reply instead (a timer now would fire again and again).
        let could_send = self.remaining != Some(0)
            && self.held.is_none()
            && (0..self.conns.len()).any(|i| self.has_room(i));
        let pace_timer = match self.pacer {
            Some(pacer) if could_send => Some(pacer.next),
            _ => None,
        };
        match (conn_timer, pace_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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
            let due = conn.phase_timer.is_some_and(|t| now >= t);
            let result = match conn.phase {
                Phase::Idle | Phase::Backoff if due => self.open(i, plan, ctx),
                Phase::Connecting | Phase::Handshaking if due => {
                    let waited = self.connection_timeout.unwrap_or_default().as_secs();
                    Err(format!(
                        "connection to {} timed out after {waited} s ({})",
                        conn.peer, plan.names.connection_timeout
                    ))
                }
                _ => Ok(()),
            };
            if let Err(message) = result
                && let Some(status) = self.connection_failed(i, message, plan, ctx)
            {
                return status;
            }
        }
        self.send_and_settle(plan, ctx)
    }

    /// The stall watchdog (`--reply-timeout`), called by the worker once a second: a
    /// connection whose requests got no reply for too long has failed.
    pub fn check_stalled(&mut self, now: Instant, plan: &Plan, ctx: &mut ClientContext) -> Status {
        let Some(timeout) = plan.load.shape.reply_timeout else {
            return Status::Active;
        };
        for i in 0..self.conns.len() {
            let live = matches!(self.conns[i].phase, Phase::Ready | Phase::Handshaking);
            if live && self.conns[i].is_stalled(now, timeout) {
                let message = format!(
                    "no reply from {} in {} s: the server stopped answering ({})",
                    self.conns[i].peer,
                    timeout.as_secs(),
                    plan.names.reply_timeout
                );
                if let Some(status) = self.connection_failed(i, message, plan, ctx) {
                    return status;
                }
            }
        }
        Status::Active
    }

    /// Handles one readiness event of connection `conn`.
    pub fn handle_event(
        &mut self,
        conn: usize,
        event: &Event,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Status {
        if conn >= self.conns.len() {
            return Status::Active;
        }
        if let Err(message) = self.drive(conn, event, plan, ctx)
            && let Some(status) = self.connection_failed(conn, message, plan, ctx)
        {
            return status;
        }
        self.send_and_settle(plan, ctx)
    }

    /// Fills and flushes every connection, then says whether the client is done.
    fn send_and_settle(&mut self, plan: &Plan, ctx: &mut ClientContext) -> Status {
        self.fill(plan, ctx);
        for i in 0..self.conns.len() {
            if self.conns[i].wbuf.is_empty() {
                continue;
            }
            if let Err(message) = self.conns[i].flush()
                && let Some(status) = self.connection_failed(i, message, plan, ctx)
            {
                return status;
            }
        }
        if self.is_finished() {
            Status::Finished
        } else {
            Status::Active
        }
    }

    fn has_work(&self) -> bool {
        self.remaining != Some(0) || self.held.is_some() || !self.resends.is_empty()
    }

    fn is_finished(&self) -> bool {
        !self.has_work() && self.conns.iter().all(Connection::is_idle)
    }

    /// Opens connection `i`.
    fn open(&mut self, i: usize, plan: &Plan, ctx: &mut ClientContext) -> Result<(), String> {
        let token = token_of(self.slot, i);
        let timeout = self.connection_timeout;
        let conn = &mut self.conns[i];
        debug_log!(1, "connecting to {} (token {})", conn.peer, token.0);
        conn.open(plan, ctx.registry, token, timeout)
    }

    /// A connection error: without `--reconnect-on-error` (and outside cluster mode) the
    /// client fails; otherwise the error is counted and the connection is reopened after
    /// the back-off delay. Returns the status to report when the client cannot go on.
    fn connection_failed(
        &mut self,
        i: usize,
        message: String,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Option<Status> {
        let cluster = self.slot_owner.is_some();
        let conn = &mut self.conns[i];
        let row = conn.inflight.front().map_or(rows::SET, |p| p.row as usize);
        if row < ctx.stats.len() {
            ctx.stats[row].connection_errors += 1;
        }
        conn.close(ctx.registry);
        // Requests lost with the connection are sent again on the next one, so `-n N`
        // still means N answered requests (resends were counted once already).
        let lost = conn
            .inflight
            .iter()
            .filter(|p| p.flags & (flags::ASKING | flags::RESENT | flags::TOPOLOGY) == 0)
            .count() as u64;
        let policy = match (self.reconnect, cluster) {
            (Some(policy), _) => policy,
            // A cluster run goes on without a node that died, retrying it once a second
            // (its slots may come back through a failover).
            (None, true) => Reconnect {
                max_attempts: 0,
                backoff_factor: 0.0,
            },
            (None, false) => return Some(Status::Failed(message)),
        };
        if conn.fatal {
            return Some(Status::Failed(message));
        }
        conn.attempts += 1;
        if policy.max_attempts > 0 && conn.attempts > policy.max_attempts {
            return Some(Status::Failed(format!(
                "{message} (gave up after {} reconnect attempts)",
                policy.max_attempts
            )));
        }
        // memtier's schedule: 1 s between attempts, or factor^attempt seconds with a
        // back-off factor, at most a minute.
        let delay = if policy.backoff_factor > 0.0 {
            let secs = policy.backoff_factor.powi(conn.attempts as i32);
            Duration::from_secs_f64(secs.min(MAX_RECONNECT_DELAY.as_secs_f64()))
        } else {
            BASE_RECONNECT_DELAY
        };
        ctx.errors.report(format_args!(
            "{message}; reconnecting in {:.1} s (attempt {})",
            delay.as_secs_f64(),
            conn.attempts
        ));
        conn.reset(plan);
        if ctx.verify.is_none()
            && let Some(left) = self.remaining.as_mut()
        {
            *left += lost;
        }
        conn.phase = Phase::Backoff;
        conn.phase_timer = Some(Instant::now() + delay);
        None
    }

    /// Connect progress and replies on connection `i`.
    fn drive(
        &mut self,
        i: usize,
        event: &Event,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        if self.conns[i].progress_connect(plan)? {
            self.connection_ready(i);
        }
        if event.is_readable() || event.is_read_closed() || event.is_error() {
            let peer_closed = event.is_read_closed();
            while let Some((n, space)) = self.conns[i].read_some()? {
                let received = Instant::now();
                let was_ready = self.conns[i].is_ready();
                self.take_answers(i, received, plan, ctx)?;
                if !was_ready && self.conns[i].is_ready() {
                    self.connection_ready(i);
                }
                // A short read means the socket was drained; with edge-triggered
                // polling the next reply raises a new event, so skip the EAGAIN read.
                if !peer_closed && (!self.conns[i].waiting() || n < space) {
                    break;
                }
            }
        }
        let conn = &self.conns[i];
        if conn.is_ready()
            && conn.is_idle()
            && self.has_work()
            && self
                .reconnect_interval
                .is_some_and(|every| conn.sent_on_connection >= every)
        {
            // --reconnect-interval: every reply is in, so nothing is lost by reconnecting.
            self.conns[i].close(ctx.registry);
            self.open(i, plan, ctx)?;
        }
        Ok(())
    }

    fn connection_ready(&mut self, i: usize) {
        debug_log!(1, "connection to {} ready", self.conns[i].peer);
        if let Some(pacer) = self.pacer.as_mut() {
            // After a (re)connect, pace from now rather than bursting to catch up.
            pacer.next = pacer.next.max(Instant::now());
        }
    }

    /// Records every complete reply in connection `i`'s read buffer.
    fn take_answers(
        &mut self,
        i: usize,
        received: Instant,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        while let Some(answer) = self.conns[i].next_answer(plan)? {
            if answer.pending.flags & flags::TOPOLOGY != 0 {
                // A node that reports no host name means the one this client reached it by.
                let host = match &self.conns[i].endpoint {
                    Endpoint::Tcp { host, .. } => host.clone(),
                    Endpoint::Unix(_) => String::new(),
                };
                let parsed = resp_value::value(self.conns[i].reply_bytes(&answer))
                    .and_then(|(value, _)| cluster::topology_from_slots(&value, &host).ok());
                if let Some(topology) = parsed {
                    self.apply_topology(&topology, plan, ctx);
                }
                continue;
            }
            let bytes = self.conns[i].reply_bytes(&answer);
            let recorded = record_answer(
                &answer,
                bytes,
                received,
                plan,
                ctx,
                &mut self.series,
                &mut self.scan,
                &self.conns[i].peer,
            );
            let redirect = match recorded {
                Ok(redirect) => redirect,
                Err(message) => match message.strip_prefix(FATAL) {
                    // No reconnect can fix these: fail the client, not just the connection.
                    Some(message) => {
                        self.conns[i].fatal = true;
                        return Err(message.to_string());
                    }
                    None => return Err(message),
                },
            };
            if let Some(redirect) = redirect {
                self.follow(i, redirect, answer.pending, plan, ctx)?;
            }
        }
        Ok(())
    }

    /// Follows a MOVED (update the slot map, resend) or ASK (ASKING + resend, once).
    fn follow(
        &mut self,
        source: usize,
        redirect: Redirect,
        pending: Pending,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        let (slot, mut host, port, ask) = match redirect {
            Redirect::Moved { slot, host, port } => (slot, host, port, false),
            Redirect::Ask { slot, host, port } => (slot, host, port, true),
        };
        if host.is_empty() {
            // Redis sends an empty host for "the address you reached me by".
            host = match &self.conns[source].endpoint {
                Endpoint::Tcp { host, .. } => host.clone(),
                Endpoint::Unix(_) => String::new(),
            };
        }
        let target = self.connection_to(&host, port, plan, ctx)?;
        if !ask && let Some(owner) = self.slot_owner.as_mut() {
            owner[usize::from(slot)] = target as u16;
        }
        if !ask {
            self.refresh_topology(source);
        }
        // A request is followed through at most two redirections (ASK then MOVED during
        // a migration); nodes that keep sending it on get an error counted instead.
        let hops = if pending.flags & flags::RESENT_TWICE != 0 {
            3
        } else if pending.flags & flags::RESENT != 0 {
            2
        } else {
            1
        };
        let resendable = matches!(
            pending.op,
            Op::Set { .. } | Op::Get { .. } | Op::Verify { .. }
        );
        if resendable && hops <= 2 {
            let ask_flag = if ask { flags::ASKING } else { 0 };
            let hop_flag = if hops == 1 {
                flags::RESENT
            } else {
                flags::RESENT | flags::RESENT_TWICE
            };
            self.resends
                .push_back((target, pending.op, ask_flag | hop_flag));
        } else {
            let row = usize::from(pending.row);
            if row < ctx.stats.len() {
                ctx.stats[row].errors += 1;
            }
        }
        Ok(())
    }

    /// After a MOVED, asks the node that answered for the whole slot map again (at most
    /// once a second per client): a resharding moves many slots, and one MOVED each would
    /// cost a round trip per slot.
    fn refresh_topology(&mut self, source: usize) {
        let now = Instant::now();
        if self
            .last_refresh
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return;
        }
        self.last_refresh = Some(now);
        let conn = &mut self.conns[source];
        if !conn.is_ready() {
            return;
        }
        crate::protocol::resp::encode_command(&mut conn.wbuf, &[b"CLUSTER", b"SLOTS"]);
        let opaque = conn.take_opaque();
        conn.inflight.push_back(Pending {
            row: rows::SET as u8,
            flags: flags::TOPOLOGY,
            keys: 1,
            opaque,
            tx: 0,
            sent: now,
            verify_index: 0,
            op: Op::Wait {
                replicas: 0,
                timeout_ms: 0,
            },
        });
    }

    /// Routes every slot as a fresh `CLUSTER SLOTS` reply says, opening connections to
    /// masters this client does not know yet.
    fn apply_topology(&mut self, topology: &Topology, plan: &Plan, ctx: &mut ClientContext) {
        let mut index_of = Vec::with_capacity(topology.nodes.len());
        for node in &topology.nodes {
            let host = if node.host.is_empty() {
                node.addr.ip().to_string()
            } else {
                node.host.clone()
            };
            index_of.push(self.connection_to(&host, node.port, plan, ctx).ok());
        }
        if let Some(owner) = self.slot_owner.as_mut() {
            for (slot, node) in topology.slot_owner.iter().enumerate() {
                if let Some(Some(i)) = index_of.get(usize::from(*node)) {
                    owner[slot] = *i as u16;
                }
            }
        }
    }

    /// The index of the connection to `host:port`, opening a new one if needed.
    fn connection_to(
        &mut self,
        host: &str,
        port: u16,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<usize, String> {
        let name = format!("{host}:{port}");
        if let Some(i) = self.conns.iter().position(|c| c.peer == name) {
            return Ok(i);
        }
        if self.conns.len() >= MAX_CONNECTIONS_PER_CLIENT {
            return Err(format!(
                "redirected to {name}, but a client may not open more than {MAX_CONNECTIONS_PER_CLIENT} connections"
            ));
        }
        let node = cluster::resolve_node(host, port)
            .ok_or_else(|| format!("cannot resolve redirected node {name}"))?;
        self.conns
            .push(Connection::new(node.endpoint(), name, plan));
        let i = self.conns.len() - 1;
        if let Err(message) = self.open(i, plan, ctx)
            && let Some(Status::Failed(message)) = self.connection_failed(i, message, plan, ctx)
        {
            return Err(message);
        }
        Ok(i)
    }

    /// The connection a request for key `key_buf` goes to.
    fn route(&self) -> usize {
        match &self.slot_owner {
            Some(owner) => {
                let slot = cluster::key_slot(&self.key_buf);
                match usize::from(owner[usize::from(slot)]) {
                    // Unserved, or a master beyond the connections this client holds.
                    i if i >= self.conns.len() => 0,
                    i => i,
                }
            }
            None => 0,
        }
    }

    /// Whether connection `i` can take one more request now.
    fn has_room(&self, i: usize) -> bool {
        let conn = &self.conns[i];
        conn.is_ready()
            && conn.inflight.len() < self.pipeline
            && self
                .reconnect_interval
                .is_none_or(|every| conn.sent_on_connection < every)
    }

    /// Sends redirected requests first, then new ones, until connections are full, the
    /// client's share is sent, or (when rate-limited) the next request is not due yet.
    fn fill(&mut self, plan: &Plan, ctx: &mut ClientContext) {
        let mut batch_time = None;
        while let Some(&(i, op, flag)) = self.resends.front() {
            if !self.has_room(i) {
                break;
            }
            self.resends.pop_front();
            let sent = *batch_time.get_or_insert_with(Instant::now);
            self.send_op(i, op, flag, sent, plan, ctx);
        }
        loop {
            let op = match self.held.take() {
                Some(op) => op,
                None => {
                    if self.remaining == Some(0) {
                        break;
                    }
                    if let Some(pacer) = self.pacer.as_ref() {
                        let now = *batch_time.get_or_insert_with(Instant::now);
                        if pacer.next > now {
                            break;
                        }
                    }
                    let op = match ctx.verify {
                        Some(job) => match job.take() {
                            Some(index) => Op::Verify { index },
                            None => {
                                self.remaining = Some(0);
                                break;
                            }
                        },
                        None => self.ops.next_op(),
                    };
                    if let Some(left) = self.remaining.as_mut() {
                        *left -= 1;
                    }
                    op
                }
            };
            let i = if self.slot_owner.is_some() {
                self.prepare_key(op, plan, ctx);
                self.route()
            } else {
                0
            };
            if !self.has_room(i) {
                if self.slot_owner.is_some() && self.conns[i].phase == Phase::Backoff {
                    // The node is down: this request cannot be sent, and counts as failed.
                    let row = row_of(&op);
                    if row < ctx.stats.len() {
                        ctx.stats[row].connection_errors += 1;
                    }
                    continue;
                }
                self.held = Some(op);
                break;
            }
            let sent = match self.pacer.as_mut() {
                Some(pacer) => {
                    let due = pacer.next;
                    pacer.next += pacer.interval;
                    due
                }
                // One clock read per batch: every request in it goes out in the same write.
                None => *batch_time.get_or_insert_with(Instant::now),
            };
            self.send_op(i, op, 0, sent, plan, ctx);
        }
    }

    /// Puts the key of `op` into `key_buf` (for routing).
    fn prepare_key(&mut self, op: Op, plan: &Plan, ctx: &ClientContext) {
        match op {
            Op::Set { key_id, .. } | Op::Get { key_id } => {
                self.load_key(plan, key_id);
            }
            Op::Verify { index } => {
                if let Some(job) = ctx.verify {
                    job.verifier.write_key(index, &mut self.key_buf);
                }
            }
            Op::Command { .. } => match self.ops.multi_keys().first() {
                Some(&id) => write_key(&mut self.key_buf, &plan.workload.keys.prefix, id),
                None => self.key_buf.clear(),
            },
            Op::MultiGet | Op::Wait { .. } => self.key_buf.clear(),
        }
    }

    /// Encodes `op` on connection `i` and records it as in flight.
    fn send_op(
        &mut self,
        i: usize,
        op: Op,
        flag: u8,
        sent: Instant,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        if flag & flags::ASKING != 0 {
            let conn = &mut self.conns[i];
            crate::protocol::resp::encode_command(&mut conn.wbuf, &[b"ASKING"]);
            let opaque = conn.take_opaque();
            conn.inflight.push_back(Pending {
                row: rows::SET as u8,
                flags: flags::ASKING,
                keys: 1,
                opaque,
                tx: 0,
                sent,
                verify_index: 0,
                op,
            });
        }
        if self.conns[i].inflight.is_empty() {
            // Nothing was outstanding: the wait for a reply starts now.
            self.conns[i].last_progress = sent.max(self.conns[i].last_progress);
        }
        let before = self.conns[i].wbuf.len();
        let opaque = self.conns[i].take_opaque();
        let (row, keys, scan) = self.encode_op(i, op, opaque, plan, ctx);
        let conn = &mut self.conns[i];
        debug_log!(
            2,
            "request to {}: {}",
            conn.peer,
            String::from_utf8_lossy(&conn.wbuf[before..]).escape_debug()
        );
        let scan_flag = if scan { flags::SCAN } else { 0 };
        let multi_flag = if matches!(op, Op::MultiGet) {
            flags::MULTI
        } else {
            0
        };
        conn.inflight.push_back(Pending {
            row: row as u8,
            flags: flag & !flags::ASKING | scan_flag | multi_flag,
            keys,
            opaque,
            tx: (conn.wbuf.len() - before) as u32,
            sent,
            verify_index: match op {
                Op::Verify { index } => index,
                _ => 0,
            },
            op,
        });
        conn.sent_on_connection += 1;
    }

    /// Puts the key of `key_id` in `key_buf`: an imported item's key, or prefix + id.
    fn load_key(&mut self, plan: &Plan, key_id: u64) -> Option<usize> {
        let item = plan
            .workload
            .dataset
            .item_index(key_id, &plan.workload.keys);
        match (item, &plan.workload.dataset.import) {
            (Some(index), Some(data)) if !data.generated_keys() => {
                self.key_buf.clear();
                self.key_buf.extend_from_slice(data.item(index).key);
            }
            _ => write_key(&mut self.key_buf, &plan.workload.keys.prefix, key_id),
        }
        item
    }

    /// A read of the key in `key_buf` on connection `i`: GET, or GETRANGE with
    /// `--data-offset`.
    fn encode_read(&mut self, i: usize, plan: &Plan, opaque: u32) {
        let conn = &mut self.conns[i];
        let offset = plan.load.shape.data_offset;
        if offset > 0 {
            conn.codec
                .encode_getrange(&mut conn.wbuf, &self.key_buf, offset);
        } else {
            conn.codec.encode_get(&mut conn.wbuf, &self.key_buf, opaque);
        }
    }

    /// Encodes `op` on connection `i`; returns its stats row, its key count and whether
    /// it is a SCAN to follow.
    fn encode_op(
        &mut self,
        i: usize,
        op: Op,
        opaque: u32,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> (usize, u32, bool) {
        let prefix = &plan.workload.keys.prefix;
        let offset = plan.load.shape.data_offset;
        match op {
            Op::Set {
                key_id,
                value_size,
                expiry_secs,
            } => {
                let item = self.load_key(plan, key_id);
                let (value, expiry) = match (item, &plan.workload.dataset.import) {
                    (Some(index), Some(data)) => {
                        let item = data.item(index);
                        // --expiry-range overrides the file's expiry, as in memtier.
                        let expiry = if plan.load.shape.expiry_range.is_some() {
                            expiry_secs
                        } else {
                            item.expiry_secs
                        };
                        (item.value, expiry)
                    }
                    _ => (ctx.values.value(value_size, self.ops.rng()), expiry_secs),
                };
                let conn = &mut self.conns[i];
                if offset > 0 {
                    conn.codec
                        .encode_setrange(&mut conn.wbuf, &self.key_buf, offset, value);
                } else {
                    conn.codec
                        .encode_set(&mut conn.wbuf, &self.key_buf, value, expiry, opaque);
                }
                if let Some(written) = ctx.written {
                    written.mark(item.map_or(key_id, |index| index as u64));
                }
                (rows::SET, 1, false)
            }
            Op::Get { key_id } => {
                self.load_key(plan, key_id);
                self.encode_read(i, plan, opaque);
                (rows::GET, 1, false)
            }
            Op::Verify { index } => {
                if let Some(job) = ctx.verify {
                    job.verifier.write_key(index, &mut self.key_buf);
                }
                self.encode_read(i, plan, opaque);
                (rows::GET, 1, false)
            }
            Op::MultiGet => {
                self.multi_keys.clear();
                for &id in self.ops.multi_keys() {
                    match (
                        plan.workload.dataset.item_index(id, &plan.workload.keys),
                        &plan.workload.dataset.import,
                    ) {
                        (Some(index), Some(data)) if !data.generated_keys() => {
                            self.multi_keys.push(data.item(index).key)
                        }
                        _ => self.multi_keys.push_key(prefix, id),
                    }
                }
                let conn = &mut self.conns[i];
                conn.codec
                    .encode_multi_get(&mut conn.wbuf, &self.multi_keys, opaque);
                (rows::GET, self.multi_keys.len() as u32, false)
            }
            Op::Wait {
                replicas,
                timeout_ms,
            } => {
                let conn = &mut self.conns[i];
                conn.codec.encode_wait(&mut conn.wbuf, replicas, timeout_ms);
                (rows::WAIT, 1, false)
            }
            Op::Command { index, value_size } => {
                self.encode_command(i, plan, ctx, index, value_size)
            }
        }
    }

    /// Encodes `--command` number `index` with fresh keys and data on connection `i`.
    fn encode_command(
        &mut self,
        i: usize,
        plan: &Plan,
        ctx: &mut ClientContext,
        index: usize,
        value_size: usize,
    ) -> (usize, u32, bool) {
        let Some(arbitrary) = plan.workload.arbitrary.as_deref() else {
            return (0, 1, false);
        };
        let cmd = &arbitrary.list.commands[index];
        self.command_keys.clear();
        for &id in self.ops.multi_keys() {
            self.command_keys.push_key(&plan.workload.keys.prefix, id);
        }
        let value = ctx.values.value(value_size, self.ops.rng());
        let wbuf = &mut self.conns[i].wbuf;
        if let (Some(plan), Some(cursor)) = (
            &arbitrary.list.scan,
            self.scan.as_ref().and_then(ScanState::next_cursor),
        ) {
            let key = self.command_keys.get(0).unwrap_or(b"");
            plan.continuation
                .encode_resp_cursor(wbuf, cursor, key, value);
            return (plan.row, 1, true);
        }
        let monitor = arbitrary.monitor.as_deref();
        let monitor_index = match monitor {
            Some(m) if cmd.template.is_monitor_random() => {
                m.pick(arbitrary.monitor_pattern, self.ops.rng())
            }
            _ => 0,
        };
        cmd.template
            .encode_resp_keys(wbuf, &self.command_keys, value, monitor, monitor_index);
        (cmd.stat_row(monitor, monitor_index), 1, self.scan.is_some())
    }
}

/// The stats row an operation is counted in.
fn row_of(op: &Op) -> usize {
    match op {
        Op::Set { .. } => rows::SET,
        Op::Wait { .. } => rows::WAIT,
        _ => rows::GET,
    }
}

/// `host:port` or the socket path, for messages.
pub fn peer_name(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Tcp { host, addr } => {
            if addr.is_ipv6() && host.contains(':') {
                format!("[{host}]:{}", addr.port())
            } else {
                format!("{host}:{}", addr.port())
            }
        }
        Endpoint::Unix(path) => path.display().to_string(),
    }
}

/// Records one reply: latency, bytes, hits and misses, errors, the client's own series,
/// verification and SCAN cursors. Returns a cluster redirection to follow, if any.
#[allow(clippy::too_many_arguments)] // the disjoint parts of a client that a reply touches
fn record_answer(
    answer: &Answer,
    bytes: &[u8],
    received: Instant,
    plan: &Plan,
    ctx: &mut ClientContext,
    series: &mut Option<Box<ClientSeries>>,
    scan: &mut Option<ScanState>,
    peer: &str,
) -> Result<Option<Redirect>, String> {
    let pending = answer.pending;
    let reply = answer.reply;
    let text = reply.text(bytes);
    if pending.flags & flags::ASKING != 0 {
        return Ok(None);
    }
    let row = pending.row as usize;
    let latency_us = received.saturating_duration_since(pending.sent).as_micros() as u64;
    let stats = &mut ctx.stats[row];
    if reply.kind == ReplyKind::Error && plan.server.cluster_mode {
        let redirect = cluster::parse_redirect(text);
        match &redirect {
            Some(Redirect::Moved { .. }) => stats.moved += 1,
            Some(Redirect::Ask { .. }) => stats.ask += 1,
            None => {}
        }
        // A request that will be resent is recorded once, when its real answer comes.
        if redirect.is_some()
            && matches!(
                pending.op,
                Op::Set { .. } | Op::Get { .. } | Op::Verify { .. }
            )
        {
            return Ok(redirect);
        }
    }
    stats.record(latency_us, u64::from(pending.tx), reply.len as u64);
    // The per-client files have SET/GET/WAIT columns only (as memtier's): arbitrary
    // command rows are reported in the table and JSON, not there.
    if let Some(series) = series.as_mut()
        && plan.workload.arbitrary.is_none()
    {
        series.record(
            ctx.second,
            row,
            latency_us,
            u64::from(pending.tx),
            reply.len as u64,
        );
    }
    debug_log!(
        2,
        "reply from {peer}: {} bytes ({:?}) after {latency_us} us",
        reply.len,
        reply.kind
    );
    if let Some(job) = ctx.verify {
        check_value(job, pending.verify_index, reply.kind, text);
        return Ok(None);
    }
    if pending.flags & flags::SCAN != 0
        && let Some(state) = scan.as_mut()
    {
        state.on_reply(first_bulk(bytes).and_then(scan_cursor));
    }
    let is_get = plan.workload.arbitrary.is_none() && row == rows::GET;
    let (hits, misses) = match reply.kind {
        ReplyKind::Error => {
            // Redis NOAUTH, memcached -Y "unauthenticated", memcached SASL "Auth failure."
            if text.starts_with(b"NOAUTH")
                || text.ends_with(b"unauthenticated")
                || text.starts_with(b"Auth failure")
            {
                return Err(format!(
                    "{FATAL}server {peer} requires authentication: use {}",
                    plan.names.authenticate
                ));
            }
            if text.starts_with(b"CLUSTERDOWN") {
                return Err(format!(
                    "{FATAL}the cluster is down ({peer}: {})",
                    String::from_utf8_lossy(text)
                ));
            }
            stats.errors += 1;
            ctx.errors.report(format_args!(
                "server {peer} replied with an error: {}",
                String::from_utf8_lossy(text)
            ));
            (0, 0)
        }
        _ if !is_get => (0, 0),
        ReplyKind::Array | ReplyKind::Nil if pending.flags & flags::MULTI != 0 => {
            let misses = u64::from(reply.nil_elements.min(pending.keys));
            (u64::from(pending.keys) - misses, misses)
        }
        ReplyKind::Nil => (0, 1),
        // GETRANGE answers an empty string for a missing key.
        ReplyKind::Bulk if plan.load.shape.data_offset > 0 && reply.payload.1 == 0 => (0, 1),
        _ => (1, 0),
    };
    stats.hits += hits;
    stats.misses += misses;
    if let Some(series) = series.as_mut()
        && (hits > 0 || misses > 0)
    {
        series.hit(ctx.second, hits);
        series.miss(ctx.second, misses);
    }
    Ok(None)
}

/// Records what a verification read found for key `index`.
fn check_value(job: &VerifyJob, index: u64, kind: ReplyKind, text: &[u8]) {
    let mut key = Vec::new();
    job.verifier.write_key(index, &mut key);
    let mut report = job.report.lock().unwrap_or_else(|e| e.into_inner());
    match kind {
        ReplyKind::Error => report.record_error(&key, &String::from_utf8_lossy(text)),
        ReplyKind::Nil => {
            let outcome = job.verifier.check(&key, None);
            report.record(&key, outcome);
        }
        _ => {
            let outcome = job.verifier.check(&key, Some(text));
            report.record(&key, outcome);
        }
    }
}
