//! A run an error ends early says so in its files: a real redis-server killed mid-run
//! leaves, in every front end's JSON, the replies counted so far and `"Stopped by
//! error"` in `Runtime` with the error the run exited with; `kvbench report` shows it as
//! a badge and `kvbench merge` carries it. A run that ends as planned, or on Ctrl-C, has
//! no such key (memtier's files never do).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisServer, TestDir, kvbench, kvbench_at, read_json, wait_until};
use serde_json::Value;

/// How long a run may take to notice its server is gone (well under the runs' own length).
const NOTICE: Duration = Duration::from_secs(20);

/// Starts `args` (a JSON file asked for among them) against a fresh server, kills the
/// server once it has answered some requests, and returns the run's stderr and JSON
/// (whose error names the server: the port is in it).
fn killed_mid_run(args: &[&str], json: &Path) -> (String, Value) {
    let mut server = RedisServer::start();
    let port = server.port.to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("PORT", &port)).collect();
    let run = kvbench(&args.iter().map(String::as_str).collect::<Vec<_>>()).spawn();
    wait_until("load on the server", CONDITION_TIMEOUT, || {
        server.calls() > 1000
    });
    server.kill_now();
    let out = run.wait(NOTICE);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let err = out.stderr_text();
    let doc = read_json(json);
    let stopped = doc["ALL STATS"]["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(
        stopped.contains(&server.addr().replace("localhost", "127.0.0.1"))
            || stopped.contains(&port),
        "{stopped:?}\n{err}"
    );
    (err, doc)
}

/// The error line's text without `error: `.
fn error_text(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error line in {stderr}"))
        .to_string()
}

fn check_stopped(json: &Value, stderr: &str) {
    let all = &json["ALL STATS"];
    assert_eq!(
        all["Runtime"]["Stopped by error"].as_str(),
        Some(error_text(stderr).as_str()),
        "{}",
        all["Runtime"]
    );
    assert!(
        all["Totals"]["Count"].as_u64().unwrap_or(0) > 0,
        "{}",
        all["Totals"]
    );
}

#[test]
fn memtier_front_end_names_the_error_and_report_and_merge_show_it() {
    let dir = TestDir::new("stopped-memtier");
    let json = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json.display());
    let (err, doc) = killed_mid_run(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            "PORT",
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=60",
            "--hide-histogram",
            &json_arg,
        ],
        &json,
    );
    check_stopped(&doc, &err);
    let text = error_text(&err);

    let page = dir.file("report.html");
    kvbench(&[
        "report",
        "-o",
        &page.display().to_string(),
        &json.display().to_string(),
    ])
    .ok();
    let html = std::fs::read_to_string(&page).expect("the report page");
    assert!(html.contains("ended early: "), "no badge in the page");
    assert!(
        html.contains(&format!("title=\"{text}\"")),
        "no error text in the page"
    );

    let merged = dir.file("merged.json");
    kvbench(&[
        "merge",
        &format!("--json-out-file={}", merged.display()),
        &json.display().to_string(),
    ])
    .ok();
    let merged = read_json(&merged);
    assert_eq!(
        merged["ALL STATS"]["Runtime"]["Stopped by error"].as_str(),
        Some(text.as_str())
    );
}

#[test]
fn redis_benchmark_front_end_keeps_the_cut_test_and_names_the_error() {
    let dir = TestDir::new("stopped-rb");
    let json = dir.file("run.json");
    let (err, doc) = killed_mid_run(
        &[
            "redis-benchmark",
            "-h",
            "127.0.0.1",
            "-p",
            "PORT",
            "-c",
            "2",
            "-n",
            "100000000",
            "-t",
            "get",
            "-q",
            "--json-out-file",
            &json.display().to_string(),
        ],
        &json,
    );
    // stderr has redis-benchmark's own line for a dropped connection (hiredis's words
    // for a close, the OS's for a reset); the file keeps kvbench's, naming the server.
    let last = err.lines().last().unwrap_or_default();
    assert!(
        [
            "Error: Server closed the connection",
            "Error: Connection reset by peer",
            "Error: Broken pipe",
        ]
        .contains(&last),
        "{err}"
    );
    let all = &doc["ALL STATS"];
    let stopped = all["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(
        stopped.starts_with("connection closed by server ")
            || stopped.starts_with("connection to "),
        "{}",
        all["Runtime"]
    );
    assert!(
        all["Totals"]["Count"].as_u64().unwrap_or(0) > 0,
        "{}",
        all["Totals"]
    );
}

#[test]
fn zbench_writes_its_json_so_far_and_names_the_error() {
    let dir = TestDir::new("stopped-zbench");
    let json = dir.file("run.json");
    let (err, doc) = killed_mid_run(
        &[
            "zbench",
            "-h",
            "127.0.0.1",
            "-p",
            "PORT",
            "-mode",
            "load",
            "-r",
            "100000000",
            "-c",
            "2",
            "--json-out-file",
            &json.display().to_string(),
        ],
        &json,
    );
    check_stopped(&doc, &err);
}

#[test]
fn a_run_that_ends_as_planned_has_no_such_key() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "-n", "100", "--hide-histogram"],
    )
    .with_json()
    .ok();
    assert!(
        run.json()["ALL STATS"]["Runtime"]
            .get("Stopped by error")
            .is_none()
    );
}

#[test]
fn redis_benchmark_ctrl_c_keeps_the_cut_test_as_interrupted() {
    let server = RedisServer::start();
    let dir = TestDir::new("interrupted-rb");
    let json = dir.file("run.json");
    let port = server.port.to_string();
    let json_arg = json.display().to_string();
    let run = kvbench(&[
        "redis-benchmark",
        "-p",
        &port,
        "-c",
        "2",
        "-n",
        "100000000",
        "-t",
        "get",
        "-q",
        "--json-out-file",
        &json_arg,
    ])
    .spawn();
    wait_until("load on the server", CONDITION_TIMEOUT, || {
        server.calls() > 1000
    });
    // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
    unsafe { libc::kill(run.pid() as i32, libc::SIGINT) };
    let out = run.wait(NOTICE);
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    let doc = read_json(&json);
    let all = &doc["ALL STATS"];
    assert_eq!(all["Runtime"]["Interrupted"], "true", "{}", all["Runtime"]);
    assert!(all["Runtime"].get("Stopped by error").is_none());
    assert!(
        all["Totals"]["Count"].as_u64().unwrap_or(0) > 0,
        "{}",
        all["Totals"]
    );
}
