//! Connects that never complete (a full listen backlog, a firewall dropping SYNs): a stop
//! signal still ends every front end at once, and a run says what is going on rather than
//! blaming a server that never accepted.

mod common;

use std::time::{Duration, Instant};

use common::{CONDITION_TIMEOUT, SynDroppingPort, kvbench, wait_until};

/// Sends `signal` to `pid` (a process this test started).
fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal})");
}

/// redis-benchmark's CONFIG query connects before any test: Ctrl-C during that connect
/// ended the run only when its 5 s connect timeout ran out.
#[test]
fn ctrl_c_ends_redis_benchmark_during_a_pending_connect() {
    let port = SynDroppingPort::start();
    let port_arg = port.port.to_string();
    let run = kvbench(&[
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        &port_arg,
        "-n",
        "100",
        "-t",
        "get",
        "-c",
        "3",
    ])
    .with_json()
    .spawn();
    // The handlers are installed before the connect begins.
    wait_until("a pending connect", CONDITION_TIMEOUT, || {
        port.has_pending_connect()
    });
    let sent = Instant::now();
    signal(run.pid(), libc::SIGINT);
    let out = run.wait(Duration::from_secs(30));
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    // At once, where the old wait took the rest of 5 s; a loaded machine gets slack.
    assert!(
        took < Duration::from_secs(3),
        "{took:?}: {}",
        out.describe()
    );
    assert_eq!(out.json()["ALL STATS"]["Runtime"]["Interrupted"], "true");
}

/// A memtier-style run whose one connect never completes: the progress line counts no
/// connection, stderr says after 10 s that it is still connecting, and the run's error
/// says nothing was established (not that a server accepted and answered nothing).
#[test]
fn a_connect_that_never_completes_is_named_as_such() {
    let port = SynDroppingPort::start();
    let port_arg = port.port.to_string();
    let run = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port_arg,
        "-t",
        "1",
        "-c",
        "1",
        "--test-time=12",
        "--hide-histogram",
    ])
    .spawn();
    run.wait_for_stderr("still connecting after 10 s");
    let out = run.wait(Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let stderr = out.stderr_text();
    assert!(
        stderr.contains(&format!(
            "warning: 1 connection(s) of thread 0 to 127.0.0.1:{port_arg} still connecting \
             after 10 s"
        )) && stderr.contains("--connection-timeout sets a limit"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no connection was ever established (the connects were still pending)"),
        "{stderr}"
    );
    assert!(!stderr.contains("accepted connections"), "{stderr}");
    // The progress line's conns is memtier's: the clients per thread asked for (-c),
    // connected or not; the warning above is what names the pending connect.
    assert!(stderr.contains(" 1 conns:"), "{stderr}");
}
