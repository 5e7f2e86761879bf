//! `kvbench zbench -oss-cluster` while slots migrate: a real three-master cluster, a
//! reshard (`redis-cli --cluster reshard`) run in the middle of a load and of a query
//! run. MOVED and ASK replies are followed (the command sent again to the slot's new
//! owner), counted in the JSON, and never errors; every key lands, every query runs once.

mod common;

use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisCluster, describe, kvbench, wait_until};
use serde_json::Value;

/// MOVED/sec + ASK/sec over every row of the run's JSON.
fn redirects_per_sec(json: &Value) -> f64 {
    let Some(rows) = json["ALL STATS"].as_object() else {
        panic!("no ALL STATS in {json}");
    };
    rows.values()
        .map(|row| {
            row["MOVED/sec"].as_f64().unwrap_or(0.0) + row["ASK/sec"].as_f64().unwrap_or(0.0)
        })
        .sum()
}

/// The value after `label` in zbench's summary block.
fn summary_number(stdout: &str, label: &str) -> f64 {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in {stdout}"));
    line.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{label}: {line:?}"))
}

#[test]
fn slots_migrated_mid_run_are_followed_not_errors() {
    let cluster = RedisCluster::start();
    let port = cluster.nodes[0].port.to_string();
    // Key id N lives in slot N: 8000 keys on nodes 0 and 1 (node 1 from slot 5461),
    // loaded in order at 1000/s (8 s). Slots 5461.. move to node 2 before the load
    // reaches them (5 s of room for the reshard on a loaded machine): the clients' slot
    // maps are stale then.
    let load = kvbench(&["zbench", "-p", &port, "-oss-cluster"])
        .args(&["-mode", "load", "-r", "8000", "-c", "4", "-rps", "1000"])
        .timeout(Duration::from_secs(120))
        .with_json()
        .spawn();
    wait_until("ZADDs on the cluster", CONDITION_TIMEOUT, || {
        cluster.calls("zadd") > 600
    });
    cluster.reshard(1, 2, 1500);
    let run = load.wait(Duration::from_secs(120));
    assert!(run.status.success(), "{}", describe(&run.out));
    let stdout = run.stdout_text();
    assert_eq!(summary_number(&stdout, "Total Errors"), 0.0, "{stdout}");
    assert_eq!(
        summary_number(&stdout, "Total Issued commands"),
        8000.0,
        "{stdout}"
    );
    // Every key landed once: a redirected ZADD ran on the slot's new owner only.
    assert_eq!(cluster.dbsize(), 8000);
    assert_eq!(cluster.calls("zadd"), 8000);
    let json = run.json();
    assert!(
        redirects_per_sec(&json) > 0.0,
        "no MOVED or ASK: {}",
        json["ALL STATS"]["Totals"]["MOVED/sec"]
    );

    // Queries (no MULTI) while the slots move back.
    for node in &cluster.nodes {
        node.config_resetstat();
    }
    let query = kvbench(&["zbench", "-p", &port, "-oss-cluster"])
        .args(&["-mode", "query", "-r", "8000", "-n", "6000", "-c", "4"])
        .args(&["-pipeline", "4", "-rps", "1500"])
        .timeout(Duration::from_secs(120))
        .with_json()
        .spawn();
    wait_until("queries on the cluster", CONDITION_TIMEOUT, || {
        cluster.calls("zrangebylex") > 600
    });
    cluster.reshard(2, 1, 1500);
    let run = query.wait(Duration::from_secs(120));
    assert!(run.status.success(), "{}", describe(&run.out));
    let stdout = run.stdout_text();
    assert_eq!(summary_number(&stdout, "Total Errors"), 0.0, "{stdout}");
    assert_eq!(cluster.calls("zrangebylex"), 6000);
    let json = run.json();
    assert!(
        redirects_per_sec(&json) > 0.0,
        "no MOVED or ASK: {}",
        json["ALL STATS"]["Totals"]["MOVED/sec"]
    );
}
