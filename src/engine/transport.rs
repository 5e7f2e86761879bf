//! One connection's byte stream: plain TCP, a Unix socket, or TLS over TCP (rustls), behind
//! one non-blocking read/write interface.
//!
//! The client drives every kind the same way: [`Transport::finish_connect`] until it says
//! connected, then [`Transport::write`] and [`Transport::read`] on readiness events, with the
//! stream registered once, edge-triggered, for both directions.
//!
//! # TLS
//!
//! A TLS transport is a mio `TcpStream` plus a `rustls::ClientConnection`, driven like
//! rustls' `tlsclient-mio` example, on the worker's thread:
//!
//! - **Handshake.** `finish_connect` reports "still connecting" until the TLS handshake is
//!   done, pushing and pulling handshake records on each event, so the client sends
//!   AUTH/HELLO/requests only over an established session and a handshake failure is a
//!   connect error (`cannot connect to HOST:PORT: TLS handshake failed: ...`). The
//!   handshake is bounded by `--connection-timeout`, or else by a timer of its own (a
//!   `timerfd` registered under the connection's token), so a TLS client pointed at a
//!   plaintext server that waits silently for a newline fails instead of hanging.
//! - **Reads** return, in this order: plaintext rustls already decrypted, ciphertext read
//!   earlier but not yet decrypted, then a fresh `read` from the socket (into a transport
//!   buffer as large as the client's reads, so TLS costs no extra `read` calls). A read
//!   comes back short only when the socket was drained, which keeps the client's rule
//!   "a short read means the socket is empty" true under edge-triggered polling.
//! - **Writes** encrypt into rustls and push the records with `write_tls` (one `writev`)
//!   until done or `WouldBlock`. If records are left queued because the socket is full,
//!   the write reports one byte less than it took: the caller keeps that byte in its
//!   buffer, comes back on the next writable event, and the byte is then acknowledged
//!   without being sent twice. So the queued records are always flushed, and the client
//!   never thinks a request left while part of it waits in rustls.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use rustls::ClientConnection;

use crate::engine::raw_socket;
use crate::engine::timer::TimerFd;
use crate::engine::tls;
use crate::plan::{Endpoint, Plan};
use crate::plan::{FlagNames, TlsSettings};
use crate::protocol::Protocol;

/// How long a TLS handshake may take once TCP is connected, unless `--connection-timeout`
/// says otherwise. Generous, because hundreds of connections handshaking at once can queue
/// on a busy server; it exists so a silent peer (a plaintext server waiting for a newline)
/// cannot hang the run.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Ciphertext read from the socket per `read`: as much as the client's read buffer holds,
/// so a TLS read makes no more syscalls than a plain one.
const TLS_READ_BUFFER: usize = 64 * 1024;

/// A non-blocking stream registered with a worker's `mio::Poll`.
pub enum Transport {
    /// Plain TCP.
    Tcp(PlainTcp),
    /// A Unix domain socket (`-S`).
    Unix(UnixStream),
    /// TLS over TCP (`--tls`, `rediss://`); boxed, as the rustls session is large.
    Tls(Box<TlsStream>),
}

impl Transport {
    /// TLS whose TCP connection is up and whose handshake the server has not answered:
    /// at a connect timeout, a plaintext port most likely.
    pub fn awaits_tls_answer(&self) -> bool {
        matches!(self, Transport::Tls(t) if t.tcp_up && t.first_byte.is_none())
    }

    /// Starts a non-blocking connect to `endpoint` (TLS when `plan.server.tls` says so);
    /// completion (and, for TLS, the handshake) is driven by [`Transport::finish_connect`]
    /// on later events.
    pub fn connect(endpoint: &Endpoint, plan: &Plan) -> io::Result<Transport> {
        match endpoint {
            Endpoint::Tcp { addr, .. } => {
                let stream = TcpStream::connect(*addr)?;
                match &plan.server.tls {
                    Some(settings) => {
                        // `--connection-timeout`, when given, already bounds the whole
                        // connect, handshake included; otherwise a fixed guard keeps a
                        // silent peer from hanging the run.
                        let guard = match plan.load.shape.connection_timeout {
                            Some(_) => None,
                            None => Some(TLS_HANDSHAKE_TIMEOUT),
                        };
                        let tls = TlsStream::new(
                            stream,
                            settings.clone(),
                            plan.names,
                            guard,
                            plan.server.protocol,
                        )?;
                        Ok(Transport::Tls(Box::new(tls)))
                    }
                    None => Ok(Transport::Tcp(PlainTcp {
                        stream,
                        replied: false,
                        wrote: false,
                        names: plan.names,
                        protocol: plan.server.protocol,
                    })),
                }
            }
            Endpoint::Unix(path) => Ok(Transport::Unix(UnixStream::connect(path)?)),
        }
    }

    /// After an event while connecting: `Ok(true)` once connected (for TLS: once the
    /// handshake is done), `Ok(false)` while in progress, `Err` if it failed.
    pub fn finish_connect(&mut self) -> io::Result<bool> {
        match self {
            Transport::Tcp(tcp) => tcp_connected(&tcp.stream),
            Transport::Unix(stream) => {
                if let Some(err) = stream.take_error()? {
                    return Err(err);
                }
                Ok(true)
            }
            Transport::Tls(tls) => tls.finish_connect(),
        }
    }

    /// Whether the TCP connect itself is still pending (for TLS: not yet the handshake,
    /// which has its own deadline and its own words when it gets no answer).
    pub fn tcp_pending(&self) -> bool {
        match self {
            Transport::Tcp(_) | Transport::Unix(_) => true,
            Transport::Tls(tls) => !tls.tcp_up,
        }
    }

    /// Registers the stream edge-triggered for both directions (the connection drops the
    /// writing side once it is ready and has nothing to write, see
    /// [`set_write_interest`](Self::set_write_interest)).
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        if let Transport::Tls(tls) = self {
            tls.timer.register(registry, token)?;
        }
        self.source()
            .register(registry, token, Interest::READABLE | Interest::WRITABLE)
    }

    /// Whether the stream may be polled for reading alone while it has nothing to write:
    /// not TLS, whose session may have records of its own to send.
    pub fn can_drop_write_interest(&self) -> bool {
        !matches!(self, Transport::Tls(_))
    }

    /// Polls the stream for reading, and for writing too when `writable` (see
    /// [`Connection::flush`](crate::engine::connection::Connection::flush)).
    pub fn set_write_interest(
        &mut self,
        registry: &Registry,
        token: Token,
        writable: bool,
    ) -> io::Result<()> {
        let interest = if writable {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        self.source().reregister(registry, token, interest)
    }

    /// Removes the stream (and a TLS handshake timer) from the poll.
    pub fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        if let Transport::Tls(tls) = self {
            tls.timer.deregister(registry);
        }
        self.source().deregister(registry)
    }

    /// Closes both directions (TLS first says `close_notify`, best effort); errors are
    /// irrelevant since the stream is being dropped.
    pub fn shutdown(&mut self) {
        let _ = match self {
            Transport::Tcp(tcp) => tcp.stream.shutdown(Shutdown::Both),
            Transport::Unix(stream) => stream.shutdown(Shutdown::Both),
            Transport::Tls(tls) => {
                tls.conn.send_close_notify();
                let _ = tls.conn.write_tls(&mut tls.stream);
                tls.stream.shutdown(Shutdown::Both)
            }
        };
    }

    /// Whether the server sent bytes not read yet (at the end of a run: requests it
    /// answered that kvbench had no time to read are not unanswered).
    pub fn has_unread(&self) -> bool {
        let fd = match self {
            Transport::Tcp(tcp) => tcp.stream.as_raw_fd(),
            Transport::Unix(stream) => stream.as_raw_fd(),
            Transport::Tls(tls) => tls.stream.as_raw_fd(),
        };
        raw_socket::unread(fd) > 0
    }

    fn source(&mut self) -> &mut dyn Source {
        match self {
            Transport::Tcp(tcp) => &mut tcp.stream,
            Transport::Unix(stream) => stream,
            Transport::Tls(tls) => &mut tls.stream,
        }
    }

    /// Reads received bytes (plaintext, for TLS). `Ok(0)` is the end of the stream.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(tcp) => tcp.read(buf),
            Transport::Unix(stream) => stream.read(buf),
            Transport::Tls(tls) => tls.read(buf),
        }
    }

    /// Writes (for TLS: encrypts and sends) a prefix of `buf`; returns how much of it the
    /// caller may drop. The caller offers the rest again later, after `WouldBlock`.
    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(tcp) => {
                tcp.wrote = true;
                raw_socket::send(tcp.stream.as_raw_fd(), buf)
            }
            Transport::Unix(stream) => stream.write(buf),
            Transport::Tls(tls) => tls.write(buf),
        }
    }
}

/// `take_error` then `peer_addr`, as mio's `TcpStream::connect` docs prescribe.
fn tcp_connected(stream: &TcpStream) -> io::Result<bool> {
    if let Some(err) = stream.take_error()? {
        return Err(err);
    }
    match stream.peer_addr() {
        Ok(_) => {
            // Requests are small and latency-bound; Nagle would add delay.
            stream.set_nodelay(true)?;
            Ok(true)
        }
        Err(err)
            if err.kind() == io::ErrorKind::NotConnected
                || err.raw_os_error() == Some(libc::EINPROGRESS) =>
        {
            Ok(false)
        }
        Err(err) => Err(err),
    }
}

/// What to change when a memcached hangs up on a text request: with SASL (`-S`) it
/// speaks only the binary protocol, and closes a text connection at its first command.
fn sasl_hint(names: &FlagNames) -> String {
    format!(
        "if the server requires SASL (memcached -S), use the binary protocol \
         (-P memcache_binary) with {}",
        names.authenticate
    )
}

/// Plain TCP. Remembers whether the server ever sent a byte, so a connection a TLS port
/// drops at once (it cannot parse plaintext) is reported with the hint to add TLS (and,
/// for memcache text, to speak binary: a SASL-only memcached drops text at once too).
pub struct PlainTcp {
    stream: TcpStream,
    replied: bool,
    /// Whether anything was written: a connection closed before it sent a byte (an idle
    /// one) was not dropped for what it said, and gets no hint.
    wrote: bool,
    names: &'static FlagNames,
    protocol: Protocol,
}

impl PlainTcp {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.replied {
            return raw_socket::recv(self.stream.as_raw_fd(), buf);
        }
        match raw_socket::recv(self.stream.as_raw_fd(), buf) {
            // Closed before anything was asked (an idle connection): the server went
            // away, as it would after replies.
            Ok(0) if !self.wrote => Ok(0),
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!(
                    "the server closed the connection before any reply; {}",
                    self.dropped_hint()
                ),
            )),
            // A TLS record header (alert 0x15 or handshake 0x16, version 3.x) starts no reply
            // of any protocol kvbench speaks: the server is talking TLS.
            Ok(n) if n >= 2 && matches!(buf[0], 0x15 | 0x16) && buf[1] == 0x03 => {
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("the server answered with TLS; add {}", self.names.tls_any),
                ))
            }
            Ok(n) => {
                self.replied = true;
                Ok(n)
            }
            Err(err) if err.kind() == io::ErrorKind::ConnectionReset && self.wrote => {
                Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    format!(
                        "connection reset by peer before any reply; {}",
                        self.dropped_hint()
                    ),
                ))
            }
            Err(err) => Err(err),
        }
    }

    /// What to change when the server dropped the connection before any reply.
    fn dropped_hint(&self) -> String {
        let tls = format!("if this port expects TLS, add {}", self.names.tls);
        match self.protocol {
            // memcached -S (SASL) speaks only the binary protocol and closes a text
            // connection at its first command.
            Protocol::MemcacheText => format!("{}; {tls}", sasl_hint(self.names)),
            _ => tls,
        }
    }
}

/// TLS over TCP: the socket, the rustls session and the state the edge-triggered loop needs.
pub struct TlsStream {
    stream: TcpStream,
    conn: ClientConnection,
    settings: Arc<TlsSettings>,
    names: &'static FlagNames,
    /// TCP connect done (the handshake may still be running).
    tcp_up: bool,
    /// How long the handshake may take; `None` when `--connection-timeout` bounds it.
    guard: Option<Duration>,
    /// Handshake deadline, from when TCP came up; `None` before that and after the handshake.
    deadline: Option<Instant>,
    timer: TimerFd,
    /// Ciphertext read from the socket and not yet handed to rustls: `rx[rx_start..rx_end]`.
    rx: Vec<u8>,
    rx_start: usize,
    rx_end: usize,
    /// First byte the server ever sent, to tell a plaintext server from a TLS one.
    first_byte: Option<u8>,
    /// Plaintext has arrived: failures after this are no longer handshake failures.
    got_plaintext: bool,
    /// Bytes at the front of the caller's next `write` that rustls has already encrypted
    /// (0 or 1); see the module docs.
    owed: usize,
    /// The protocol spoken, for the hint when the server hangs up before any reply.
    protocol: Protocol,
    /// Plaintext was written: a connection closed before that was not dropped for what
    /// it said.
    wrote: bool,
}

impl TlsStream {
    fn new(
        stream: TcpStream,
        settings: Arc<TlsSettings>,
        names: &'static FlagNames,
        guard: Option<Duration>,
        protocol: Protocol,
    ) -> io::Result<TlsStream> {
        let conn =
            ClientConnection::new(settings.client_config.clone(), settings.server_name.clone())
                .map_err(|e| io::Error::other(format!("cannot start TLS: {e}")))?;
        Ok(TlsStream {
            stream,
            conn,
            settings,
            names,
            tcp_up: false,
            guard,
            deadline: None,
            timer: match guard {
                Some(_) => TimerFd::new()?,
                None => TimerFd::none(),
            },
            rx: vec![0; TLS_READ_BUFFER],
            rx_start: 0,
            rx_end: 0,
            first_byte: None,
            got_plaintext: false,
            owed: 0,
            protocol,
            wrote: false,
        })
    }

    fn finish_connect(&mut self) -> io::Result<bool> {
        if !self.tcp_up {
            if !tcp_connected(&self.stream)? {
                return Ok(false);
            }
            self.tcp_up = true;
            if let Some(guard) = self.guard {
                // The deadline is taken before the timer is armed, so when the timer fires
                // the deadline has certainly passed.
                self.deadline = Some(Instant::now() + guard);
                self.timer.arm_after(guard)?;
            }
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(
                self.handshake_failed(tls::no_answer(self.guard.unwrap_or_default(), self.names))
            );
        }
        loop {
            match self.push() {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(err) => return Err(self.handshake_io_failed(&err)),
            }
            if !self.conn.is_handshaking() {
                self.deadline = None;
                self.timer.close();
                // Records that came with the server's last flight (session tickets) are
                // processed now rather than left waiting for a readable edge that passed;
                // plaintext, if any, waits in rustls for the next read, which returns it first.
                while self.rx_start < self.rx_end {
                    if self.feed()? > 0 {
                        break;
                    }
                }
                return Ok(true);
            }
            if self.rx_start < self.rx_end {
                self.feed()?;
                continue;
            }
            match self.read_socket() {
                Ok(0) => {
                    let why = if self.first_byte.is_none() {
                        format!(
                            "the server closed the connection without answering; is this a \
                             plaintext port, or does it refuse these TLS versions? check {} and \
                             {}",
                            self.names.tls, self.names.tls_protocols
                        )
                    } else {
                        "the server closed the connection during the handshake".to_string()
                    };
                    return Err(self.handshake_failed(why));
                }
                Ok(_) => self.check_first_byte()?,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(err) => return Err(self.handshake_io_failed(&err)),
            }
        }
    }

    /// See the module docs for the order and the short-read rule.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        // Whether this call saw the socket drained (a short read).
        let mut drained = false;
        loop {
            match self.conn.reader().read(&mut buf[filled..]) {
                // close_notify: the end of the stream, once what came before it is returned.
                Ok(0) => return self.ended(filled),
                Ok(n) => {
                    filled += n;
                    self.got_plaintext = true;
                    if filled == buf.len() {
                        return Ok(filled);
                    }
                    continue;
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                // The TCP stream ended without close_notify: to the caller, the end.
                Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => {
                    return self.ended(filled);
                }
                Err(err) => return Err(err),
            }
            if self.rx_start < self.rx_end {
                self.feed()?;
                continue;
            }
            if drained {
                return if filled > 0 {
                    Ok(filled)
                } else {
                    Err(io::ErrorKind::WouldBlock.into())
                };
            }
            match self.read_socket() {
                Ok(0) => {
                    // Tell rustls the stream ended; the reader then reports the end.
                    self.conn.read_tls(&mut io::empty())?;
                }
                Ok(n) => drained = n < self.rx.len(),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock && filled > 0 => {
                    return Ok(filled);
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// The stream ended after `filled` bytes of this read. A memcached with SASL (`-S`)
    /// hangs up at a text request's first line, over TLS as over TCP: said with what to
    /// change, as the plain transport says it.
    #[cold]
    fn ended(&self, filled: usize) -> io::Result<usize> {
        if filled == 0
            && !self.got_plaintext
            && self.wrote
            && self.protocol == Protocol::MemcacheText
        {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!(
                    "the server closed the connection before any reply; {}",
                    sasl_hint(self.names)
                ),
            ));
        }
        Ok(filled)
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Records queued earlier go first; only a socket that takes them all takes more.
        self.push()?;
        let settled = std::mem::take(&mut self.owed).min(buf.len());
        let fresh = &buf[settled..];
        let taken = if fresh.is_empty() {
            0
        } else {
            self.conn.writer().write(fresh)?
        };
        let done = settled + taken;
        self.wrote |= done > 0;
        match self.push() {
            Ok(()) => Ok(done),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                // Part of `buf` is still in rustls: hold back its last byte so the caller
                // returns with it on the next writable event (see the module docs).
                if done == 0 {
                    return Err(err);
                }
                self.owed = 1;
                if done == 1 { Err(err) } else { Ok(done - 1) }
            }
            Err(err) => Err(err),
        }
    }

    /// Sends queued TLS records until none is left (`Ok`) or the socket is full (`WouldBlock`).
    fn push(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.stream) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// One `read` from the socket into the (empty) ciphertext buffer.
    fn read_socket(&mut self) -> io::Result<usize> {
        loop {
            match self.stream.read(&mut self.rx) {
                Ok(n) => {
                    self.rx_start = 0;
                    self.rx_end = n;
                    if n > 0 && self.first_byte.is_none() {
                        self.first_byte = Some(self.rx[0]);
                    }
                    return Ok(n);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// Hands rustls one chunk of buffered ciphertext and decrypts it; returns the plaintext
    /// bytes rustls now holds. rustls takes at most a few KB per call, so its plaintext
    /// buffer (16 KB) cannot overflow as long as callers drain it between calls.
    fn feed(&mut self) -> io::Result<usize> {
        let mut pending = &self.rx[self.rx_start..self.rx_end];
        let taken = self.conn.read_tls(&mut pending)?;
        self.rx_start += taken;
        // After close_notify rustls takes nothing more: what follows is dropped, not retried.
        if taken == 0 || self.rx_start == self.rx_end {
            self.rx_start = 0;
            self.rx_end = 0;
        }
        match self.conn.process_new_packets() {
            Ok(state) => {
                // Answers rustls owes the server (key updates, alerts) go out when they can;
                // a full socket leaves them for the next write.
                match self.push() {
                    Err(err) if err.kind() != io::ErrorKind::WouldBlock => Err(err),
                    _ => Ok(state.plaintext_bytes_to_read()),
                }
            }
            Err(err) => {
                // rustls queued an alert telling the server why; send it if the socket lets us.
                let _ = self.conn.write_tls(&mut self.stream);
                let text = tls::explain(&self.settings, self.names, &err);
                Err(if self.got_plaintext {
                    io::Error::new(io::ErrorKind::InvalidData, format!("TLS error: {text}"))
                } else {
                    self.handshake_failed(text)
                })
            }
        }
    }

    /// A TLS server's first record is a handshake (0x16) or an alert (0x15); anything else
    /// is a plaintext server, whose words are quoted to make that plain.
    fn check_first_byte(&mut self) -> io::Result<()> {
        let Some(first) = self.first_byte else {
            return Ok(());
        };
        if (0x14..=0x18).contains(&first) {
            return Ok(());
        }
        let head = &self.rx[self.rx_start..self.rx_end.min(self.rx_start + 40)];
        let text: String = String::from_utf8_lossy(head)
            .chars()
            .take_while(|c| *c != '\r' && *c != '\n')
            .collect();
        Err(self.handshake_failed(format!(
            "the server answered in plaintext (\"{text}\"), not TLS; is this a plaintext port? \
             drop {}",
            self.names.tls
        )))
    }

    fn handshake_failed(&self, why: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("TLS handshake failed: {why}"),
        )
    }

    fn handshake_io_failed(&self, err: &io::Error) -> io::Error {
        let text = err.to_string();
        let text = match text.find(" (os error") {
            Some(cut) => text[..cut].to_lowercase(),
            None => text,
        };
        io::Error::new(err.kind(), format!("TLS handshake failed: {text}"))
    }
}
