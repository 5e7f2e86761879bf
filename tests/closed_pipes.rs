//! Standard output and standard error that are pipes whose reader has gone (`kvbench
//! --help | head`, `kvbench ... 2>&1 | head -3`): every front end ends without a panic,
//! and a run still writes its result file whole, checked against a real server. A report
//! that finds stdout's reader gone (memtier's, merge's) ends quietly with 141, as
//! memtier_benchmark ends there (killed by SIGPIPE); zbench, which prints as it goes, stops
//! its run at the first row its reader did not take, as SIGPIPE stops redis-zbench-go.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use common::{RedisServer, TestDir, kvbench_command, read_json};

/// Exit status 101 is Rust's panic.
const PANIC: i32 = 101;

/// Runs kvbench with `args`, stdout and stderr both a pipe whose read end is closed.
fn run_into_closed_pipe(args: &[&str]) -> ExitStatus {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd: Command = kvbench_command();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone().expect("clone")))
        .stderr(Stdio::from(writer));
    let mut child = cmd.spawn().expect("kvbench starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kvbench {args:?} did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn help_and_version_to_a_closed_pipe_are_no_panic() {
    let lines: [&[&str]; 11] = [
        &["--help"],
        &["--version"],
        &["redis-benchmark", "--help"],
        &["redis-benchmark", "--version"],
        &["latency", "--help"],
        &["intrinsic-latency", "--help"],
        &["zbench", "--help"],
        &["merge", "--help"],
        &["report", "--help"],
        &["man", "--help"],
        &["completions", "--help"],
    ];
    for args in lines {
        let status = run_into_closed_pipe(args);
        // Nothing could be printed; what matters is an ordinary end, not a panic.
        assert_ne!(status.code(), Some(PANIC), "{args:?}: {status}");
        assert!(
            status.code().is_some(),
            "{args:?} ended by a signal: {status}"
        );
    }
}

#[test]
fn runs_with_a_closed_stdout_and_stderr_still_write_their_json() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("closed-pipes");
    let memtier_json = dir.file_arg("memtier.json");
    let rb_json = dir.file_arg("rb.json");
    let memtier_flag = format!("--json-out-file={memtier_json}");
    // zbench is not here: a closed stdout stops it before its run (see below).
    let runs: [(&[&str], &str); 2] = [
        (
            &["-s", "127.0.0.1", "-p", &port, "-n", "200", &memtier_flag],
            &memtier_json,
        ),
        (
            &["redis-benchmark", "-p", &port, "-n", "200", "-t", "get"],
            &rb_json,
        ),
    ];
    for (args, json) in runs {
        let mut args = args.to_vec();
        if args[0] == "redis-benchmark" {
            args.extend(["--json-out-file", json]);
        }
        server.config_resetstat();
        let status = run_into_closed_pipe(&args);
        assert_ne!(status.code(), Some(PANIC), "{args:?}: {status}");
        // The run happened and its file is whole, though nothing could be printed.
        let doc = read_json(std::path::Path::new(json));
        assert!(
            doc["ALL STATS"]["Totals"]["Count"].as_u64().unwrap_or(0) > 0,
            "{args:?}"
        );
        assert!(server.calls() > 0, "{args:?}: the server ran nothing");
    }
}

/// 128 + SIGPIPE: what a shell reports for a process that SIGPIPE ended.
const READER_GONE: i32 = 141;

/// Runs kvbench with `args`, stdout a pipe whose read end is closed and stderr captured.
fn run_with_stdout_closed(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd: Command = kvbench_command();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("kvbench starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; the child is not reaped yet, so
            // the PID is its own.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("kvbench {args:?} did not end");
        }
    }
}

#[test]
fn a_report_whose_reader_has_gone_ends_quietly_with_141_and_its_files_whole() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("reader-gone");
    let shards = [dir.file_arg("a.json"), dir.file_arg("b.json")];
    for json in &shards {
        server.config_resetstat();
        let flag = format!("--json-out-file={json}");
        let args = [
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-n",
            "200",
            "-c",
            "2",
            "-t",
            "4",
            &flag,
        ];
        let out = run_with_stdout_closed(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(READER_GONE), "{err}");
        // memtier's own notices, and no word of the pipe.
        assert!(err.contains("Json file closed."), "{err}");
        assert!(!err.contains("error"), "{err}");
        let doc = read_json(std::path::Path::new(json));
        assert_eq!(doc["ALL STATS"]["Totals"]["Count"].as_u64(), Some(1_600));
        assert!(server.calls() >= 1_600, "the server ran the requests");
    }
    // merge prints the same table: the same end, its JSON written whole.
    let merged = dir.file_arg("merged.json");
    let flag = format!("--json-out-file={merged}");
    let out = run_with_stdout_closed(&["merge", &flag, &shards[0], &shards[1]]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(READER_GONE), "{err}");
    assert!(!err.contains("error"), "{err}");
    let doc = read_json(std::path::Path::new(&merged));
    assert_eq!(doc["ALL STATS"]["Totals"]["Count"].as_u64(), Some(3_200));
    // A file that cannot be written is still said, in one line, and exits 1.
    let unwritable = dir.file_arg("no-such-dir/merged.json");
    let flag = format!("--json-out-file={unwritable}");
    let out = run_with_stdout_closed(&["merge", &flag, &shards[0], &shards[1]]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: cannot write "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// How long a zbench run whose reader has gone may take to end: generous for a loaded
/// machine, and a tiny share of the runs' configured length (see `ZBENCH_QUERIES`).
const ZBENCH_DEADLINE: Duration = Duration::from_secs(120);
/// Queries a zbench run is given at `ZBENCH_RPS` a second: 100 000 s, so only a run the
/// closed pipe stopped ends within `ZBENCH_DEADLINE`.
const ZBENCH_QUERIES: u64 = 100_000_000;
const ZBENCH_RPS: u64 = 1_000;

/// How a zbench run with a reader that left ended.
struct LeftRun {
    status: ExitStatus,
    stderr: String,
    /// What the reader took before it left.
    read: String,
    took: Duration,
}

/// Runs kvbench with `args`, its stdout read up to and including the first `last` byte
/// and then closed (the reader of `| head -1` gone), stderr captured. Panics, the child
/// killed, if it outlives `ZBENCH_DEADLINE`.
fn run_with_reader_leaving_after(args: &[&str], last: u8) -> LeftRun {
    let started = Instant::now();
    let mut child = kvbench_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    // Read to its end on a thread of its own, so a chatty child never blocks on it.
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut read = Vec::new();
    {
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        stdout.read_until(last, &mut read).expect("read stdout");
        // Dropped here: the only read end closes, so the next write fails with EPIPE.
    }
    let deadline = started + ZBENCH_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= deadline {
            // Kills this child by its own PID (not reaped yet), then reaps it.
            let _ = child.kill();
            let _ = child.wait();
            panic!("kvbench {args:?} did not end once its reader had gone");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    LeftRun {
        status,
        stderr: stderr.join().expect("stderr read"),
        read: String::from_utf8_lossy(&read).into_owned(),
        took: started.elapsed(),
    }
}

/// The queries of zbench's default kind the server ran since its stats were reset.
fn zbench_queries(server: &RedisServer) -> u64 {
    server
        .commandstats()
        .get("zrangebylex")
        .copied()
        .unwrap_or(0)
}

#[test]
fn zbench_whose_reader_has_gone_stops_its_run_quietly_with_141_and_its_json_whole() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("zbench-reader-gone");
    let (n, rps) = (ZBENCH_QUERIES.to_string(), ZBENCH_RPS.to_string());
    let zbench = |json: &str| -> Vec<String> {
        [
            "zbench",
            "-p",
            &port,
            "-mode",
            "query",
            "-c",
            "2",
            "-n",
            &n,
            "-rps",
            &rps,
            "-json-out-file",
            json,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    // The JSON of a run cut short: valid, marked so, and far from the queries asked for.
    let cut_short = |json: &str| -> u64 {
        let doc = read_json(std::path::Path::new(json));
        let stats = &doc["ALL STATS"];
        assert_eq!(stats["Runtime"]["Interrupted"], "true", "{doc}");
        let count = stats["Totals"]["Count"].as_u64().unwrap_or(0);
        assert!(count < ZBENCH_QUERIES, "{doc}");
        count
    };

    // `| head -1`: the reader leaves after the header's first line, so the header's next
    // write or a progress row finds it gone, whichever comes first.
    server.config_resetstat();
    let json = dir.file_arg("head-1.json");
    let args = zbench(&json);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_with_reader_leaving_after(&args, b'\n');
    assert!(
        run.read.starts_with("Using kvbench zbench"),
        "{:?}",
        run.read
    );
    assert_eq!(run.status.code(), Some(READER_GONE), "{}", run.stderr);
    assert_eq!(run.stderr, "", "nothing is said of the pipe");
    assert!(run.took < ZBENCH_DEADLINE);
    cut_short(&json);

    // The reader takes the first progress row (it ends in a carriage return) and leaves:
    // the next row, a second later, stops the run under way, its figures so far written.
    server.config_resetstat();
    let json = dir.file_arg("first-row.json");
    let args = zbench(&json);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_with_reader_leaving_after(&args, b'\r');
    assert!(run.read.ends_with("\t\r"), "{:?}", run.read);
    assert_eq!(run.status.code(), Some(READER_GONE), "{}", run.stderr);
    assert_eq!(run.stderr, "", "nothing is said of the pipe");
    let count = cut_short(&json);
    assert!(count > 0, "the run measured its first second");
    assert!(zbench_queries(&server) >= count, "the server ran them");

    // Stdout closed before the header: nothing is sent, and the file says so (no older
    // run's figures left in it).
    server.config_resetstat();
    let json = dir.file_arg("closed.json");
    let args = zbench(&json);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_with_stdout_closed(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(READER_GONE), "{err}");
    assert_eq!(err, "", "nothing is said of the pipe");
    assert_eq!(cut_short(&json), 0);
    assert_eq!(zbench_queries(&server), 0, "no query was sent");
}
