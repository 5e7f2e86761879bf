//! Behaviours the other suites leave implicit, each against a real server: plain
//! `-P redis` sends no HELLO, SIGTERM stops a run with valid results, reconnect attempts
//! are bounded, and memcached sees multi-key gets and expiry times as asked.

mod common;

use std::time::{Duration, Instant};

use common::{CONDITION_TIMEOUT, Memcached, RedisServer, closed_port, kvbench_at, wait_until};

#[test]
fn plain_redis_protocol_sends_no_hello() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &["-P", "redis", "-t", "1", "-c", "2", "-n", "50"],
    )
    .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("hello"), None, "{stats:?}");
    assert_eq!(stats["set"] + stats["get"], 100);
}

#[test]
fn sigterm_stops_the_run_and_writes_valid_results() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "2", "--test-time=30", "--hide-histogram"],
    )
    .with_json()
    .spawn();
    // The handlers are installed before this line; the load is flowing after it.
    run.wait_for_stderr("Launching threads");
    wait_until("requests on the server", CONDITION_TIMEOUT, || {
        server.calls() > 100
    });
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    unsafe {
        libc::kill(run.pid() as libc::pid_t, libc::SIGTERM);
    }
    // Well under the 30 s the run would take without the signal.
    let out = run.wait(Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(143), "{}", out.describe());
    let doc = out.json();
    assert_eq!(doc["ALL STATS"]["Runtime"]["Interrupted"], "true");
    assert!(doc["ALL STATS"]["Totals"]["Count"].as_u64().unwrap() > 0);
    // The stop is named for what it was (memtier's "Interrupted by user" is for Ctrl-C).
    let stderr = out.stderr_text();
    assert!(
        stderr.contains("[RUN #1] Terminated (SIGTERM) after"),
        "{}",
        out.describe()
    );
}

#[test]
fn reconnect_attempts_are_bounded() {
    let started = Instant::now();
    let out = kvbench_at(
        closed_port(),
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "5",
            "--reconnect-on-error",
            "--max-reconnect-attempts=2",
        ],
    )
    .run();
    let took = started.elapsed();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("gave up after 2 reconnect attempts"),
        "{stderr}"
    );
    // Two pauses of one second (memtier's schedule without a back-off factor); the upper
    // bound only catches a run that never gives up.
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(30),
        "took {took:?}"
    );
}

#[test]
fn memcached_sees_multi_key_gets_and_expiry() {
    for protocol in ["memcache_text", "memcache_binary"] {
        let server = Memcached::start();
        // 1:10 with 4 keys per get: SET, get×4, get×4, get×2 per cycle of 11 keys.
        kvbench_at(
            server.port,
            &[
                "-P",
                protocol,
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
            ],
        )
        .ok();
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
