//! kvbench against a real redis-server started by each test: what the server saw
//! (`INFO commandstats`, `DBSIZE`) must match what was asked, and every output file
//! must be complete and consistent with it.

mod common;

use std::time::{Duration, Instant};

use base64::Engine;
use common::{RedisServer, TestDir, describe, kvbench, kvbench_at, read_json};
use hdrhistogram::serialization::Deserializer;

#[test]
fn exact_request_count_reaches_the_server() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &["-t", "2", "-c", "5", "-n", "1000", "--hide-histogram"],
    )
    .ok();
    let stats = server.commandstats();
    let sets = stats.get("set").copied().unwrap_or(0);
    let gets = stats.get("get").copied().unwrap_or(0);
    assert_eq!(sets + gets, 10_000, "commandstats: {stats:?}");
    // Default ratio 1:10: one SET then ten GETs per cycle, per client.
    assert_eq!(sets, 10 * 91, "1000 requests per client in 1:10 cycles");
}

#[test]
fn allkeys_sequential_writes_every_key_once() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &[
            "-t",
            "2",
            "-c",
            "3",
            "--ratio=1:0",
            "--key-pattern=S:S",
            "-n",
            "allkeys",
            "--key-minimum=1",
            "--key-maximum=1000",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(server.dbsize(), 1000);
    assert_eq!(server.commandstats().get("set").copied(), Some(1000));
    assert_eq!(server.cli(&["EXISTS", "memtier-1"]), "1");
    assert_eq!(server.cli(&["EXISTS", "memtier-1000"]), "1");
    assert_eq!(server.cli(&["EXISTS", "memtier-0"]), "0");
}

#[test]
fn parallel_pattern_partitions_the_range() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "4",
            "--ratio=1:0",
            "--key-pattern=P:P",
            "-n",
            "allkeys",
            "--key-minimum=1",
            "--key-maximum=999",
            "--key-prefix=p-",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(server.dbsize(), 999);
}

/// memtier's `S`: every client walks the range from `--key-minimum`. 5 clients of 10
/// requests over 1..1000 touch keys 1..10, each 5 times: INCR makes the server count the
/// touches of each key, and a SET pass leaves exactly those 10 keys.
#[test]
fn sequential_pattern_walks_from_the_minimum_in_every_client() {
    let server = RedisServer::start();
    let walk = [
        "-t",
        "1",
        "-c",
        "5",
        "-n",
        "10",
        "--key-minimum=1",
        "--key-maximum=1000",
        "--hide-histogram",
    ];
    let mut args = vec!["--command=incr __key__", "--command-key-pattern=S"];
    args.extend(walk);
    kvbench_at(server.port, &args).ok();
    assert_eq!(server.commandstats().get("incr").copied(), Some(50));
    assert_eq!(server.dbsize(), 10);
    for id in 1..=10 {
        assert_eq!(
            server.cli(&["GET", &format!("memtier-{id}")]),
            "5",
            "key {id}"
        );
    }
    assert_eq!(server.cli(&["EXISTS", "memtier-11"]), "0");

    server.flushall();
    server.config_resetstat();
    let mut args = vec!["--ratio=1:0", "--key-pattern=S:S"];
    args.extend(walk);
    kvbench_at(server.port, &args).ok();
    assert_eq!(server.commandstats().get("set").copied(), Some(50));
    let keyspace = server.cli(&["INFO", "keyspace"]);
    assert!(keyspace.contains("db0:keys=10,"), "{keyspace}");
    let mut keys: Vec<String> = server
        .cli(&["KEYS", "*"])
        .lines()
        .map(str::to_string)
        .collect();
    keys.sort();
    let mut expected: Vec<String> = (1..=10).map(|i| format!("memtier-{i}")).collect();
    expected.sort();
    assert_eq!(keys, expected);
}

/// `P` stays the per-client slice: 5 clients of 10 requests over 1..1000 each write the
/// first 10 keys of their own fifth of the range, 50 distinct keys.
#[test]
fn parallel_pattern_without_allkeys_keeps_each_client_in_its_slice() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "5",
            "-n",
            "10",
            "--ratio=1:0",
            "--key-pattern=P:P",
            "--key-minimum=1",
            "--key-maximum=1000",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(server.commandstats().get("set").copied(), Some(50));
    assert_eq!(server.dbsize(), 50);
    for slice in 0..5 {
        for offset in [1, 10] {
            let id = slice * 200 + offset;
            assert_eq!(
                server.cli(&["EXISTS", &format!("memtier-{id}")]),
                "1",
                "{id}"
            );
        }
        let past = slice * 200 + 11;
        assert_eq!(
            server.cli(&["EXISTS", &format!("memtier-{past}")]),
            "0",
            "{past}"
        );
    }
}

#[test]
fn json_totals_and_histogram_match_the_server() {
    let server = RedisServer::start();
    let tmp = common::TestDir::new("redis-load");
    let dir = tmp.path();
    let json = dir.join("run.json");
    let prefix = dir.join("hdr");
    kvbench_at(
        server.port,
        &[
            "-t",
            "2",
            "-c",
            "4",
            "-n",
            "500",
            "--ratio=1:1",
            "--pipeline=4",
            &format!("--json-out-file={}", json.display()),
            &format!("--hdr-file-prefix={}", prefix.display()),
        ],
    )
    .ok();
    let stats = server.commandstats();
    let server_total = stats["set"] + stats["get"];
    assert_eq!(server_total, 4000);

    let doc = read_json(&json);
    let all = &doc["ALL STATS"];
    assert_eq!(all["Totals"]["Count"].as_u64(), Some(server_total));
    assert_eq!(all["Sets"]["Count"].as_u64(), Some(stats["set"]));
    assert_eq!(all["Gets"]["Count"].as_u64(), Some(stats["get"]));
    assert_eq!(all["Runtime"]["Interrupted"], "false");
    assert_eq!(doc["run information"]["Threads"], 2);
    assert_eq!(doc["configuration"]["pipeline"], 4);
    // The true average, not memtier's 0.0.
    assert!(all["Totals"]["Average Latency"].as_f64().unwrap() > 0.0);

    // The compressed histogram decodes to the same number of requests.
    let encoded =
        all["Totals"]["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
            .as_str()
            .expect("compressed histogram present");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    let hist: hdrhistogram::Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("V2 compressed histogram");
    assert_eq!(hist.len(), server_total);

    // The time series adds up to the totals.
    let series = all["Totals"]["Time-Serie"].as_object().expect("Time-Serie");
    let summed: u64 = series.values().map(|s| s["Count"].as_u64().unwrap()).sum();
    assert_eq!(summed, server_total);

    // The distribution arrays are there (no --hide-histogram).
    assert!(all["SET"].as_array().is_some_and(|a| !a.is_empty()));
    assert!(all["GET"].as_array().is_some_and(|a| !a.is_empty()));

    for name in ["FULL_RUN_1", "SET_command_run_1", "GET_command_run_1"] {
        for ext in ["txt", "hgrm"] {
            let path = dir.join(format!("hdr_{name}.{ext}"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
            assert!(!text.is_empty());
        }
    }
    let txt = std::fs::read_to_string(dir.join("hdr_FULL_RUN_1.txt")).unwrap();
    assert!(
        txt.contains(&format!("Total count    = {server_total:>12}")),
        "{txt}"
    );
}

#[test]
fn table_has_memtier_layout() {
    let server = RedisServer::start();
    let out = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--print-percentiles=50,90,99.99",
        ],
    )
    .ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(
            "1         Threads\n2         Connections per thread\n100       Requests per client\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("ALL STATS"));
    assert!(stdout.contains("p90 Latency"));
    assert!(stdout.contains("p99.99 Latency"));
    assert!(stdout.contains("Request Latency Distribution"));
    for row in ["Sets ", "Gets ", "Waits ", "Totals "] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "no {row} row in {stdout}"
        );
    }
}

/// `--print-percentiles` as memtier takes it: given twice, the last list wins (getopt
/// keeps one value); a value repeated in the list is a column each in the table, as
/// memtier's table prints them, and one JSON key (memtier writes the same key twice).
#[test]
fn print_percentiles_last_list_wins_and_repeats_are_columns() {
    let server = RedisServer::start();
    let dir = TestDir::new("percentile-columns");
    let json_path = dir.file("run.json");
    let out = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "100",
            "--hide-histogram",
            "--print-percentiles",
            "50,99",
            "--print-percentiles",
            "99.9,50,99.9",
        ],
    )
    .args(&[format!("--json-out-file={}", json_path.display())])
    .ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("Type "))
        .unwrap_or_else(|| panic!("no header in {stdout}"));
    assert!(
        header.contains(
            "    Avg. Latency   p99.9 Latency     p50 Latency   p99.9 Latency       KB/sec "
        ),
        "{header}"
    );
    assert!(!header.contains("p99 Latency"), "{header}");
    // Each repeated column shows its percentile's figure.
    let totals: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("Totals "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(totals.len(), 9, "{totals:?}");
    assert_eq!(totals[5], totals[7], "{totals:?}");
    // The text itself, as a parser keeps one of two equal keys: Totals' (the last row)
    // "Percentile Latencies" names each percentile once, in the list's order.
    let text = std::fs::read_to_string(&json_path).unwrap();
    let from = text.rfind("\"Percentile Latencies\"").unwrap();
    let to = from + text[from..].find("\"Histogram log format\"").unwrap();
    let keys: Vec<&str> = text[from..to]
        .split('"')
        .filter(|k| k.starts_with('p') && k.contains('.'))
        .collect();
    assert_eq!(keys, ["p99.90", "p50.00"], "{}", &text[from..to]);
}

/// `--show-config` as memtier prints it: the values on stdout (before the report), its
/// two banners around them on stderr, before the run starts.
#[test]
fn show_config_prints_between_memtiers_banners() {
    let server = RedisServer::start();
    let out = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10",
            "--hide-histogram",
            "--show-config",
        ],
    )
    .ok();
    let stdout = out.stdout_text();
    let expected_start = format!("server = 127.0.0.1\nport = {}\nuri = \n", server.port);
    assert!(stdout.starts_with(&expected_start), "{stdout}");
    assert!(
        stdout.contains("\njson-out-file = (null)\nprint-all-runs = no\n1         Threads\n"),
        "{stdout}"
    );
    let stderr = out.stderr_text();
    assert!(
        stderr.starts_with(
            "============== Configuration values: ==============\n\
             ===================================================\n\
             [RUN #1] Preparing benchmark client...\n"
        ),
        "{stderr}"
    );
}

/// A pipelined `--test-time` run: what Redis ran is what kvbench counted plus what it
/// says it left unanswered, never more (replies come at the end, read or not, used to
/// put their requests in no figure). Three runs, as the miss needed the right moment.
#[test]
fn timed_pipeline_counts_every_request_redis_ran() {
    let server = RedisServer::start();
    for _ in 0..3 {
        server.config_resetstat();
        let out = kvbench_at(
            server.port,
            &[
                "-t",
                "2",
                "-c",
                "2",
                "--test-time=1",
                "--ratio=1:1",
                "--pipeline=32",
            ],
        )
        .args(&["--key-maximum=100", "--hide-histogram"])
        .with_json()
        .ok();
        let json = out.json();
        let counted = json["ALL STATS"]["Totals"]["Count"]
            .as_u64()
            .expect("Totals Count");
        let unanswered = json["ALL STATS"]["Unfinished"]["In Flight At End"]
            .as_u64()
            .unwrap_or(0);
        let stats = server.commandstats();
        let ran = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
        // Redis may not have run what was still in flight when the connections closed.
        assert!(
            counted <= ran && ran <= counted + unanswered,
            "Redis ran {ran} requests; kvbench counted {counted} and left {unanswered} unanswered"
        );
    }
}

#[test]
fn test_time_bounds_the_run() {
    let server = RedisServer::start();
    let started = Instant::now();
    let out = kvbench_at(
        server.port,
        &["-t", "1", "-c", "2", "--test-time=2", "--hide-histogram"],
    )
    .with_json()
    .ok();
    // The run's own clock is exact; the wall clock only has to leave room for a loaded
    // machine starting the process.
    let ms = out.json()["ALL STATS"]["Runtime"]["Total duration"]
        .as_u64()
        .expect("Total duration");
    assert!((2000..2800).contains(&ms), "ran {ms} ms");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2         Seconds"), "{stdout}");
    let stats = server.commandstats();
    assert!(stats.get("get").copied().unwrap_or(0) > 100, "{stats:?}");
}

#[test]
fn run_count_prints_best_worst_aggregate() {
    let server = RedisServer::start();
    let tmp = common::TestDir::new("redis-load");
    let dir = tmp.path();
    let json = dir.join("runs.json");
    let out = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "200",
            "-x",
            "3",
            "--print-all-runs",
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    )
    .ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    for title in [
        "RUN #1 RESULTS",
        "RUN #2 RESULTS",
        "RUN #3 RESULTS",
        "BEST RUN RESULTS",
        "WORST RUN RESULTS",
        "AGGREGATED AVERAGE RESULTS (3 runs)",
    ] {
        assert!(stdout.contains(title), "missing {title}");
    }
    let stats = server.commandstats();
    assert_eq!(stats["set"] + stats["get"], 3 * 400);
    let doc = read_json(&json);
    assert_eq!(
        doc["AGGREGATED AVERAGE RESULTS (3 runs)"]["Totals"]["Count"],
        1200
    );
}

#[test]
fn unix_socket_auth_and_select_db() {
    let tmp = common::TestDir::new("redis-load");
    let dir = tmp.path();
    let socket = dir.join("redis.sock");
    let server = RedisServer::start_with(&[
        "--unixsocket",
        socket.to_str().unwrap(),
        "--requirepass",
        "s3cret",
    ]);
    let out = kvbench(&[
        "-S",
        socket.to_str().unwrap(),
        "-a",
        "s3cret",
        "--select-db=3",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "50",
        "--ratio=1:0",
        "--key-pattern=S:S",
        "--hide-histogram",
    ])
    .run();
    assert!(out.status.success(), "{}", describe(&out));
    let keys = server.cli(&["-a", "s3cret", "--no-auth-warning", "-n", "3", "DBSIZE"]);
    // S:S: both clients walk from the key minimum, as memtier's, so 50 distinct keys.
    assert_eq!(keys, "50");

    // A wrong password is one clear line and a non-zero exit.
    let bad = kvbench(&[
        "-S",
        socket.to_str().unwrap(),
        "-a",
        "wrong",
        "-n",
        "5",
        "-t",
        "1",
        "-c",
        "1",
    ])
    .run();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("error: authentication failed"), "{stderr}");
    assert!(!stderr.contains("panicked"));

    // No password at all names the fix.
    let none = kvbench(&[
        "-S",
        socket.to_str().unwrap(),
        "-n",
        "5",
        "-t",
        "1",
        "-c",
        "1",
    ])
    .run();
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("requires authentication"));
}

#[test]
fn resp3_hello_is_sent() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &[
            "-P",
            "resp3",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--hide-histogram",
        ],
    )
    .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("hello").copied(), Some(2));
    assert_eq!(stats["set"] + stats["get"], 200);
}

/// Pipelined replies' latencies reach the histograms in runs held back a handful at a
/// time (`stats::HeldRuns`): none may be lost or land in the wrong second. Over a
/// multi-second pipelined run, every second's histogram holds exactly that second's
/// count, and the whole run's the run's count, all but the last batches the server saw.
#[test]
fn every_seconds_histogram_holds_its_count_at_pipeline_16() {
    let server = RedisServer::start();
    let tmp = common::TestDir::new("redis-load-held");
    let json = tmp.path().join("run.json");
    kvbench_at(
        server.port,
        &[
            "-t",
            "2",
            "-c",
            "10",
            "--test-time=3",
            "--ratio=1:10",
            "--pipeline=16",
            "--key-maximum=1000000",
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    )
    .ok();
    let stats = server.commandstats();
    let server_total = stats["set"] + stats["get"];
    let decode = |encoded: &str| {
        kvbench::results::decode_histogram(encoded).expect("a compressed histogram")
    };
    let doc = read_json(&json);
    let all = &doc["ALL STATS"];
    // A time-bound run stops with up to a pipeline per connection unanswered (sent, so
    // the server counted them; never answered, so kvbench did not).
    let count = all["Totals"]["Count"].as_u64().unwrap();
    assert!(
        count <= server_total && server_total - count <= 20 * 16,
        "kvbench counted {count}, the server {server_total}"
    );
    let whole =
        all["Totals"]["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
            .as_str()
            .expect("the run's histogram");
    assert_eq!(decode(whole).len(), count);
    for row in ["Sets", "Gets", "Totals"] {
        let series = all[row]["Time-Serie"].as_object().expect("Time-Serie");
        assert!(series.len() >= 3, "{row}: {} seconds", series.len());
        for (second, figures) in series {
            let count = figures["Count"].as_u64().unwrap();
            let held = figures["Compressed Histogram"]
                .as_str()
                .map_or(0, |encoded| decode(encoded).len());
            assert_eq!(held, count, "{row}, second {second}");
        }
    }
}
