//! Behaviours the other suites leave implicit, each against a real server: plain
//! `-P redis` sends no HELLO, SIGTERM stops a run with valid results, reconnect attempts
//! are bounded, and memcached sees multi-key gets and expiry times as asked.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::{Memcached, RedisServer, TestDir, closed_port, describe, run_kvbench, spawn_kvbench};

#[test]
fn plain_redis_protocol_sends_no_hello() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let out = run_kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-P",
        "redis",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "50",
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    let stats = server.commandstats();
    assert_eq!(stats.get("hello"), None, "{stats:?}");
    assert_eq!(stats["set"] + stats["get"], 100);
}

#[test]
fn sigterm_stops_the_run_and_writes_valid_results() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let dir = TestDir::new("sigterm");
    let json = dir.file("term.json");
    let json_flag = format!("--json-out-file={}", json.display());
    let run = spawn_kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "2",
        "--test-time=30",
        "--hide-histogram",
        &json_flag,
    ]);
    thread::sleep(Duration::from_millis(1200));
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    unsafe {
        libc::kill(run.pid() as libc::pid_t, libc::SIGTERM);
    }
    let started = Instant::now();
    let out = run.wait(Duration::from_secs(15));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(143), "{}", describe(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["ALL STATS"]["Runtime"]["Interrupted"], "true");
    assert!(doc["ALL STATS"]["Totals"]["Count"].as_u64().unwrap() > 0);
}

#[test]
fn reconnect_attempts_are_bounded() {
    let port = closed_port().to_string();
    let started = Instant::now();
    let out = run_kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "5",
        "--reconnect-on-error",
        "--max-reconnect-attempts=2",
    ]);
    let took = started.elapsed();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("gave up after 2 reconnect attempts"),
        "{stderr}"
    );
    // Two pauses of one second (memtier's schedule without a back-off factor).
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "took {took:?}"
    );
}

#[test]
fn memcached_sees_multi_key_gets_and_expiry() {
    for protocol in ["memcache_text", "memcache_binary"] {
        let server = Memcached::start();
        let port = server.port.to_string();
        // 1:10 with 4 keys per get: SET, get×4, get×4, get×2 per cycle of 11 keys.
        let out = run_kvbench(&[
            "-P",
            protocol,
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "40",
            "--ratio=1:10",
            "--multi-key-get=4",
            "--key-maximum=100",
            "--expiry-range=100-200",
            "--key-pattern=S:R",
            "--key-minimum=1",
            "--hide-histogram",
        ]);
        assert!(out.status.success(), "{protocol}: {}", describe(&out));
        let stats = server.stats();
        assert_eq!(stats["cmd_set"], 10, "{protocol}: {stats:?}");
        // memcached counts every key of a multi-get.
        assert_eq!(
            stats["get_hits"] + stats["get_misses"],
            100,
            "{protocol}: {stats:?}"
        );
        let ttl = server.ttl("memtier-1").expect("memtier-1 was set");
        assert!((90..=200).contains(&ttl), "{protocol}: TTL {ttl}");
    }
}
