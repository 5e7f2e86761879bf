//! Load-shape options against a real redis-server: multi-key gets, expiry, data offset,
//! WAIT, rate limiting, reconnects, connection timeouts and ramp-up. Each test checks
//! what the server saw, not only what kvbench printed.

mod common;

use std::time::{Duration, Instant};

use common::{
    CONDITION_TIMEOUT, RedisServer, describe, kvbench, kvbench_at, read_json, wait_until,
};

#[test]
fn multi_key_get_sends_mget_with_the_keys_left_in_the_cycle() {
    let server = RedisServer::start();
    // 1:10 with 4 keys: SET, MGET×4, MGET×4, MGET×2 → 4 requests per cycle of 11 keys.
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "40",
            "--ratio=1:10",
            "--multi-key-get=4",
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(20));
    assert_eq!(stats.get("mget").copied(), Some(60));
    assert_eq!(stats.get("get"), None);
}

#[test]
fn multi_key_get_of_one_key_sends_mget() {
    // memtier's --multi-key-get=1 is an MGET of one key (its `multi_key_get > 0`), so a
    // memtier user comparing the server's MGET count must see the same here.
    let server = RedisServer::start();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "10",
            "--ratio=1:1",
            "--multi-key-get=1",
            "--key-maximum=20",
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(30));
    assert_eq!(stats.get("mget").copied(), Some(30));
    assert_eq!(stats.get("get"), None);
}

#[test]
fn expiry_range_sets_ttls_in_range() {
    let server = RedisServer::start();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "50",
            "--ratio=1:0",
            "--key-pattern=S:S",
            "--key-minimum=1",
            "--key-maximum=50",
            "--expiry-range=100-200",
        ])
        .ok();
    assert_eq!(server.commandstats().get("setex").copied(), Some(50));
    for id in [1, 25, 50] {
        let ttl: i64 = server
            .cli(&["TTL", &format!("memtier-{id}")])
            .parse()
            .unwrap();
        assert!((90..=200).contains(&ttl), "TTL {ttl} out of range");
    }
}

/// The lengths of the values under keys `memtier-1` to `memtier-{count}`, as the server
/// stores them (STRLEN).
fn value_lengths(server: &RedisServer, count: u64) -> Vec<u64> {
    (1..=count)
        .map(|id| {
            let length = server.cli(&["STRLEN", &format!("memtier-{id}")]);
            length.parse().unwrap()
        })
        .collect()
}

#[test]
fn data_size_list_sizes_cycle_through_the_weights_as_memtier_does() {
    // memtier walks --data-size-list in order, each size for its weight of SETs in a row,
    // so a sequential run stores the same sizes on the same keys every time. A random
    // draw by weight would put other lengths on these keys.
    let server = RedisServer::start();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "30",
            "--ratio=1:0",
            "--key-pattern=S:S",
            "--key-minimum=1",
            "--key-maximum=30",
            "--data-size-list=10:1,100:2",
        ])
        .ok();
    assert_eq!(server.commandstats().get("set").copied(), Some(30));
    let lengths = value_lengths(&server, 30);
    let expected: Vec<u64> = (0..30).map(|i| if i % 3 == 0 { 10 } else { 100 }).collect();
    assert_eq!(lengths, expected);
}

#[test]
fn data_size_list_turns_go_to_commands_that_send_data() {
    // memtier sizes a value only where a command has __data__: with a SET and a GET
    // command taking turns, the SETs alone walk the list (10, 100, 10, 100, ...).
    let server = RedisServer::start();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "20",
            "--command=set __key__ __data__",
            "--command-key-pattern=S",
            "--command=get __key__",
            "--command-key-pattern=S",
            "--key-minimum=1",
            "--key-maximum=10",
            "--data-size-list=10:1,100:1",
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(10), "{stats:?}");
    assert_eq!(stats.get("get").copied(), Some(10), "{stats:?}");
    let lengths = value_lengths(&server, 10);
    assert_eq!(lengths, [10, 100, 10, 100, 10, 100, 10, 100, 10, 100]);
}

#[test]
fn data_offset_uses_setrange_and_getrange() {
    let server = RedisServer::start();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "20",
            "--ratio=1:1",
            "--data-offset=10",
            "-d",
            "8",
            "--key-maximum=5",
            "--key-prefix=off-",
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("setrange").copied(), Some(10));
    assert_eq!(stats.get("getrange").copied(), Some(10));
    let len: u64 = server.cli(&["STRLEN", "off-1"]).parse().unwrap_or(0);
    assert!(
        len == 0 || len == 18,
        "value of offset 10 + 8 bytes, got {len}"
    );
}

#[test]
fn wait_ratio_sends_waits_in_proportion() {
    let server = RedisServer::start();
    let dir = common::TestDir::new("wait");
    let path = dir.file("wait.json");
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "60",
            "--ratio=1:0",
            "--wait-ratio=5:1",
            "--num-slaves=0-0",
            "--wait-timeout=0-5",
            &format!("--json-out-file={}", path.display()),
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("set").copied(), Some(50));
    assert_eq!(stats.get("wait").copied(), Some(10));
    let doc = read_json(&path);
    assert_eq!(doc["ALL STATS"]["Waits"]["Count"], 10);
    assert_eq!(doc["configuration"]["wait-ratio"], "5:1");
}

#[test]
fn zero_counts_memtier_refuses_are_refused_before_any_request() {
    // memtier stops on each of these with one line in its own words; a run that went
    // ahead here would send load a memtier user's command line never sends.
    let server = RedisServer::start();
    for (flag, says) in [
        (
            "--multi-key-get=0",
            "error: multi-key-get must be greater than zero.",
        ),
        (
            "--reconnect-interval=0",
            "error: reconnect-interval must be greater than zero.",
        ),
        (
            "--wait-ratio=0:0",
            "error: wait-ratio must be expressed as [0-n]:[0-n].",
        ),
    ] {
        let run = kvbench_at(server.port, &["--hide-histogram"])
            .args(&["-t", "1", "-c", "1", "-n", "20", "--ratio=1:1", flag])
            .run();
        assert_eq!(run.status.code(), Some(1), "{flag}: {}", run.describe());
        assert_eq!(run.stderr_text().trim_end(), says, "{flag}");
    }
    let stats = server.commandstats();
    for command in ["set", "get", "mget", "wait"] {
        assert_eq!(stats.get(command), None, "{command}: {stats:?}");
    }
    assert_eq!(server.dbsize(), 0);
}

#[test]
fn select_db_zero_sends_no_select_as_memtier_does() {
    // memtier sends SELECT only for a database other than 0, where every connection
    // starts anyway; a SELECT 0 per connection shows in the server's counts.
    let server = RedisServer::start();
    let dir = common::TestDir::new("select0");
    let path = dir.file("select0.json");
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "10",
            "--ratio=1:1",
            "--select-db=0",
            &format!("--json-out-file={}", path.display()),
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("select"), None, "{stats:?}");
    assert_eq!(stats.get("set").copied(), Some(10), "{stats:?}");
    assert_eq!(stats.get("get").copied(), Some(10), "{stats:?}");
    assert_eq!(read_json(&path)["configuration"]["select-db"], 0);
}

#[test]
fn rate_limit_of_one_per_second_paces_and_ends() {
    let server = RedisServer::start();
    let started = Instant::now();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "1", "-n", "3", "--rate-limiting=1"])
        .ok();
    let took = started.elapsed();
    // Requests at 0 s, 1 s and 2 s: about two seconds, never a hang (memtier #303, #285);
    // the upper bound leaves room for a loaded machine.
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(20),
        "took {took:?}"
    );
    let stats = server.commandstats();
    assert_eq!(
        stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0),
        3
    );
}

#[test]
fn rate_limit_caps_throughput() {
    let server = RedisServer::start();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "2", "--test-time=2", "--rate-limiting=50"])
        .ok();
    let stats = server.commandstats();
    let total = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    // 2 connections × 50/s × 2 s = 200, give or take the edges (connecting on a loaded
    // machine comes out of the 2 s: 20 requests are 200 ms). Without the cap, thousands.
    assert!((150..=210).contains(&total), "sent {total}");
}

/// Waits until both of the run's connections are up and the server is answering them
/// (the harness's own `redis-cli` is the third client).
fn both_connections_busy(server: &RedisServer) {
    wait_until("two busy kvbench connections", CONDITION_TIMEOUT, || {
        server.connected_clients() >= 3 && server.calls() > 100
    });
}

#[test]
fn killed_connections_end_the_run_without_reconnect() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "2", "--test-time=30", "--hide-histogram"],
    )
    .spawn();
    both_connections_busy(&server);
    server.cli(&["CLIENT", "KILL", "TYPE", "normal"]);
    let out = run.wait(Duration::from_secs(20));
    assert!(!out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The server closes the socket: a FIN, or a RST when a request it had not read yet
    // was still in its buffer. Both end the run.
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: connection closed by server")
            || (last.starts_with("error: connection to ")
                && last.ends_with("failed: connection reset by peer")),
        "{stderr}"
    );
    // Results so far are still printed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("Totals"));
}

/// The server dies under load: the lost connection counts against the request it had in
/// flight (its command's row), and each refused reconnect after it, with nothing in
/// flight, in Totals only (they counted on the Sets row before, whatever the workload).
#[test]
fn refused_reconnects_count_in_totals_not_on_a_command_row() {
    let mut server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "--ratio=0:1",
            "--test-time=60",
            "--hide-histogram",
            "--reconnect-on-error",
            "--max-reconnect-attempts=2",
            "--reconnect-backoff-factor=1",
        ],
    )
    .with_json()
    .spawn();
    wait_until("a busy kvbench connection", CONDITION_TIMEOUT, || {
        server.calls() > 100
    });
    server.kill_now();
    let out = run.wait(Duration::from_secs(60));
    assert!(!out.status.success(), "{}", out.describe());
    assert!(
        out.stderr_text()
            .contains("gave up after 2 reconnect attempts"),
        "{}",
        out.describe()
    );
    let doc = out.json();
    let all = &doc["ALL STATS"];
    let errors = |row: &str| all[row]["Connection Errors"].as_u64().unwrap_or(0);
    // GETs only: the lost connection is the Gets row's when its GET was in flight (the
    // server's last reply and its close can also come in one read, with nothing in
    // flight: then no command's); the two refusals are no command's, never the Sets row's.
    assert_eq!(errors("Sets"), 0, "{all}");
    assert!(errors("Gets") <= 1, "{all}");
    assert_eq!(errors("Totals"), 3, "{all}");
}

#[test]
fn killed_connections_reconnect_with_reconnect_on_error() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=4",
            "--hide-histogram",
            "--reconnect-on-error",
        ],
    )
    .with_json()
    .spawn();
    both_connections_busy(&server);
    server.cli(&["CLIENT", "KILL", "TYPE", "normal"]);
    let out = run.wait(Duration::from_secs(60));
    assert!(out.status.success(), "{}", out.describe());
    let doc = out.json();
    // A reconnect never stretches --test-time (the run's own clock: the process may be
    // slow to start on a loaded machine, the run may not be slow to end).
    let ms = doc["ALL STATS"]["Runtime"]["Total duration"]
        .as_u64()
        .expect("Total duration");
    assert!(ms < 4800, "ran {ms} ms");
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(totals["Connection Errors"], 2);
    // Load went on after the reconnect: the last full second still did work.
    let series = totals["Time-Serie"].as_object().unwrap();
    assert!(series["3"]["Count"].as_u64().unwrap() > 0, "{series:?}");
    let connections: u64 = server
        .cli(&["INFO", "stats"])
        .lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(
        connections >= 4,
        "reconnected: {connections} connections in all"
    );
}

#[test]
fn reconnect_interval_opens_new_connections() {
    let server = RedisServer::start();
    let before: u64 = total_connections(&server);
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "1", "-c", "1", "-n", "100", "--reconnect-interval=10"])
        .ok();
    // 100 requests, a fresh connection every 10: 10 connections, plus the redis-cli asking.
    let opened = total_connections(&server) - before;
    assert_eq!(opened, 10 + 1, "opened {opened} connections");
    let stats = server.commandstats();
    assert_eq!(
        stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0),
        100
    );
}

fn total_connections(server: &RedisServer) -> u64 {
    server
        .cli(&["INFO", "stats"])
        .lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

#[test]
fn connection_timeout_stops_a_silent_handshake() {
    // A listener that accepts and never answers: AUTH never completes.
    let port = common::silent_server().to_string();
    let started = Instant::now();
    let out = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-a",
        "pw",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "5",
        "--connection-timeout=1",
    ])
    .run();
    assert!(!out.status.success());
    // Without the timeout the run would wait for ever; the bound leaves room for a
    // loaded machine.
    assert!(started.elapsed() < Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("timed out after 1 s"), "{stderr}");
}

#[test]
fn ramp_up_adds_clients_and_reports_them() {
    let server = RedisServer::start();
    let dir = common::TestDir::new("ramp");
    let path = dir.file("ramp.json");
    let before = total_connections(&server);
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "3",
            "--clients-start=1",
            "--clients-step=1",
            "--step-duration=1",
            "--test-time=3",
            &format!("--json-out-file={}", path.display()),
        ])
        .ok();
    let doc = read_json(&path);
    let active = &doc["ALL STATS"]["Active Clients"];
    assert_eq!(active["0"]["Clients per thread"], 1);
    assert_eq!(active["1"]["Clients per thread"], 2);
    assert_eq!(active["2"]["Total clients"], 3);
    // Three benchmark connections, plus the redis-cli connection asking.
    assert_eq!(total_connections(&server) - before, 3 + 1);

    // memtier's configuration keys for the staircase, bare numbers after print-all-runs;
    // `clients` stays the target.
    let config = doc["configuration"].as_object().expect("configuration");
    assert_eq!(config["clients"], 3);
    assert_eq!(config["clients_start"], 1);
    assert_eq!(config["clients_step"], 1);
    assert_eq!(config["step_duration"], 1);
    // In memtier's place: right after print-all-runs, in this order.
    let text = std::fs::read_to_string(&path).expect("read the JSON");
    let at = |key: &str| {
        text.find(&format!("\"{key}\""))
            .unwrap_or_else(|| panic!("{key} in {text:.3000}"))
    };
    assert!(at("print-all-runs") < at("clients_start"));
    assert!(at("clients_start") < at("clients_step"));
    assert!(at("clients_step") < at("step_duration"));
    assert!(at("step_duration") < at("run information"));
}

/// Without a ramp-up the configuration has no staircase keys, as memtier's.
#[test]
fn no_ramp_up_no_staircase_keys() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "-n", "5", "--hide-histogram"],
    )
    .with_json()
    .ok();
    let doc = run.json();
    let config = doc["configuration"].as_object().expect("configuration");
    for key in ["clients_start", "clients_step", "step_duration"] {
        assert!(!config.contains_key(key), "{key} in {config:?}");
    }
    assert!(server.calls() > 0, "the run reached the server");
}

#[test]
fn a_server_that_stops_answering_ends_a_request_bound_run() {
    // Accepts, reads the requests, never answers: without a watchdog a `-n` run would
    // wait for ever (memtier does).
    let port = common::silent_server().to_string();
    let started = Instant::now();
    let out = kvbench(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "5",
        "--reply-timeout=2",
    ])
    .run();
    let took = started.elapsed();
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // It never answered anything: the message says so, and names the protocol.
    assert!(
        stderr.contains("the server never answered or does not speak redis"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_answered_then_stalled_is_said_to_have_stopped_answering() {
    // A real server stopped (SIGSTOP) after it answered: the watchdog's message says it
    // stopped answering, not that it never answered or speaks another protocol.
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=120",
            "--reply-timeout=2",
            "--hide-histogram",
        ],
    )
    .spawn();
    wait_until("load on the server", CONDITION_TIMEOUT, || {
        server.calls() > 1000
    });
    let pid = server.pid() as libc::pid_t;
    // SAFETY: kill(2) on the PID of the server this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let out = run.wait(Duration::from_secs(60));
    // SAFETY: as above; the server must run again to be stopped cleanly.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let stderr = out.stderr_text();
    assert!(stderr.contains("the server stopped answering"), "{stderr}");
}

#[test]
fn a_memcached_protocol_against_redis_names_the_protocol() {
    // Redis waits for the rest of a line that a memcache binary request never ends: no
    // reply ever comes. The watchdog's message points at -P, not at a stalled server.
    let server = RedisServer::start();
    let port = server.port.to_string();
    let out = kvbench(&[
        "-P",
        "memcache_binary",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "5",
        "--reply-timeout=2",
    ])
    .run();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("never answered or does not speak memcache_binary"),
        "{stderr}"
    );
}

#[test]
fn the_plain_path_stores_every_key_with_its_value_across_digit_counts() {
    // Keys 1..=1200 cross one to four digits, so RESP key lengths 9 (a one-digit length,
    // written by the general encoder) to 12 (the template's); a short prefix and an
    // empty one cover other head shapes.
    for prefix in ["memtier-", "", "k"] {
        let server = RedisServer::start();
        let key_prefix = format!("--key-prefix={prefix}");
        kvbench_at(server.port, &["--hide-histogram"])
            .args(&[
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "allkeys",
                "--ratio=1:0",
                "--key-pattern=S:S",
                "--key-minimum=1",
                "--key-maximum=1200",
                "-d",
                "20",
                "--pipeline=16",
                &key_prefix,
            ])
            .ok();
        assert_eq!(server.dbsize(), 1200, "prefix {prefix:?}");
        assert_eq!(server.commandstats().get("set").copied(), Some(1200));
        for id in [1, 9, 10, 99, 100, 999, 1000, 1200] {
            let key = format!("{prefix}{id}");
            assert_eq!(server.cli(&["STRLEN", &key]).trim(), "20", "{key}");
        }
        assert_eq!(
            server.cli(&["EXISTS", &format!("{prefix}1201")]).trim(),
            "0"
        );
    }
}
