//! `kvbench redis-benchmark --rps` and `--warmup` against a real redis-server: exactly
//! `-n` measured requests at the asked rate, and warm-up traffic the server sees but the
//! output and the JSON file leave out.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{RedisServer, TestDir, kvbench};

/// `kvbench redis-benchmark -h 127.0.0.1 -p PORT ARGS...`.
fn kv(port: u16, args: &[&str]) -> common::Kvbench {
    let port = port.to_string();
    kvbench(&["redis-benchmark", "-h", "127.0.0.1", "-p", &port]).args(args)
}

/// The one test row of a `--json-out-file` result: its name and count.
fn json_row(path: &str) -> (String, u64) {
    let file = kvbench::resultfile::read_file(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    let kvbench::resultfile::Content::Json(doc) = file.content else {
        panic!("not a JSON result");
    };
    let row = &doc.blocks[0].rows[0];
    (row.name.clone(), row.count)
}

/// The rate a `-q` line reports: `SET: 1999.00 requests per second, p50=...`.
fn quiet_rate(stdout: &str, title: &str) -> f64 {
    stdout
        .lines()
        .find_map(|l| {
            l.trim_start_matches('\r')
                .strip_prefix(&format!("{title}: "))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {title} line in {stdout:?}"))
}

#[test]
fn rps_sends_exactly_n_at_the_rate() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("rb-rps");
    let json = dir.file_arg("rps.json");
    let started = Instant::now();
    let run = kv(
        server.port,
        &[
            "-t",
            "set",
            "-n",
            "4000",
            "-c",
            "10",
            "--rps",
            "2000",
            "-q",
            "--json-out-file",
            &json,
        ],
    )
    .ok();
    let took = started.elapsed();
    // 4000 evenly spaced at 2000/s: the last is due 2 s after the first.
    assert!(took >= Duration::from_millis(1900), "took {took:?}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(server.commandstats().get("set"), Some(&4000));
    assert_eq!(json_row(&json), ("SET".to_string(), 4000));
    let rate = quiet_rate(&run.stdout_text(), "SET");
    assert!((1500.0..=2100.0).contains(&rate), "{}", run.describe());
}

#[test]
fn rps_with_a_pipeline_and_threads_still_sends_exactly_n() {
    let server = RedisServer::start();
    server.config_resetstat();
    kv(
        server.port,
        &[
            "-t",
            "get",
            "-n",
            "3001",
            "-c",
            "7",
            "-P",
            "16",
            "--threads",
            "2",
            "--rps",
            "5000",
            "-q",
        ],
    )
    .ok();
    assert_eq!(server.commandstats().get("get"), Some(&3001));
}

#[test]
fn the_run_ends_when_the_last_request_is_answered() {
    // 3 requests at 1/s on two threads: due at 0, 1 and 2 s. The thread that did not send
    // the last one used to see the budget spent only at its next wake-up, a second later
    // (3.0 s in all); the last take now wakes every worker (2.0 s).
    let server = RedisServer::start();
    server.config_resetstat();
    let run = kv(
        server.port,
        &[
            "-t",
            "get",
            "-n",
            "3",
            "-c",
            "3",
            "--threads",
            "2",
            "--rps",
            "1",
            "-q",
        ],
    )
    .ok();
    assert_eq!(server.commandstats().get("get"), Some(&3));
    // 3 requests in about 2 s read 1.5 per second; 3 s read 1.0 (a loaded machine's
    // late start or end may take the first down to 1.2).
    let rate = quiet_rate(&run.stdout_text(), "GET");
    assert!(rate > 1.15, "{rate}: {}", run.describe());
}

#[test]
fn open_loop_warmup_is_sent_but_not_counted() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("rb-warm");
    let json = dir.file_arg("warm.json");
    kv(
        server.port,
        &[
            "-t",
            "set",
            "-n",
            "1000",
            "-c",
            "5",
            "--rps",
            "2000",
            "--warmup",
            "1",
            "-q",
            "--json-out-file",
            &json,
        ],
    )
    .ok();
    assert_eq!(json_row(&json), ("SET".to_string(), 1000));
    // About 2000 warm-up requests (a second at 2000/s, less the connect), on top of the
    // measured 1000.
    let seen = server.commandstats().get("set").copied().unwrap_or(0);
    assert!((2000..=3100).contains(&seen), "server saw {seen} SETs");
}

#[test]
fn closed_loop_warmup_is_sent_but_not_counted() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("rb-warm-closed");
    let json = dir.file_arg("warm.json");
    let run = kv(
        server.port,
        &[
            "-t",
            "incr",
            "-n",
            "500",
            "-c",
            "2",
            "--warmup",
            "0.3",
            "--csv",
            "--json-out-file",
            &json,
        ],
    )
    .ok();
    assert_eq!(json_row(&json), ("INCR".to_string(), 500));
    let seen = server.commandstats().get("incr").copied().unwrap_or(0);
    assert!(
        seen > 500,
        "server saw {seen} INCRs: the warm-up is missing"
    );
    // The counter shows every request, warm-up and measured.
    assert_eq!(
        server.cli(&["GET", "counter:__rand_int__"]),
        seen.to_string()
    );
    assert!(
        run.stdout_text().contains("\"INCR\","),
        "{}",
        run.describe()
    );
}

/// An `--rps` run's files say it was open loop, as the memtier front end's and zbench's
/// do: `"rps"` and `"warmup"` in the configuration, a `"Schedule"`, service times beside
/// the response times (JSON, and `.txt` with `.hgrm` for each), so `kvbench merge`
/// refuses to add it to a closed-loop run's file (it took the two for the same kind).
#[test]
fn an_rps_runs_files_record_the_open_loop() {
    let server = RedisServer::start();
    let dir = TestDir::new("rb-rps-files");
    let (open, closed) = (dir.file_arg("open.json"), dir.file_arg("closed.json"));
    let prefix = dir.file_arg("rb");
    let common = ["-t", "set,get", "-n", "1000", "-c", "5", "-q"];
    kv(server.port, &common)
        .args(&["--rps", "2000", "--warmup", "0.5"])
        .args(&["--json-out-file", &open, "--hdr-file-prefix", &prefix])
        .ok();
    kv(server.port, &common)
        .args(&["--json-out-file", &closed])
        .ok();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&open).unwrap()).unwrap();
    assert_eq!(json["configuration"]["rps"], 2000, "{json}");
    assert_eq!(json["configuration"]["warmup"], 0.5, "{json}");
    let schedule = &json["ALL STATS"]["Schedule"];
    assert_eq!(schedule["Target Rate"], 2000, "{schedule}");
    assert_eq!(schedule["Sent"], 2000, "{schedule}");
    assert!(json["ALL STATS"]["Totals"]["Service Latency"].is_object());
    for name in ["FULL_RUN_1", "SET_latency_command_run_1"] {
        for end in [".txt", ".hgrm", "_service.txt", "_service.hgrm"] {
            let path = format!("{prefix}_{name}{end}");
            assert!(Path::new(&path).is_file(), "no {path}");
        }
    }
    let closed_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&closed).unwrap()).unwrap();
    assert_eq!(closed_json["configuration"]["rps"], serde_json::Value::Null);
    assert!(closed_json["ALL STATS"].get("Schedule").is_none());
    let merged = dir.file_arg("merged.json");
    let refused = kvbench(&["merge", &open, &closed, "--json-out-file", &merged]).run();
    assert_eq!(refused.status.code(), Some(1), "{}", refused.describe());
    assert!(
        refused
            .stderr_text()
            .contains("a closed-loop run cannot be merged with"),
        "{}",
        refused.describe()
    );
    // Both runs' measured SETs, and the warm-up's on top.
    let sets = server.commandstats().get("set").copied().unwrap_or(0);
    assert!(sets > 2000, "{sets}");
}
