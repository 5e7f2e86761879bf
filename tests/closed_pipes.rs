//! Standard output and standard error that are pipes whose reader has gone (`kvbench
//! --help | head`, `kvbench ... 2>&1 | head -3`): every front end ends without a panic,
//! and a run still writes its result file whole, checked against a real server.

mod common;

use std::process::{Command, ExitStatus, Stdio};
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
