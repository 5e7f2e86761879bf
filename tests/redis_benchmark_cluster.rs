//! `kvbench redis-benchmark --cluster` against a 3-master Redis Cluster started by the
//! test, beside the real redis-benchmark: the banner and blocks, every request executed
//! once on the master that owns its key (no redirection), the same commands as the real
//! tool, the tutorial's cluster line through the `redis-benchmark` link, and a resharding
//! in mid-run followed.

mod common;
#[path = "common/rb_output.rs"]
mod rb_output;

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisCluster, TestDir, kvbench, wait_until};
use rb_output::{BlockServer, parse_normal, parse_quiet};

const KVBENCH: &str = env!("CARGO_BIN_EXE_kvbench");

fn seed_args(cluster: &RedisCluster, args: &[&str]) -> Vec<String> {
    let mut full = vec![
        "-h".to_string(),
        "127.0.0.1".to_string(),
        "-p".to_string(),
        cluster.nodes[0].port.to_string(),
    ];
    full.extend(args.iter().map(|a| a.to_string()));
    full
}

/// `program ARGS...`'s stdout (it must exit 0).
fn stdout_of(program: &str, args: &[String]) -> String {
    String::from_utf8_lossy(&common::run_ok(program, args).stdout).into_owned()
}

/// What the run made the masters execute, the discovery and harness commands left out.
fn benchmarked(cluster: &RedisCluster) -> HashMap<String, u64> {
    let mut stats = cluster.commandstats();
    stats.retain(|command, _| {
        !command.starts_with("cluster|")
            && !matches!(
                command.as_str(),
                "info"
                    | "config|resetstat"
                    | "config|get"
                    | "flushall"
                    | "command"
                    | "command|docs"
            )
    });
    stats
}

#[test]
fn cluster_runs_land_every_request_on_its_master() {
    let cluster = RedisCluster::start();
    let args = [
        "--cluster",
        "-t",
        "set,get,incr,lpush,sadd,mset",
        "-n",
        "600",
        "-c",
        "6",
        "-r",
        "1000",
    ];
    cluster.reset();
    let dir = TestDir::new("rb-cluster");
    let json = dir.file_arg("c.json");
    let mut mine_args = vec!["redis-benchmark".to_string()];
    mine_args.extend(seed_args(&cluster, &args));
    mine_args.extend(["--json-out-file".to_string(), json.clone()]);
    let mine = stdout_of(KVBENCH, &mine_args);
    let mine_stats = benchmarked(&cluster);
    // Every master did its share of every test.
    for command in ["set", "get", "incr", "lpush", "sadd", "mset"] {
        let per_node = cluster.per_node(command);
        assert_eq!(per_node.iter().sum::<u64>(), 600, "{command}: {per_node:?}");
        assert!(per_node.iter().all(|&n| n > 0), "{command}: {per_node:?}");
    }
    // No request was sent to a master that does not own its key.
    let doc = common::read_json(std::path::Path::new(&json));
    for row in ["SET", "GET", "MSET (10 keys)", "Totals"] {
        let r = &doc["ALL STATS"][row];
        assert_eq!(r["MOVED/sec"].as_f64(), Some(0.0), "{row}: {r}");
        assert_eq!(r["ASK/sec"].as_f64(), Some(0.0), "{row}: {r}");
    }
    // The threads that ran: one per master, as the text's `threads: 3` says.
    let info = &doc["run information"];
    assert_eq!(info["Threads"], 3, "{info}");
    assert_eq!(info["Connections per thread"], 2, "{info}");
    cluster.reset();
    let theirs = stdout_of("redis-benchmark", &seed_args(&cluster, &args));
    assert_eq!(
        mine_stats,
        benchmarked(&cluster),
        "kvbench vs redis-benchmark"
    );

    let out = parse_normal(&mine).unwrap_or_else(|e| panic!("{e}\n{mine}"));
    let masters = out.masters.expect("the cluster banner");
    assert_eq!(masters.len(), 3);
    let mut ports: Vec<String> = masters.iter().map(|(_, addr)| addr.clone()).collect();
    ports.sort();
    let mut expected: Vec<String> = cluster.nodes.iter().map(|n| n.addr()).collect();
    expected.sort();
    assert_eq!(ports, expected);
    // The same masters in the same order as the real tool's banner: the node asked
    // first, then the others as CLUSTER NODES lists them.
    let real = parse_normal(&theirs).unwrap_or_else(|e| panic!("{e}\n{theirs}"));
    assert_eq!(
        Some(&masters),
        real.masters.as_ref(),
        "kvbench vs redis-benchmark"
    );
    for (id, _) in &masters {
        assert_eq!(
            id.as_deref().map(str::len),
            Some(40),
            "node IDs: {masters:?}"
        );
    }
    for block in &out.blocks {
        assert!(
            matches!(&block.server, BlockServer::Cluster { masters: 3, nodes } if nodes.len() == 3),
            "{block:?}"
        );
        assert_eq!((block.multi_thread, block.threads), (true, Some(3)));
    }
}

/// Fewer clients than masters: the real tool gives its `i`-th client the `i`-th master
/// of its banner (`CLUSTER NODES` order as the seed lists it), so which masters see
/// the load depends on that order, and on the seed asked. kvbench picks the same ones,
/// from each node as the seed.
#[test]
fn fewer_clients_than_masters_load_the_real_tools_masters() {
    let cluster = RedisCluster::start();
    for seed in 0..cluster.nodes.len() {
        for clients in ["1", "2"] {
            let mut args = vec![
                "-h".to_string(),
                "127.0.0.1".to_string(),
                "-p".to_string(),
                cluster.nodes[seed].port.to_string(),
            ];
            args.extend(
                ["--cluster", "-t", "set", "-n", "200", "-c", clients, "-q"].map(String::from),
            );
            cluster.reset();
            stdout_of("redis-benchmark", &args);
            let theirs = cluster.per_node("set");
            cluster.reset();
            let mut mine_args = vec!["redis-benchmark".to_string()];
            mine_args.extend(args.iter().cloned());
            stdout_of(KVBENCH, &mine_args);
            let mine = cluster.per_node("set");
            let loaded = |per_node: &[u64]| per_node.iter().filter(|&&n| n > 0).count();
            assert_eq!(
                loaded(&theirs).to_string(),
                clients,
                "seed {seed}, -c {clients}: {theirs:?}"
            );
            assert_eq!(
                loaded(&mine),
                loaded(&theirs),
                "seed {seed}, -c {clients}: kvbench {mine:?}, redis-benchmark {theirs:?}"
            );
            let which = |per_node: &[u64]| per_node.iter().map(|&n| n > 0).collect::<Vec<_>>();
            assert_eq!(
                which(&mine),
                which(&theirs),
                "seed {seed}, -c {clients}: kvbench {mine:?}, redis-benchmark {theirs:?}"
            );
            assert_eq!(mine.iter().sum::<u64>(), 200);
        }
    }
}

/// Pipelined (`-P 16`, the closed loop's plain path for a client pinned to a master):
/// each batch's `{tag}` names a slot of the client's own master, so every request runs
/// where it was sent, none is redirected, and every master serves its share, as the real
/// tool's do.
#[test]
fn pipelined_cluster_runs_land_every_request_on_its_master() {
    let cluster = RedisCluster::start();
    let args = [
        "--cluster",
        "-t",
        "set,get",
        "-n",
        "24000",
        "-c",
        "6",
        "-P",
        "16",
        "-r",
        "100",
    ];
    cluster.reset();
    let dir = TestDir::new("rb-cluster-p16");
    let json = dir.file_arg("c.json");
    let mut mine_args = vec!["redis-benchmark".to_string()];
    mine_args.extend(seed_args(&cluster, &args));
    mine_args.extend(["--json-out-file".to_string(), json.clone()]);
    stdout_of(KVBENCH, &mine_args);
    for command in ["set", "get"] {
        let per_node = cluster.per_node(command);
        assert_eq!(
            per_node.iter().sum::<u64>(),
            24_000,
            "{command}: {per_node:?}"
        );
        assert!(per_node.iter().all(|&n| n > 0), "{command}: {per_node:?}");
    }
    let doc = common::read_json(std::path::Path::new(&json));
    for row in ["SET", "GET", "Totals"] {
        let r = &doc["ALL STATS"][row];
        assert_eq!(r["MOVED/sec"].as_f64(), Some(0.0), "{row}: {r}");
        assert_eq!(r["ASK/sec"].as_f64(), Some(0.0), "{row}: {r}");
    }
    // As in redis-benchmark, every request names its master's first slot: one tag per
    // master, at most -r keys there, and every GET reads a key the SET test wrote.
    for node in &cluster.nodes {
        let keys = node.cli(&["--scan"]);
        let tags: std::collections::HashSet<&str> = keys
            .lines()
            .filter_map(|key| {
                key.split_once('{')
                    .and_then(|(_, rest)| rest.split_once('}'))
            })
            .map(|(tag, _)| tag)
            .collect();
        assert_eq!(tags.len(), 1, "{tags:?} on {}", node.addr());
        assert!(
            node.dbsize() <= 100,
            "{} keys on {}",
            node.dbsize(),
            node.addr()
        );
        let info = node.cli(&["INFO", "stats"]);
        let misses = info
            .lines()
            .find_map(|l| l.trim().strip_prefix("keyspace_misses:"))
            .unwrap_or_else(|| panic!("no keyspace_misses in {info:?}"));
        assert_eq!(misses, "0", "GETs that missed on {}", node.addr());
    }
}

#[test]
fn the_tutorial_cluster_line_through_the_link() {
    let cluster = RedisCluster::start();
    let dir = TestDir::new("rb-cluster-link");
    let link = dir.file("redis-benchmark");
    std::os::unix::fs::symlink(KVBENCH, &link).expect("link to kvbench");
    // `redis-benchmark -q -p 17001 -h 192.168.56.105 -d 1024 --cluster`, -n scaled down.
    let args: Vec<String> = [
        "-q",
        "-p",
        &cluster.nodes[0].port.to_string(),
        "-h",
        "127.0.0.1",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["-d", "1024", "--cluster", "-n", "300"].map(String::from))
    .collect();
    let theirs = stdout_of("redis-benchmark", &args);
    let mine = stdout_of(&link.to_string_lossy(), &args);
    let titles = |raw: &str| -> Vec<String> {
        // Both print the banner first; -q lines follow it.
        let body = raw.split("\n\n").skip(2).collect::<Vec<_>>().join("\n\n");
        parse_quiet(&body)
            .unwrap_or_else(|e| panic!("{e}\n{raw}"))
            .into_iter()
            .map(|l| l.title)
            .filter(|t| t != "XADD")
            .collect()
    };
    assert_eq!(titles(&mine), titles(&theirs));
    assert!(
        mine.starts_with("Cluster has 3 master nodes:\n\nMaster 0: "),
        "{mine}"
    );
}

/// A slot that stays MIGRATING answers ASK for every key it does not hold. Every client
/// pinned to its master names the master's first slot, slot 0 here: the ASK'd request
/// goes again with the master's next slot, so the run ends. (Named again with slot 0 it
/// was asked away some 16 000 times a second, and the run never ended.)
#[test]
fn a_slot_left_migrating_does_not_hold_the_run() {
    let cluster = RedisCluster::start();
    cluster.reset();
    let id = |i: usize| cluster.nodes[i].cli(&["CLUSTER", "MYID"]);
    let (from, to) = (id(0), id(1));
    assert_eq!(
        cluster.nodes[1].cli(&["CLUSTER", "SETSLOT", "0", "IMPORTING", &from]),
        "OK"
    );
    assert_eq!(
        cluster.nodes[0].cli(&["CLUSTER", "SETSLOT", "0", "MIGRATING", &to]),
        "OK"
    );
    let port = cluster.nodes[0].port.to_string();
    let out = kvbench(&[
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster",
        "-t",
        "set",
        "-r",
        "1000000",
        "-n",
        "3000",
        "-c",
        "3",
        "-q",
    ])
    .timeout(Duration::from_secs(60))
    .run();
    assert!(out.status.success(), "{}", out.describe());
    assert_eq!(cluster.calls("set"), 3000, "{:?}", cluster.per_node("set"));
}

#[test]
fn a_resharding_in_mid_run_is_followed() {
    let cluster = RedisCluster::start();
    cluster.reset();
    let port = cluster.nodes[0].port.to_string();
    let run = kvbench(&[
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster",
        "-t",
        "set",
        "-r",
        "500",
        "-n",
        "300000",
        "-c",
        "6",
        // At most 50000/s: six seconds at least, so a fast machine cannot finish before
        // `redis-cli --cluster reshard` (a process to start, every node to ask) moves a slot.
        "--rps",
        "50000",
        "-q",
    ])
    .with_json()
    .spawn();
    wait_until("load on the cluster", CONDITION_TIMEOUT, || {
        cluster.calls("set") > 3000
    });
    cluster.reshard(0, 1, 1000);
    let out = run.wait(Duration::from_secs(180));
    assert!(out.status.success(), "{}", out.describe());
    let doc = out.json();
    let totals = &doc["ALL STATS"]["Totals"];
    let redirects = totals["MOVED/sec"].as_f64().unwrap() + totals["ASK/sec"].as_f64().unwrap();
    assert!(
        redirects > 0.0,
        "the run ended before the resharding: {totals}"
    );
    // Every redirected request was sent again: the masters executed exactly -n.
    assert_eq!(cluster.calls("set"), 300_000);
    assert!(
        cluster.calls("cluster|slots") >= 2,
        "the slot map was read again"
    );
}

#[test]
fn a_command_without_a_tag_ends_at_its_first_redirection() {
    // `set foo x` names no {tag}: a client pinned to a master that does not own "foo"
    // gets MOVED, and sending it again could only be redirected again. The real tool
    // prints the reply and exits 1; so does kvbench, instead of resending for ever.
    let cluster = RedisCluster::start();
    cluster.reset();
    let mut cmd = Command::new(KVBENCH);
    cmd.arg("redis-benchmark")
        .args(seed_args(
            &cluster,
            &["--cluster", "-n", "1000", "-c", "6", "-q"],
        ))
        .args(["set", "foo", "x"]);
    let out = common::run_with_timeout(cmd, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    let line = stderr
        .lines()
        .find(|l| l.starts_with("Error from server 127.0.0.1:"))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(line.contains(": MOVED "), "{line}");
    // What the real tool prints for the same command line.
    let real = common::run_with_timeout(
        {
            let mut c = Command::new("redis-benchmark");
            c.args(seed_args(
                &cluster,
                &["--cluster", "-n", "1000", "-c", "6", "-q"],
            ))
            .args(["set", "foo", "x"]);
            c
        },
        Duration::from_secs(60),
    );
    assert_eq!(real.status.code(), Some(1), "{}", common::describe(&real));
    assert!(
        String::from_utf8_lossy(&real.stderr).contains(": MOVED "),
        "{}",
        common::describe(&real)
    );
}

/// `--cluster` with nothing listening at the seed: redis-benchmark's own line and
/// status, byte for byte (it read `error: Failed to fetch cluster configuration: cannot
/// connect to ...`).
#[test]
fn an_unreachable_seed_is_redis_benchmarks_could_not_connect() {
    let port = common::closed_port().to_string();
    let args = ["--cluster", "-h", "127.0.0.1", "-p", &port, "-n", "10"];
    let mine = kvbench(&["redis-benchmark"]).args(&args).run();
    let mut cmd = Command::new("redis-benchmark");
    cmd.args(args);
    let theirs = common::run_with_timeout(cmd, common::KVBENCH_TIMEOUT);
    assert_eq!(mine.status.code(), Some(1), "{}", mine.describe());
    assert_eq!(theirs.status.code(), Some(1));
    let line = format!("Could not connect to Redis at 127.0.0.1:{port}: Connection refused\n");
    assert_eq!(mine.stderr_text(), line);
    assert_eq!(String::from_utf8_lossy(&theirs.stderr), line);
}

/// `--cluster` with a password the seed refuses: redis-benchmark's two lines (`Node
/// host:port replied with error:` and the server's words) and status 1, byte for byte,
/// as without `--cluster` (it read `error: Failed to fetch cluster configuration:
/// authentication with ... failed: ...`).
#[test]
fn a_refused_password_is_redis_benchmarks_node_replied_with_error() {
    let server = common::RedisServer::start_with(&["--requirepass", "secret"]);
    let port = server.port.to_string();
    let args = [
        "--cluster",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-a",
        "wrong",
        "-n",
        "10",
    ];
    let mine = kvbench(&["redis-benchmark"]).args(&args).run();
    let mut cmd = Command::new("redis-benchmark");
    cmd.args(args);
    let theirs = common::run_with_timeout(cmd, common::KVBENCH_TIMEOUT);
    assert_eq!(mine.status.code(), Some(1), "{}", mine.describe());
    assert_eq!(theirs.status.code(), Some(1));
    let lines = format!(
        "Node 127.0.0.1:{port} replied with error:\n\
         WRONGPASS invalid username-password pair or user is disabled.\n"
    );
    assert_eq!(String::from_utf8_lossy(&theirs.stderr), lines);
    assert_eq!(mine.stderr_text(), lines);
    assert!(mine.stdout_text().is_empty(), "{}", mine.describe());
}
