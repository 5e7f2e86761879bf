//! A blocking socket with one deadline for a whole exchange, for the one-shot
//! conversations before the event loops (cluster discovery, queries). A socket timeout
//! alone bounds each read, not the exchange: a read interrupted by a signal (a stop and
//! continue, as a debugger or a loaded machine's job control does) is retried by rustls
//! and `write_all` with the full timeout again, so interruptions spaced closer than the
//! timeout made the wait endless. Here every read and write gets only what is left of the
//! deadline, an interrupted call is retried within it (unless a stop signal came: Ctrl-C
//! ends the exchange at once), and once it has passed a call fails as a timeout would
//! (`WouldBlock`, what a socket timeout returns).
//!
//! [`connect`] is the connect before such an exchange: `TcpStream::connect_timeout`
//! retries its poll(2) after a signal with the rest of the timeout, so Ctrl-C during a
//! connect that a silent port never completes waited the whole 5 s.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::signals;

/// How often a pending [`connect`] looks for a stop signal: one that lands between the
/// check and the poll(2) would otherwise not cut the wait short.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// A blocking TCP connection to `addr` within `timeout` (`TcpStream::connect_timeout`'s
/// errors), ended at once, as `interrupted`, by a stop signal.
pub fn connect(addr: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let deadline = Instant::now() + timeout;
    // mio's connect is non-blocking: the wait is ours to slice.
    let stream = mio::net::TcpStream::connect(*addr)?;
    loop {
        if signals::received().is_some() {
            return Err(io::Error::other("interrupted"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection timed out",
            ));
        }
        let mut pollfd = libc::pollfd {
            fd: stream.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        let wait = left.min(SIGNAL_CHECK).as_millis().max(1) as libc::c_int;
        // SAFETY: one valid pollfd, owned by this frame, for the length of the call.
        let ready = unsafe { libc::poll(&mut pollfd, 1, wait) };
        if ready < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if ready == 0 {
            continue;
        }
        // Writable: connected, or failed with the error SO_ERROR holds.
        if let Some(err) = stream.take_error()? {
            return Err(err);
        }
        match stream.peer_addr() {
            Ok(_) => break,
            Err(err) if err.kind() == io::ErrorKind::NotConnected => continue,
            Err(err) => return Err(err),
        }
    }
    // SAFETY: the descriptor comes out of `stream`, which gives up its ownership.
    let stream = unsafe { TcpStream::from_raw_fd(stream.into_raw_fd()) };
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// A socket whose read and write timeouts can be set (TCP or Unix).
pub trait TimedSocket: Read + Write {
    fn set_timeouts(&self, timeout: Duration) -> io::Result<()>;
}

impl TimedSocket for TcpStream {
    fn set_timeouts(&self, timeout: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(timeout))?;
        self.set_write_timeout(Some(timeout))
    }
}

impl TimedSocket for UnixStream {
    fn set_timeouts(&self, timeout: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(timeout))?;
        self.set_write_timeout(Some(timeout))
    }
}

/// `socket`, every read and write of which ends by `deadline`.
#[derive(Debug)]
pub struct DeadlineStream<S> {
    socket: S,
    deadline: Instant,
    /// How long an exchange may take (what [`restart`](Self::restart) allows again).
    timeout: Duration,
}

impl<S: TimedSocket> DeadlineStream<S> {
    /// `socket` with `timeout` from now for the exchange.
    pub fn new(socket: S, timeout: Duration) -> Self {
        DeadlineStream {
            socket,
            deadline: Instant::now() + timeout,
            timeout,
        }
    }

    /// A new exchange on the same socket (e.g. the query after a TLS handshake): the
    /// whole timeout again from now.
    pub fn restart(&mut self) {
        self.deadline = Instant::now() + self.timeout;
    }

    /// Runs `call` with the socket's timeouts set to what is left of the deadline,
    /// again while it is interrupted or timed out early; a timeout once the deadline has
    /// passed.
    fn within<T>(&mut self, mut call: impl FnMut(&mut S) -> io::Result<T>) -> io::Result<T> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!("no answer within {} s", self.timeout.as_secs_f64()),
                ));
            }
            self.socket.set_timeouts(left)?;
            match call(&mut self.socket) {
                // Ctrl-C (or SIGTERM) ends the exchange at once: a kind rustls does not
                // retry, so a handshake stops too.
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {
                    if signals::received().is_some() {
                        return Err(io::Error::other("interrupted"));
                    }
                }
                // The kernel's timeout can end a fraction of a millisecond early (seen:
                // 199.6 ms of 200): the deadline is what counts.
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) && Instant::now() < self.deadline => {}
                outcome => return outcome,
            }
        }
    }
}

impl<S: TimedSocket> Read for DeadlineStream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.within(|socket| socket.read(buf))
    }
}

impl<S: TimedSocket> Write for DeadlineStream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.within(|socket| socket.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        // Nothing is buffered here (a socket's flush does nothing): no deadline to apply.
        self.socket.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_reaches_a_listener_and_reports_a_closed_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let mut stream = connect(&addr, Duration::from_secs(5)).expect("connect");
        let (mut theirs, _) = listener.accept().expect("accept");
        stream.write_all(b"x").expect("write");
        let mut got = [0u8; 1];
        theirs.read_exact(&mut got).expect("read");
        drop(listener);
        let err = connect(&addr, Duration::from_secs(5)).expect_err("closed port");
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused, "{err}");
    }

    #[test]
    fn a_silent_peer_times_out_at_the_deadline() {
        let (ours, _theirs) = UnixStream::pair().expect("socket pair");
        let mut stream = DeadlineStream::new(ours, Duration::from_millis(200));
        let started = Instant::now();
        let err = stream.read(&mut [0u8; 16]).expect_err("nothing was sent");
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(200), "{took:?}");
        // Once the deadline has passed, a call fails at once; restart allows it again.
        let err = stream.read(&mut [0u8; 16]).expect_err("past the deadline");
        assert!(err.to_string().contains("no answer within 0.2 s"), "{err}");
        stream.restart();
        assert!(stream.deadline > Instant::now());
    }

    #[test]
    fn reads_and_writes_go_through() {
        let (ours, mut theirs) = UnixStream::pair().expect("socket pair");
        let mut stream = DeadlineStream::new(ours, Duration::from_secs(5));
        stream.write_all(b"PING\r\n").expect("write");
        stream.flush().expect("flush");
        let mut got = [0u8; 6];
        theirs.read_exact(&mut got).expect("read");
        assert_eq!(&got, b"PING\r\n");
        theirs.write_all(b"+PONG\r\n").expect("answer");
        let mut reply = [0u8; 7];
        stream.read_exact(&mut reply).expect("reply");
        assert_eq!(&reply, b"+PONG\r\n");
    }
}
