//! `--busy-poll` in every front end that takes it, against real servers started here: the
//! server sees exactly the requests asked for (closed loop, a rate, redis-benchmark's
//! shared budget, zbench's load, memcached), the flag is shown in memtier's configuration, and a bad
//! value is one line and exit 1 before anything is sent. How much latency it saves
//! depends on the machine (docs/performance.md measures it), so no test times it.

mod common;

use common::{Memcached, RedisServer, kvbench, kvbench_at};

#[test]
fn memtier_closed_loop_sends_exactly_what_was_asked() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "2",
            "-c",
            "2",
            "-n",
            "500",
            "--ratio=1:1",
            "--busy-poll=200",
            "--hide-histogram",
        ],
    )
    .with_json()
    .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(1000), "{stats:?}");
    assert_eq!(stats.get("get").copied(), Some(1000), "{stats:?}");
    let json = run.json();
    assert_eq!(json["configuration"]["busy_poll"], 200);
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], 2000);
}

#[test]
fn memtier_without_the_flag_shows_no_busy_poll() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "-n", "10", "--hide-histogram"],
    )
    .with_json()
    .ok();
    assert!(run.json()["configuration"].get("busy_poll").is_none());
}

#[test]
fn memtier_at_a_rate_keeps_its_schedule_exact() {
    let server = RedisServer::start();
    // 1 000 requests at 2 000/s: the spin (longer than the 500 µs between sends) must still
    // hand every due send to the loop. Half a second, so that connecting on a loaded
    // machine (counted in the achieved rate) does not halve it.
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "4",
            "-n",
            "250",
            "--rate=2000",
            "--ratio=0:1",
            "--busy-poll=1000",
            "--hide-histogram",
        ],
    )
    .with_json()
    .ok();
    assert_eq!(server.commandstats().get("get").copied(), Some(1000));
    let json = run.json();
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], 1000);
    // The schedule was followed, not abandoned to the spin (a loaded machine is late
    // now and then, not by half).
    let achieved = json["ALL STATS"]["Schedule"]["Achieved Percent"].as_f64();
    assert!(
        achieved.is_some_and(|a| a >= 50.0),
        "{:?}",
        json["ALL STATS"]["Schedule"]
    );
}

#[test]
fn memcached_text_and_binary_get_every_request() {
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
                "3",
                "-n",
                "300",
                "--ratio=1:2",
                "--pipeline=4",
                "--busy-poll=100",
                "--hide-histogram",
            ],
        )
        .ok();
        let stats = server.stats();
        assert_eq!(
            stats.get("cmd_set").copied(),
            Some(300),
            "{protocol}: {stats:?}"
        );
        assert_eq!(
            stats.get("cmd_get").copied(),
            Some(600),
            "{protocol}: {stats:?}"
        );
    }
}

#[test]
fn redis_benchmark_hands_out_its_whole_budget() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    kvbench(&[
        "redis-benchmark",
        "-p",
        &port,
        "-n",
        "1003",
        "-c",
        "7",
        "-P",
        "4",
        "-t",
        "set,get",
        "-q",
        "--busy-poll",
        "100",
    ])
    .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(1003), "{stats:?}");
    assert_eq!(stats.get("get").copied(), Some(1003), "{stats:?}");
}

#[test]
fn zbench_loads_every_key() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "load",
        "-r",
        "500",
        "-c",
        "3",
        "-pipeline",
        "4",
        "-busy-poll",
        "100",
    ])
    .ok();
    assert_eq!(server.dbsize(), 500);
    assert_eq!(server.commandstats().get("zadd").copied(), Some(500));
}

#[test]
fn latency_probes_with_it() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let run = kvbench(&[
        "latency",
        "-p",
        &port,
        "--raw",
        "-i",
        "0.2",
        "--busy-poll",
        "100",
    ])
    .ok();
    // min max avg count, from PINGs the server answered.
    let line = run.stdout_text();
    let count: u64 = line
        .split_whitespace()
        .nth(3)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!(count >= 1, "{line:?}");
    let pings = server.commandstats().get("ping").copied().unwrap_or(0);
    assert!(pings >= count, "{pings} PINGs for {count} samples");
}

#[test]
fn latency_does_not_spin_between_probes() {
    // The probes are 10 ms apart and a reply takes a fraction of a millisecond: a spin
    // of 9 ms through each pause burned most of a core (0.85 s of CPU in 2 s) and
    // caught nothing. Spinning only while a reply is awaited, the run is nearly idle.
    let server = RedisServer::start();
    let port = server.port.to_string();
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "cpu %U %S", env!("CARGO_BIN_EXE_kvbench")])
        .args([
            "latency",
            "-p",
            &port,
            "--raw",
            "-i",
            "2",
            "--busy-poll",
            "9000",
        ])
        .output()
        .expect("/usr/bin/time (make test installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let cpu: f64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("cpu "))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|v| v.parse::<f64>().ok())
                .sum()
        })
        .unwrap_or_else(|| panic!("no CPU times in {stderr:?}"));
    assert!(cpu < 0.4, "{cpu} s of CPU in a 2 s run of probes");
    let pings = server.commandstats().get("ping").copied().unwrap_or(0);
    assert!(pings >= 50, "{pings} PINGs in 2 s");
}

#[test]
fn a_bad_value_is_one_line_and_nothing_is_sent() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    // The start-up check's PING is not ours.
    server.cli(&["CONFIG", "RESETSTAT"]);
    for bad in ["abc", "-1", "1000001", "1.5"] {
        let memtier = format!("--busy-poll={bad}");
        let cases: [Vec<&str>; 4] = [
            vec!["-s", "127.0.0.1", "-p", &port, "-n", "10", &memtier],
            vec![
                "redis-benchmark",
                "-p",
                &port,
                "-n",
                "10",
                "--busy-poll",
                bad,
            ],
            vec!["latency", "-p", &port, "--raw", "--busy-poll", bad],
            vec![
                "zbench",
                "-p",
                &port,
                "-mode",
                "load",
                "-r",
                "10",
                "-busy-poll",
                bad,
            ],
        ];
        for args in cases {
            let run = kvbench(&args).run();
            assert_eq!(
                run.status.code(),
                Some(1),
                "{args:?}: {}",
                run.stderr_text()
            );
            let err = run.stderr_text();
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(err.contains("-busy-poll"), "{args:?}: {err}");
            assert!(err.contains("1000000"), "{args:?}: {err}");
        }
    }
    let stats = server.commandstats();
    for command in ["set", "get", "ping", "zadd"] {
        assert_eq!(stats.get(command), None, "{stats:?}");
    }
}
