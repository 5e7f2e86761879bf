//! Pools of servers against real memcached and Redis servers: every key lands on the
//! server an independent reference (a python3 script written from libmemcached's
//! ketama and modula, `tests/pools/ketama_reference.py`) assigns it to, each server's
//! `curr_items` (or DBSIZE) is what the reference predicts, the per-server rows count
//! what each server saw, and a member killed mid-run is reported on its own row while
//! the others carry on.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Memcached, RedisServer, describe, kvbench, wait_until};
use serde_json::Value;

const KEYS: u64 = 3000;

/// The reference's member index for each key `memtier-1..=KEYS`.
fn reference(distribution: &str, members: &[(u16, u32)]) -> Vec<usize> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/pools/ketama_reference.py"
    );
    let mut cmd = Command::new("python3");
    cmd.args([script, distribution, "memtier-", "1", &KEYS.to_string()]);
    for (port, weight) in members {
        cmd.arg(format!("127.0.0.1:{port}:{weight}"));
    }
    let out = cmd.output().expect("run python3");
    assert!(out.status.success(), "reference failed: {}", describe(&out));
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|s| s.parse().expect("member index"))
        .collect()
}

/// The keys (of `memtier-1..=KEYS`) that `server` holds, asked in batches of `get`.
fn held_keys(server: &Memcached) -> Vec<u64> {
    let mut held = Vec::new();
    let ids: Vec<u64> = (1..=KEYS).collect();
    for batch in ids.chunks(200) {
        let mut req = String::from("get");
        for id in batch {
            req.push_str(&format!(" memtier-{id}"));
        }
        req.push_str("\r\n");
        let reply = server.raw(req.as_bytes(), b"END\r\n");
        for line in String::from_utf8_lossy(&reply).lines() {
            if let Some(rest) = line.strip_prefix("VALUE memtier-") {
                let id = rest.split(' ').next().and_then(|s| s.parse().ok());
                held.push(id.expect("a key id"));
            }
        }
    }
    held.sort_unstable();
    held
}

/// Writes every key once through a pool of `servers` and checks placement against the
/// reference, server by server, and the per-server rows against the servers' counts.
/// `pipeline` above 1 runs the closed loop's plain path for a pool: per-connection queues
/// in front of full members, each reply counted in its member's row too.
fn check_placement(protocol: &str, distribution: &str, weights: &[u32], pipeline: u32) {
    let servers: Vec<Memcached> = weights.iter().map(|_| Memcached::start()).collect();
    let members: Vec<(u16, u32)> = servers
        .iter()
        .map(|s| s.port)
        .zip(weights.iter().copied())
        .collect();
    let list: Vec<String> = members
        .iter()
        .map(|(port, w)| match distribution {
            "ketama" => format!("127.0.0.1:{port}:{w}"),
            _ => format!("127.0.0.1:{port}"),
        })
        .collect();
    let run = kvbench(&[
        "-P",
        protocol,
        &format!("--servers={}", list.join(",")),
        &format!("--distribution={distribution}"),
        "--ratio=1:0",
        "--key-pattern=P:P",
        "--key-minimum=1",
        &format!("--key-maximum={KEYS}"),
        "-n",
        "allkeys",
        "-c",
        "2",
        "-t",
        "2",
        &format!("--pipeline={pipeline}"),
        "--hide-histogram",
    ])
    .with_json()
    .ok();
    let json = run.json();
    let want = reference(distribution, &members);
    assert_eq!(want.len() as u64, KEYS);
    for (index, server) in servers.iter().enumerate() {
        let expected: Vec<u64> = (1..=KEYS)
            .filter(|&k| want[(k - 1) as usize] == index)
            .collect();
        assert!(
            !expected.is_empty(),
            "the reference gives server {index} no key"
        );
        let stats = server.stats();
        assert_eq!(
            stats["curr_items"],
            expected.len() as u64,
            "{distribution} {weights:?}: curr_items on server {index}"
        );
        assert_eq!(held_keys(server), expected, "keys held by server {index}");
        let row = &json["ALL STATS"]["Servers"][server.addr()];
        assert_eq!(
            row["Count"].as_u64(),
            Some(stats["cmd_set"]),
            "per-server row of {} against its cmd_set: {row}",
            server.addr()
        );
    }
}

#[test]
fn ketama_places_every_key_where_libmemcached_does() {
    check_placement("memcache_text", "ketama", &[1, 1, 1], 1);
}

#[test]
fn weighted_ketama_over_the_binary_protocol() {
    check_placement("memcache_binary", "ketama", &[1, 2, 3], 8);
}

#[test]
fn modula_places_every_key_where_libmemcached_does() {
    check_placement("memcache_text", "modula", &[1, 1, 1], 16);
}

#[test]
fn a_redis_pool_shards_by_key_and_reports_each_server() {
    let servers = [RedisServer::start(), RedisServer::start()];
    let ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    // --server given once per member with --distribution makes the same pool as
    // --servers (without it, memtier's rule: the last --server wins).
    let json = kvbench(&[
        "--distribution=ketama",
        "--server",
        &format!("127.0.0.1:{}", ports[0]),
        "--server",
        &format!("127.0.0.1:{}", ports[1]),
        "--ratio=1:1",
        "--key-pattern=P:P",
        "--key-minimum=1",
        &format!("--key-maximum={KEYS}"),
        "-n",
        "1000",
        "-c",
        "2",
        "-t",
        "1",
        "--hide-histogram",
    ])
    .with_json()
    .ok()
    .json();
    let want = reference("ketama", &[(ports[0], 1), (ports[1], 1)]);
    let mut dbsizes = 0;
    for (index, server) in servers.iter().enumerate() {
        let calls = server.commandstats();
        let seen = calls.get("set").copied().unwrap_or(0) + calls.get("get").copied().unwrap_or(0);
        let row = &json["ALL STATS"]["Servers"][server.addr()];
        assert_eq!(
            row["Count"].as_u64(),
            Some(seen),
            "{}: {row}",
            server.addr()
        );
        // Every key the server holds is one the reference puts there.
        let keys = server.cli(&["--scan", "--pattern", "memtier-*"]);
        for key in keys.split_whitespace() {
            let id: usize = key["memtier-".len()..].parse().expect("key id");
            assert_eq!(want[id - 1], index, "{key} on server {index}");
        }
        dbsizes += server.dbsize();
    }
    assert!(dbsizes > 0);
}

#[test]
fn a_killed_member_is_reported_on_its_row_while_the_others_go_on() {
    let mut servers: Vec<Memcached> = (0..3).map(|_| Memcached::start()).collect();
    let list: Vec<String> = servers.iter().map(Memcached::addr).collect();
    let dead = servers[1].addr();
    let bg = kvbench(&[
        "-P",
        "memcache_text",
        &format!("--servers={}", list.join(",")),
        "--ratio=1:1",
        "--test-time=6",
        "--reconnect-on-error",
        "-c",
        "2",
        "-t",
        "1",
        "--hide-histogram",
    ])
    .with_json()
    .spawn();
    wait_until(
        "the first member sees load",
        Duration::from_secs(20),
        || servers[1].stats().get("cmd_set").copied().unwrap_or(0) > 100,
    );
    servers[1].kill_now();
    let run = bg.wait(Duration::from_secs(60));
    assert!(run.status.success(), "{}", describe(&run.out));
    let stderr = String::from_utf8_lossy(&run.out.stderr);
    assert!(stderr.contains(&dead), "the dead member is named: {stderr}");
    let stdout = String::from_utf8_lossy(&run.out.stdout);
    assert!(stdout.contains("PER SERVER"), "{stdout}");
    let json: Value = run.json();
    let rows = &json["ALL STATS"]["Servers"];
    assert!(
        rows[&dead]["Connection Errors"].as_u64().unwrap_or(0) > 0,
        "{rows}"
    );
    for (i, server) in servers.iter().enumerate() {
        if i == 1 {
            continue;
        }
        let row = &rows[server.addr()];
        assert_eq!(row["Connection Errors"].as_u64(), Some(0), "{row}");
        // The server saw every counted request, and at most the two in flight at the
        // deadline (two clients, pipeline 1) more.
        let stats = server.stats();
        let seen = stats["cmd_set"] + stats["cmd_get"];
        let counted = row["Count"].as_u64().expect("Count");
        assert!(
            counted > 0 && counted <= seen && seen - counted <= 2,
            "{}: server saw {seen}, row {row}",
            server.addr()
        );
    }
}

#[test]
fn pool_flags_refuse_what_cannot_work() {
    for (args, message) in [
        (
            &["--servers=127.0.0.1:1,127.0.0.1:2", "--server=127.0.0.1"][..],
            "cannot be combined with --server",
        ),
        (&["--distribution=ketama"][..], "applies to a pool"),
        (
            &[
                "--servers=127.0.0.1:1,127.0.0.1:2",
                "--distribution=rendezvous",
            ][..],
            "ketama or modula",
        ),
        (
            &[
                "--servers=127.0.0.1:1:2,127.0.0.1:2",
                "--distribution=modula",
            ][..],
            "weights need",
        ),
        (&["--servers=127.0.0.1:1,127.0.0.1:1"][..], "listed twice"),
        (
            &["--servers=127.0.0.1:1,127.0.0.1:2", "--servers=127.0.0.1:3"][..],
            "--servers takes one list per run (given 2 times)",
        ),
        (
            &["--servers=127.0.0.1:1,127.0.0.1:2", "--multi-key-get=3"][..],
            "--multi-key-get",
        ),
        (
            &["--servers=127.0.0.1:1,127.0.0.1:2", "--cluster-mode"][..],
            "--cluster-mode",
        ),
    ] {
        let run = kvbench(args).run();
        let stderr = String::from_utf8_lossy(&run.out.stderr);
        assert_eq!(
            run.status.code(),
            Some(1),
            "{args:?}: {}",
            describe(&run.out)
        );
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim().lines().count(),
            1,
            "{args:?}: one line: {stderr}"
        );
    }
}
