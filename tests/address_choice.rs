//! Which address a host name leads to, end to end: `kvbench redis-benchmark`, `kvbench
//! latency` and `kvbench zbench` given `127.0.0.1`, `localhost` and `::1` against a
//! redis-server listening on 127.0.0.1 only. The IPv4 literal and `localhost` reach it
//! (its own `INFO commandstats`, read with redis-cli, counts the run's commands); `::1`
//! is refused, as the real tools' connections are, and the server sees nothing.
//!
//! The choice among several addresses of one name (IPv4 first for the hiredis tools, Go's
//! order for zbench) is unit-tested on address lists in `plan::address` and
//! `frontend::zbench::plan`: a name resolving to both `::1` and `127.0.0.1` would need
//! /etc/hosts edited, and this machine's `localhost` has one address.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{RedisServer, Run, kvbench};

const TIMEOUT: Duration = Duration::from_secs(60);
/// The host spellings tried, and whether each reaches a server on 127.0.0.1.
const HOSTS: [(&str, bool); 3] = [("127.0.0.1", true), ("localhost", true), ("::1", false)];

/// Calls of `command` the server counted since the last reset.
fn calls(server: &RedisServer, command: &str) -> u64 {
    server
        .commandstats()
        .get(command)
        .copied()
        .unwrap_or_default()
}

/// `kvbench ARGS...` with `-h host -p port` after the tool's name.
fn run(tool: &str, host: &str, port: u16, args: &[&str]) -> Run {
    let port = port.to_string();
    kvbench(&[tool, "-h", host, "-p", &port])
        .args(args)
        .timeout(TIMEOUT)
        .run()
}

/// The first line the real redis-benchmark prints on stderr for `-h host -p port ARGS`.
/// Refused, 7.0 prints its `Could not connect` line and then retries without end, so it is
/// killed (by its PID) once the line is read, or when none came within [`TIMEOUT`].
fn real_redis_benchmark_first_line(host: &str, port: u16, args: &[&str]) -> String {
    let mut child = Command::new("redis-benchmark")
        .args(["-h", host, "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start redis-benchmark");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel();
    // The read blocks: on a thread of its own, so the wait for it has a deadline.
    thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stderr).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(TIMEOUT);
    let _ = child.kill();
    let _ = child.wait();
    line.expect("redis-benchmark printed a line")
        .trim_end()
        .to_string()
}

#[test]
fn redis_benchmark_reaches_the_ipv4_server_as_redis_benchmark_does() {
    let server = RedisServer::start();
    for (host, reaches) in HOSTS {
        server.config_resetstat();
        let args = ["-n", "50", "-c", "2", "-t", "set", "-q"];
        let run = run("redis-benchmark", host, server.port, &args);
        if reaches {
            assert!(run.status.success(), "{host}: {}", run.describe());
            assert_eq!(calls(&server, "set"), 50, "{host}: {}", run.describe());
            continue;
        }
        // The real redis-benchmark, given the same host, is refused too: neither moves
        // on to 127.0.0.1, and both write the address as given, `::1:PORT`.
        let their_line = real_redis_benchmark_first_line(host, server.port, &args);
        assert_eq!(run.status.code(), Some(1), "{host}: {}", run.describe());
        assert_eq!(run.stderr_text(), format!("{their_line}\n"));
        let port = server.port;
        assert_eq!(
            their_line,
            format!("Could not connect to Redis at {host}:{port}: Connection refused")
        );
        assert_eq!(calls(&server, "set"), 0, "{host}");
    }
}

#[test]
fn latency_probes_the_ipv4_server_as_redis_cli_does() {
    let server = RedisServer::start();
    for (host, reaches) in HOSTS {
        server.config_resetstat();
        let run = run("latency", host, server.port, &["--raw", "-i", "0.2"]);
        if reaches {
            assert!(run.status.success(), "{host}: {}", run.describe());
            // One figures line: min max avg count; every sample was a PING the server saw.
            let out = run.stdout_text();
            let count: u64 = out
                .split_whitespace()
                .nth(3)
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("{host}: no count in {out:?}"));
            assert!(count > 0, "{host}: {out:?}");
            assert!(calls(&server, "ping") >= count, "{host}: {out:?}");
        } else {
            assert_eq!(run.status.code(), Some(1), "{host}: {}", run.describe());
            let err = run.stderr_text();
            assert!(err.contains("connection refused"), "{host}: {err}");
            assert_eq!(calls(&server, "ping"), 0, "{host}");
        }
    }
}

#[test]
fn zbench_reaches_the_ipv4_server_as_go_dials_it() {
    let server = RedisServer::start();
    for (host, reaches) in HOSTS {
        server.config_resetstat();
        let args = ["-mode", "load", "-r", "40", "-c", "2"];
        let run = run("zbench", host, server.port, &args);
        if reaches {
            assert!(run.status.success(), "{host}: {}", run.describe());
            assert_eq!(calls(&server, "zadd"), 40, "{host}: {}", run.describe());
        } else {
            assert_eq!(run.status.code(), Some(1), "{host}: {}", run.describe());
            assert!(run.stderr_text().contains("error:"), "{}", run.describe());
            assert_eq!(calls(&server, "zadd"), 0, "{host}");
        }
    }
}
