//! Standard output and standard error that are pipes whose reader has gone (`kvbench
//! --help | head`, `kvbench ... 2>&1 | head -3`): every front end ends without a panic,
//! and a run still writes its result file whole, checked against a real server. A report
//! that finds stdout's reader gone (memtier's, merge's) ends quietly with 141, as
//! memtier_benchmark ends there (killed by SIGPIPE).

mod common;

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
    let zbench_json = dir.file_arg("zbench.json");
    let memtier_flag = format!("--json-out-file={memtier_json}");
    let runs: [(&[&str], &str); 3] = [
        (
            &["-s", "127.0.0.1", "-p", &port, "-n", "200", &memtier_flag],
            &memtier_json,
        ),
        (
            &["redis-benchmark", "-p", &port, "-n", "200", "-t", "get"],
            &rb_json,
        ),
        (
            &["zbench", "-p", &port, "-mode", "load", "-r", "50"],
            &zbench_json,
        ),
    ];
    for (args, json) in runs {
        let mut args = args.to_vec();
        if args[0] == "redis-benchmark" {
            args.extend(["--json-out-file", json]);
        } else if args[0] == "zbench" {
            args.extend(["-json-out-file", json]);
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
