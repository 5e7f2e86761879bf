//! A throwaway Redis Cluster: three cluster-enabled redis-servers on free ports joined
//! with `redis-cli --cluster create` (no replicas), ready once every node says
//! `cluster_state:ok`. Dropping it stops the servers.

use std::collections::HashMap;
use std::process::Command;

use super::{CONDITION_TIMEOUT, RedisServer, wait_until};

/// Three masters sharing the 16384 slots.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts three nodes and joins them; panics with redis-cli's output if that fails.
    pub fn start() -> RedisCluster {
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| {
                // The harness gives each node a free bus port (port + 10000 may be past
                // 65535), a new one on each start attempt.
                RedisServer::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "5000",
                ])
            })
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| n.addr()).collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .arg("--cluster-yes")
            .output()
            .expect("redis-cli runs");
        assert!(
            out.status.success(),
            "cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        wait_until("cluster_state:ok", CONDITION_TIMEOUT, || {
            nodes
                .iter()
                .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        });
        RedisCluster { nodes }
    }

    /// Moves `slots` slots (keys and all) from node `from` to node `to`: [`reshard`].
    pub fn reshard(&self, from: usize, to: usize, slots: u32) {
        reshard(&self.nodes, from, to, slots);
    }

    /// Calls of `command` summed over the masters (`INFO commandstats`).
    pub fn calls(&self, command: &str) -> u64 {
        self.per_node(command).iter().sum()
    }

    /// Calls of `command` on each master, in node order.
    pub fn per_node(&self, command: &str) -> Vec<u64> {
        self.nodes
            .iter()
            .map(|n| n.commandstats().get(command).copied().unwrap_or(0))
            .collect()
    }

    /// Every command's calls summed over the masters.
    pub fn commandstats(&self) -> HashMap<String, u64> {
        let mut all = HashMap::new();
        for node in &self.nodes {
            for (command, calls) in node.commandstats() {
                *all.entry(command).or_insert(0) += calls;
            }
        }
        all
    }

    /// Zeroes every master's statistics and empties its keyspace.
    pub fn reset(&self) {
        for node in &self.nodes {
            node.flushall();
            node.config_resetstat();
        }
    }

    /// Keys summed over the masters.
    pub fn dbsize(&self) -> u64 {
        self.nodes.iter().map(RedisServer::dbsize).sum()
    }
}

/// Moves `slots` slots (keys and all) from cluster node `from` to node `to` with
/// `redis-cli --cluster reshard`, while whatever runs goes on; panics with its output on
/// failure.
pub fn reshard(nodes: &[RedisServer], from: usize, to: usize, slots: u32) {
    let from = nodes[from].cli(&["CLUSTER", "MYID"]);
    let to = nodes[to].cli(&["CLUSTER", "MYID"]);
    let out = Command::new("redis-cli")
        .args(["--cluster", "reshard", &nodes[0].addr()])
        .args(["--cluster-from", &from, "--cluster-to", &to])
        .args(["--cluster-slots", &slots.to_string(), "--cluster-yes"])
        .output()
        .expect("redis-cli runs");
    assert!(
        out.status.success(),
        "reshard failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
