//! `--refill`, against real servers started here. The server sees the shape:
//! Redis answers 16 GETs of 1 MB values in many pieces, so refilling per reply sends a
//! new GET after each reply (many reads for the server), while `batch` sends the next 16
//! together once all are answered (one read per batch, counted by the server's own
//! `total_reads_processed`). memcached counts exactly the requests asked for in both
//! protocols, the configuration shows the flag only when given, and a bad value or a
//! setting it cannot keep is one line and exit 1.

mod common;

use common::{Memcached, RedisServer, free_port, kvbench, kvbench_at};

/// GETs per run of the Redis test (two connections of 160).
const GETS: u64 = 320;

fn total_reads_processed(server: &RedisServer) -> u64 {
    let info = server.cli(&["INFO", "stats"]);
    info.lines()
        .find_map(|l| l.strip_prefix("total_reads_processed:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no total_reads_processed in INFO stats:\n{info}"))
}

/// The server's reads per GET for one run of GETs at pipeline 16 with `refill`.
fn reads_per_get(server: &RedisServer, refill: &str) -> f64 {
    server.config_resetstat();
    let before = total_reads_processed(server);
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "160",
            "--ratio=0:1",
            "--key-maximum=20",
            "--pipeline=16",
            &format!("--refill={refill}"),
            "--hide-histogram",
        ],
    )
    .with_json()
    .ok();
    // The redis-cli that asks is one read more.
    let reads = total_reads_processed(server) - before - 1;
    let stats = server.commandstats();
    assert_eq!(stats.get("get").copied(), Some(GETS), "{stats:?}");
    let json = run.json();
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], GETS);
    assert_eq!(json["configuration"]["refill"], refill);
    reads as f64 / GETS as f64
}

#[test]
fn redis_sees_whole_batches_only_with_batch() {
    let server = RedisServer::start();
    // 20 keys of 1 MB: a batch of 16 answers is 16 MB, written in many pieces. (With
    // 100 KB values, a client held off the CPU found many whole answers in one read and
    // refilled for all of them in one send: 0.142 server reads per GET were seen beside a
    // busy loop. An answer of 1 MB is more than the socket holds at once, so answers end
    // in different reads however late the client reads.)
    kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "20",
            "--ratio=1:0",
            "-d",
            "1000000",
            "--key-pattern=P:P",
            "--key-maximum=20",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(server.dbsize(), 20);
    let batch = reads_per_get(&server, "batch");
    let reply = reads_per_get(&server, "reply");
    // Whole batches: one read per 16 GETs (0.0625) and the connections' own. Per reply:
    // a read for about every answer.
    assert!(batch < 0.1, "batch: {batch} server reads per GET");
    assert!(reply > 0.2, "reply: {reply} server reads per GET");
}

#[test]
fn memcached_counts_exactly_what_was_asked_in_both_protocols() {
    for protocol in ["memcache_text", "memcache_binary"] {
        let server = Memcached::start();
        let run = kvbench_at(
            server.port,
            &[
                "-P",
                protocol,
                "-t",
                "2",
                "-c",
                "3",
                "-n",
                "700",
                "--ratio=1:3",
                "--pipeline=16",
                "--refill=batch",
                "--hide-histogram",
            ],
        )
        .with_json()
        .ok();
        let stats = server.stats();
        let sets = stats["cmd_set"];
        let gets = stats["cmd_get"];
        assert_eq!(sets + gets, 4200, "{protocol}: {stats:?}");
        assert_eq!(sets, 1050, "{protocol}: {stats:?}");
        let json = run.json();
        assert_eq!(json["ALL STATS"]["Totals"]["Count"], 4200, "{protocol}");
        assert_eq!(json["configuration"]["refill"], "batch");
    }
}

#[test]
fn an_open_loop_rate_keeps_its_count_with_batch() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "400",
            "--rate=4000",
            "--pipeline=8",
            "--refill=batch",
            "--ratio=1:1",
            "--hide-histogram",
        ],
    )
    .with_json()
    .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(400), "{stats:?}");
    assert_eq!(stats.get("get").copied(), Some(400), "{stats:?}");
    assert_eq!(run.json()["ALL STATS"]["Totals"]["Count"], 800);
}

#[test]
fn without_the_flag_the_configuration_is_memtiers() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "-n", "10", "--hide-histogram"],
    )
    .with_json()
    .ok();
    assert!(run.json()["configuration"].get("refill").is_none());
}

#[test]
fn what_it_cannot_keep_is_one_line_and_nothing_is_sent() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let servers = format!("--servers=127.0.0.1:{port},127.0.0.1:{}", free_port());
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["-s", "127.0.0.1", "-p", &port, "--refill=whole"],
            "--refill must be reply or batch, got 'whole'.",
        ),
        (
            vec![
                "-s",
                "127.0.0.1",
                "-p",
                &port,
                "--cluster-mode",
                "--refill=batch",
            ],
            "--cluster-mode cannot be used with --refill=batch",
        ),
        (
            vec![&servers, "--refill=batch"],
            "a pool of servers cannot be used with --refill=batch",
        ),
    ];
    server.config_resetstat();
    for (args, want) in cases {
        let mut all = vec!["-n", "10"];
        all.extend(args.iter().copied());
        let run = kvbench(&all).run();
        assert_eq!(run.status.code(), Some(1), "{all:?}: {}", run.describe());
        let err = run.stderr_text();
        assert_eq!(err.trim_end().lines().count(), 1, "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: {err}");
    }
    let stats = server.commandstats();
    assert!(
        !stats.contains_key("get") && !stats.contains_key("set"),
        "{stats:?}"
    );
}
