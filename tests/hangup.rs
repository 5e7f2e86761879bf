//! A hang-up (SIGHUP, what a dropped ssh or tmux session sends) stops every front end as
//! SIGTERM does: what was measured so far is printed and written, the output stays
//! well formed, and the exit status is 129 (128 + SIGHUP). The memtier front end's test is
//! in `lifecycle.rs`; here are `redis-benchmark` (mid-test, and between `-l` passes),
//! `zbench`, `latency` and `intrinsic-latency`, each against a server started here (none
//! for `intrinsic-latency`). Each waits for its run to be under way (a line it printed,
//! or the requests the server counted) before the signal: the handlers are in place by
//! then, so the test never races SIGHUP's default action (death, nothing written).

mod common;
#[path = "common/rb_output.rs"]
mod rb_output;

use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisServer, TestDir, kvbench, wait_until};

/// Well under what any of these runs would take without the signal.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Sends SIGHUP to `pid`, a child this test spawned and has not reaped.
fn hang_up(pid: u32) {
    // SAFETY: kill(2) on the PID of our own child, not reaped yet (so not reused).
    let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGHUP) };
    assert_eq!(rc, 0, "kill({pid}, SIGHUP)");
}

/// A command's count in the server's `INFO commandstats` (0 before its first call).
fn calls(server: &RedisServer, command: &str) -> u64 {
    server.commandstats().get(command).copied().unwrap_or(0)
}

/// `kvbench redis-benchmark` hung up in the middle of a test far too long to finish: the
/// CSV on stdout is the header alone (a cut test prints no row, as Ctrl-C's does), and
/// the JSON file holds the cut test's figures, marked interrupted.
#[test]
fn redis_benchmark_hung_up_mid_test_writes_what_it_measured() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("hangup-rb");
    let json = dir.file("rb.json");
    let run = kvbench(&[
        "redis-benchmark",
        "-p",
        &port,
        "-t",
        "set",
        "-n",
        "100000000",
        "-c",
        "4",
        "--csv",
        "--json-out-file",
    ])
    .args(&[json.to_string_lossy()])
    .spawn();
    // The handlers are installed before the first connection: SETs on the server mean
    // the test is under way and the signal is caught.
    wait_until("SETs on the server", CONDITION_TIMEOUT, || {
        calls(&server, "set") > 1000
    });
    hang_up(run.pid());
    let out = run.wait(STOP_TIMEOUT);
    assert_eq!(out.status.code(), Some(129), "{}", out.describe());
    let rows = rb_output::parse_csv(&out.stdout_text())
        .unwrap_or_else(|e| panic!("{e}\n{}", out.describe()));
    assert!(rows.is_empty(), "a cut test prints no row: {rows:?}");
    let doc = common::read_json(&json);
    let stats = &doc["ALL STATS"];
    assert_eq!(stats["Runtime"]["Interrupted"], "true", "{doc}");
    let count = stats["Totals"]["Count"].as_u64().expect("a count");
    assert!(count > 0, "{doc}");
    // Every SET counted was one the server executed (in-flight ones are not counted).
    assert!(count <= calls(&server, "set"), "{count} counted: {doc}");
}

/// `-l` hung up after some passes: every pass printed is whole (its `-q` line parses),
/// and nothing half-printed follows.
#[test]
fn redis_benchmark_hung_up_in_a_loop_keeps_stdout_well_formed() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let run = kvbench(&[
        "redis-benchmark",
        "-p",
        &port,
        "-l",
        "-t",
        "ping_mbulk",
        "-n",
        "2000",
        "-q",
    ])
    .spawn();
    wait_until("two passes printed", CONDITION_TIMEOUT, || {
        run.stdout_so_far().matches("PING_MBULK: ").count() >= 2
    });
    hang_up(run.pid());
    let out = run.wait(STOP_TIMEOUT);
    assert_eq!(out.status.code(), Some(129), "{}", out.describe());
    // Each pass is its `-q` line and the empty line that ends a pass, as redis-benchmark
    // prints them; the pass the signal cut prints nothing, not half a line.
    let stdout = out.stdout_text();
    assert!(stdout.ends_with("\n\n"), "{}", out.describe());
    let passes: Vec<&str> = stdout.split_terminator("\n\n").collect();
    assert!(passes.len() >= 2, "{}", out.describe());
    for pass in passes {
        let lines =
            rb_output::parse_quiet(pass).unwrap_or_else(|e| panic!("{e}\n{}", out.describe()));
        assert_eq!(lines.len(), 1, "{}", out.describe());
        assert_eq!(lines[0].title, "PING_MBULK", "{lines:?}");
        assert!(lines[0].rps > 0.0, "{lines:?}");
    }
}

/// `kvbench zbench` hung up mid-load: the stop named, the summary of what was measured on
/// stdout, and a complete `-json-out-file` whose count is the summary's.
#[test]
fn zbench_hung_up_prints_its_summary_and_writes_its_json() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("hangup-zbench");
    let json = dir.file("zbench.json");
    let run = kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "load",
        "-r",
        "10000000",
        "-c",
        "4",
        "-json-out-file",
    ])
    .args(&[json.to_string_lossy()])
    .spawn();
    wait_until("ZADDs on the server", CONDITION_TIMEOUT, || {
        calls(&server, "zadd") > 1000
    });
    hang_up(run.pid());
    let out = run.wait(STOP_TIMEOUT);
    assert_eq!(out.status.code(), Some(129), "{}", out.describe());
    let stdout = out.stdout_text();
    // Named for what it was: redis-zbench-go's "received Ctrl-c" is for Ctrl-C.
    assert!(
        stdout.contains("\nreceived SIGHUP - shutting down\n\n####"),
        "{}",
        out.describe()
    );
    let issued: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Total Issued commands"))
        .and_then(|rest| {
            rest.trim_start_matches([' ', ':', '\t'])
                .split_whitespace()
                .next()
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary: {}", out.describe()));
    assert!(issued > 0, "{stdout}");
    let doc = common::read_json(&json);
    let stats = &doc["ALL STATS"];
    assert_eq!(stats["Runtime"]["Interrupted"], "true", "{doc}");
    assert_eq!(stats["Totals"]["Count"].as_u64(), Some(issued), "{doc}");
}

/// `kvbench latency --json` hung up in a long one-shot window: the window so far as one
/// valid JSON line, and the `--hdr-file` written.
#[test]
fn latency_hung_up_prints_its_window_and_writes_its_hdr_file() {
    let server = RedisServer::start();
    server.config_resetstat();
    let port = server.port.to_string();
    let dir = TestDir::new("hangup-latency");
    let hdr = dir.file("latency.txt");
    let run = kvbench(&["latency", "-p", &port, "--json", "-i", "600", "--hdr-file"])
        .args(&[hdr.to_string_lossy()])
        .spawn();
    wait_until("probes on the server", CONDITION_TIMEOUT, || {
        calls(&server, "ping") >= 5
    });
    hang_up(run.pid());
    let out = run.wait(STOP_TIMEOUT);
    assert_eq!(out.status.code(), Some(129), "{}", out.describe());
    let stdout = out.stdout_text();
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    let window: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    let count = window["count"].as_u64().expect("a count");
    assert!(count >= 4, "{window}");
    assert!(window["max"].as_u64().is_some(), "{window}");
    let pings = calls(&server, "ping");
    // Every probe counted was executed; the one in flight at the signal may be left out,
    // and a few more if the machine kept the session thread off the CPU then.
    assert!(pings >= count && pings <= count + 5, "{count} vs {pings}");
    let text = std::fs::read_to_string(&hdr).expect("--hdr-file written");
    assert!(text.contains("#[Max"), "{text}");
}

/// `kvbench intrinsic-latency` hung up: the summary of the time measured, exit 129.
#[test]
fn intrinsic_latency_hung_up_prints_its_summary() {
    let run = kvbench(&["intrinsic-latency", "600"]).spawn();
    // The first maximum is printed after the handlers are in place.
    run.wait_for_stdout("Max latency so far: ");
    hang_up(run.pid());
    let out = run.wait(STOP_TIMEOUT);
    assert_eq!(out.status.code(), Some(129), "{}", out.describe());
    let stdout = out.stdout_text();
    let (maxima, summary) = stdout
        .split_once("\n\n")
        .unwrap_or_else(|| panic!("a blank line before the summary: {stdout:?}"));
    assert!(
        maxima
            .lines()
            .all(|l| l.starts_with("Max latency so far: ") && l.ends_with(" microseconds.")),
        "{stdout}"
    );
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].contains(" total runs (avg latency: "), "{stdout}");
    assert!(lines[1].starts_with("Worst run took "), "{stdout}");
}
