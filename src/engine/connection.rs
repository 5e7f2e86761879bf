//! One socket of a client: its phases (connect, handshake, ready, back-off), its
//! handshake (AUTH / HELLO / SELECT), its write and read buffers, and its queue of
//! requests in flight, which replies are decoded against. No workload and no stats
//! here: [`crate::engine::client`] decides what to send and records what comes back,
//! asking the connection rather than reaching into it.
//!
//! ```text
//! Idle --open--> Connecting --connected--> Handshaking --setup replies OK--> Ready
//!                           --connected, SetupStyle::Prefix--> Ready (set-up commands go
//!                             out in front of the first request, their replies first)
//! any --error--> (closed; the client decides: fail, or back_off and reopen)
//! ```
//!
//! The socket is registered once per connection, edge-triggered, for both directions;
//! once the connection is ready it is polled for writing only while its write buffer
//! holds bytes the socket would not take (plain TCP and Unix sockets).
//! Reads stop as soon as every in-flight reply is decoded or a read comes back short
//! (the socket is drained), so the steady state costs one `write` and one `read` per
//! pipeline batch.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mio::{Registry, Token};

pub use crate::engine::failure::{Failure, describe};
use crate::engine::in_flight::{Pending, Purpose, Redirects};
use crate::engine::in_flight_queue::{InFlight, PlainRequest};
use crate::engine::prefetch::lines;
use crate::engine::setup::{SetupStep, check_setup_reply, encode_setup};
use crate::engine::transport::Transport;
use crate::plan::{Endpoint, Plan, SetupStyle};
use crate::protocol::{Codec, Decode, Expect, Reply, ReplyKind};

mod flush;
mod handshake;
mod plain_batch;
mod read;
mod refusal;
pub use refusal::full_server;
mod reply_loop;
mod stall;

pub use reply_loop::Take;

/// Read buffer size to start with: room for a pipelined batch of small replies. Ten
/// thousand connections must fit in a few KB each, so buffers start small and grow
/// with need.
const INITIAL_READ_BUFFER: usize = 1024;
/// The read buffer doubles, up to this, each time a read fills all the room it had, so
/// a connection whose batches are larger settles at a size that takes a batch in one
/// read. Only a reply larger than this (its header says how large) grows it further.
const MAX_READ_BUFFER: usize = 64 * 1024;
/// Write buffer capacity to start with; requests grow it as they need.
const INITIAL_WRITE_BUFFER: usize = 512;
/// Replies that fit the settled read size, after a larger one, before a buffer grown
/// for large replies shrinks back to it (not after every large reply: a load of large
/// values would reallocate for each).
const SHRINK_AFTER_REPLIES: u32 = 64;
/// A write buffer grown above this shrinks back after [`SHRINK_AFTER_REPLIES`] writes in a
/// row that fitted it (not after each large write: `-d 16384 -P 16` would reallocate twice
/// a batch).
const MAX_KEPT_WRITE_BUFFER: usize = 64 * 1024;

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

/// A decoded reply to a request (setup replies never get here).
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub pending: Pending,
    pub reply: Reply,
    /// Where the reply's bytes are in the read buffer, valid until the next read.
    start: usize,
}

impl Answer {
    /// A reply that answers no request (nothing was in flight).
    fn none() -> Answer {
        let now = Instant::now();
        Answer {
            pending: Pending::sent_as_intended(Purpose::Unsolicited, 0, 0, now),
            reply: Reply {
                len: 0,
                kind: ReplyKind::Nil,
                payload: (0, 0),
                elements: 0,
                nil_elements: 0,
            },
            start: 0,
        }
    }
}

/// A request being written: see [`Connection::begin`].
#[derive(Clone, Copy, Debug)]
pub struct Started {
    /// The opaque the request carries (memcache binary).
    pub opaque: u32,
    /// Where its bytes start in the write buffer.
    start: usize,
}

// As for a client (see `Client`): the hot fields in the fewest lines, kept there (the
// first layout spread them over 9 of 16).
const _: () = assert!(align_of::<Connection>() == 64);
const _: () = assert!(Connection::HOT_LINES <= 6);

/// One socket and its buffers.
///
/// Laid out in declaration order (`repr(C)`), on a cache line of its own: what a plain
/// visit reads and writes comes first, ending with the decoder (whose own hot fields
/// lead it), so that a visit touches the first [`HOT_LINES`](Self::HOT_LINES) lines
/// and the worker asks for just those ahead of it (see
/// [`prefetch`](crate::engine::prefetch)); what set-up and errors use follows.
#[repr(C, align(64))]
pub struct Connection {
    // A visit's fields.
    transport: Option<Transport>,
    /// Idle: when to start. Backoff: when to retry. Connecting/Handshaking: the deadline.
    phase_timer: Option<Instant>,
    /// Last time a reply arrived, or a request went out with nothing in flight: the
    /// stall watchdog measures from here.
    last_progress: Instant,
    sent_on_connection: u64,
    wpos: usize,
    rstart: usize,
    rend: usize,
    /// The read buffer's settled size (see [`MAX_READ_BUFFER`]).
    read_size: usize,
    wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    setup: VecDeque<SetupStep>,
    /// `SetupStyle::Prefix`: set-up commands written in front of the first request.
    prefix: Vec<u8>,
    inflight: InFlight,
    /// The token the socket is registered under.
    token: Token,
    /// Replies since the last one larger than half of `read_size`.
    small_replies: u32,
    /// Writes since the last one larger than [`MAX_KEPT_WRITE_BUFFER`].
    small_writes: u32,
    next_opaque: u32,
    phase: Phase,
    /// The server has sent bytes on this connection, on any of its sockets (it speaks, or
    /// spoke, the protocol: a reconnect does not make it a stranger).
    heard: bool,
    /// The server has sent bytes on this socket (since the last reset).
    answered: bool,
    /// Whether the socket is polled for writing as well as reading: while connecting,
    /// and while the write buffer holds bytes the socket would not take. Otherwise a
    /// ready connection is polled for reading alone, as a server's ACK freeing room in
    /// the socket raises a wake-up of its own (memcached's do: one event in eight at
    /// pipeline 16).
    write_interest: bool,
    codec: Codec,
    // The rest: set-up, messages and the general path.
    endpoint: Endpoint,
    /// `host:port` or the socket path, for messages.
    peer: String,
    /// Failed attempts since the last successful connection.
    attempts: u32,
    /// When the socket's connect began (what "still connecting after 10 s" measures).
    opened_at: Instant,
    /// The steps of the set-up commands in `prefix`, queued when it is written.
    prefix_steps: VecDeque<SetupStep>,
    /// The reply [`Connection::next_answer`] decoded last, with its request: kept here
    /// and lent out rather than returned (moving it through a `Result<Option<_>>`
    /// cost more than decoding the reply did). Boxed when first needed: the plain
    /// path's replies never come here, and ten thousand connections should not carry
    /// it unused.
    answer: Option<Box<Answer>>,
}

/// Connects completed in this process, ever: a run that ends with no reply tells a
/// server that accepted and said nothing from one it never accepted by whether this grew.
static ESTABLISHED: AtomicU64 = AtomicU64::new(0);

/// How many connects have completed in this process (see [`ESTABLISHED`]).
pub fn established_count() -> u64 {
    ESTABLISHED.load(Ordering::Relaxed)
}

impl Connection {
    /// Cache lines at the start of a connection that a plain visit reads and writes (see
    /// [`prefetch`](crate::engine::prefetch)).
    pub const HOT_LINES: usize = lines(std::mem::offset_of!(Connection, codec) + Codec::HOT_BYTES);

    /// A connection to `endpoint`, named `peer` in messages; idle until opened.
    pub fn new(endpoint: Endpoint, peer: String, plan: &Plan) -> Connection {
        Connection {
            endpoint,
            peer,
            transport: None,
            phase: Phase::Idle,
            phase_timer: None,
            attempts: 0,
            opened_at: Instant::now(),
            sent_on_connection: 0,
            setup: VecDeque::new(),
            prefix: Vec::new(),
            prefix_steps: VecDeque::new(),
            wbuf: Vec::with_capacity(INITIAL_WRITE_BUFFER),
            wpos: 0,
            rbuf: vec![0; INITIAL_READ_BUFFER],
            rstart: 0,
            rend: 0,
            read_size: INITIAL_READ_BUFFER,
            small_replies: 0,
            small_writes: 0,
            codec: Codec::new(plan.server.protocol),
            next_opaque: 0,
            inflight: InFlight::new(plan.load.pipeline),
            answer: None,
            last_progress: Instant::now(),
            heard: false,
            answered: false,
            token: Token(0),
            write_interest: true,
        }
    }

    /// `host:port` or the socket path, for messages.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Nothing in flight and nothing left to write.
    pub fn is_idle(&self) -> bool {
        self.inflight.is_empty() && self.wbuf.is_empty()
    }

    /// When this connection next needs attention while not ready: its start time (idle),
    /// its retry time (back-off) or its connect deadline.
    pub fn timer(&self) -> Option<Instant> {
        match self.phase {
            Phase::Ready => None,
            _ => self.phase_timer,
        }
    }

    /// Whether [`timer`](Self::timer) has come.
    pub fn is_due(&self, now: Instant) -> bool {
        self.phase_timer.is_some_and(|t| now >= t)
    }

    /// An idle connection opens at `at` (ramp-up and start jitter delay it).
    pub fn start_at(&mut self, at: Instant) {
        self.phase_timer = Some(at);
    }

    /// Requests sent since the connection was (re)opened.
    pub fn sent_on_connection(&self) -> u64 {
        self.sent_on_connection
    }

    /// Requests waiting for a reply.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Whether a request other than a replica-visibility poll is in flight: polls may
    /// outlast the load on the primary's connection (a tracked write's check there).
    pub fn work_in_flight(&self) -> bool {
        self.inflight
            .iter()
            .any(|p| !matches!(p.purpose, Purpose::Visibility(_)))
    }

    /// Whether the write buffer holds bytes not yet written.
    pub fn has_output(&self) -> bool {
        !self.wbuf.is_empty()
    }

    /// The stats row a failure of this connection is counted in: the oldest request's;
    /// `None` when nothing of the workload is in flight.
    pub fn oldest_row(&self) -> Option<usize> {
        match self.inflight.front().map(|p| p.purpose) {
            Some(Purpose::Work(request)) => Some(usize::from(request.row)),
            _ => None,
        }
    }

    /// Requests of the workload in flight for the first time: what a failure loses and
    /// must send again (resent ones were counted once already).
    pub fn first_sends_in_flight(&self) -> u64 {
        self.inflight
            .iter()
            .filter(|p| matches!(p.purpose, Purpose::Work(r) if r.redirects == Redirects::None))
            .count() as u64
    }

    /// Counts one more failed attempt since the last good connection; returns the count.
    /// A good connection is one the server sent something on: one that failed before that
    /// (a TLS 1.3 server rejecting the client's certificate after the handshake, a TLS
    /// port resetting a plain client) is one more attempt, so `--max-reconnect-attempts`
    /// ends a mistake that repeats on every connection.
    pub fn count_attempt(&mut self) -> u32 {
        if self.answered {
            self.attempts = 0;
        }
        self.attempts += 1;
        self.attempts
    }

    /// Starts a non-blocking connect and registers the socket under `token`.
    pub fn open(
        &mut self,
        plan: &Plan,
        registry: &Registry,
        token: Token,
        timeout: Option<Duration>,
    ) -> Result<(), Failure> {
        self.reset(plan);
        let mut transport = Transport::connect(&self.endpoint, plan).map_err(|err| {
            Failure::Broken(format!(
                "cannot connect to {}: {}",
                self.peer,
                describe(&err)
            ))
        })?;
        transport
            .register(registry, token)
            .map_err(|err| Failure::Broken(format!("cannot register connection: {err}")))?;
        self.transport = Some(transport);
        self.token = token;
        self.write_interest = true;
        self.phase = Phase::Connecting;
        self.opened_at = Instant::now();
        self.phase_timer = timeout.map(|t| self.opened_at + t);
        Ok(())
    }

    /// Whether the socket's connect has been pending for longer than `limit` (a server
    /// whose listen backlog is full, or a firewall dropping the SYNs, never completes it).
    pub fn connecting_longer_than(&self, now: Instant, limit: Duration) -> bool {
        self.phase == Phase::Connecting
            && self.transport.as_ref().is_some_and(Transport::tcp_pending)
            && now.saturating_duration_since(self.opened_at) > limit
    }

    /// Closes the socket; the connection can be opened again.
    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut transport) = self.transport.take() {
            let _ = transport.deregister(registry);
            transport.shutdown();
        }
    }

    /// After a failure: forgets the old socket's state (requests in flight are lost) and
    /// waits until `until` before the next attempt.
    pub fn back_off(&mut self, plan: &Plan, until: Instant) {
        self.reset(plan);
        self.phase = Phase::Backoff;
        self.phase_timer = Some(until);
    }

    /// Forgets everything tied to the previous socket; requests in flight are lost.
    fn reset(&mut self, plan: &Plan) {
        self.setup.clear();
        self.prefix.clear();
        self.prefix_steps.clear();
        self.inflight.clear();
        self.wbuf.clear();
        self.wpos = 0;
        self.rstart = 0;
        self.rend = 0;
        self.codec = Codec::new(plan.server.protocol);
        self.sent_on_connection = 0;
        self.answered = false;
    }

    /// While connecting: checks the connect finished, then queues the handshake.
    /// Returns `Ok(true)` when the connection just became ready.
    #[inline]
    pub fn progress_connect(&mut self, plan: &Plan) -> Result<bool, Failure> {
        if self.phase != Phase::Connecting {
            return Ok(false);
        }
        self.finish_connect(plan)
    }

    /// [`progress_connect`](Self::progress_connect) while connecting (out of line: every
    /// event of a ready connection asks, and only its first needs this).
    #[cold]
    fn finish_connect(&mut self, plan: &Plan) -> Result<bool, Failure> {
        let Some(transport) = self.transport.as_mut() else {
            return Ok(false);
        };
        match transport.finish_connect() {
            Err(err) => Err(Failure::Broken(format!(
                "cannot connect to {}: {}",
                self.peer,
                describe(&err)
            ))),
            Ok(false) => Ok(false),
            Ok(true) => {
                ESTABLISHED.fetch_add(1, Ordering::Relaxed);
                Ok(self.start_setup(plan))
            }
        }
    }

    /// Queues authentication, CLIENT TRACKING, HELLO and SELECT as the protocol and plan
    /// ask; returns whether the connection is ready at once (nothing to set up, or the
    /// set-up waits in front of the first request).
    fn start_setup(&mut self, plan: &Plan) -> bool {
        let server = &plan.server;
        if server.setup.style == SetupStyle::Prefix {
            encode_setup(server, &mut self.prefix, &mut self.prefix_steps);
            self.become_ready();
            return true;
        }
        encode_setup(server, &mut self.wbuf, &mut self.setup);
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
    }

    /// Whether one more request may go out now: ready, the pipeline not full, and (with
    /// `reconnect_interval`) the connection not due for its reconnect.
    pub fn has_room(&self, pipeline: usize, reconnect_interval: Option<u64>) -> bool {
        self.is_ready()
            && self.inflight.len() < pipeline
            && reconnect_interval.is_none_or(|every| self.sent_on_connection < every)
    }

    /// Starts writing a request sent at `sent`; encode it with [`encoder`](Self::encoder)
    /// and put it in flight with [`finish`](Self::finish).
    #[inline(always)]
    pub fn begin(&mut self, sent: Instant) -> Started {
        if !self.prefix.is_empty() {
            // The set-up commands go out in the same write as the first request.
            self.wbuf.extend_from_slice(&self.prefix);
            self.prefix.clear();
            self.setup.append(&mut self.prefix_steps);
        }
        if self.inflight.is_empty() {
            // Nothing was outstanding: the wait for a reply starts now.
            self.last_progress = sent.max(self.last_progress);
        }
        let opaque = self.next_opaque;
        self.next_opaque = self.next_opaque.wrapping_add(1);
        Started {
            opaque,
            start: self.wbuf.len(),
        }
    }

    /// The protocol's encoder and the write buffer to append the request to.
    pub fn encoder(&mut self) -> (&Codec, &mut Vec<u8>) {
        (&self.codec, &mut self.wbuf)
    }

    /// The bytes written since `started` (for `-D -D` request lines).
    pub fn written_since(&self, started: Started) -> &[u8] {
        self.wbuf.get(started.start..).unwrap_or_default()
    }

    /// Puts the request begun as `started` in flight: intended for `intended`, sent at
    /// `sent`.
    #[inline]
    pub fn finish(&mut self, started: Started, purpose: Purpose, intended: Instant, sent: Instant) {
        let tx = self.tx_since(started);
        self.put_in_flight(Pending::new(purpose, started.opaque, tx, intended, sent));
    }

    /// Puts the request begun as `started` in flight, sent when it was intended, at `at`
    /// (the closed loop's plain path: nothing to compare).
    #[inline]
    pub fn finish_as_intended(&mut self, started: Started, purpose: Purpose, at: Instant) {
        let tx = self.tx_since(started);
        self.put_in_flight(Pending::sent_as_intended(purpose, started.opaque, tx, at));
    }

    /// The bytes the request begun as `started` took in the write buffer.
    #[inline(always)]
    fn tx_since(&self, started: Started) -> u32 {
        (self.wbuf.len() - started.start) as u32
    }

    /// Puts the plain request begun as `started` in flight, sent as intended at
    /// `sent_ns` (see [`nanos_since_epoch`](crate::engine::clock::nanos_since_epoch)).
    #[inline(always)]
    pub fn finish_plain(&mut self, started: Started, request: PlainRequest, sent_ns: u64) {
        let tx = self.tx_since(started);
        self.sent_on_connection += 1;
        self.inflight
            .push_plain(request, started.opaque, tx, sent_ns);
    }

    /// Queues `pending`, counting a workload request toward the reconnect interval.
    #[inline(always)]
    fn put_in_flight(&mut self, pending: Pending) {
        if matches!(pending.purpose, Purpose::Work(_)) {
            self.sent_on_connection += 1;
        }
        self.inflight.push(pending);
    }

    /// Decodes the next complete reply to a request, handling setup replies and RESP3
    /// push data on the way; `Ok(true)`: [`answer`](Self::answer) holds it, `Ok(false)`:
    /// nothing more in the buffer for now.
    pub fn next_answer(&mut self, plan: &Plan) -> Result<bool, Failure> {
        match self.decode_reply(plan)? {
            Some((reply, start)) => {
                self.keep_answer(reply, start);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Hands each reply in the buffer with its request to `take` in turn, in one call (a
    /// pipelined batch is read at once), until `take` declines one: `Ok(true)`, and
    /// [`answer`](Self::answer) holds the declined reply for the caller to deal with;
    /// `Ok(false)`: nothing more in the buffer for now. The request is lent where it
    /// waits in the queue, not copied out.
    pub fn drain_answers(
        &mut self,
        plan: &Plan,
        mut take: impl FnMut(&Pending, &Reply) -> bool,
    ) -> Result<bool, Failure> {
        while let Some((reply, start)) = self.decode_reply(plan)? {
            if let Some(pending) = self.inflight.front()
                && take(&pending, &reply)
            {
                self.inflight.discard_front();
                continue;
            }
            self.keep_answer(reply, start);
            return Ok(true);
        }
        Ok(false)
    }

    /// Takes the oldest request off the queue into [`answer`](Self::answer) with its
    /// reply (a reply with nothing in flight answers no request).
    fn keep_answer(&mut self, reply: Reply, start: usize) {
        let answer = match self.inflight.pop_front() {
            Some(pending) => Answer {
                pending,
                reply,
                start,
            },
            // Answers nothing: the client decides what it means.
            None => Answer {
                reply,
                start,
                ..Answer::none()
            },
        };
        match self.answer.as_deref_mut() {
            Some(kept) => *kept = answer,
            None => self.answer = Some(Box::new(answer)),
        }
    }

    /// Decodes the next complete reply that answers a request (the oldest in flight, if
    /// any), handling setup replies and RESP3 push data on the way: the reply and where
    /// it starts in the read buffer; `None` when the buffer holds no more.
    #[inline(always)]
    fn decode_reply(&mut self, plan: &Plan) -> Result<Option<(Reply, usize)>, Failure> {
        while self.rstart < self.rend {
            let expect = match (self.setup.front(), self.inflight.front_expect()) {
                (Some(step), _) => step.expect(),
                (None, Some(expect)) => expect,
                // Nothing is expected: only RESP3 push data may legally arrive now.
                (None, None) => Expect::Setup,
            };
            let reply = match self
                .codec
                .decode(&self.rbuf[self.rstart..self.rend], expect)
            {
                Decode::Incomplete => break,
                Decode::Invalid(why) => return Err(self.invalid_reply(why)),
                Decode::Complete(reply) => reply,
            };
            let start = self.rstart;
            self.rstart += reply.len;
            if reply.len > self.read_size / 2 {
                self.small_replies = 0;
            } else {
                self.small_replies = self.small_replies.saturating_add(1);
            }
            if reply.kind == ReplyKind::Push {
                // RESP3 out-of-band data (e.g. invalidations) answers no request.
                continue;
            }
            if let Some(step) = self.setup.pop_front() {
                let text = reply.text(&self.rbuf[start..self.rstart]);
                if reply.kind == ReplyKind::Error
                    && let Some(failure) = full_server(&self.peer, text)
                {
                    return Err(failure);
                }
                check_setup_reply(step, reply.kind, text, plan, &self.peer)
                    .map_err(Failure::Fatal)?;
                if self.setup.is_empty() {
                    self.become_ready();
                }
                continue;
            }
            if let Some(expected) = self.inflight.front_opaque()
                && let Some(opaque) = self.codec.reply_opaque(&self.rbuf[start..self.rstart])
                && opaque != expected
            {
                return Err(Failure::Broken(format!(
                    "invalid reply from {}: answers request {opaque}, expected {expected}",
                    self.peer
                )));
            }
            return Ok(Some((reply, start)));
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
            self.shrink_read_buffer();
        }
        Ok(None)
    }

    /// The reply [`next_answer`](Self::next_answer) (or a declining
    /// [`drain_answers`](Self::drain_answers)) decoded last, with its request: call it
    /// only after one of them said there is one.
    pub fn answer(&self) -> &Answer {
        self.answer
            .as_deref()
            .expect("an answer is asked for only after one was decoded")
    }

    /// The bytes of a reply decoded by [`Connection::next_answer`].
    pub fn reply_bytes(&self, answer: &Answer) -> &[u8] {
        &self.rbuf[answer.start..answer.start + answer.reply.len]
    }

    /// What a failed read or write of the socket means for the connection.
    fn failed(&self, err: &io::Error) -> Failure {
        Failure::Broken(format!(
            "connection to {} failed: {}",
            self.peer,
            describe(err)
        ))
    }
}
