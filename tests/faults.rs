//! Faults: a scripted fake RESP server (garbage, early close, reset, half replies,
//! stalls), a real redis-server killed mid-run, Ctrl-C, unreachable servers and bad
//! flags. Each must end kvbench promptly with a one-line `error: ...` (or exit 130 on
//! SIGINT), never a panic, and write whatever results it measured.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::{CONDITION_TIMEOUT, RedisServer, closed_port, describe, kvbench_at, wait_until};
use serde_json::Value;

/// Hard limit for a run that is expected to fail fast.
const FAST: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------
// The fake server.

/// How the fake server answers on every connection it accepts.
#[derive(Clone, Copy, Debug)]
enum Script {
    /// Answer the first request with `?garbage\r\n` (no RESP type starts with `?`).
    Garbage,
    /// Answer `n` requests properly, then close: the FIN rides on the segment carrying
    /// the last reply, as when a server answers and hangs up at once.
    CloseAfter(usize),
    /// Answer `n` requests properly, wait for the next request, then close (FIN) with
    /// that request unanswered: the server dies with a request in flight.
    CloseWithRequestInFlight(usize),
    /// Read the first request, then reset the connection (SO_LINGER 0, close: RST).
    Reset,
    /// Answer the first request with the start of a bulk string, then close (the FIN
    /// in the same segment).
    HalfReply,
    /// Read requests and never answer.
    Stall,
}

/// A TCP server on 127.0.0.1 that speaks just enough RESP to follow a [`Script`].
/// One thread per connection; `Drop` stops every thread and closes every socket.
struct FakeServer {
    port: u16,
    stop: Arc<AtomicBool>,
    /// Connections accepted so far.
    accepted: Arc<AtomicUsize>,
    /// Proper replies (`+OK`, `$-1`) written so far, over all connections.
    answered: Arc<AtomicUsize>,
    acceptor: Option<thread::JoinHandle<()>>,
}

impl FakeServer {
    fn start(script: Script) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local_addr").port();
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let answered = Arc::new(AtomicUsize::new(0));
        let acceptor = {
            let (stop, accepted, answered) = (
                Arc::clone(&stop),
                Arc::clone(&accepted),
                Arc::clone(&answered),
            );
            thread::spawn(move || {
                let mut workers = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            accepted.fetch_add(1, Ordering::Relaxed);
                            let (stop, answered) = (Arc::clone(&stop), Arc::clone(&answered));
                            workers.push(thread::spawn(move || {
                                serve(stream, script, &stop, &answered)
                            }));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            thread::sleep(Duration::from_millis(5));
                        }
                        Err(e) => panic!("fake server accept: {e}"),
                    }
                }
                for worker in workers {
                    let _ = worker.join();
                }
            })
        };
        FakeServer {
            port,
            stop,
            accepted,
            answered,
            acceptor: Some(acceptor),
        }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }

    fn answered(&self) -> usize {
        self.answered.load(Ordering::Relaxed)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Reads from `stream` into `buf`; `false` on EOF, error or stop. Wakes every 50 ms to
/// check `stop`.
fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>, stop: &AtomicBool) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Takes one complete RESP request (`*N\r\n` then N bulk strings) off the front of `buf`
/// and returns its command name, upper case; `None` while incomplete.
fn take_request(buf: &mut Vec<u8>) -> Option<String> {
    fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
        let end = buf[at..].windows(2).position(|w| w == b"\r\n")? + at;
        Some((&buf[at..end], end + 2))
    }
    fn number(bytes: &[u8]) -> usize {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("fake server: bad number {bytes:?}"))
    }
    let (head, mut at) = line(buf, 0)?;
    assert_eq!(
        head.first(),
        Some(&b'*'),
        "fake server: request is not a RESP array"
    );
    let parts = number(&head[1..]);
    let mut name = None;
    for _ in 0..parts {
        let (len_line, data) = line(buf, at)?;
        assert_eq!(
            len_line.first(),
            Some(&b'$'),
            "fake server: part is not a bulk string"
        );
        let len = number(&len_line[1..]);
        if buf.len() < data + len + 2 {
            return None;
        }
        name.get_or_insert_with(|| String::from_utf8_lossy(&buf[data..data + len]).to_uppercase());
        at = data + len + 2;
    }
    buf.drain(..at);
    Some(name.unwrap_or_default())
}

/// Blocks until one whole request has arrived; `None` if the peer left first.
fn next_request(stream: &mut TcpStream, buf: &mut Vec<u8>, stop: &AtomicBool) -> Option<String> {
    loop {
        if let Some(name) = take_request(buf) {
            return Some(name);
        }
        if !fill(stream, buf, stop) {
            return None;
        }
    }
}

/// Holds back small writes (TCP_CORK) so the next write and a following
/// [`close_gracefully`] leave in one segment: data and FIN arrive together.
fn cork(stream: &TcpStream) {
    let on: libc::c_int = 1;
    // SAFETY: the fd is open (owned by `stream`) and `on` is a c_int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CORK,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "setsockopt TCP_CORK");
}

/// Answers up to `n` requests (`$-1` to GET, `+OK` to anything else), corking before the
/// last one when `cork_last`; `false` if the client left first.
fn answer(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    n: usize,
    cork_last: bool,
    stop: &AtomicBool,
    answered: &AtomicUsize,
) -> bool {
    for i in 0..n {
        let Some(name) = next_request(stream, buf, stop) else {
            return false;
        };
        if cork_last && i + 1 == n {
            cork(stream);
        }
        let reply: &[u8] = if name == "GET" {
            b"$-1\r\n"
        } else {
            b"+OK\r\n"
        };
        if stream.write_all(reply).is_err() {
            return false;
        }
        answered.fetch_add(1, Ordering::Relaxed);
    }
    true
}

/// Closes our side with a FIN (which flushes corked data), then reads and discards until the client goes away, so
/// unread requests never turn the close into a reset.
fn close_gracefully(mut stream: TcpStream, stop: &AtomicBool) {
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = Vec::new();
    while fill(&mut stream, &mut sink, stop) {
        sink.clear();
    }
}

fn serve(mut stream: TcpStream, script: Script, stop: &AtomicBool, answered: &AtomicUsize) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = Vec::new();
    match script {
        Script::Garbage => {
            if next_request(&mut stream, &mut buf, stop).is_some() {
                let _ = stream.write_all(b"?garbage\r\n");
            }
            close_gracefully(stream, stop);
        }
        Script::CloseAfter(n) => {
            if answer(&mut stream, &mut buf, n, true, stop, answered) {
                close_gracefully(stream, stop);
            }
        }
        Script::CloseWithRequestInFlight(n) => {
            if answer(&mut stream, &mut buf, n, false, stop, answered)
                && next_request(&mut stream, &mut buf, stop).is_some()
            {
                close_gracefully(stream, stop);
            }
        }
        Script::Reset => {
            if next_request(&mut stream, &mut buf, stop).is_some() {
                let linger = libc::linger {
                    l_onoff: 1,
                    l_linger: 0,
                };
                // SAFETY: the fd is open (owned by `stream`) and `linger` is a valid
                // struct of the size passed.
                let rc = unsafe {
                    libc::setsockopt(
                        stream.as_raw_fd(),
                        libc::SOL_SOCKET,
                        libc::SO_LINGER,
                        (&linger as *const libc::linger).cast(),
                        std::mem::size_of::<libc::linger>() as libc::socklen_t,
                    )
                };
                assert_eq!(rc, 0, "setsockopt SO_LINGER");
            }
            // Closing with a zero linger sends RST instead of FIN.
            drop(stream);
        }
        Script::HalfReply => {
            if next_request(&mut stream, &mut buf, stop).is_some() {
                cork(&stream);
                let _ = stream.write_all(b"$10\r\nabc");
            }
            close_gracefully(stream, stop);
        }
        Script::Stall => {
            let mut sink = Vec::new();
            while fill(&mut stream, &mut sink, stop) {
                sink.clear();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Assertions on a finished run.

/// The run failed cleanly: a normal non-zero exit (not killed by a signal), no panic, and
/// exactly one `error: ` line on stderr, the last one, containing every one of `needles`.
/// Returns that line.
fn assert_clean_failure(out: &Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "kvbench panicked\n{}",
        describe(out)
    );
    assert!(
        out.status.code().is_some_and(|code| code != 0),
        "expected a non-zero exit code\n{}",
        describe(out)
    );
    // The progress line ends in `\r`, so split on both line ends.
    let lines: Vec<&str> = stderr
        .split(['\n', '\r'])
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("error"))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "expected exactly one error line\n{}",
        describe(out)
    );
    let line = errors[0];
    assert!(
        line.starts_with("error: "),
        "error line does not start with `error: `: {line:?}\n{}",
        describe(out)
    );
    assert_eq!(
        lines.last(),
        Some(&line),
        "the error is not the last thing on stderr\n{}",
        describe(out)
    );
    for needle in needles {
        assert!(
            line.contains(needle),
            "error line {line:?} does not mention {needle:?}\n{}",
            describe(out)
        );
    }
    line.to_string()
}

fn totals_count(json: &Value) -> u64 {
    json["ALL STATS"]["Totals"]["Count"]
        .as_u64()
        .unwrap_or_else(|| panic!("ALL STATS/Totals/Count missing in {json}"))
}

// ---------------------------------------------------------------------------------------
// Scripted faults.

#[test]
fn garbage_reply_is_an_invalid_reply_error() {
    let server = FakeServer::start(Script::Garbage);
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "2", "-n", "100"])
        .timeout(FAST)
        .run();
    assert!(server.accepted() > 0, "kvbench never connected");
    assert_clean_failure(&out, &["invalid reply", &server.addr()]);
}

#[test]
fn server_closing_after_some_replies_is_reported_as_closed() {
    let server = FakeServer::start(Script::CloseAfter(10));
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "2", "-n", "1000"])
        .timeout(FAST)
        .run();
    assert!(server.answered() >= 10, "the fake server answered nothing");
    assert_clean_failure(&out, &["closed", &server.addr()]);
}

#[test]
fn connection_reset_is_an_error() {
    let server = FakeServer::start(Script::Reset);
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "1", "-n", "100"])
        .timeout(FAST)
        .run();
    assert!(server.accepted() > 0, "kvbench never connected");
    assert_clean_failure(&out, &[&server.addr()]);
}

#[test]
fn half_written_reply_then_close_is_an_error() {
    let server = FakeServer::start(Script::HalfReply);
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "1", "-n", "100"])
        .timeout(FAST)
        .run();
    assert!(server.accepted() > 0, "kvbench never connected");
    assert_clean_failure(&out, &["closed", &server.addr()]);
}

/// `--test-time` is a deadline even when no reply ever comes: the run ends on time,
/// without a panic.
#[test]
fn stalling_server_does_not_outlive_test_time() {
    let server = FakeServer::start(Script::Stall);
    let started = Instant::now();
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "2", "-c", "2", "--test-time=2"])
        .timeout(FAST)
        .run();
    let took = started.elapsed();
    assert!(server.accepted() > 0, "kvbench never connected");
    // Bounded well under the 60 s reply watchdog that would otherwise end it.
    assert!(
        took < Duration::from_secs(30),
        "a --test-time=2 run against a stalled server took {took:?}\n{}",
        describe(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "kvbench panicked\n{}",
        describe(&out)
    );
    assert!(
        out.status.code().is_some(),
        "kvbench was killed by a signal\n{}",
        describe(&out)
    );
}

/// A timed run in which the server answered nothing is no benchmark: it must not exit 0
/// with a table of zeros, but say which server did not answer.
#[test]
fn stalling_server_that_never_answers_is_an_error() {
    let server = FakeServer::start(Script::Stall);
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "2", "--test-time=2"])
        .timeout(FAST)
        .run();
    assert!(server.accepted() > 0, "kvbench never connected");
    assert_clean_failure(&out, &[&server.addr()]);
}

#[test]
fn closed_port_is_a_connect_error_before_any_results() {
    let port = closed_port();
    let out = kvbench_at(port, &["-t", "1", "-c", "1"])
        .with_json()
        .timeout(FAST)
        .run();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_clean_failure(&out, &[&format!("cannot connect to 127.0.0.1:{port}")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("ALL STATS") && !stdout.contains("Totals"),
        "results printed for a run that never connected\n{}",
        describe(&out)
    );
    // The JSON file asked for is written, saying why the run has no figures, so it
    // never keeps an older run's (memtier_benchmark leaves it empty).
    assert!(out.json_written(), "no JSON for a run that never connected");
    let json = out.json();
    let stopped = json["ALL STATS"]["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(stopped.contains("cannot connect"), "{json}");
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], 0, "{json}");
}

#[test]
fn a_refused_server_with_reconnects_says_its_connections_failed() {
    // --reconnect-on-error keeps trying a port nobody listens on until --test-time ends:
    // the error says the connections failed, not that a server accepted and was silent.
    let port = closed_port();
    let out = kvbench_at(port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "--test-time=2",
            "--reconnect-on-error",
        ])
        .timeout(FAST)
        .run();
    let line = assert_clean_failure(&out, &["connections failed", &format!("127.0.0.1:{port}")]);
    assert!(!line.contains("accepted"), "{line}");
}

/// A server that dies mid-run leaves an error exit and, in the JSON, what was measured
/// up to then: exactly the replies the server sent.
#[test]
fn server_dying_mid_run_still_writes_the_json_so_far() {
    let server = FakeServer::start(Script::CloseWithRequestInFlight(200));
    let out = kvbench_at(
        server.port,
        &[
            "--hide-histogram",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10000",
            "--ratio=1:1",
        ],
    )
    .with_json()
    .timeout(FAST)
    .run();
    assert_clean_failure(&out, &["closed"]);
    assert_eq!(server.answered(), 200);
    let report = out.json();
    let count = totals_count(&report);
    assert!(
        count > 0,
        "Totals Count is 0 though 200 replies were received"
    );
    assert_eq!(
        count, 200,
        "Totals Count is not the number of replies received"
    );
    assert_eq!(
        report["ALL STATS"]["Totals"]["Connection Errors"].as_u64(),
        Some(1),
        "the lost connection is counted"
    );
    let stopped = report["ALL STATS"]["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(
        stopped.contains("closed"),
        "Runtime: {}",
        report["ALL STATS"]["Runtime"]
    );
}

// ---------------------------------------------------------------------------------------
// A real redis-server.

#[test]
fn redis_killed_mid_run_is_an_error() {
    let mut redis = RedisServer::start();
    let kvbench = kvbench_at(
        redis.port,
        &["-t", "2", "-c", "5", "--test-time=30", "--hide-histogram"],
    )
    .spawn();
    wait_until("load on the server", CONDITION_TIMEOUT, || {
        redis.calls() > 100
    });
    let killed_at = Instant::now();
    redis.kill_now();
    let out = kvbench.wait(FAST);
    let after_kill = killed_at.elapsed();
    assert_clean_failure(&out, &[&redis.addr()]);
    // Well under the 30 s it would run on; room for a loaded machine.
    assert!(
        after_kill < Duration::from_secs(10),
        "kvbench took {after_kill:?} to notice its server died\n{}",
        describe(&out)
    );
}

#[test]
fn sigint_stops_the_run_and_writes_interrupted_results() {
    let redis = RedisServer::start();
    let kvbench = kvbench_at(
        redis.port,
        &["-t", "2", "-c", "2", "--test-time=30", "--hide-histogram"],
    )
    .with_json()
    .spawn();
    // The handlers are in place once the threads launch; then wait for some results.
    kvbench.wait_for_stderr("Launching threads");
    wait_until("load on the server", CONDITION_TIMEOUT, || {
        redis.calls() > 100
    });
    let pid = libc::pid_t::try_from(kvbench.pid()).expect("pid fits pid_t");
    // SAFETY: `pid` is our own child, not reaped yet (so not reused); SIGINT is a plain
    // signal number.
    let rc = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(rc, 0, "kill(SIGINT)");
    let signalled_at = Instant::now();
    let out = kvbench.wait(FAST);
    let took = signalled_at.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "kvbench took {took:?} to stop after SIGINT\n{}",
        describe(&out)
    );
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{}",
        describe(&out)
    );
    let report = out.json();
    assert_eq!(
        report["ALL STATS"]["Runtime"]["Interrupted"].as_str(),
        Some("true"),
        "Runtime: {}",
        report["ALL STATS"]["Runtime"]
    );
    assert!(
        totals_count(&report) > 0,
        "nothing measured before the signal"
    );
    // Ctrl-C is no error: only "Interrupted" says it.
    assert!(
        report["ALL STATS"]["Runtime"]
            .get("Stopped by error")
            .is_none()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ALL STATS"),
        "no table printed\n{}",
        describe(&out)
    );
}

// ---------------------------------------------------------------------------------------
// Bad flags: rejected before any connection.

fn rejects_flag(flags: &[&str], needle: &str) {
    let out = kvbench_at(closed_port(), flags).timeout(FAST).run();
    let line = assert_clean_failure(&out, &[needle]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        line,
        "{flags:?}: stderr is more than the one error line (did it try to connect?)"
    );
    assert!(
        out.stdout.is_empty(),
        "{flags:?}: printed on stdout\n{}",
        describe(&out)
    );
}

#[test]
fn bad_ratio_is_rejected() {
    rejects_flag(&["--ratio=x"], "ratio");
}

#[test]
fn zero_requests_are_rejected() {
    rejects_flag(&["-n", "0"], "requests");
}

#[test]
fn unknown_flag_is_rejected() {
    rejects_flag(&["--foo"], "--foo");
}

#[test]
fn zero_threads_are_rejected() {
    rejects_flag(&["-t", "0"], "threads");
}

#[test]
fn inverted_key_range_is_rejected() {
    rejects_flag(&["--key-maximum=1", "--key-minimum=5"], "key-m");
}
