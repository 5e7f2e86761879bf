//! `--cluster-mode` against a real 3-master Redis Cluster built by the test from
//! redis-server processes on free ports: keys land on the master owning their slot,
//! request counts add up across masters, and a slot migrated mid-run is followed.

mod common;

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use common::{
    CONDITION_TIMEOUT, RedisCluster, RedisServer, TestPki, describe, kvbench, kvbench_at,
    wait_until,
};
use kvbench::engine::cluster::key_slot;

/// Three cluster-enabled redis-servers joined into one cluster (no replicas).
struct Cluster {
    nodes: Vec<RedisServer>,
}

impl Cluster {
    /// The shared three-master cluster (tests/common), with this file's helpers.
    fn start() -> Cluster {
        Cluster {
            nodes: RedisCluster::start().nodes,
        }
    }

    fn seed_port(&self) -> String {
        self.nodes[0].port.to_string()
    }

    /// Slot ranges served by each node, by port.
    fn slot_ranges(&self) -> HashMap<u16, Vec<(u16, u16)>> {
        let mut ranges: HashMap<u16, Vec<(u16, u16)>> = HashMap::new();
        // `CLUSTER NODES` lines: id addr flags master ping pong epoch state slot-ranges...
        for line in self.nodes[0].cli(&["CLUSTER", "NODES"]).lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 9 || !fields[2].contains("master") {
                continue;
            }
            let port: u16 = fields[1]
                .split('@')
                .next()
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| p.parse().ok())
                .expect("node address has a port");
            for range in &fields[8..] {
                if range.starts_with('[') {
                    continue; // a migrating/importing marker
                }
                let (a, b) = match range.split_once('-') {
                    Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                    None => {
                        let s: u16 = range.parse().unwrap();
                        (s, s)
                    }
                };
                ranges.entry(port).or_default().push((a, b));
            }
        }
        ranges
    }

    /// SETs and GETs the masters have run so far.
    fn load(&self) -> u64 {
        self.total_calls("set") + self.total_calls("get")
    }

    /// Moves `slots` slots from node `from` to node `to` while a run goes on.
    fn reshard(&self, from: usize, to: usize, slots: u32) {
        common::cluster::reshard(&self.nodes, from, to, slots);
    }

    fn total_calls(&self, command: &str) -> u64 {
        self.nodes
            .iter()
            .map(|n| n.commandstats().get(command).copied().unwrap_or(0))
            .sum()
    }
}

#[test]
fn allkeys_lands_every_key_on_its_master() {
    let cluster = Cluster::start();
    let port = cluster.seed_port();
    let out = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster-mode",
        "-t",
        "2",
        "-c",
        "3",
        "--ratio=1:0",
        "--key-pattern=S:S",
        "-n",
        "allkeys",
        "--key-minimum=1",
        "--key-maximum=3000",
        "--hide-histogram",
    ])
    .run();
    assert!(out.status.success(), "{}", describe(&out));
    let total: u64 = cluster.nodes.iter().map(|n| n.dbsize()).sum();
    assert_eq!(total, 3000);
    assert_eq!(cluster.total_calls("set"), 3000);
    let ranges = cluster.slot_ranges();
    for node in &cluster.nodes {
        let keys = node.cli(&["--scan"]);
        let mine = &ranges[&node.port];
        let mut count = 0;
        for key in keys.lines() {
            let slot = key_slot(key.as_bytes());
            assert!(
                mine.iter().any(|&(a, b)| (a..=b).contains(&slot)),
                "{key} (slot {slot}) is on {} which does not own it",
                node.port
            );
            count += 1;
        }
        assert!(count > 500, "node {} holds only {count} keys", node.port);
    }
}

#[test]
fn request_counts_add_up_across_masters() {
    let cluster = Cluster::start();
    let port = cluster.seed_port();
    let out = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster-mode",
        "-t",
        "2",
        "-c",
        "2",
        "-n",
        "500",
        "--ratio=1:1",
        "--pipeline=8",
        "--key-maximum=5000",
        "--hide-histogram",
    ])
    .run();
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        cluster.total_calls("set") + cluster.total_calls("get"),
        2000
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("MOVED/sec") && stdout.contains("ASK/sec"),
        "{stdout}"
    );
}

#[test]
fn migrated_slots_are_followed_without_losing_requests() {
    let cluster = Cluster::start();
    let port = cluster.seed_port();
    // 4 clients × 3000 requests at 750/s each: a 4-second run to migrate slots under,
    // paced so that a fast machine cannot finish it before `redis-cli --cluster reshard`
    // (a process to start, every node to ask) has moved a slot, nor a loaded one start
    // that process too late.
    let run = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster-mode",
        "-t",
        "1",
        "-c",
        "4",
        "-n",
        "3000",
        "--rate-limiting=750",
        "--ratio=1:1",
        "--key-maximum=2000",
        "--hide-histogram",
    ])
    .with_json()
    .spawn();
    wait_until("load on the cluster", CONDITION_TIMEOUT, || {
        cluster.load() > 200
    });
    cluster.reshard(0, 1, 1000);
    let out = run.wait(Duration::from_secs(60));
    assert!(out.status.success(), "{}", describe(&out));
    let doc = out.json();
    let totals = &doc["ALL STATS"]["Totals"];
    let redirects = totals["MOVED/sec"].as_f64().unwrap() + totals["ASK/sec"].as_f64().unwrap();
    assert!(redirects > 0.0, "no MOVED or ASK seen: {totals}");
    // Every request was executed once somewhere: redirected ones were resent.
    assert_eq!(
        cluster.total_calls("set") + cluster.total_calls("get"),
        12_000
    );
    // A MOVED made the clients read the whole slot map again (discovery is the first).
    assert!(
        cluster.total_calls("cluster|slots") >= 2,
        "no topology refresh after MOVED: {:?}",
        cluster
            .nodes
            .iter()
            .map(|n| n.commandstats())
            .collect::<Vec<_>>()
    );
}

#[test]
fn cluster_mode_works_over_tls() {
    let pki = TestPki::generate();
    let cluster_args = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--tls-cluster",
        "yes",
        // Nodes reach each other with their server certificates (issued for TLS servers
        // only): the cluster bus must not ask them for client certificates.
        "--tls-auth-clients",
        "no",
    ];
    let nodes: Vec<RedisServer> = (0..3)
        .map(|_| {
            // The harness adds a free bus port, a new one on each start attempt.
            let (cert, key) = (pki.file("client.pem"), pki.file("client.key"));
            let mut args = cluster_args.to_vec();
            // Outgoing bus connections present a certificate made for TLS clients.
            args.extend(["--tls-client-cert-file", &cert]);
            args.extend(["--tls-client-key-file", &key]);
            RedisServer::start_tls(&pki, "server", &args)
        })
        .collect();
    let addrs: Vec<String> = nodes.iter().map(RedisServer::addr).collect();
    let out = Command::new("timeout")
        .args(["60", "redis-cli", "--tls", "--cacert", &pki.file("ca.pem")])
        .args([
            "--cert",
            &pki.file("client.pem"),
            "--key",
            &pki.file("client.key"),
        ])
        .args(["--cluster", "create"])
        .args(&addrs)
        .arg("--cluster-yes")
        .output()
        .expect("redis-cli runs");
    assert!(
        out.status.success(),
        "TLS cluster create failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    wait_until("TLS cluster_state:ok", CONDITION_TIMEOUT, || {
        nodes
            .iter()
            .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
    });
    let port = nodes[0].port.to_string();
    let cacert = pki.file("ca.pem");
    let out = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--cacert",
        &cacert,
        "--cluster-mode",
        "-t",
        "1",
        "-c",
        "2",
        "--ratio=1:0",
        "--key-pattern=S:S",
        "-n",
        "allkeys",
        "--key-minimum=1",
        "--key-maximum=300",
        "--hide-histogram",
    ])
    .run();
    assert!(out.status.success(), "{}", describe(&out));
    let total: u64 = nodes
        .iter()
        .map(|n| n.cli(&["DBSIZE"]).parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 300);
    assert!(
        nodes.iter().all(|n| n.cli(&["DBSIZE"]) != "0"),
        "every master got keys"
    );
}

#[test]
fn a_dead_master_does_not_end_the_run() {
    let mut cluster = Cluster::start();
    let port = cluster.seed_port();
    let run = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster-mode",
        "-t",
        "1",
        "-c",
        "2",
        "--test-time=4",
        "--ratio=1:1",
        "--key-maximum=3000",
        "--hide-histogram",
    ])
    .with_json()
    .spawn();
    wait_until("load on the cluster", CONDITION_TIMEOUT, || {
        cluster.load() > 100
    });
    // The last master dies; the two others keep serving their slots.
    let mut dead = cluster.nodes.pop().expect("three nodes");
    dead.kill_now();
    let out = run.wait(Duration::from_secs(60));
    assert!(out.status.success(), "{}", describe(&out));
    let doc = out.json();
    let totals = &doc["ALL STATS"]["Totals"];
    assert!(
        totals["Connection Errors"].as_u64().unwrap() > 0,
        "{totals}"
    );
    // Load went on after the node died: the last full second still did work.
    assert!(
        totals["Time-Serie"]["3"]["Count"].as_u64().unwrap() > 0,
        "{totals}"
    );
}

/// The closed loop at a pipeline depth (the plain path: compact in-flight entries,
/// per-connection queues) follows a resharding: MOVED and ASK answers are resent where
/// the slot went, and every reply kvbench counts is a command a master ran. A time-bound
/// run, so that the resharding lands in it however fast the machine; at its end at most
/// a pipeline per connection may have run unanswered.
#[test]
fn a_pipelined_closed_loop_follows_a_resharding() {
    let cluster = Cluster::start();
    let port = cluster.seed_port();
    let (clients, pipeline) = (4, 8);
    let run = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--cluster-mode",
        "-t",
        "1",
        "-c",
        &clients.to_string(),
        &format!("--pipeline={pipeline}"),
        "--test-time=5",
        "--ratio=1:1",
        "--key-maximum=2000",
        "--hide-histogram",
    ])
    .with_json()
    .spawn();
    wait_until("load on the cluster", CONDITION_TIMEOUT, || {
        cluster.load() > 2000
    });
    cluster.reshard(0, 1, 1000);
    let out = run.wait(Duration::from_secs(60));
    assert!(out.status.success(), "{}", describe(&out));
    let doc = out.json();
    let totals = &doc["ALL STATS"]["Totals"];
    let redirects = totals["MOVED/sec"].as_f64().unwrap() + totals["ASK/sec"].as_f64().unwrap();
    assert!(redirects > 0.0, "no MOVED or ASK seen: {totals}");
    assert_eq!(totals["Connection Errors"].as_u64(), Some(0), "{totals}");
    let counted = totals["Count"].as_u64().unwrap();
    let ran = cluster.load();
    let unanswered = (clients * pipeline * cluster.nodes.len()) as u64;
    assert!(
        counted <= ran && ran <= counted + unanswered,
        "kvbench counted {counted} replies, the masters ran {ran} SETs and GETs"
    );
}

/// Every request a client generates while one of its connections is full waits for that
/// connection with the keys it was generated with: the arbitrary command's `__key__`
/// and a multi-key GET's keys live in the generator, so those requests are held (the
/// generator stops) rather than queued (it would move on and they would be sent with
/// later keys). With a sequential key pattern every key from 1 to N is set once.
#[test]
fn requests_waiting_for_a_full_connection_keep_their_own_keys() {
    let cluster = Cluster::start();
    let port = cluster.seed_port();
    for (name, args) in [
        (
            "--command",
            vec![
                "--command=SET __key__ __data__",
                "--command-key-pattern=S",
                "--key-minimum=1",
                "--key-maximum=100000",
                "-n",
                "600",
            ],
        ),
        (
            "plain SETs",
            vec![
                "--ratio=1:0",
                "--key-pattern=S:S",
                "--key-minimum=1",
                "--key-maximum=100000",
                "-n",
                "600",
            ],
        ),
    ] {
        for node in &cluster.nodes {
            node.flushall();
        }
        let mut all = vec![
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "1",
            "--pipeline=16",
            "--hide-histogram",
        ];
        all.extend(args);
        let out = kvbench(&all).run();
        assert!(out.status.success(), "{name}: {}", describe(&out));
        let keys: u64 = cluster.nodes.iter().map(|n| n.dbsize()).sum();
        assert_eq!(keys, 600, "{name}: distinct keys set");
    }
}

/// A seed node that accepts and never answers (a stopped server) ends the discovery at
/// `--connection-timeout`, and the error says so in words (it waited a fixed 5 s and
/// printed the OS error "Resource temporarily unavailable").
#[test]
fn discovery_waits_for_the_connection_timeout_and_says_so() {
    let server = RedisServer::start();
    let pid = server.pid() as libc::pid_t;
    // SAFETY: kill(2) on the PID of the server this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let started = std::time::Instant::now();
    let out = kvbench_at(
        server.port,
        &[
            "-n",
            "10",
            "--cluster-mode",
            "--connection-timeout=1",
            "--hide-histogram",
        ],
    )
    .with_json()
    .run();
    let took = started.elapsed();
    // SAFETY: as above; the server must run again to be stopped cleanly.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no answer to CLUSTER SLOTS from")
            && stderr.contains("within 1 s (--connection-timeout)"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(4), "took {took:?}");
    // The JSON file asked for is written all the same, saying why it is empty.
    let stopped = out.json()["ALL STATS"]["Runtime"]["Stopped by error"].clone();
    assert!(
        stopped
            .as_str()
            .is_some_and(|e| e.contains("CLUSTER SLOTS")),
        "{stopped}"
    );
}

/// Every front end with a cluster mode writes its JSON file when the discovery fails
/// before any run begins, with the error in it: the file never keeps an older run's.
#[test]
fn a_failed_discovery_still_writes_the_json_file() {
    let port = common::closed_port().to_string();
    for args in [
        &["-s", "127.0.0.1", "-p", &port, "--cluster-mode", "-n", "10"][..],
        &[
            "redis-benchmark",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "--cluster",
            "-n",
            "10",
        ][..],
        &[
            "zbench",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-mode",
            "query",
            "-oss-cluster",
        ][..],
    ] {
        let out = kvbench(args).with_json().run();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.describe());
        let stopped = out.json()["ALL STATS"]["Runtime"]["Stopped by error"].clone();
        assert!(
            stopped
                .as_str()
                .is_some_and(|e| e.to_lowercase().contains("connection refused")
                    && (e.contains("cannot connect") || e.contains("Could not connect"))),
            "{args:?}: {stopped}"
        );
    }
}

/// A master killed mid-run whose replica takes over: the client, retrying the dead
/// address once a second, also asks a live master for the slot map, and sends the dead
/// master's slots to the promoted replica once the failover is done (it retried the dead
/// address to the end of the run, a third of the load lost as connection errors).
#[test]
fn a_failover_is_followed_to_the_promoted_replica() {
    let mut cluster = RedisCluster::start();
    for node in &cluster.nodes {
        node.cli(&["CONFIG", "SET", "cluster-node-timeout", "1000"]);
        node.cli(&["CONFIG", "SET", "cluster-require-full-coverage", "no"]);
    }
    let replica = RedisServer::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "1000",
        "--cluster-require-full-coverage",
        "no",
    ]);
    let master_id = cluster.nodes[2].cli(&["CLUSTER", "MYID"]);
    let added = Command::new("redis-cli")
        .args([
            "--cluster",
            "add-node",
            &replica.addr(),
            &cluster.nodes[0].addr(),
        ])
        .args(["--cluster-slave", "--cluster-master-id", &master_id])
        .output()
        .expect("redis-cli runs");
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stdout)
    );
    wait_until("the replica in sync", CONDITION_TIMEOUT, || {
        replica
            .cli(&["INFO", "replication"])
            .contains("master_link_status:up")
    });
    let run = kvbench_at(
        cluster.nodes[0].port,
        &[
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=15",
            "--rate=2000",
        ],
    )
    .args(&["--hide-histogram"])
    .spawn();
    wait_until("load on the cluster", CONDITION_TIMEOUT, || {
        cluster.calls("get") > 1000
    });
    cluster.nodes[2].kill_now();
    wait_until("the replica promoted", CONDITION_TIMEOUT, || {
        replica
            .cli(&["INFO", "replication"])
            .contains("role:master")
    });
    let served = |r: &RedisServer| {
        let stats = r.commandstats();
        stats.get("get").copied().unwrap_or(0) + stats.get("set").copied().unwrap_or(0)
    };
    wait_until(
        "requests on the promoted replica",
        CONDITION_TIMEOUT,
        || served(&replica) > 100,
    );
    let out = run.wait(Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", out.describe());
    // The requests the dead master cost are said at the end, not only in the table.
    assert!(
        out.stderr_text()
            .contains("connections were lost or refused"),
        "{}",
        out.describe()
    );
}

/// With `--reconnect-on-error` a cluster that goes down (a master dead, no replica to
/// promote) answers CLUSTERDOWN for a while; the replies count as error replies and the
/// run goes on to its end, as it would through a failover. Without the flag CLUSTERDOWN
/// ends the run (`a_dead_master_does_not_end_the_run` covers the dead master itself).
#[test]
fn clusterdown_with_reconnect_on_error_does_not_end_the_run() {
    let mut cluster = RedisCluster::start();
    for node in &cluster.nodes {
        node.cli(&["CONFIG", "SET", "cluster-node-timeout", "1000"]);
    }
    let run = kvbench_at(
        cluster.nodes[0].port,
        &[
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=8",
            "--rate=1000",
        ],
    )
    .args(&["--reconnect-on-error", "--hide-histogram"])
    .spawn();
    wait_until("load on the cluster", CONDITION_TIMEOUT, || {
        cluster.calls("get") > 500
    });
    cluster.nodes[2].kill_now();
    wait_until("the cluster down", CONDITION_TIMEOUT, || {
        cluster.nodes[0]
            .cli(&["CLUSTER", "INFO"])
            .contains("cluster_state:fail")
    });
    let out = run.wait(Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", out.describe());
    // The CLUSTERDOWN replies were counted as error replies (their own lines may be
    // among those the error log summarises as "N more since the last report").
    assert!(
        out.stderr_text().contains("requests got an error reply"),
        "{}",
        out.describe()
    );
}
