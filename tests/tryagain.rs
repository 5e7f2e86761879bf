//! `-TRYAGAIN` from a real three-master cluster: a slot is left half migrated (MIGRATING
//! on its owner, IMPORTING on the target, some of its keys moved), so MGETs over keys of
//! that slot's hash tag get `-ASK` from the owner and `-TRYAGAIN` from the target; kvbench retries them with a back-off and counts
//! each. Once the test finishes the migration the retries succeed: every request is
//! answered, none is an error, and the count kvbench reports is what the servers say
//! they refused (`INFO errorstats`).

mod common;

use std::time::Duration;

use kvbench::report::html::numbers::count_text;

use common::{RedisCluster, RedisServer, TestDir, describe, kvbench, read_json, wait_until};

const TAG: &str = "{tg}";
const KEYS: u64 = 40;
/// Requests per client, two clients.
const REQUESTS: u64 = 300;
const CLIENTS: u64 = 2;

/// `errorstat_TRYAGAIN:count=N` of one node.
fn tryagains(node: &RedisServer) -> u64 {
    node.cli(&["INFO", "errorstats"])
        .lines()
        .find_map(|l| l.strip_prefix("errorstat_TRYAGAIN:count="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// The index of the node that serves `slot` (from `CLUSTER NODES`).
fn owner_of(cluster: &RedisCluster, slot: u16) -> usize {
    let nodes = cluster.nodes[0].cli(&["CLUSTER", "NODES"]);
    for line in nodes.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let addr = fields[1].split('@').next().expect("ip:port");
        let serves = fields[8..].iter().any(|range| {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            match (lo.parse::<u16>(), hi.parse::<u16>()) {
                (Ok(lo), Ok(hi)) => (lo..=hi).contains(&slot),
                _ => false,
            }
        });
        if serves {
            return cluster
                .nodes
                .iter()
                .position(|n| n.addr() == addr)
                .expect("the owner is one of ours");
        }
    }
    panic!("no node serves slot {slot}:\n{nodes}");
}

fn key(i: u64) -> String {
    format!("{TAG}memtier-{i}")
}

/// `MIGRATE` keys `ids` from `from` to `to`.
fn migrate(from: &RedisServer, to: &RedisServer, ids: impl Iterator<Item = u64>) {
    let port = to.port.to_string();
    let mut args: Vec<String> = ["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(ids.map(key));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(from.cli(&args), "OK");
}

/// A slot left half migrated: the indices of its owner and of the node importing it.
struct Migration {
    src: usize,
    dst: usize,
    slot: String,
    dst_id: String,
}

/// Puts `KEYS` keys of [`TAG`]'s slot on their owner, marks the slot MIGRATING there and
/// IMPORTING on the next node, and moves half of the keys: an MGET over both halves gets
/// -TRYAGAIN.
fn half_migrate(cluster: &RedisCluster) -> Migration {
    let slot: u16 = cluster.nodes[0]
        .cli(&["CLUSTER", "KEYSLOT", TAG])
        .parse()
        .expect("a slot number");
    let a = owner_of(cluster, slot);
    let b = (a + 1) % 3;
    let (src, dst) = (&cluster.nodes[a], &cluster.nodes[b]);
    let mut mset = vec!["MSET".to_string()];
    for i in 1..=KEYS {
        mset.push(key(i));
        mset.push(format!("value-{i}"));
    }
    let mset: Vec<&str> = mset.iter().map(String::as_str).collect();
    assert_eq!(src.cli(&mset), "OK");
    let src_id = src.cli(&["CLUSTER", "MYID"]);
    let dst_id = dst.cli(&["CLUSTER", "MYID"]);
    let slot_text = slot.to_string();
    assert_eq!(
        dst.cli(&["CLUSTER", "SETSLOT", &slot_text, "IMPORTING", &src_id]),
        "OK"
    );
    assert_eq!(
        src.cli(&["CLUSTER", "SETSLOT", &slot_text, "MIGRATING", &dst_id]),
        "OK"
    );
    migrate(src, dst, (1..=KEYS).filter(|i| i % 2 == 0));
    Migration {
        src: a,
        dst: b,
        slot: slot_text,
        dst_id,
    }
}

/// Moves the other half and gives the slot to the importing node everywhere.
fn finish_migration(cluster: &RedisCluster, m: &Migration) {
    let (src, dst) = (&cluster.nodes[m.src], &cluster.nodes[m.dst]);
    migrate(src, dst, (1..=KEYS).filter(|i| i % 2 == 1));
    for node in [dst, src, &cluster.nodes[3 - m.src - m.dst]] {
        assert_eq!(
            node.cli(&["CLUSTER", "SETSLOT", &m.slot, "NODE", &m.dst_id]),
            "OK"
        );
    }
}

/// The MGET workload over the half-migrated slot, against `port`.
fn mget_args(port: &str) -> Vec<String> {
    [
        "-s",
        "127.0.0.1",
        "-p",
        port,
        "--cluster-mode",
        &format!("--key-prefix={TAG}memtier-"),
        "--key-minimum=1",
        &format!("--key-maximum={KEYS}"),
        "--key-pattern=R:R",
        // memtier's rule: one MGET carries the ratio's gets, up to --multi-key-get.
        "--ratio=0:4",
        "--multi-key-get=4",
        "-n",
        &REQUESTS.to_string(),
        "-c",
        &CLIENTS.to_string(),
        "-t",
        "1",
        "--hide-histogram",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn tryagain_during_a_migration_is_retried_and_counted() {
    let cluster = RedisCluster::start();
    let m = half_migrate(&cluster);
    let (src, dst) = (&cluster.nodes[m.src], &cluster.nodes[m.dst]);
    let port = src.port.to_string();
    let bg = kvbench(&[]).args(&mget_args(&port)).with_json().spawn();
    wait_until(
        "the owner answers -TRYAGAIN",
        Duration::from_secs(30),
        || {
            let stderr = bg.stderr_so_far();
            assert!(
                !stderr.contains("error"),
                "{stderr}\n{}",
                bg.stdout_so_far()
            );
            // The importing node answers -TRYAGAIN to an ASKING MGET missing some keys.
            tryagains(dst) > 0
        },
    );
    // Finish the migration: the retries find every key on the new owner.
    finish_migration(&cluster, &m);
    let run = bg.wait(Duration::from_secs(60));
    assert!(run.status.success(), "{}", describe(&run.out));
    let json = run.json();
    let gets = &json["ALL STATS"]["Gets"];
    let counted = gets["TRYAGAIN"].as_u64().expect("a TRYAGAIN count");
    let refused: u64 = cluster.nodes.iter().map(tryagains).sum();
    assert!(counted > 0, "{gets}");
    assert_eq!(
        counted, refused,
        "kvbench's count against the servers' errorstats"
    );
    // Every request answered once (no retry counted as a success, none dropped).
    assert_eq!(gets["Count"].as_u64(), Some(REQUESTS * CLIENTS), "{gets}");
    assert_eq!(gets["Misses/sec"].as_f64(), Some(0.0), "{gets}");
    let executed: u64 = cluster.per_node("mget").iter().sum();
    assert_eq!(executed, REQUESTS * CLIENTS, "MGETs the servers executed");
    let stdout = String::from_utf8_lossy(&run.out.stdout);
    assert!(stdout.contains("TRYAGAIN/sec"), "{stdout}");
}

/// Two shards in the same migration: `kvbench merge` sums their TRYAGAIN counts (what the
/// servers refused) and `kvbench report` shows the merged count.
#[test]
fn merged_shards_sum_their_tryagain_and_the_report_shows_it() {
    let cluster = RedisCluster::start();
    let m = half_migrate(&cluster);
    let dir = TestDir::new("tryagain-merge");
    let port = cluster.nodes[m.src].port.to_string();
    let shards: Vec<_> = (0..2)
        .map(|i| {
            kvbench(&[])
                .args(&mget_args(&port))
                .args(&[
                    format!("--shard={i}/2"),
                    format!("--json-out-file={}", dir.file_arg(&format!("s{i}.json"))),
                ])
                .spawn()
        })
        .collect();
    wait_until(
        "the owner answers -TRYAGAIN",
        Duration::from_secs(30),
        || tryagains(&cluster.nodes[m.dst]) > 0,
    );
    finish_migration(&cluster, &m);
    for shard in shards {
        let run = shard.wait(Duration::from_secs(60));
        assert!(run.status.success(), "{}", describe(&run.out));
    }
    let merged = dir.file("merged.json");
    let inputs = [dir.file_arg("s0.json"), dir.file_arg("s1.json")];
    kvbench(&[
        "merge",
        &format!("--json-out-file={}", merged.display()),
        &inputs[0],
        &inputs[1],
    ])
    .ok();
    let json = read_json(&merged);
    let gets = &json["ALL STATS"]["Gets"];
    let refused: u64 = cluster.nodes.iter().map(tryagains).sum();
    assert!(refused > 0);
    assert_eq!(gets["TRYAGAIN"].as_u64(), Some(refused), "{gets}");
    assert_eq!(
        json["ALL STATS"]["Totals"]["TRYAGAIN"].as_u64(),
        Some(refused)
    );
    assert_eq!(
        gets["Count"].as_u64(),
        Some(2 * REQUESTS * CLIENTS),
        "{gets}"
    );
    let executed: u64 = cluster.per_node("mget").iter().sum();
    assert_eq!(
        executed,
        2 * REQUESTS * CLIENTS,
        "MGETs the servers executed"
    );

    let page = dir.file("report.html");
    kvbench(&[
        "report",
        &merged.display().to_string(),
        "-o",
        &page.display().to_string(),
    ])
    .ok();
    let html = std::fs::read_to_string(&page).expect("the report was written");
    assert!(html.contains("<th>TRYAGAIN</th>"), "{html:.3000}");
    assert!(
        html.contains(&format!("<td>{}</td>", count_text(refused as f64))),
        "{html:.3000}"
    );
}

#[test]
fn multi_key_get_in_cluster_mode_needs_a_hash_tag() {
    let run = kvbench(&["--cluster-mode", "--multi-key-get=3"]).run();
    assert_eq!(run.status.code(), Some(1), "{}", describe(&run.out));
    assert!(String::from_utf8_lossy(&run.out.stderr).contains("hash tag"));
}

/// A migration left half done: a request whose every try gets `-TRYAGAIN` is, after the
/// last, an error reply counted as any other (in `Count`), where it went uncounted ("every one of the 22 replies was an error" counted
/// the SETs against the MGETs' errors, and a GET-only run read "answered nothing").
#[test]
fn a_request_that_exhausts_its_tryagain_tries_is_counted_as_an_error_reply() {
    let cluster = RedisCluster::start();
    let m = half_migrate(&cluster);
    let port = cluster.nodes[m.src].port.to_string();
    let mut args = mget_args(&port);
    for (flag, value) in [("-n", "3"), ("-c", "1")] {
        let at = args.iter().position(|a| a == flag).expect("the flag") + 1;
        args[at] = value.to_string();
    }
    let run = kvbench(&[]).args(&args).with_json().run();
    let json = run.json();
    let gets = &json["ALL STATS"]["Gets"];
    assert_eq!(
        gets["Count"].as_u64(),
        Some(3),
        "{gets}\n{}",
        run.describe()
    );
    let stderr = run.stderr_text();
    // MGETs whose four keys all stayed on the owner are answered (1 in 16); the others
    // end in -TRYAGAIN, reported as the server's error reply.
    if !run.status.success() {
        assert!(
            stderr.contains("every one of the 3 replies was an error"),
            "{}",
            run.describe()
        );
    }
    if stderr.contains("error") {
        assert!(
            stderr.contains("replied with an error: TRYAGAIN"),
            "{}",
            run.describe()
        );
    }
    assert!(!stderr.contains("answered nothing"), "{}", run.describe());
}
