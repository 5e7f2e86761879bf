//! One connection's state machine: connect, handshake, keep the pipeline full, decode, record.
//!
//! ```text
//! Connecting --writable, connected--> Handshaking (AUTH / HELLO / SELECT replies)
//! Handshaking --all setup replies OK--> Ready --requests sent and answered--> Finished
//! any state --error, EOF, garbage--> Failed(message)
//! ```
//!
//! The socket is registered once, edge-triggered, for both directions. Reads stop as soon
//! as every in-flight reply is decoded or a read comes back short (the socket is drained),
//! so the steady state costs one `write` and one `read` per pipeline batch.

use std::collections::VecDeque;
use std::io;
use std::time::Instant;

use mio::event::Event;

use crate::config::{Config, Credentials, Protocol};
use crate::protocol::memcache_binary;
use crate::protocol::memcache_text;
use crate::protocol::{Codec, Decode, Expect, ReplyKind, resp};
use crate::stats::{OpStats, rows};
use crate::transport::Transport;
use crate::workload::generator::OpGenerator;
use crate::workload::keys::write_key;
use crate::workload::sequence::OpKind;
use crate::workload::values::ValuePool;

/// Read buffer size to start with; grown only for replies larger than this.
const INITIAL_READ_BUFFER: usize = 64 * 1024;
/// Free space wanted before each read.
const MIN_READ_SPACE: usize = 16 * 1024;

/// What a client reports to its worker after handling an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Status {
    Active,
    /// Every request was sent and answered.
    Finished,
    /// The connection is unusable; the message is for the user.
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
}

/// Prints server error replies on stderr at most once a second, so a flood of errors
/// neither floods the terminal nor slows the worker.
#[derive(Default)]
pub struct ErrorLog {
    last_print: Option<Instant>,
    suppressed: u64,
}

impl ErrorLog {
    fn report(&mut self, peer: &str, text: &[u8]) {
        let now = Instant::now();
        if self
            .last_print
            .is_some_and(|t| now.duration_since(t).as_secs() < 1)
        {
            self.suppressed += 1;
            return;
        }
        let more = if self.suppressed > 0 {
            format!(" ({} more since the last report)", self.suppressed)
        } else {
            String::new()
        };
        eprintln!(
            "\nserver {peer} replied with an error: {}{more}",
            String::from_utf8_lossy(text)
        );
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
    Connecting,
    Handshaking,
    Ready,
}

/// A request on the wire whose reply has not arrived yet.
#[derive(Clone, Copy, Debug)]
struct Pending {
    row: u8,
    /// Sequence number echoed by memcache binary replies, checked to catch a stream out of step.
    opaque: u32,
    /// Bytes this request took on the wire.
    tx: u32,
    sent: Instant,
}

/// One benchmark connection.
pub struct Client {
    transport: Transport,
    phase: Phase,
    setup: VecDeque<SetupStep>,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    codec: Codec,
    /// Next memcache binary opaque.
    next_opaque: u32,
    inflight: VecDeque<Pending>,
    ops: OpGenerator,
    key_buf: Vec<u8>,
    /// Requests still to send; `None` for time-bound runs.
    remaining: Option<u64>,
    pipeline: usize,
    stopping: bool,
}

impl Client {
    /// A client over a connecting `transport`; `requests` is its share of `-n`.
    pub fn new(
        transport: Transport,
        ops: OpGenerator,
        requests: Option<u64>,
        config: &Config,
    ) -> Client {
        Client {
            transport,
            phase: Phase::Connecting,
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
            remaining: requests,
            pipeline: config.pipeline,
            stopping: false,
        }
    }

    pub fn transport_mut(&mut self) -> &mut Transport {
        &mut self.transport
    }

    /// Stops sending new requests (the run's time is up or it was interrupted).
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// The stats row of the oldest unanswered request, to charge a connection error to.
    pub fn oldest_pending_row(&self) -> usize {
        self.inflight
            .front()
            .map_or(rows::SET, |pending| pending.row as usize)
    }

    /// Handles one readiness event.
    pub fn handle_event(
        &mut self,
        event: &Event,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Status {
        match self.drive(event, config, ctx) {
            Ok(()) if self.is_finished() => Status::Finished,
            Ok(()) => Status::Active,
            Err(message) => Status::Failed(message),
        }
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Ready
            && self.remaining == Some(0)
            && self.inflight.is_empty()
            && self.wbuf.is_empty()
    }

    fn drive(
        &mut self,
        event: &Event,
        config: &Config,
        ctx: &mut ClientContext,
    ) -> Result<(), String> {
        if self.phase == Phase::Connecting {
            match self.transport.finish_connect() {
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
        self.phase = if self.setup.is_empty() {
            Phase::Ready
        } else {
            Phase::Handshaking
        };
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
            match self.transport.read(&mut self.rbuf[self.rend..]) {
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
            let text =
                &self.rbuf[start + reply.payload.0..start + reply.payload.0 + reply.payload.1];
            if reply.kind == ReplyKind::Push {
                // RESP3 out-of-band data (e.g. invalidations) answers no request.
                continue;
            }
            if let Some(step) = self.setup.pop_front() {
                check_setup_reply(step, reply.kind, text, config)?;
                if self.setup.is_empty() {
                    self.phase = Phase::Ready;
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
            match reply.kind {
                ReplyKind::Error => {
                    if text.starts_with(b"NOAUTH") || text.ends_with(b"unauthenticated") {
                        return Err(format!(
                            "server {} requires authentication: use -a PASSWORD or -a USER:PASSWORD",
                            ctx.peer
                        ));
                    }
                    stats.errors += 1;
                    ctx.errors.report(ctx.peer, text);
                }
                ReplyKind::Nil if pending.row as usize == rows::GET => stats.misses += 1,
                _ if pending.row as usize == rows::GET => stats.hits += 1,
                _ => {}
            }
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        Ok(())
    }

    /// Encodes requests until the pipeline is full or the client's share is sent.
    fn fill(&mut self, config: &Config, ctx: &mut ClientContext) {
        if self.phase != Phase::Ready || self.stopping {
            return;
        }
        let mut now = None;
        while self.inflight.len() < self.pipeline && self.remaining != Some(0) {
            // One clock read per batch: every request in it goes out in the same write.
            let sent = *now.get_or_insert_with(Instant::now);
            let op = self.ops.next_op();
            write_key(&mut self.key_buf, &config.keys.prefix, op.key_id);
            let before = self.wbuf.len();
            let opaque = self.next_opaque;
            self.next_opaque = self.next_opaque.wrapping_add(1);
            let row = match op.kind {
                OpKind::Set => {
                    let value = ctx.values.value(op.value_size, self.ops.rng());
                    self.codec
                        .encode_set(&mut self.wbuf, &self.key_buf, value, 0, opaque);
                    rows::SET
                }
                OpKind::Get => {
                    self.codec.encode_get(&mut self.wbuf, &self.key_buf, opaque);
                    rows::GET
                }
            };
            self.inflight.push_back(Pending {
                row: row as u8,
                opaque,
                tx: (self.wbuf.len() - before) as u32,
                sent,
            });
            if let Some(left) = self.remaining.as_mut() {
                *left -= 1;
            }
        }
    }

    /// Writes the buffer until it is empty or the socket is full.
    fn flush(&mut self, peer: &str) -> Result<(), String> {
        while self.wpos < self.wbuf.len() {
            match self.transport.write(&self.wbuf[self.wpos..]) {
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
