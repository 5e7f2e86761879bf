//! A ready connection is polled for reading alone, and for writing only while its write
//! buffer holds bytes the socket would not take. Against real servers started here:
//! batches of large values, far more than a socket takes at once, still all arrive (a
//! connection that stopped asking for write room would stall, and the run would not
//! end), counted by the servers themselves; and under strace, the socket is
//! re-registered for reading alone once per connection when small requests never fill it.

mod common;

use common::{Memcached, RedisServer, TestDir, kvbench_at, strace_trace, strace_unusable};

/// Runs `kvbench args...` under `strace -f` and returns its `epoll_ctl` calls that
/// modified a registration (`EPOLL_CTL_MOD`), or `None` where strace cannot trace.
/// Panics unless it exits 0.
fn registrations_modified(dir: &TestDir, args: &[String]) -> Option<u64> {
    if let Some(reason) = strace_unusable() {
        println!("EPOLL_CTL_MOD not counted: {reason}");
        return None;
    }
    let text = strace_trace(
        dir,
        "kvbench",
        "epoll_ctl",
        env!("CARGO_BIN_EXE_kvbench"),
        args,
    );
    Some(text.lines().filter(|l| l.contains("EPOLL_CTL_MOD")).count() as u64)
}

#[test]
fn redis_takes_every_set_of_batches_larger_than_a_socket_holds() {
    // 16 SETs of 1 MB are a 16 MB write per connection: the socket takes a part of it,
    // the connection waits for room (polled for writing) and goes on.
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "3",
            "-n",
            "48",
            "--ratio=1:0",
            "-d",
            "1000000",
            "--key-pattern=P:P",
            "--key-minimum=1",
            "--key-maximum=20",
            "--pipeline=16",
            "--hide-histogram",
        ],
    )
    .with_json()
    .ok();
    assert_eq!(server.commandstats().get("set").copied(), Some(144));
    assert_eq!(server.dbsize(), 20);
    let totals = &run.json()["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"], 144, "{totals}");
}

#[test]
fn memcached_takes_every_set_of_batches_larger_than_a_socket_holds() {
    for protocol in ["memcache_text", "memcache_binary"] {
        let server = Memcached::start();
        kvbench_at(
            server.port,
            &[
                "-P",
                protocol,
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "32",
                "--ratio=1:0",
                "-d",
                "500000",
                "--pipeline=16",
                "--hide-histogram",
            ],
        )
        .ok();
        let stats = server.stats();
        assert_eq!(
            stats.get("cmd_set").copied(),
            Some(64),
            "{protocol}: {stats:?}"
        );
    }
}

#[test]
fn small_requests_drop_the_write_side_once_per_connection() {
    // Nothing ever fills these sockets: each connection is re-registered for reading
    // alone after its first write, and never again.
    let server = RedisServer::start();
    let dir = TestDir::new("write-interest");
    let connections = 4u64;
    let args: Vec<String> = [
        "-s",
        "127.0.0.1",
        "-p",
        &server.port.to_string(),
        "-t",
        "1",
        "-c",
        &connections.to_string(),
        "-n",
        "2000",
        "--ratio=1:10",
        "-d",
        "32",
        "--pipeline=16",
        "--hide-histogram",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let Some(modified) = registrations_modified(&dir, &args) else {
        return;
    };
    let stats = server.commandstats();
    let answered = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    assert_eq!(answered, 2000 * connections, "{stats:?}");
    assert_eq!(
        modified, connections,
        "{modified} EPOLL_CTL_MOD for {connections} connections"
    );
}
