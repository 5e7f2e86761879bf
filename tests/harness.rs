//! Checks the integration-test harness itself: servers start, answer and are counted.

mod common;

use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

use common::{
    Memcached, RedisServer, closed_port, free_port, kvbench, parse_commandstats, run_with_timeout,
    wait_until,
};

#[test]
fn free_ports_are_distinct_and_bindable() {
    let a = free_port();
    let b = free_port();
    assert_ne!(a, b);
    std::net::TcpListener::bind(("127.0.0.1", a)).expect("a free port can be bound");
}

#[test]
fn closed_port_refuses_connections() {
    let port = closed_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err());
}

#[test]
fn redis_counts_what_redis_cli_sent() {
    let redis = RedisServer::start();
    assert_eq!(redis.cli(&["PING"]), "PONG");
    assert_eq!(redis.dbsize(), 0);
    assert_eq!(redis.cli(&["SET", "harness-key", "v"]), "OK");
    assert_eq!(redis.dbsize(), 1);
    assert_eq!(redis.commandstats().get("set"), Some(&1));
    assert_eq!(redis.cli(&["GET", "harness-key"]), "v");
    assert_eq!(redis.commandstats().get("get"), Some(&1));

    redis.config_resetstat();
    assert_eq!(redis.commandstats().get("set"), None);
    redis.flushall();
    assert_eq!(redis.dbsize(), 0);
}

#[test]
fn redis_servers_are_independent_and_cleaned_up() {
    let a = RedisServer::start();
    let b = RedisServer::start();
    assert_ne!(a.port, b.port);
    a.cli(&["SET", "only-in-a", "1"]);
    assert_eq!(a.dbsize(), 1);
    assert_eq!(b.dbsize(), 0);

    let (port, dir) = (a.port, a.dir().to_path_buf());
    drop(a);
    assert!(!dir.exists(), "temp dir {} left behind", dir.display());
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err(),
        "redis-server still listening on {port} after drop"
    );
}

#[test]
fn redis_with_password_authenticates_cli() {
    let redis = RedisServer::start_with(&["--requirepass", "s3cret"]);
    assert_eq!(redis.cli(&["SET", "k", "v"]), "OK");
    assert_eq!(redis.dbsize(), 1);
}

#[test]
fn commandstats_parses_info_lines() {
    let info = "# Commandstats\r\n\
                cmdstat_set:calls=10000,usec=5000,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n\
                cmdstat_config|resetstat:calls=2,usec=3,usec_per_call=1.5,rejected_calls=0,failed_calls=0\r\n";
    let stats = parse_commandstats(info);
    assert_eq!(stats.get("set"), Some(&10000));
    assert_eq!(stats.get("config|resetstat"), Some(&2));
    assert_eq!(stats.len(), 2);
}

#[test]
fn memcached_reports_stats() {
    let mc = Memcached::start();
    let stats = mc.stats();
    assert_eq!(stats.get("curr_items"), Some(&0));
    assert!(stats.contains_key("cmd_get"), "stats: {stats:?}");
    assert!(mc.stats_raw().contains_key("version"));
    mc.flush_all();
}

#[test]
fn kvbench_binary_is_built_for_tests() {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_kvbench"));
    assert!(path.is_file(), "{} missing", path.display());
    let run = kvbench(&["--version"]).ok();
    assert!(
        run.stdout_text().starts_with("kvbench "),
        "{}",
        run.describe()
    );
}

#[test]
fn runs_read_their_json_and_background_runs_are_watched() {
    let redis = RedisServer::start();
    let run = common::kvbench_at(redis.port, &["-t", "1", "-c", "1", "-n", "10"])
        .with_json()
        .ok();
    assert_eq!(run.json()["ALL STATS"]["Totals"]["Count"], 10);
    let bg = common::kvbench_at(redis.port, &["-t", "1", "-c", "1", "--test-time=30"]).spawn();
    bg.wait_for_stderr("Launching threads");
    wait_until("load on the server", common::CONDITION_TIMEOUT, || {
        redis.calls() > 100
    });
    // Dropping it kills it: the test does not wait out its 30 s.
    drop(bg);
}

#[test]
#[should_panic(expected = "timed out after")]
fn wait_until_gives_up_at_its_deadline() {
    wait_until("nothing", Duration::from_millis(100), || false);
}

#[test]
fn run_with_timeout_captures_large_output_without_blocking() {
    let mut cmd = Command::new("head");
    cmd.args(["-c", "1000000", "/dev/zero"]);
    let out = run_with_timeout(cmd, Duration::from_secs(20));
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 1_000_000);
}

#[test]
#[should_panic(expected = "timed out")]
fn run_with_timeout_kills_a_hung_child() {
    let mut cmd = Command::new("sleep");
    cmd.arg("30");
    run_with_timeout(cmd, Duration::from_millis(300));
}
