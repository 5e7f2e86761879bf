//! `kvbench redis-benchmark -P` refills a connection's pipeline as the real tool does: the
//! next P requests go out in one write only when all of the last P are answered, even when
//! the server's replies arrive in pieces. Checked against a real redis-server (the
//! commands it counted) and by counting socket writes with strace (skipped, with the
//! reason printed, when strace is not installed or cannot trace here), beside the real
//! redis-benchmark's writes for the same flags. Batches of large values keep the write
//! buffer they grew (no reallocation per batch, counted as `mremap` calls).

mod common;

use std::process::Command;

use common::{
    KVBENCH_TIMEOUT, RedisServer, TestDir, describe, run_with_timeout, strace_trace,
    strace_unusable,
};

/// The kvbench binary the tests were built with.
const KVBENCH: &str = env!("CARGO_BIN_EXE_kvbench");

/// Requests per test, pipeline depth and connections of the runs below.
const REQUESTS: u64 = 1600;
const PIPELINE: u64 = 16;
const CLIENTS: u64 = 2;
/// Writes besides the batches: the start-up probe (CONFIG GET) and a client's last,
/// partial batch.
const SLACK: u64 = CLIENTS + 4;

/// Runs `program args...` under `strace -f` and returns how many writes went to a
/// socket: every `sendto`, and every `write` to a descriptor above 2 (stdout and stderr
/// left out). Panics unless the program exits 0.
fn socket_writes(dir: &TestDir, name: &str, program: &str, args: &[String]) -> u64 {
    let text = strace_trace(dir, name, "sendto,write", program, args);
    text.lines()
        .filter(|line| {
            // "PID sendto(5, ..." or "PID write(5, ...", a call cut in two by another
            // thread's ("<unfinished ...>" then "<... write resumed>") counted once.
            let call = line
                .split_once(' ')
                .map_or(*line, |(_, rest)| rest.trim_start());
            call.starts_with("sendto(")
                || call
                    .strip_prefix("write(")
                    .and_then(|rest| rest.split_once(','))
                    .and_then(|(fd, _)| fd.parse::<u32>().ok())
                    .is_some_and(|fd| fd > 2)
        })
        .count() as u64
}

#[test]
fn pipelined_gets_go_out_in_whole_batches_like_redis_benchmark() {
    let server = RedisServer::start();
    // A 50 KB value under the key the GET test reads without -r: a batch's replies (800
    // KB) come in many reads, each completing a few of them, so refilling as replies
    // arrive would write after most reads; whole batches write once per P requests.
    let value = "v".repeat(50_000);
    assert_eq!(server.cli(&["SET", "key:__rand_int__", &value]), "OK");
    server.config_resetstat();
    let args: Vec<String> = [
        "-h",
        "127.0.0.1",
        "-p",
        &server.port.to_string(),
        "-t",
        "get",
        "-n",
        &REQUESTS.to_string(),
        "-c",
        &CLIENTS.to_string(),
        "-P",
        &PIPELINE.to_string(),
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let batches = REQUESTS / PIPELINE;

    let skip = strace_unusable();
    let dir = TestDir::new("rb-pipeline");
    let mut kv_args = vec!["redis-benchmark".to_string()];
    kv_args.extend(args.iter().cloned());
    let writes = match &skip {
        Some(reason) => {
            println!("socket writes not counted: {reason}");
            let out = run_with_timeout(
                {
                    let mut cmd = Command::new(KVBENCH);
                    cmd.args(&kv_args);
                    cmd
                },
                KVBENCH_TIMEOUT,
            );
            assert!(out.status.success(), "{}", describe(&out));
            None
        }
        None => Some(socket_writes(&dir, "kvbench", KVBENCH, &kv_args)),
    };
    // The server saw exactly the requests asked for, as before.
    assert_eq!(server.commandstats().get("get"), Some(&REQUESTS));
    let Some(writes) = writes else {
        return;
    };
    assert!(
        (batches..=batches + SLACK).contains(&writes),
        "kvbench wrote {writes} times for {batches} batches of {PIPELINE}"
    );

    // The real tool, same flags, same server: whole batches too (its write count is
    // printed beside kvbench's for the record).
    if Command::new("redis-benchmark")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("redis-benchmark is not installed: kvbench's {writes} writes not compared");
        return;
    }
    server.config_resetstat();
    let theirs = socket_writes(&dir, "redis-benchmark", "redis-benchmark", &args);
    println!("socket writes for {batches} batches: kvbench {writes}, redis-benchmark {theirs}");
    assert!(
        (batches..=batches + SLACK).contains(&theirs),
        "redis-benchmark wrote {theirs} times for {batches} batches"
    );
    assert!(
        server
            .commandstats()
            .get("get")
            .is_some_and(|&n| n >= REQUESTS)
    );
}

/// Runs `program args...` under `strace -f` and returns how many `mremap` calls it made
/// (a `Vec` that grows or shrinks past a page-sized allocation is moved with one).
fn remaps(dir: &TestDir, name: &str, program: &str, args: &[String]) -> u64 {
    let text = strace_trace(dir, name, "mremap", program, args);
    text.lines().filter(|l| l.contains("mremap(")).count() as u64
}

#[test]
fn large_value_batches_keep_their_write_buffer() {
    // 16 SETs of 16 KB are a 256 KB write: the buffer grows to it once and is kept while
    // such batches go on (it used to shrink back to 64 KB after every batch and grow
    // again, four reallocations a batch, half the throughput of the real tool).
    if let Some(reason) = strace_unusable() {
        println!("reallocations not counted: {reason}");
        return;
    }
    let server = RedisServer::start();
    let requests = 3200u64;
    let args: Vec<String> = [
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        &server.port.to_string(),
        "-t",
        "set",
        "-d",
        "16384",
        "-n",
        &requests.to_string(),
        "-c",
        &CLIENTS.to_string(),
        "-P",
        &PIPELINE.to_string(),
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let dir = TestDir::new("rb-large-batches");
    let moved = remaps(&dir, "kvbench", KVBENCH, &args);
    assert_eq!(server.commandstats().get("set"), Some(&requests));
    let batches = requests / PIPELINE;
    assert!(
        moved < batches / 4,
        "{moved} reallocations (mremap) for {batches} batches of 16 KB SETs"
    );
}
