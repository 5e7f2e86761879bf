//! redis-cli's own spellings and habits in `kvbench latency` and `kvbench
//! intrinsic-latency`, checked against real servers started here: `-3` and `-2` (what
//! the server saw: HELLO 3, or no HELLO), `--insecure` on TLS, and a reader that closes
//! the pipe after its first line (`| head -1`), which ends the probe quietly with 141 as
//! it ends redis-cli (killed by SIGPIPE), not with an error about the closed pipe.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisServer, TestPki, kvbench, kvbench_command, wait_until};

const TIMEOUT: Duration = Duration::from_secs(60);

/// 128 + SIGPIPE: what a shell reports for a process that SIGPIPE ended.
const READER_GONE: i32 = 141;

#[test]
fn dash_3_says_hello_3_and_dash_2_says_no_hello_as_redis_cli() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    for (flag, hellos) in [("-3", 1), ("-2", 0)] {
        server.config_resetstat();
        let run = kvbench(&["latency", "-p", &port, flag, "--raw", "-i", "0.2"])
            .timeout(TIMEOUT)
            .ok();
        let count: u64 = run
            .stdout_text()
            .split(' ')
            .nth(3)
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("{flag}: a raw line: {}", run.describe()));
        let stats = server.commandstats();
        assert_eq!(
            stats.get("hello").copied().unwrap_or(0),
            hellos,
            "{flag}: {stats:?}"
        );
        assert!(
            stats.get("ping").copied().unwrap_or(0) >= count,
            "{flag}: {stats:?}"
        );
    }
    // Two protocols at once is a usage error, as -P twice would be.
    let run = kvbench(&["latency", "-p", &port, "-3", "-P", "memcache_text"])
        .timeout(TIMEOUT)
        .run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(run.stderr_text().lines().count(), 1, "{}", run.describe());
}

#[test]
fn insecure_skips_certificate_verification_as_redis_cli() {
    let pki = TestPki::generate();
    let tls = RedisServer::start_tls(&pki, "server", &["--tls-auth-clients", "no"]);
    let port = tls.port.to_string();
    let argv = [
        "latency",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--raw",
        "-i",
        "0.2",
    ];
    // No CA given: the server's certificate cannot be verified...
    let refused = kvbench(&argv).timeout(TIMEOUT).run();
    assert_eq!(refused.status.code(), Some(1), "{}", refused.describe());
    // ...unless redis-cli's --insecure says not to.
    let run = kvbench(&argv).args(&["--insecure"]).timeout(TIMEOUT).ok();
    assert_eq!(
        run.stdout_text().split(' ').count(),
        4,
        "{}",
        run.describe()
    );
    assert!(tls.commandstats().get("ping").copied().unwrap_or(0) >= 1);
}

/// Runs kvbench with `args`, reads its first line of output, closes the pipe as `head -1`
/// does, and returns how it ended and what it printed on stderr.
fn close_after_first_line(args: &[&str]) -> (ExitStatus, String) {
    let mut child: Child = kvbench_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(!first.is_empty(), "{args:?}: no output");
    drop(stdout);
    let mut status = None;
    wait_until(
        "kvbench to end after its reader went",
        CONDITION_TIMEOUT,
        || {
            status = child.try_wait().expect("wait");
            status.is_some()
        },
    );
    let mut err = String::new();
    let _ =
        std::io::Read::read_to_string(&mut child.stderr.take().expect("piped stderr"), &mut err);
    (status.expect("ended"), err)
}

#[test]
fn a_reader_that_closes_the_pipe_ends_the_probe_quietly() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    for args in [
        &["latency", "-p", &port, "--history", "-i", "0.2"][..],
        &["latency", "-p", &port, "--dist", "-i", "0.2"][..],
        &["intrinsic-latency", "1"][..],
    ] {
        let (status, err) = close_after_first_line(args);
        assert_eq!(status.code(), Some(READER_GONE), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: nothing on stderr");
    }
    // The probe stopped: its connection is gone from the server.
    wait_until("the probe's connection to close", CONDITION_TIMEOUT, || {
        server.connected_clients() <= 1
    });
}
