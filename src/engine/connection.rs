//! One socket of a client: connect, handshake (AUTH / HELLO / SELECT), write buffer,
//! read buffer, and decoding replies against the requests in flight. No workload and
//! no stats here: [`crate::engine::client`] decides what to send and records what comes back.
//!
//! ```text
//! Idle --open--> Connecting --connected--> Handshaking --setup replies OK--> Ready
//! any --error--> (closed; the client decides: fail, back off and reopen)
//! ```
//!
//! The socket is registered once per connection, edge-triggered, for both directions.
//! Reads stop as soon as every in-flight reply is decoded or a read comes back short
//! (the socket is drained), so the steady state costs one `write` and one `read` per
//! pipeline batch.

use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

use mio::{Registry, Token};

use crate::engine::generator::Op;
use crate::engine::transport::Transport;
use crate::plan::{Endpoint, Plan};
use crate::protocol::Protocol;
use crate::protocol::{Codec, Decode, Expect, Reply, ReplyKind, encode_auth, resp};
use crate::stats::rows;

/// Read buffer size to start with; grown only for replies larger than this.
const INITIAL_READ_BUFFER: usize = 64 * 1024;
/// Free space wanted before each read.
const MIN_READ_SPACE: usize = 16 * 1024;

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not opened yet (ramp-up, start jitter) or closed after an error.
    Idle,
    Connecting,
    Handshaking,
    Ready,
    /// Waiting before a reconnect attempt.
    Backoff,
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

/// Marks on a [`Pending`] request.
pub mod flags {
    /// A SCAN whose reply carries the cursor to follow.
    pub const SCAN: u8 = 1;
    /// An `ASKING` sent before an ASK-redirected request: its `+OK` is not recorded.
    pub const ASKING: u8 = 2;
    /// A request resent after a redirection (does not count toward `-n` again).
    pub const RESENT: u8 = 4;
    /// A multi-key read (MGET, `get k1 k2`, GETKQ… NOOP), even of a single key.
    pub const MULTI: u8 = 8;
    /// With [`RESENT`]: redirected twice already.
    pub const RESENT_TWICE: u8 = 16;
    /// A `CLUSTER SLOTS` sent to refresh the topology: its reply is not a workload reply.
    pub const TOPOLOGY: u8 = 32;
}

/// A request on the wire whose reply has not arrived yet.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub row: u8,
    pub flags: u8,
    /// Keys the request reads (multi-key gets), for hit/miss counts.
    pub keys: u32,
    /// Sequence number echoed by memcache binary replies, checked to catch a stream out
    /// of step.
    pub opaque: u32,
    /// Bytes this request took on the wire.
    pub tx: u32,
    /// When it was sent, or in rate-limited runs when it should have been.
    pub sent: Instant,
    /// The key index a verification read checks.
    pub verify_index: u64,
    /// What was sent, to resend it after a cluster redirection.
    pub op: Op,
}

/// A decoded reply to a request of the workload (setup replies never get here).
pub struct Answer {
    pub pending: Pending,
    pub reply: Reply,
    /// Where the reply's bytes are in the read buffer, valid until the next read.
    pub start: usize,
}

/// One socket and its buffers.
pub struct Connection {
    pub endpoint: Endpoint,
    /// `host:port` or the socket path, for messages.
    pub peer: String,
    transport: Option<Transport>,
    pub phase: Phase,
    /// Idle: when to start. Backoff: when to retry. Connecting/Handshaking: the deadline.
    pub phase_timer: Option<Instant>,
    /// Failed attempts since the last successful connection.
    pub attempts: u32,
    pub sent_on_connection: u64,
    /// Set when the last error is one no reconnect can fix (bad password, bad SELECT).
    pub fatal: bool,
    setup: VecDeque<SetupStep>,
    pub wbuf: Vec<u8>,
    wpos: usize,
    pub rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    pub codec: Codec,
    next_opaque: u32,
    pub inflight: VecDeque<Pending>,
    /// Last time a reply arrived, or a request went out with nothing in flight: the
    /// stall watchdog measures from here.
    pub last_progress: Instant,
}

impl Connection {
    pub fn new(endpoint: Endpoint, peer: String, plan: &Plan) -> Connection {
        Connection {
            endpoint,
            peer,
            transport: None,
            phase: Phase::Idle,
            phase_timer: None,
            attempts: 0,
            sent_on_connection: 0,
            fatal: false,
            setup: VecDeque::new(),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            rbuf: vec![0; INITIAL_READ_BUFFER],
            rstart: 0,
            rend: 0,
            codec: Codec::new(plan.server.protocol),
            next_opaque: 0,
            inflight: VecDeque::with_capacity(plan.load.pipeline),
            last_progress: Instant::now(),
        }
    }

    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Nothing in flight and nothing left to write.
    pub fn is_idle(&self) -> bool {
        self.inflight.is_empty() && self.wbuf.is_empty()
    }

    /// The opaque for the next request (memcache binary).
    pub fn take_opaque(&mut self) -> u32 {
        let opaque = self.next_opaque;
        self.next_opaque = self.next_opaque.wrapping_add(1);
        opaque
    }

    /// Starts a non-blocking connect and registers the socket under `token`.
    pub fn open(
        &mut self,
        plan: &Plan,
        registry: &Registry,
        token: Token,
        timeout: Option<Duration>,
    ) -> Result<(), String> {
        self.reset(plan);
        let mut transport = Transport::connect(&self.endpoint, plan)
            .map_err(|err| format!("cannot connect to {}: {}", self.peer, describe(&err)))?;
        transport
            .register(registry, token)
            .map_err(|err| format!("cannot register connection: {err}"))?;
        self.transport = Some(transport);
        self.phase = Phase::Connecting;
        self.phase_timer = timeout.map(|t| Instant::now() + t);
        Ok(())
    }

    /// Closes the socket; the connection can be opened again.
    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut transport) = self.transport.take() {
            let _ = transport.deregister(registry);
            transport.shutdown();
        }
    }

    /// Forgets everything tied to the previous socket; requests in flight are lost.
    pub fn reset(&mut self, plan: &Plan) {
        self.setup.clear();
        self.inflight.clear();
        self.wbuf.clear();
        self.wpos = 0;
        self.rstart = 0;
        self.rend = 0;
        self.codec = Codec::new(plan.server.protocol);
        self.sent_on_connection = 0;
    }

    /// While connecting: checks the connect finished, then queues the handshake.
    /// Returns `Ok(true)` when the connection just became ready.
    pub fn progress_connect(&mut self, plan: &Plan) -> Result<bool, String> {
        if self.phase != Phase::Connecting {
            return Ok(false);
        }
        let Some(transport) = self.transport.as_mut() else {
            return Ok(false);
        };
        match transport.finish_connect() {
            Err(err) => Err(format!(
                "cannot connect to {}: {}",
                self.peer,
                describe(&err)
            )),
            Ok(false) => Ok(false),
            Ok(true) => Ok(self.start_setup(plan)),
        }
    }

    /// Queues authentication, HELLO and SELECT as the protocol and flags ask; returns
    /// whether the connection is ready at once (nothing to set up).
    fn start_setup(&mut self, plan: &Plan) -> bool {
        if let Some(credentials) = &plan.server.credentials {
            encode_auth(&mut self.wbuf, plan.server.protocol, credentials);
            self.setup.push_back(SetupStep::Auth);
        }
        let hello = match plan.server.protocol {
            Protocol::Resp2 => Some(2u8),
            Protocol::Resp3 => Some(3u8),
            _ => None,
        };
        if let Some(version) = hello {
            let digit = [b'0' + version];
            resp::encode_command(&mut self.wbuf, &[b"HELLO", &digit]);
            self.setup.push_back(SetupStep::Hello(version));
        }
        // Cluster nodes only have database 0.
        if let (Some(db), false) = (plan.server.select_db, plan.server.cluster_mode) {
            let mut digits = itoa::Buffer::new();
            resp::encode_command(&mut self.wbuf, &[b"SELECT", digits.format(db).as_bytes()]);
            self.setup.push_back(SetupStep::Select(db));
        }
        if self.setup.is_empty() {
            self.become_ready();
            true
        } else {
            self.phase = Phase::Handshaking;
            false
        }
    }

    fn become_ready(&mut self) {
        self.phase = Phase::Ready;
        self.phase_timer = None;
        self.attempts = 0;
    }

    /// Whether requests have waited longer than `timeout` with no reply at all.
    pub fn is_stalled(&self, now: Instant, timeout: Duration) -> bool {
        self.waiting() && now.saturating_duration_since(self.last_progress) > timeout
    }

    /// Whether more replies are expected (requests or setup steps outstanding).
    pub fn waiting(&self) -> bool {
        !self.inflight.is_empty() || !self.setup.is_empty()
    }

    /// One read into the buffer: `Ok(Some((n, space)))` bytes read out of the room there
    /// was, `Ok(None)` when the socket had nothing.
    pub fn read_some(&mut self) -> Result<Option<(usize, usize)>, String> {
        loop {
            self.make_read_space();
            let space = self.rbuf.len() - self.rend;
            let Some(transport) = self.transport.as_mut() else {
                return Ok(None);
            };
            match transport.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err(format!("connection closed by server {}", self.peer)),
                Ok(n) => {
                    self.rend += n;
                    self.last_progress = Instant::now();
                    return Ok(Some((n, space)));
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    return Err(format!(
                        "connection to {} failed: {}",
                        self.peer,
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

    /// Decodes the next complete reply to a workload request, handling setup replies and
    /// RESP3 push data on the way. `Ok(None)`: nothing more in the buffer for now.
    pub fn next_answer(&mut self, plan: &Plan) -> Result<Option<Answer>, String> {
        while self.rstart < self.rend {
            let expect = match (self.setup.front(), self.inflight.front()) {
                (Some(step), _) => step.expect(),
                (None, Some(pending)) if pending.flags & flags::MULTI != 0 => {
                    Expect::MultiGet(pending.keys)
                }
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
                    return Err(format!("invalid reply from {}: {why}", self.peer));
                }
                Decode::Complete(reply) => reply,
            };
            let start = self.rstart;
            self.rstart += reply.len;
            if reply.kind == ReplyKind::Push {
                // RESP3 out-of-band data (e.g. invalidations) answers no request.
                continue;
            }
            if let Some(step) = self.setup.pop_front() {
                let text = reply.text(&self.rbuf[start..self.rstart]);
                if let Err(message) = check_setup_reply(step, reply.kind, text, plan) {
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
                    self.peer
                ));
            };
            if let Some(opaque) = self.codec.reply_opaque(&self.rbuf[start..self.rstart])
                && opaque != pending.opaque
            {
                return Err(format!(
                    "invalid reply from {}: answers request {opaque}, expected {}",
                    self.peer, pending.opaque
                ));
            }
            return Ok(Some(Answer {
                pending,
                reply,
                start,
            }));
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        Ok(None)
    }

    /// The bytes of a reply returned by [`Connection::next_answer`].
    pub fn reply_bytes(&self, answer: &Answer) -> &[u8] {
        &self.rbuf[answer.start..answer.start + answer.reply.len]
    }

    /// Writes the buffer until it is empty or the socket is full.
    pub fn flush(&mut self) -> Result<(), String> {
        let Some(transport) = self.transport.as_mut() else {
            return Ok(());
        };
        while self.wpos < self.wbuf.len() {
            match transport.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(format!("connection closed by server {}", self.peer)),
                Ok(n) => self.wpos += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    return Err(format!(
                        "connection to {} failed: {}",
                        self.peer,
                        describe(&err)
                    ));
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
    plan: &Plan,
) -> Result<(), String> {
    if kind != ReplyKind::Error {
        return Ok(());
    }
    let text = String::from_utf8_lossy(text);
    Err(match step {
        SetupStep::Auth => {
            let who = plan
                .server
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
pub fn describe(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_lowercase(),
        None => text,
    }
}
