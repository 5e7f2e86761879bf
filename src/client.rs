//! One connection's state machine: connect, handshake, keep the pipeline full, decode,
//! record; reconnect when asked to.
//!
//! ```text
//! Idle --start time (ramp-up, jitter)--> Connecting --connected--> Handshaking
//! Handshaking --AUTH / HELLO / SELECT replies OK--> Ready --all sent and answered--> Finished
//! Ready --reconnect-interval reached, replies in--> Connecting (a fresh connection)
//! any --error, EOF, garbage, timeout--> Failed(message), or with --reconnect-on-error
//!       Backoff --delay--> Connecting
//! ```
//!
//! The socket is registered once per connection, edge-triggered, for both directions.
//! Reads stop as soon as every in-flight reply is decoded or a read comes back short (the
//! socket is drained), so the steady state costs one `write` and one `read` per pipeline
//! batch. Timers (start, pacing, back-off, connect timeout) are the worker's: the client
//! only says when it next wants to be woken ([`Client::next_timer`]).

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::{Registry, Token};

use crate::config::{Config, Credentials, Protocol};
use crate::debug_log;
use crate::protocol::memcache_binary;
use crate::protocol::memcache_text;
use crate::protocol::{Codec, Decode, Expect, ReplyKind, resp};
use crate::report::client_stats::ClientSeries;
use crate::shape::Reconnect;
use crate::stats::{OpStats, rows};
use crate::transport::Transport;
use crate::workload::commands::{KeyBatch, ScanState, scan_cursor};
use crate::workload::generator::{Op, OpGenerator};
use crate::workload::keys::{KeyList, write_key};
use crate::workload::values::ValuePool;
use crate::workload::verify::{Verifier, VerifyReport, WrittenKeys};

/// Read buffer size to start with; grown only for replies larger than this.
const INITIAL_READ_BUFFER: usize = 64 * 1024;
/// Free space wanted before each read.
const MIN_READ_SPACE: usize = 16 * 1024;
/// Pause between reconnect attempts without a back-off factor (memtier's).
const BASE_RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// Longest pause between reconnect attempts, whatever the back-off factor (memtier's).
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(60);

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
    /// The worker's stats for the current second, indexed by `stats::rows`.
    pub stats: &'a mut [OpStats],
    pub values: &'a ValuePool,
    pub errors: &'a mut ErrorLog,
    /// `host:port` or the socket path, for messages.
    pub peer: &'a str,
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

/// A setup command whose reply must be checked before load starts.
#[derive(Clone, Copy, Debug)]
enum SetupStep {
    Auth,
    Hello(u8),
    Select(u32),
}

impl SetupStep {
    fn expect(self) -> Expect {
        match self {
            SetupStep::Auth => Expect::Auth,
            SetupStep::Hello(_) | SetupStep::Select(_) => Expect::Setup,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not started yet (ramp-up or start jitter).
    Idle,
    Connecting,
    Handshaking,
    Ready,
    /// Waiting before a reconnect attempt.
    Backoff,
}

/// A request on the wire whose reply has not arrived yet.
#[derive(Clone, Copy, Debug)]
struct Pending {
    row: u8,
    /// A SCAN whose reply carries the cursor to follow.
    scan: bool,
    /// The key index a verification read checks.
    verify_index: u64,
    /// Keys the request reads (multi-key gets), for hit/miss counts.
    keys: u32,
    /// Sequence number echoed by memcache binary replies, checked to catch a stream out of step.
    opaque: u32,
    /// Bytes this request took on the wire.
    tx: u32,
    /// When it was sent, or in rate-limited runs when it should have been.
    sent: Instant,
}

/// Paces a connection to `--rate-limiting` requests per second. Each request has an
/// intended send time; latency counts from it, so a slow server cannot hide queueing.
#[derive(Clone, Copy, Debug)]
struct Pacer {
    interval: Duration,
    next: Instant,
}

/// One benchmark connection (reconnecting keeps the same `Client`).
pub struct Client {
    token: Token,
    transport: Option<Transport>,
    phase: Phase,
    /// Idle: when to start. Backoff: when to retry. Connecting/Handshaking: the deadline.
    phase_timer: Option<Instant>,
    reconnect: Option<Reconnect>,
    /// Failed attempts since the last successful connection.
    attempts: u32,
    sent_on_connection: u64,
    reconnect_interval: Option<u64>,
    connection_timeout: Option<Duration>,
    pacer: Option<Pacer>,
    setup: VecDeque<SetupStep>,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    codec: Codec,
    next_opaque: u32,
    inflight: VecDeque<Pending>,
    ops: OpGenerator,
    key_buf: Vec<u8>,
    multi_keys: KeyList,
    command_keys: KeyBatch,
    scan: Option<ScanState>,
    /// Requests still to send; `None` for time-bound runs.
    remaining: Option<u64>,
    pipeline: usize,
    /// Set when the last error is one no reconnect can fix (bad password, bad SELECT).
    fatal: bool,
    /// This client's own per-second figures, with `--client-stats`.
    series: Option<Box<ClientSeries>>,
}

impl Client {
    /// A client that starts connecting at `start_at`; `requests` is its share of `-n`.
    pub fn new(
        token: Token,
        ops: OpGenerator,
        requests: Option<u64>,
        start_at: Instant,
        config: &Config,
    ) -> Client {
        let pacer = config.shape.rate_limit.map(|rate| Pacer {
            interval: Duration::from_secs(1) / rate,
            next: start_at,
        });
        Client {
            token,
            transport: None,
            phase: Phase::Idle,
            phase_timer: Some(start_at),
            reconnect: config.shape.reconnect,
            attempts: 0,
            sent_on_connection: 0,
            reconnect_interval: config.shape.reconnect_interval,
            connection_timeout: config.shape.connection_timeout,
            pacer,
            setup: VecDeque::new(),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            rbuf: vec![0; INITIAL_READ_BUFFER],
            rstart: 0,
            rend: 0,
            codec: Codec::new(config.protocol),
            next_opaque: 0,
            inflight: VecDeque::with_capacity(config.pipeline),
            ops,
            key_buf: Vec::with_capacity(config.keys.prefix.len() + 20),
            multi_keys: KeyList::default(),
            command_keys: KeyBatch::new(),
            scan: config
                .arbitrary
                .as_ref()
                .and_then(|a| a.scan_max_iterations)
                .map(ScanState::new),
            remaining: requests,
            pipeline: config.pipeline,
            fatal: false,
            series: config
                .output
                .client_stats
                .as_ref()
                .map(|_| Box::new(ClientSeries::new())),
        }
    }

    /// This client's `--client-stats` figures, taken at the end of the run.
    pub fn take_series(&mut self) -> Option<ClientSeries> {
        self.series.take().map(|series| *series)
    }

    /// Whether the connection is up and carrying load (for "active clients").
    pub fn is_connected(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// When the worker should next call [`Client::on_timer`], if at all.
    pub fn next_timer(&self) -> Option<Instant> {
        match self.phase {
            Phase::Idle | Phase::Backoff | Phase::Connecting | Phase::Handshaking => {
                self.phase_timer
            }
            Phase::Ready => match self.pacer {
                Some(pacer) if self.can_send() => Some(pacer.next),
                _ => None,
            },
        }
    }

    /// Closes the connection for good (end of run or of this client).
    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut transport) = self.transport.take() {
            let _ = transport.deregister(registry);
            transport.shutdown();
        }
    }

    /// Handles a timer set by [`Client::next_timer`].
    pub fn on_timer(&mut self, now: Instant, config: &Config, ctx: &mut ClientContext) -> Status {
        let result = match self.phase {
            Phase::Idle | Phase::Backoff if self.phase_timer.is_some_and(|t| now >= t) => {
                self.open(config, ctx)
            }
            Phase::Connecting | Phase::Handshaking
                if self.phase_timer.is_some_and(|t| now >= t) =>
            {
                let waited = self.connection_timeout.unwrap_or_default().as_secs();
                Err(format!(
                    "connection to {} timed out after {waited} s (--connection-timeout)",
                    ctx.peer
                ))
            }
            Phase::Ready => {
                self.fill(config, ctx);
                self.flush(ctx.peer)
            }
            _ => Ok(()),
        };
        self.settle(result, config, ctx)
    }

    /// Handles one readiness event.
    pub fn handle_event(
        &mut self,
        event: &Event,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Status {
        let result = self.drive(event, config, ctx);
        self.settle(result, config, ctx)
    }

    /// Turns the outcome of a step into a status, reconnecting on errors when asked to.
    fn settle(
        &mut self,
        result: Result<(), String>,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Status {
        match result {
            Ok(()) if self.is_finished() => Status::Finished,
            Ok(()) => Status::Active,
            Err(message) => self.connection_failed(message, config, ctx),
        }
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Ready
            && self.remaining == Some(0)
            && self.inflight.is_empty()
            && self.wbuf.is_empty()
    }

    fn can_send(&self) -> bool {
        self.inflight.len() < self.pipeline
            && self.remaining != Some(0)
            && self
                .reconnect_interval
                .is_none_or(|every| self.sent_on_connection < every)
    }

    /// Starts a connection: non-blocking connect, registration, connect deadline.
    fn open(&mut self, config: &Config, ctx: &mut ClientContext) -> Result<(), String> {
        self.reset_connection_state(config);
        let mut transport = Transport::connect(config)
            .map_err(|err| format!("cannot connect to {}: {}", ctx.peer, describe(&err)))?;
        transport
            .register(ctx.registry, self.token)
            .map_err(|err| format!("cannot register connection: {err}"))?;
        self.transport = Some(transport);
        debug_log!(1, "connecting to {} (token {})", ctx.peer, self.token.0);
        self.phase = Phase::Connecting;
        self.phase_timer = self.connection_timeout.map(|t| Instant::now() + t);
        Ok(())
    }

    /// Forgets everything tied to the previous connection; lost requests stay lost.
    fn reset_connection_state(&mut self, config: &Config) {
        self.setup.clear();
        self.inflight.clear();
        self.wbuf.clear();
        self.wpos = 0;
        self.rstart = 0;
        self.rend = 0;
        self.codec = Codec::new(config.protocol);
        self.sent_on_connection = 0;
    }

    /// A connection error: without `--reconnect-on-error` the client fails; with it, the
    /// error is counted and a new connection is tried after the back-off delay.
    fn connection_failed(
        &mut self,
        message: String,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Status {
        let row = self.inflight.front().map_or(rows::SET, |p| p.row as usize);
        ctx.stats[row].connection_errors += 1;
        self.close(ctx.registry);
        let Some(reconnect) = self.reconnect.filter(|_| !self.fatal) else {
            return Status::Failed(message);
        };
        self.attempts += 1;
        if reconnect.max_attempts > 0 && self.attempts > reconnect.max_attempts {
            return Status::Failed(format!(
                "{message} (gave up after {} reconnect attempts)",
                reconnect.max_attempts
            ));
        }
        // memtier's schedule: 1 s between attempts, or factor^attempt seconds with a
        // back-off factor, at most a minute.
        let delay = if reconnect.backoff_factor > 0.0 {
            let secs = reconnect.backoff_factor.powi(self.attempts as i32);
            Duration::from_secs_f64(secs.min(MAX_RECONNECT_DELAY.as_secs_f64()))
        } else {
            BASE_RECONNECT_DELAY
        };
        ctx.errors.report(format_args!(
            "{message}; reconnecting in {:.1} s (attempt {})",
            delay.as_secs_f64(),
            self.attempts
        ));
        self.reset_connection_state(config);
        self.phase = Phase::Backoff;
        self.phase_timer = Some(Instant::now() + delay);
        Status::Active
    }

    fn drive(
        &mut self,
        event: &Event,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        let Some(transport) = self.transport.as_mut() else {
            return Ok(());
        };
        if self.phase == Phase::Connecting {
            match transport.finish_connect() {
                Err(err) => {
                    return Err(format!(
                        "cannot connect to {}: {}",
                        ctx.peer,
                        describe(&err)
                    ));
                }
                Ok(false) => return Ok(()),
                Ok(true) => self.start_setup(config),
            }
        }
        if event.is_readable() || event.is_read_closed() || event.is_error() {
            self.read_replies(event.is_read_closed(), config, ctx)?;
        }
        if self.phase == Phase::Ready
            && self.inflight.is_empty()
            && self.wbuf.is_empty()
            && self.remaining != Some(0)
            && self
                .reconnect_interval
                .is_some_and(|every| self.sent_on_connection >= every)
        {
            // --reconnect-interval: every reply is in, so nothing is lost by reconnecting.
            self.close(ctx.registry);
            return self.open(config, ctx);
        }
        self.fill(config, ctx);
        self.flush(ctx.peer)
    }

    /// Queues authentication, HELLO and SELECT as the protocol and flags ask; with none,
    /// load starts at once.
    fn start_setup(&mut self, config: &Config) {
        if let Some(credentials) = &config.credentials {
            self.encode_auth(config.protocol, credentials);
            self.setup.push_back(SetupStep::Auth);
        }
        let hello = match config.protocol {
            Protocol::Resp2 => Some(2u8),
            Protocol::Resp3 => Some(3u8),
            _ => None,
        };
        if let Some(version) = hello {
            let digit = [b'0' + version];
            resp::encode_command(&mut self.wbuf, &[b"HELLO", &digit]);
            self.setup.push_back(SetupStep::Hello(version));
        }
        if let Some(db) = config.select_db {
            let mut digits = itoa::Buffer::new();
            resp::encode_command(&mut self.wbuf, &[b"SELECT", digits.format(db).as_bytes()]);
            self.setup.push_back(SetupStep::Select(db));
        }
        if self.setup.is_empty() {
            self.become_ready();
        } else {
            self.phase = Phase::Handshaking;
        }
    }

    fn become_ready(&mut self) {
        debug_log!(1, "connection {} ready", self.token.0);
        self.phase = Phase::Ready;
        self.phase_timer = None;
        self.attempts = 0;
        if let Some(pacer) = self.pacer.as_mut() {
            // After a (re)connect, pace from now rather than bursting to catch up.
            pacer.next = pacer.next.max(Instant::now());
        }
    }

    /// Redis: AUTH [user] password. memcache binary: SASL PLAIN. memcache text: the
    /// `set` carrying "user password" that memcached's `-Y` authentication expects.
    fn encode_auth(&mut self, protocol: Protocol, credentials: &Credentials) {
        let password = credentials.password.as_bytes();
        let user = credentials.user.as_deref().unwrap_or("").as_bytes();
        match protocol {
            Protocol::Redis | Protocol::Resp2 | Protocol::Resp3 => match &credentials.user {
                Some(user) => {
                    resp::encode_command(&mut self.wbuf, &[b"AUTH", user.as_bytes(), password])
                }
                None => resp::encode_command(&mut self.wbuf, &[b"AUTH", password]),
            },
            Protocol::MemcacheBinary => {
                memcache_binary::encode_sasl_auth_plain(&mut self.wbuf, user, password, 0)
            }
            Protocol::MemcacheText => {
                let mut token = Vec::with_capacity(user.len() + 1 + password.len());
                token.extend_from_slice(user);
                token.push(b' ');
                token.extend_from_slice(password);
                memcache_text::encode_set(&mut self.wbuf, b"kvbench-auth", &token, 0);
            }
        }
    }

    /// Reads and decodes until every in-flight reply is in or the socket is drained.
    /// With `peer_closed`, reads on to the end of the stream, so a final reply and the
    /// server's close that arrive in one event are both seen.
    fn read_replies(
        &mut self,
        peer_closed: bool,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        loop {
            self.make_read_space();
            let space = self.rbuf.len() - self.rend;
            let Some(transport) = self.transport.as_mut() else {
                return Ok(());
            };
            match transport.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => {
                    return Err(format!("connection closed by server {}", ctx.peer));
                }
                Ok(n) => {
                    self.rend += n;
                    let received = Instant::now();
                    self.decode_replies(received, config, ctx)?;
                    // A short read means the socket was drained; with edge-triggered
                    // polling the next reply raises a new event, so skip the EAGAIN read.
                    let waiting = !self.inflight.is_empty() || !self.setup.is_empty();
                    if !peer_closed && (!waiting || n < space) {
                        return Ok(());
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    return Err(format!(
                        "connection to {} failed: {}",
                        ctx.peer,
                        describe(&err)
                    ));
                }
            }
        }
    }

    /// Makes room at the end of the read buffer: compacts, and grows for a large reply.
    fn make_read_space(&mut self) {
        let needed = self.codec.bytes_needed_hint();
        let tail_room = self.rbuf.len() - self.rend;
        let fits = needed == 0 || self.rstart + needed <= self.rbuf.len();
        if tail_room >= MIN_READ_SPACE && fits {
            return;
        }
        if self.rstart > 0 {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
        let wanted = needed.max(self.rend + MIN_READ_SPACE);
        if wanted > self.rbuf.len() {
            self.rbuf.resize(wanted.next_power_of_two(), 0);
        }
    }

    fn decode_replies(
        &mut self,
        received: Instant,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        while self.rstart < self.rend {
            let expect = match (self.setup.front(), self.inflight.front()) {
                (Some(step), _) => step.expect(),
                (None, Some(pending)) if pending.keys > 1 => Expect::MultiGet(pending.keys),
                (None, Some(pending)) if pending.row as usize == rows::GET => Expect::Get,
                (None, Some(_)) => Expect::Store,
                // Nothing is expected: only RESP3 push data may legally arrive now.
                (None, None) => Expect::Setup,
            };
            let reply = match self
                .codec
                .decode(&self.rbuf[self.rstart..self.rend], expect)
            {
                Decode::Incomplete => break,
                Decode::Invalid(why) => {
                    return Err(format!("invalid reply from {}: {why}", ctx.peer));
                }
                Decode::Complete(reply) => reply,
            };
            let start = self.rstart;
            self.rstart += reply.len;
            let text = reply.text(&self.rbuf[start..self.rstart]);
            if reply.kind == ReplyKind::Push {
                // RESP3 out-of-band data (e.g. invalidations) answers no request.
                continue;
            }
            if let Some(step) = self.setup.pop_front() {
                if let Err(message) = check_setup_reply(step, reply.kind, text, config) {
                    self.fatal = true;
                    return Err(message);
                }
                if self.setup.is_empty() {
                    self.become_ready();
                }
                continue;
            }
            let Some(pending) = self.inflight.pop_front() else {
                return Err(format!(
                    "unexpected reply from {} with no request in flight",
                    ctx.peer
                ));
            };
            if let Some(opaque) = self.codec.reply_opaque(&self.rbuf[start..self.rstart])
                && opaque != pending.opaque
            {
                return Err(format!(
                    "invalid reply from {}: answers request {opaque}, expected {}",
                    ctx.peer, pending.opaque
                ));
            }
            let latency_us = received.saturating_duration_since(pending.sent).as_micros() as u64;
            let stats = &mut ctx.stats[pending.row as usize];
            stats.record(latency_us, u64::from(pending.tx), reply.len as u64);
            if let Some(series) = self.series.as_mut() {
                series.record(
                    ctx.second,
                    pending.row as usize,
                    latency_us,
                    u64::from(pending.tx),
                    reply.len as u64,
                );
            }
            debug_log!(
                2,
                "server {}: reply of {} bytes ({:?}) after {} us",
                ctx.peer,
                reply.len,
                reply.kind,
                latency_us
            );
            if let Some(job) = ctx.verify {
                check_value(job, pending.verify_index, reply.kind, text);
                continue;
            }
            if pending.scan
                && let Some(state) = self.scan.as_mut()
            {
                state.on_reply(first_bulk(&self.rbuf[start..self.rstart]).and_then(scan_cursor));
            }
            let is_get = config.arbitrary.is_none() && pending.row as usize == rows::GET;
            match reply.kind {
                ReplyKind::Error => {
                    if text.starts_with(b"NOAUTH") || text.ends_with(b"unauthenticated") {
                        self.fatal = true;
                        return Err(format!(
                            "server {} requires authentication: use -a PASSWORD or -a USER:PASSWORD",
                            ctx.peer
                        ));
                    }
                    stats.errors += 1;
                    ctx.errors.report(format_args!(
                        "server {} replied with an error: {}",
                        ctx.peer,
                        String::from_utf8_lossy(text)
                    ));
                }
                _ if !is_get => {}
                ReplyKind::Array | ReplyKind::Nil if pending.keys > 1 => {
                    let misses = u64::from(reply.nil_elements.min(pending.keys));
                    self.count_gets(stats, ctx.second, u64::from(pending.keys) - misses, misses);
                }
                ReplyKind::Nil => self.count_gets(stats, ctx.second, 0, 1),
                // GETRANGE answers an empty string for a missing key.
                ReplyKind::Bulk if config.shape.data_offset > 0 && reply.payload.1 == 0 => {
                    self.count_gets(stats, ctx.second, 0, 1)
                }
                _ => self.count_gets(stats, ctx.second, 1, 0),
            }
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        Ok(())
    }

    /// Adds GET hits and misses to the thread's stats and the client's own series.
    #[inline]
    fn count_gets(&mut self, stats: &mut OpStats, second: u32, hits: u64, misses: u64) {
        stats.hits += hits;
        stats.misses += misses;
        if let Some(series) = self.series.as_mut() {
            series.hit(second, hits);
            series.miss(second, misses);
        }
    }

    /// Encodes requests until the pipeline is full, the client's share is sent, or (when
    /// rate-limited) the next request is not due yet.
    fn fill(&mut self, config: &Config, ctx: &mut ClientContext) {
        if self.phase != Phase::Ready {
            return;
        }
        let mut batch_time = None;
        while self.can_send() {
            let sent = match self.pacer.as_mut() {
                Some(pacer) => {
                    let now = *batch_time.get_or_insert_with(Instant::now);
                    if pacer.next > now {
                        break;
                    }
                    let due = pacer.next;
                    pacer.next += pacer.interval;
                    due
                }
                // One clock read per batch: every request in it goes out in the same write.
                None => *batch_time.get_or_insert_with(Instant::now),
            };
            let before = self.wbuf.len();
            let opaque = self.next_opaque;
            self.next_opaque = self.next_opaque.wrapping_add(1);
            let mut verify_index = 0;
            let (row, keys, scan) = match ctx.verify {
                Some(job) => match job.take() {
                    Some(index) => {
                        verify_index = index;
                        job.verifier.write_key(index, &mut self.key_buf);
                        self.encode_read(config, opaque);
                        (rows::GET, 1, false)
                    }
                    None => {
                        self.remaining = Some(0);
                        break;
                    }
                },
                None => self.encode_next(config, ctx, opaque),
            };
            debug_log!(
                2,
                "request: {}",
                String::from_utf8_lossy(&self.wbuf[before..]).escape_debug()
            );
            self.inflight.push_back(Pending {
                row: row as u8,
                scan,
                verify_index,
                keys,
                opaque,
                tx: (self.wbuf.len() - before) as u32,
                sent,
            });
            self.sent_on_connection += 1;
            if let Some(left) = self.remaining.as_mut() {
                *left -= 1;
            }
        }
    }

    /// Puts the key of `key_id` in `key_buf`: an imported item's key, or prefix + id.
    fn load_key(&mut self, config: &Config, key_id: u64) -> Option<usize> {
        let item = config.dataset.item_index(key_id, &config.keys);
        match (item, &config.dataset.import) {
            (Some(index), Some(data)) if !data.generated_keys() => {
                self.key_buf.clear();
                self.key_buf.extend_from_slice(data.item(index).key);
            }
            _ => write_key(&mut self.key_buf, &config.keys.prefix, key_id),
        }
        item
    }

    /// A read of the key in `key_buf`: GET, or GETRANGE with `--data-offset`.
    fn encode_read(&mut self, config: &Config, opaque: u32) {
        let offset = config.shape.data_offset;
        if offset > 0 {
            self.codec
                .encode_getrange(&mut self.wbuf, &self.key_buf, offset);
        } else {
            self.codec.encode_get(&mut self.wbuf, &self.key_buf, opaque);
        }
    }

    /// Encodes the generator's next operation; returns its stats row, its key count and
    /// whether it is a SCAN to follow.
    fn encode_next(
        &mut self,
        config: &Config,
        ctx: &mut ClientContext,
        opaque: u32,
    ) -> (usize, u32, bool) {
        let prefix = &config.keys.prefix;
        let offset = config.shape.data_offset;
        match self.ops.next_op() {
            Op::Set {
                key_id,
                value_size,
                expiry_secs,
            } => {
                let item = self.load_key(config, key_id);
                let (value, expiry) = match (item, &config.dataset.import) {
                    (Some(index), Some(data)) => {
                        let item = data.item(index);
                        // --expiry-range overrides the file's expiry, as in memtier.
                        let expiry = if config.shape.expiry_range.is_some() {
                            expiry_secs
                        } else {
                            item.expiry_secs
                        };
                        (item.value, expiry)
                    }
                    _ => (ctx.values.value(value_size, self.ops.rng()), expiry_secs),
                };
                if offset > 0 {
                    self.codec
                        .encode_setrange(&mut self.wbuf, &self.key_buf, offset, value);
                } else {
                    self.codec
                        .encode_set(&mut self.wbuf, &self.key_buf, value, expiry, opaque);
                }
                if let Some(written) = ctx.written {
                    written.mark(item.map_or(key_id, |index| index as u64));
                }
                (rows::SET, 1, false)
            }
            Op::Get { key_id } => {
                self.load_key(config, key_id);
                self.encode_read(config, opaque);
                (rows::GET, 1, false)
            }
            Op::MultiGet => {
                self.multi_keys.clear();
                for &id in self.ops.multi_keys() {
                    match (
                        config.dataset.item_index(id, &config.keys),
                        &config.dataset.import,
                    ) {
                        (Some(index), Some(data)) if !data.generated_keys() => {
                            self.multi_keys.push_bytes(data.item(index).key)
                        }
                        _ => self.multi_keys.push(prefix, id),
                    }
                }
                self.codec
                    .encode_multi_get(&mut self.wbuf, &self.multi_keys, opaque);
                (rows::GET, self.multi_keys.len() as u32, false)
            }
            Op::Wait {
                replicas,
                timeout_ms,
            } => {
                self.codec.encode_wait(&mut self.wbuf, replicas, timeout_ms);
                (rows::WAIT, 1, false)
            }
            Op::Command { index, value_size } => {
                self.encode_command(config, ctx, index, value_size)
            }
        }
    }

    /// Encodes `--command` number `index` with fresh keys and data.
    fn encode_command(
        &mut self,
        config: &Config,
        ctx: &mut ClientContext,
        index: usize,
        value_size: usize,
    ) -> (usize, u32, bool) {
        let Some(arbitrary) = config.arbitrary.as_deref() else {
            return (0, 1, false);
        };
        let cmd = &arbitrary.list.commands[index];
        self.command_keys.clear();
        for &id in self.ops.multi_keys() {
            self.command_keys.push_key(&config.keys.prefix, id);
        }
        let value = ctx.values.value(value_size, self.ops.rng());
        if let (Some(plan), Some(cursor)) = (
            &arbitrary.list.scan,
            self.scan.as_ref().and_then(ScanState::next_cursor),
        ) {
            let key = self.command_keys.get(0).unwrap_or(b"");
            plan.continuation
                .encode_resp_cursor(&mut self.wbuf, cursor, key, value);
            return (plan.row, 1, true);
        }
        let monitor = arbitrary.monitor.as_deref();
        let monitor_index = match monitor {
            Some(m) if cmd.template.is_monitor_random() => {
                m.pick(arbitrary.monitor_pattern, self.ops.rng())
            }
            _ => 0,
        };
        cmd.template.encode_resp_keys(
            &mut self.wbuf,
            &self.command_keys,
            value,
            monitor,
            monitor_index,
        );
        (cmd.stat_row(monitor, monitor_index), 1, self.scan.is_some())
    }

    /// Writes the buffer until it is empty or the socket is full.
    fn flush(&mut self, peer: &str) -> Result<(), String> {
        let Some(transport) = self.transport.as_mut() else {
            return Ok(());
        };
        while self.wpos < self.wbuf.len() {
            match transport.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(format!("connection closed by server {peer}")),
                Ok(n) => self.wpos += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    return Err(format!("connection to {peer} failed: {}", describe(&err)));
                }
            }
        }
        self.wbuf.clear();
        self.wpos = 0;
        Ok(())
    }
}

/// Turns a failed AUTH, HELLO or SELECT into a message that says what to change.
fn check_setup_reply(
    step: SetupStep,
    kind: ReplyKind,
    text: &[u8],
    config: &Config,
) -> Result<(), String> {
    if kind != ReplyKind::Error {
        return Ok(());
    }
    let text = String::from_utf8_lossy(text);
    Err(match step {
        SetupStep::Auth => {
            let who = config
                .credentials
                .as_ref()
                .and_then(|c| c.user.clone())
                .map_or_else(String::new, |user| format!(" as user '{user}'"));
            format!("authentication{who} failed: {text}")
        }
        SetupStep::Hello(version) => {
            format!("HELLO {version} failed: {text} (servers older than Redis 6 need -P redis)")
        }
        SetupStep::Select(db) => format!("SELECT {db} failed: {text}"),
    })
}

/// An OS error without the "(os error N)" suffix users do not need.
fn describe(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_lowercase(),
        None => text,
    }
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

/// The first bulk string of an array reply (`*2\r\n$2\r\n17\r\n...` -> `17`), where a
/// SCAN reply keeps its cursor.
fn first_bulk(reply: &[u8]) -> Option<&[u8]> {
    let rest = reply.strip_prefix(b"*")?;
    let after_count = rest.iter().position(|&b| b == b'\n')? + 1;
    let rest = rest[after_count..].strip_prefix(b"$")?;
    let line_end = rest.iter().position(|&b| b == b'\r')?;
    let len: usize = std::str::from_utf8(&rest[..line_end]).ok()?.parse().ok()?;
    rest.get(line_end + 2..line_end + 2 + len)
}
