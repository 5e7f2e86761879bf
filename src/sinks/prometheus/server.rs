//! The endpoint's own thread: one `mio::Poll` serving any number of scrapers at once, each
//! bounded in time, until the run ends.
//!
//! Every socket is non-blocking, so a slow or half-open client (one that connects and
//! sends nothing, sends its request a byte at a time, or never reads the response) only
//! holds its own slot until [`CLIENT_TIMEOUT`] closes it; the others are served meanwhile.
//! At most [`MAX_CLIENTS`] are served at once; up to [`MAX_TURNED_AWAY`] more have their
//! request read and answered 503 (read first, so that closing cannot reset the connection
//! before the answer arrives), and any beyond that are closed at once. This thread
//! is not one of the engine's event loops: it shares nothing with them but the published
//! text (see `metrics.rs`).
//!
//! ```text
//! accept -> Reading (until the blank line; 8 KiB at most) -> Writing (head, then the text)
//!        -> Draining (our side shut; read until the scraper closes) -> closed
//! any state: past its deadline -> closed
//! ```

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;

use super::http::{self, Response, Route};
use super::metrics::Exposition;
use super::settings::PrometheusSettings;
use crate::error::Error;

/// How long one client may take, from its connection to our close: ample for a scrape
/// over loopback or a LAN (Prometheus's own default scrape timeout is 10 s, and it waits
/// for the whole response), short enough that a stuck client frees its slot quickly.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// Most clients served at once.
pub const MAX_CLIENTS: usize = 64;

/// Most clients being told 503 at once, on top of [`MAX_CLIENTS`].
pub const MAX_TURNED_AWAY: usize = 16;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Client `k` of the slab is `Token(k + FIRST_CLIENT)`.
const FIRST_CLIENT: usize = 2;

/// A running endpoint. [`PrometheusEndpoint::stop`] (or dropping it) closes the listener and
/// every client and joins the thread.
#[derive(Debug)]
pub struct PrometheusEndpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

impl PrometheusEndpoint {
    /// Binds `settings.addr()` and serves `exposition` from a new thread. Prints the bound
    /// address on stderr as one line, the one memtier prints:
    ///
    /// ```text
    /// Prometheus exporter listening on http://127.0.0.1:43217/metrics
    /// ```
    ///
    /// plus a warning line first when the address is not a loopback one (the endpoint has
    /// no authentication). A port in use or refused is a run error.
    pub fn start(
        settings: &PrometheusSettings,
        exposition: Exposition,
    ) -> Result<PrometheusEndpoint, Error> {
        let wanted = settings.addr();
        let cannot = |e: io::Error| {
            Error::run(format!(
                "cannot serve Prometheus metrics on {wanted}: {}",
                describe(&e)
            ))
        };
        let mut listener = TcpListener::bind(wanted).map_err(cannot)?;
        let addr = listener.local_addr().map_err(cannot)?;
        let poll = Poll::new().map_err(cannot)?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .map_err(cannot)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(cannot)?);
        let stop = Arc::new(AtomicBool::new(false));
        let server = Server {
            poll,
            listener,
            exposition,
            clients: Slab::new(),
            serving: 0,
            stop: Arc::clone(&stop),
        };
        let thread = thread::Builder::new()
            .name("prometheus".to_string())
            .spawn(move || server.run())
            .map_err(cannot)?;
        if !addr.ip().is_loopback() {
            eprintln_safe!(
                "warning: the Prometheus endpoint on {addr} has no authentication: anyone who \
                 can reach that port can read the metrics."
            );
        }
        eprintln_safe!("Prometheus exporter listening on http://{addr}/metrics");
        Ok(PrometheusEndpoint {
            addr,
            stop,
            waker,
            thread: Some(thread),
        })
    }

    /// The address actually bound (the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving: the listener and every client are closed when this returns.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stop.store(true, Ordering::Release);
        // If waking fails the thread still sees the flag within one client timeout.
        let _ = self.waker.wake();
        // The thread catches nothing that could panic on a client's input; a panic would
        // be a bug already reported on stderr by the runtime.
        let _ = thread.join();
    }
}

impl Drop for PrometheusEndpoint {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The words of an I/O error without Rust's "(os error N)" suffix.
fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

struct Server {
    poll: Poll,
    listener: TcpListener,
    exposition: Exposition,
    clients: Slab<Client>,
    /// Clients in `clients` that are not turned away.
    serving: usize,
    stop: Arc<AtomicBool>,
}

struct Client {
    stream: TcpStream,
    deadline: Instant,
    /// Accepted while [`MAX_CLIENTS`] were being served: its request gets a 503.
    turned_away: bool,
    state: State,
}

enum State {
    Reading(Vec<u8>),
    Writing { response: Response, written: usize },
    Draining,
}

/// Whether a client stays after being driven.
enum Next {
    Keep,
    Close,
}

impl Server {
    fn run(mut self) {
        let mut events = Events::with_capacity(128);
        loop {
            let now = Instant::now();
            let timeout = self
                .clients
                .iter()
                .map(|(_, c)| c.deadline.saturating_duration_since(now))
                .min();
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                eprintln_safe!("warning: the Prometheus endpoint stopped: {}", describe(&e));
                return;
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            for event in &events {
                match event.token() {
                    LISTENER => self.accept_all(),
                    WAKER => {}
                    Token(t) => {
                        let key = t - FIRST_CLIENT;
                        if let Some(client) = self.clients.get_mut(key)
                            && let Next::Close = client.drive(&self.exposition)
                        {
                            self.close(key);
                        }
                    }
                }
            }
            let now = Instant::now();
            let expired: Vec<usize> = self
                .clients
                .iter()
                .filter(|(_, c)| c.deadline <= now)
                .map(|(key, _)| key)
                .collect();
            for key in expired {
                self.close(key);
            }
        }
    }

    fn accept_all(&mut self) {
        loop {
            let (mut stream, _peer) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // The connection died before we took it: take the next one.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) =>
                {
                    continue;
                }
                // Descriptors ran out or the like: what waits is taken on the next
                // connection's event; the listener stays usable.
                Err(_) => return,
            };
            let turned_away = self.serving >= MAX_CLIENTS;
            if turned_away && self.clients.len() >= MAX_CLIENTS + MAX_TURNED_AWAY {
                drop(stream);
                continue;
            }
            let entry = self.clients.vacant_entry();
            let token = Token(entry.key() + FIRST_CLIENT);
            if self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
                .is_err()
            {
                continue;
            }
            entry.insert(Client {
                stream,
                deadline: Instant::now() + CLIENT_TIMEOUT,
                turned_away,
                state: State::Reading(Vec::new()),
            });
            if !turned_away {
                self.serving += 1;
            }
        }
    }

    fn close(&mut self, key: usize) {
        if let Some(mut client) = self.clients.try_remove(key) {
            let _ = self.poll.registry().deregister(&mut client.stream);
            if !client.turned_away {
                self.serving -= 1;
            }
        }
    }
}

impl Client {
    /// Makes all the progress the socket allows now.
    fn drive(&mut self, exposition: &Exposition) -> Next {
        loop {
            let next = match &mut self.state {
                State::Reading(buf) => match read_request(&mut self.stream, buf) {
                    Ok(Some(route)) => {
                        let route = if self.turned_away { Route::Busy } else { route };
                        let response = Response::new(route, || exposition.body());
                        State::Writing {
                            response,
                            written: 0,
                        }
                    }
                    Ok(None) => return Next::Keep,
                    Err(()) => return Next::Close,
                },
                State::Writing { response, written } => {
                    match write_response(&mut self.stream, response, written) {
                        Ok(true) => {
                            // Half-close and wait for the scraper's close, so that unread
                            // request bytes cannot turn our close into a reset that
                            // destroys the response before the scraper read it.
                            if self.stream.shutdown(Shutdown::Write).is_err() {
                                return Next::Close;
                            }
                            State::Draining
                        }
                        Ok(false) => return Next::Keep,
                        Err(()) => return Next::Close,
                    }
                }
                State::Draining => return drain(&mut self.stream),
            };
            self.state = next;
        }
    }
}

/// Reads what is there. `Ok(Some(route))` once the head is complete (or too large),
/// `Ok(None)` when more is needed, `Err` when the client went away or the socket failed.
fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Option<Route>, ()> {
    let mut chunk = [0u8; 2048];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Err(()),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                match http::head_len(buf) {
                    Some(len) if len <= http::MAX_REQUEST_HEAD => {
                        return Ok(Some(http::route(&buf[..len])));
                    }
                    Some(_) => return Ok(Some(Route::HeadTooLarge)),
                    None if buf.len() > http::MAX_REQUEST_HEAD => {
                        return Ok(Some(Route::HeadTooLarge));
                    }
                    None => {}
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(()),
        }
    }
}

/// Writes what the socket takes. `Ok(true)` when all is written.
fn write_response(
    stream: &mut TcpStream,
    response: &Response,
    written: &mut usize,
) -> Result<bool, ()> {
    while *written < response.total_len() {
        match stream.write(response.remaining(*written)) {
            Ok(0) => return Err(()),
            Ok(n) => *written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(()),
        }
    }
    Ok(true)
}

/// Discards what the scraper still sends until it closes.
fn drain(stream: &mut TcpStream) -> Next {
    let mut chunk = [0u8; 2048];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Next::Close,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    }
}
