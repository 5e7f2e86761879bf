//! Replica visibility against a real primary and replica (`--replicaof`): the lag is
//! reported for every tracked write, racing writes of a few keys from many clients give no
//! false timeouts, the lag grows when the replica is paused (`DEBUG SLEEP` on it), and a replica that stopped replicating (`REPLICAOF NO ONE`) yields timeouts for
//! every tracked write, not a hang; one that stops answering (SIGSTOP) gives timeouts,
//! not a "no reply" error. The wait for the last tracked writes after the load is not
//! the load's: Ops/sec, the duration and the seconds read as without the flag.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::{RedisServer, describe, kvbench, wait_until};
use serde_json::Value;

/// A primary and a replica of it, linked.
fn pair() -> (RedisServer, RedisServer) {
    let primary = RedisServer::start();
    let port = primary.port.to_string();
    let replica = RedisServer::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--enable-debug-command",
        "yes",
    ]);
    wait_until("the replica's link is up", Duration::from_secs(30), || {
        replica
            .cli(&["INFO", "replication"])
            .contains("master_link_status:up")
    });
    (primary, replica)
}

fn args<'a>(primary: &'a str, replica: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "-s",
        "127.0.0.1",
        "-p",
        primary,
        "--visibility-from",
        replica,
        "--ratio=1:0",
        "-t",
        "1",
        "--hide-histogram",
    ];
    args.extend_from_slice(extra);
    args
}

/// The `"Replica Visibility"` object of ALL STATS.
fn visibility(json: &Value) -> &Value {
    &json["ALL STATS"]["Replica Visibility"]
}

fn lag_ms(vis: &Value, key: &str) -> f64 {
    vis["Lag"]["Percentile Latencies"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("Lag/{key} in {vis}"))
}

#[test]
fn every_tracked_write_is_seen_on_a_healthy_replica() {
    let (primary, replica) = pair();
    let port = primary.port.to_string();
    let from = replica.addr();
    let json = kvbench(&args(
        &port,
        &from,
        &["-n", "1000", "-c", "2", "--visibility-ratio=5"],
    ))
    .with_json()
    .ok()
    .json();
    let vis = visibility(&json);
    // 2 clients x 1000 SETs, one in 5 tracked: every one seen or accounted for.
    let seen = vis["Lag"]["Count"].as_u64().expect("Count");
    assert_eq!(
        seen + vis["Timeouts"].as_u64().unwrap() + vis["Untracked"].as_u64().unwrap(),
        400
    );
    assert_eq!(vis["Timeouts"].as_u64(), Some(0), "{vis}");
    assert!(seen > 0);
    assert_eq!(primary.commandstats().get("set").copied(), Some(2000));
    // The probe reads the replica at least once per write it saw there, and the primary
    // only for a write of the key that raced with the tracked one (undecided).
    let replica_gets = replica.commandstats().get("get").copied().unwrap_or(0);
    assert!(replica_gets >= seen);
    assert!(primary.commandstats().get("get").copied().unwrap_or(0) <= replica_gets);
    assert!(
        vis["Lag"]["Time-Serie"]
            .as_object()
            .is_some_and(|s| !s.is_empty())
    );
    assert!(
        vis["Lag"]["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
            .as_str()
            .is_some_and(|h| h.starts_with("HIST"))
    );
}

#[test]
fn racing_writes_to_a_few_keys_give_no_false_timeouts() {
    // Many clients on two threads, one seed (they write the same keys in step) and four
    // keys: writes of one key race on the primary all the time, and every write is
    // tracked. A tracked write overwritten before the replica was polled, or by a racing
    // write stamped earlier, is still seen, never a timeout.
    let (primary, replica) = pair();
    let port = primary.port.to_string();
    let from = replica.addr();
    for run in 0..2 {
        primary.config_resetstat();
        let json = kvbench(&[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--visibility-from",
            &from,
            "--ratio=1:0",
            "-t",
            "2",
            "-c",
            "10",
            "-n",
            "300",
            "--key-minimum=1",
            "--key-maximum=4",
            "--key-pattern=R:R",
            "--visibility-ratio=1",
            "--visibility-timeout=3000",
            "--hide-histogram",
        ])
        .timeout(Duration::from_secs(90))
        .with_json()
        .ok()
        .json();
        let vis = visibility(&json);
        let seen = vis["Lag"]["Count"].as_u64().expect("Count");
        let untracked = vis["Untracked"].as_u64().expect("Untracked");
        assert_eq!(vis["Timeouts"].as_u64(), Some(0), "run {run}: {vis}");
        assert_eq!(seen + untracked, 6000, "run {run}: {vis}");
        assert!(seen > 1000, "run {run}: {vis}");
        assert_eq!(primary.commandstats().get("set").copied(), Some(6000));
    }
}

#[test]
fn the_lag_grows_while_the_replica_sleeps() {
    let (primary, replica) = pair();
    let port = primary.port.to_string();
    let from = replica.addr();
    let bg = kvbench(&args(
        &port,
        &from,
        // Four clients on one seed and ten keys: their writes race, as above.
        &[
            "--test-time=4",
            "-c",
            "4",
            "--key-maximum=10",
            "--visibility-ratio=20",
        ],
    ))
    .with_json()
    .spawn();
    wait_until("load reaches the primary", Duration::from_secs(20), || {
        primary.commandstats().get("set").copied().unwrap_or(0) > 500
    });
    // Pause the replica for 600 ms: writes acknowledged meanwhile wait for it.
    let started = Instant::now();
    replica.cli(&["DEBUG", "SLEEP", "0.6"]);
    assert!(started.elapsed() >= Duration::from_millis(500));
    let run = bg.wait(Duration::from_secs(60));
    assert!(run.status.success(), "{}", describe(&run.out));
    let json = run.json();
    let vis = visibility(&json);
    assert_eq!(vis["Timeouts"].as_u64(), Some(0), "{vis}");
    let max = vis["Lag"]["Max Latency"].as_f64().expect("Max Latency");
    assert!(
        max >= 300.0,
        "the sleep shows in the lag: max {max} ms in {vis}"
    );
    assert!(lag_ms(vis, "p50.00") < max, "{vis}");
}

#[test]
fn a_replica_that_stopped_replicating_gives_timeouts_not_a_hang() {
    let (primary, replica) = pair();
    assert_eq!(replica.cli(&["REPLICAOF", "NO", "ONE"]), "OK");
    let port = primary.port.to_string();
    let from = replica.addr();
    let started = Instant::now();
    let json = kvbench(&args(
        &port,
        &from,
        &[
            "-n",
            "200",
            "-c",
            "1",
            "--visibility-ratio=10",
            "--visibility-timeout=300",
        ],
    ))
    .timeout(Duration::from_secs(60))
    .with_json()
    .ok()
    .json();
    let vis = visibility(&json);
    assert_eq!(vis["Timeouts"].as_u64(), Some(20), "{vis}");
    assert_eq!(vis["Lag"]["Count"].as_u64(), Some(0), "{vis}");
    assert_eq!(replica.dbsize(), 0);
    assert!(started.elapsed() < Duration::from_secs(30));
    thread::yield_now();
}

/// A replica that stops answering (SIGSTOP: it accepts and never replies) gives timeouts
/// after `--visibility-timeout`, and neither holds the end of a `-n` run until
/// `--reply-timeout` nor ends a timed run with a "no reply" error: the polls have their
/// own deadline.
#[test]
fn a_replica_that_stops_answering_gives_timeouts_not_an_error() {
    let (primary, replica) = pair();
    replica.signal(libc::SIGSTOP);
    let port = primary.port.to_string();
    let from = replica.addr();
    let counted = kvbench(&args(
        &port,
        &from,
        &[
            "-n",
            "200",
            "-c",
            "1",
            "--visibility-ratio=10",
            "--visibility-timeout=300",
            // Past this the old end of the run failed: "no reply from ... in 3 s".
            "--reply-timeout=3",
        ],
    ))
    .timeout(Duration::from_secs(60))
    .with_json()
    .run();
    let timed = kvbench(&args(
        &port,
        &from,
        &[
            "--test-time=4",
            "-c",
            "1",
            "--visibility-ratio=50",
            "--visibility-timeout=300",
            "--reply-timeout=1",
        ],
    ))
    .timeout(Duration::from_secs(60))
    .with_json()
    .run();
    replica.signal(libc::SIGCONT);
    assert!(counted.status.success(), "{}", counted.describe());
    let json = counted.json();
    let vis = visibility(&json);
    assert_eq!(vis["Timeouts"].as_u64(), Some(20), "{vis}");
    assert_eq!(vis["Lag"]["Count"].as_u64(), Some(0), "{vis}");
    assert!(timed.status.success(), "{}", timed.describe());
    let json = timed.json();
    let vis = visibility(&json);
    assert!(vis["Timeouts"].as_u64().unwrap_or(0) > 0, "{vis}");
    assert_eq!(vis["Lag"]["Count"].as_u64(), Some(0), "{vis}");
    let sets = json["ALL STATS"]["Sets"]["Count"].as_u64().unwrap_or(0);
    assert_eq!(
        primary.commandstats().get("set").copied(),
        Some(200 + sets),
        "the primary saw both runs' writes"
    );
}

#[test]
fn one_visibility_endpoint_per_run() {
    let run = kvbench(&[
        "--visibility-from=127.0.0.1:7001",
        "--visibility-from=127.0.0.1:7002",
        "-n",
        "1",
    ])
    .run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(
        run.stderr_text().trim(),
        "error: --visibility-from takes one endpoint per run (given 2 times).",
        "{}",
        run.describe()
    );
    assert!(run.stdout_text().is_empty(), "{}", run.describe());
}

/// A replica asleep longer than `--visibility-timeout`: the writes it shows only after
/// the timeout are timeouts, and no lag passes the timeout (a poll sent in time and
/// answered late counted as "seen" at twice the timeout).
#[test]
fn no_lag_passes_the_timeout() {
    let (primary, replica) = pair();
    let port = primary.port.to_string();
    let from = replica.addr();
    let bg = kvbench(&args(
        &port,
        &from,
        &[
            "--test-time=4",
            "-c",
            "2",
            "--visibility-ratio=20",
            "--visibility-timeout=300",
        ],
    ))
    .with_json()
    .spawn();
    wait_until("load reaches the primary", Duration::from_secs(20), || {
        primary.commandstats().get("set").copied().unwrap_or(0) > 500
    });
    let started = Instant::now();
    replica.cli(&["DEBUG", "SLEEP", "0.7"]);
    assert!(started.elapsed() >= Duration::from_millis(600));
    let run = bg.wait(Duration::from_secs(60));
    assert!(run.status.success(), "{}", describe(&run.out));
    let json = run.json();
    let vis = visibility(&json);
    assert!(vis["Timeouts"].as_u64().unwrap_or(0) > 0, "{vis}");
    let max = vis["Lag"]["Max Latency"].as_f64().expect("Max Latency");
    // The histogram rounds a value up by at most one part in a thousand.
    assert!(max <= 300.5, "max {max} ms past the 300 ms timeout: {vis}");
}

/// `"Total duration"` of ALL STATS, in ms.
fn duration_ms(json: &Value) -> u64 {
    json["ALL STATS"]["Runtime"]["Total duration"]
        .as_u64()
        .unwrap_or_else(|| panic!("Runtime in {}", json["ALL STATS"]["Runtime"]))
}

/// A replica that stopped replicating: a `-n` run waits after its load for the tracked
/// writes (every one a timeout), but that wait is not the load's time. Before, the run's
/// duration ran to the end of the wait, so 800 SETs done in milliseconds read as 800
/// over more than `--visibility-timeout`, and the seconds went on empty. A timed run
/// waits too, so that its last tracked writes are counted (they were dropped), and
/// ends its time at its deadline.
#[test]
fn the_wait_for_a_stalled_replica_is_not_the_loads_time() {
    let (primary, replica) = pair();
    assert_eq!(replica.cli(&["REPLICAOF", "NO", "ONE"]), "OK");
    let port = primary.port.to_string();
    let from = replica.addr();
    let started = Instant::now();
    let json = kvbench(&args(
        &port,
        &from,
        &[
            "-n",
            "400",
            "-c",
            "2",
            "--visibility-ratio=10",
            "--visibility-timeout=3000",
        ],
    ))
    .timeout(Duration::from_secs(60))
    .with_json()
    .ok()
    .json();
    let elapsed = started.elapsed();
    let all = &json["ALL STATS"];
    let vis = visibility(&json);
    // The wait happened and settled every tracked write: 2 clients x 400 SETs, 1 in 10.
    assert_eq!(vis["Timeouts"].as_u64(), Some(80), "{vis}");
    assert_eq!(vis["Lag"]["Count"].as_u64(), Some(0), "{vis}");
    assert!(elapsed >= Duration::from_millis(3000), "{elapsed:?}");
    // The load's figures end with the load: milliseconds of it, not the 3 s wait.
    let duration = duration_ms(&json);
    assert!(
        duration < 1500 && Duration::from_millis(duration + 1500) < elapsed,
        "duration {duration} ms of a run that took {elapsed:?}: {}",
        all["Runtime"]
    );
    let count = all["Totals"]["Count"].as_u64().expect("Count");
    assert_eq!(count, 800);
    let ops = all["Totals"]["Ops/sec"].as_f64().expect("Ops/sec");
    assert!(
        ops > count as f64 / 1.5,
        "Ops/sec {ops} for {count} SETs in {duration} ms"
    );
    let seconds = all["Totals"]["Time-Serie"]
        .as_object()
        .map_or(0, |s| s.len());
    assert!(
        seconds <= 2,
        "{} seconds: {}",
        seconds,
        all["Totals"]["Time-Serie"]
    );

    // A timed run: its time is its --test-time, and every tracked write it recorded is
    // settled (one client, one request in flight: the writes recorded are the ones
    // acknowledged, one in 10 of them tracked).
    primary.config_resetstat();
    let json = kvbench(&args(
        &port,
        &from,
        &[
            "--test-time=2",
            "-c",
            "1",
            "--visibility-ratio=10",
            "--visibility-timeout=1000",
        ],
    ))
    .timeout(Duration::from_secs(60))
    .with_json()
    .ok()
    .json();
    let vis = visibility(&json);
    let sets = json["ALL STATS"]["Sets"]["Count"].as_u64().expect("Count");
    let settled = vis["Timeouts"].as_u64().unwrap_or(0)
        + vis["Untracked"].as_u64().unwrap_or(0)
        + vis["Lag"]["Count"].as_u64().unwrap_or(0);
    assert_eq!(settled, sets / 10, "{sets} SETs: {vis}");
    assert!(vis["Timeouts"].as_u64().unwrap_or(0) > 0, "{vis}");
    let duration = duration_ms(&json);
    assert!(
        (2000..2500).contains(&duration),
        "duration {duration} ms of a 2 s run"
    );
}
