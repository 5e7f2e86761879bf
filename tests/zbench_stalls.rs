//! `kvbench zbench` where redis-zbench-go hangs or fails: a redis-server stopped
//! (SIGSTOP) under a run, before a run, and a run under a low open-file limit. The
//! stall is named once on stderr and `-reply-timeout` ends the run, so `-n` bounds it;
//! what a frozen server left unanswered is named on stderr and in the JSON however the
//! run ends (the reply timeout, Ctrl-C);
//! the soft open-file limit is raised to fit `-c`, and a hard limit too low is refused
//! before the first connection.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{
    Background, CONDITION_TIMEOUT, RedisServer, TestDir, kvbench, kvbench_command, wait_until,
};

/// Longest a stalled run may take: its 12 s reply timeout on a loaded 2-core machine.
const STALLED_RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Loads a sorted set into `server`, starts a query run that `-n` would keep going for an
/// hour (`-reply-timeout` given, its JSON file `run.json` in `dir`), and stops the server
/// (SIGSTOP) once it has answered some queries: the run is left with a frozen server.
fn frozen_query_run(server: &RedisServer, reply_timeout: &str, dir: &TestDir) -> Background {
    let port = server.port.to_string();
    kvbench(&[
        "zbench", "-p", &port, "-mode", "load", "-r", "1000", "-c", "4",
    ])
    .ok();
    let json = dir.file_arg("run.json");
    let run = kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "query",
        "-n",
        "100000000",
        "-r",
        "1000",
        "-c",
        "10",
        "-reply-timeout",
        reply_timeout,
        "-json-out-file",
        &json,
    ])
    .spawn();
    wait_until("queries on the server", CONDITION_TIMEOUT, || {
        server
            .commandstats()
            .get("zrangebylex")
            .copied()
            .unwrap_or(0)
            > 1000
    });
    server.signal(libc::SIGSTOP);
    run
}

/// The `warning: no reply ...` lines of `stderr`.
fn stall_warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning: no reply from"))
        .collect()
}

/// A server stopped in the middle of a query run that `-n` would keep going for an hour:
/// one warning after 10 s (not one per worker or client), then the run ends at
/// `-reply-timeout` with status 1, the summary of what was measured, and the error in
/// the JSON file, where redis-zbench-go (and kvbench before) printed zero-rate rows for
/// ever.
#[test]
fn a_stalled_server_is_named_once_and_ends_the_run() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("zbench-stall");
    let run = frozen_query_run(&server, "12", &dir);
    let out = run.wait(STALLED_RUN_TIMEOUT);
    // The server must run again to be stopped cleanly.
    server.signal(libc::SIGCONT);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let stderr = out.stderr_text();
    let warnings = stall_warnings(&stderr);
    assert_eq!(
        warnings,
        [format!(
            "warning: no reply from 127.0.0.1:{port} in 10 s: the server stopped answering; \
             still waiting until 12 s (-reply-timeout)"
        )],
        "{stderr}"
    );
    let error = format!(
        "error: no reply from 127.0.0.1:{port} in 12 s: the server stopped answering \
         (-reply-timeout)"
    );
    assert_eq!(stderr.lines().last(), Some(error.as_str()), "{stderr}");
    // What was measured before the stall is still shown, and the file says why it ended.
    assert!(
        out.stdout_text().contains("Total Issued commands"),
        "{}",
        out.describe()
    );
    let doc = common::read_json(&dir.file("run.json"));
    let stopped = doc["ALL STATS"]["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(stopped.starts_with("no reply from"), "{doc}");
    // The requests the frozen server held are in no figure: named on stderr, before the
    // error, and in the JSON.
    assert_names_the_unanswered(&doc, &stderr, 11_000.0);
}

/// That the run's JSON (`doc`) has an `"Unfinished"` object whose requests were sent at
/// least `min_age_ms` before the end (the freeze held them that long), with a warning
/// pointing to zbench's own rate flag, and that `stderr` holds that warning once, as
/// `warning: <text>`.
fn assert_names_the_unanswered(doc: &serde_json::Value, stderr: &str, min_age_ms: f64) {
    let unfinished = &doc["ALL STATS"]["Unfinished"];
    let in_flight = unfinished["In Flight At End"].as_u64().unwrap_or(0);
    // At most one request per client (-c 10, no pipeline); the one whose reply timed out
    // may have gone with its connection.
    assert!((1..=10).contains(&in_flight), "{unfinished}");
    let oldest_ms = unfinished["Oldest Age"].as_f64().unwrap_or(0.0);
    assert!(oldest_ms >= min_age_ms, "{unfinished}");
    let warning = unfinished["Warning"].as_str().unwrap_or_default();
    assert!(
        warning.starts_with(&format!(
            "{in_flight} request{} still unanswered when the run ended",
            if in_flight == 1 { " was" } else { "s were" }
        )) && warning.ends_with("(-rps measures stalls)"),
        "{unfinished}"
    );
    let line = format!("warning: {warning}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| **l == line).count(),
        1,
        "{line:?} in {stderr}"
    );
}

/// Ctrl-C on a run whose server froze, with no reply timeout to end it (redis-zbench-go
/// waits so for ever): the summary (stdout, redis-zbench-go's) counts only the answered
/// queries, so stderr names the ones left unanswered and the JSON has them, status 130.
#[test]
fn ctrl_c_on_a_frozen_server_names_what_it_left_unanswered() {
    let server = RedisServer::start();
    let dir = TestDir::new("zbench-frozen-ctrl-c");
    let run = frozen_query_run(&server, "0", &dir);
    // The stall is 10 s old once it is named: Ctrl-C then.
    run.wait_for_stderr("warning: no reply from");
    // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(run.pid() as i32, libc::SIGINT) }, 0);
    let out = run.wait(STALLED_RUN_TIMEOUT);
    server.signal(libc::SIGCONT);
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    let stdout = out.stdout_text();
    assert!(
        stdout.contains("received Ctrl-c") && !stdout.contains("unanswered"),
        "{}",
        out.describe()
    );
    let doc = common::read_json(&dir.file("run.json"));
    assert_names_the_unanswered(&doc, &out.stderr_text(), 10_000.0);
    // Every client held one query when the server froze.
    assert_eq!(
        doc["ALL STATS"]["Unfinished"]["In Flight At End"].as_u64(),
        Some(10),
        "{doc}"
    );
}

/// A server stopped before the run never answers any client: the "never answered"
/// warning comes once for the run, not once per client (each after a blank line), and
/// the reply timeout ends the run.
#[test]
fn a_server_that_never_answers_is_named_once() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    server.signal(libc::SIGSTOP);
    let out = kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "query",
        "-n",
        "1000",
        "-r",
        "1000",
        "-c",
        "10",
        "-reply-timeout",
        "12",
    ])
    .timeout(STALLED_RUN_TIMEOUT)
    .run();
    server.signal(libc::SIGCONT);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let stderr = out.stderr_text();
    assert_eq!(
        stall_warnings(&stderr),
        [format!(
            "warning: no reply from 127.0.0.1:{port} in 10 s: the server never answered or \
             does not speak redis; still waiting until 12 s (-reply-timeout)"
        )],
        "{stderr}"
    );
    // One line break before the warning (it ends the progress row a terminal shows),
    // and no blank lines, which one warning per client used to leave between them.
    assert!(stderr.starts_with("\nwarning: "), "{stderr:?}");
    assert!(!stderr.contains("\n\n"), "{stderr:?}");
    assert!(
        stderr
            .trim_end()
            .ends_with("the server never answered or does not speak redis (-reply-timeout)"),
        "{stderr}"
    );
}

/// `kvbench zbench ARGS...` under `sh` with the open-file limits `ulimits` sets first
/// (`ulimit -Sn 256`, say).
fn under_ulimit(ulimits: &str, args: &[&str]) -> Command {
    let bin = kvbench_command().get_program().to_os_string();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{ulimits}; exec \"$0\" zbench \"$@\""))
        .arg(bin)
        .args(args);
    cmd
}

/// The hard open-file limit of this process (its children inherit it).
fn hard_open_files() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given, which lives for the call.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    limit.rlim_max
}

/// 500 clients under a soft limit of 256 open files: kvbench raises the soft limit (as
/// Go does for redis-zbench-go) and the load completes, where it failed with "too many
/// open files"; under a hard limit of 256 the run is refused before any connection.
#[test]
fn the_open_file_limit_is_raised_to_fit_or_refused_up_front() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let args = ["-p", &port, "-mode", "load", "-r", "1000", "-c", "500"];
    if hard_open_files() < 1024 {
        eprintln!("skipped: the hard open-file limit is below 1024");
        return;
    }
    let out = common::run_with_timeout(
        under_ulimit("ulimit -Sn 256", &args),
        common::KVBENCH_TIMEOUT,
    );
    assert!(out.status.success(), "{}", common::describe(&out));
    assert_eq!(server.dbsize(), 1000);
    server.flushall();
    server.config_resetstat();

    let out = common::run_with_timeout(
        under_ulimit("ulimit -Sn 256; ulimit -Hn 256", &args),
        common::KVBENCH_TIMEOUT,
    );
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: -c 500 needs ")
            && stderr.contains(
                " open files (one per connection), above this system's limit of 256 \
                 (ulimit -Hn)"
            )
            && stderr.lines().count() == 1,
        "{stderr}"
    );
    // Refused before the header and before any command.
    assert!(out.stdout.is_empty(), "{}", common::describe(&out));
    assert_eq!(server.dbsize(), 0);
    assert_eq!(server.commandstats().get("zadd"), None);
}
