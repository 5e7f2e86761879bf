//! `kvbench redis-benchmark` against a redis-server frozen (SIGSTOP) part way through a
//! test: the requests it left unanswered are in no figure, so stderr names them
//! (`warning: TITLE: ...`) and `--json-out-file` has them in `"Unfinished"`, whether
//! `--reply-timeout` or Ctrl-C ended the test; stdout stays redis-benchmark's.

mod common;

use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisServer, TestDir, kvbench, wait_until};

/// Longest a frozen run may take: its 12 s reply timeout on a loaded 2-core machine.
const STALLED_RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// `kvbench redis-benchmark` on `server` for GETs that `-n` would keep going for an
/// hour, 10 clients, writing `json`; started once the server has run 1000 of them, then
/// frozen.
fn frozen_under_gets(server: &RedisServer, json: &str, reply_timeout: &str) -> common::Background {
    let port = server.port.to_string();
    let run = kvbench(&[
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "get",
        "-n",
        "100000000",
        "-c",
        "10",
        "-q",
        "--reply-timeout",
        reply_timeout,
        "--json-out-file",
        json,
    ])
    .spawn();
    wait_until("GETs on the server", CONDITION_TIMEOUT, || {
        server.commandstats().get("get").copied().unwrap_or(0) > 1000
    });
    server.signal(libc::SIGSTOP);
    run
}

/// That `doc`'s `"Unfinished"` holds requests sent at least `min_age_ms` before the end
/// (the freeze held them that long) and a warning, and that `stderr` holds it once as
/// `warning: GET: <text>`, not last (the error or nothing else follows); returns the
/// number of requests.
fn assert_names_the_unanswered(doc: &serde_json::Value, stderr: &str, min_age_ms: f64) -> u64 {
    let unfinished = &doc["ALL STATS"]["Unfinished"];
    let in_flight = unfinished["In Flight At End"].as_u64().unwrap_or(0);
    // At most one request per client (-c 10, no pipeline); the one whose reply timed
    // out may have gone with its connection.
    assert!((1..=10).contains(&in_flight), "{unfinished}");
    let oldest_ms = unfinished["Oldest Age"].as_f64().unwrap_or(0.0);
    let max_ms = doc["ALL STATS"]["Totals"]["Max Latency"]
        .as_f64()
        .unwrap_or(f64::MAX);
    assert!(
        oldest_ms >= min_age_ms && oldest_ms > max_ms,
        "{unfinished} vs a max latency of {max_ms} ms"
    );
    let warning = unfinished["Warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains(" still unanswered when the run ended")
            && warning.ends_with("(--rps measures stalls)"),
        "{unfinished}"
    );
    let line = format!("warning: GET: {warning}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| **l == line).count(),
        1,
        "{line:?} in {stderr}"
    );
    in_flight
}

/// A count-bound test whose server froze ends at `--reply-timeout` with status 1 and the
/// error last, as before; the unanswered requests are named before it.
#[test]
fn a_test_ended_by_the_reply_timeout_names_what_it_left_unanswered() {
    let server = RedisServer::start();
    let dir = TestDir::new("rb-frozen-timeout");
    let json = dir.file_arg("run.json");
    let run = frozen_under_gets(&server, &json, "12");
    let out = run.wait(STALLED_RUN_TIMEOUT);
    // The server must run again to be stopped cleanly.
    server.signal(libc::SIGCONT);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let stderr = out.stderr_text();
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: no reply from") && last.contains("--reply-timeout"),
        "{stderr}"
    );
    // Stdout is redis-benchmark's: no word of it there.
    assert!(
        !out.stdout_text().contains("unanswered"),
        "{}",
        out.describe()
    );
    let doc = common::read_json(&dir.file("run.json"));
    assert!(
        doc["ALL STATS"]["Runtime"]["Stopped by error"]
            .as_str()
            .is_some_and(|e| e.starts_with("no reply from")),
        "{doc}"
    );
    assert_names_the_unanswered(&doc, &stderr, 11_000.0);
}

/// Ctrl-C on a test whose server froze, with no reply timeout (redis-benchmark waits so
/// for ever): status 130, and every client's request named on stderr and in the JSON.
#[test]
fn ctrl_c_on_a_frozen_server_names_what_it_left_unanswered() {
    let server = RedisServer::start();
    let dir = TestDir::new("rb-frozen-ctrl-c");
    let json = dir.file_arg("run.json");
    let run = frozen_under_gets(&server, &json, "0");
    // The stall is 10 s old once it is named: Ctrl-C then.
    run.wait_for_stderr("warning: no reply from");
    // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(run.pid() as i32, libc::SIGINT) }, 0);
    let out = run.wait(STALLED_RUN_TIMEOUT);
    server.signal(libc::SIGCONT);
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    assert!(
        !out.stdout_text().contains("unanswered"),
        "{}",
        out.describe()
    );
    let doc = common::read_json(&dir.file("run.json"));
    let stderr = out.stderr_text();
    assert_eq!(assert_names_the_unanswered(&doc, &stderr, 10_000.0), 10);
    assert!(
        stderr.trim_end().ends_with("(--rps measures stalls)"),
        "{stderr}"
    );
}
