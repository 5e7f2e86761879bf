//! Load against a real memcached, text and binary protocol: what memcached counted
//! (`stats`: `cmd_get`, `cmd_set`, `get_hits`, `get_misses`, `curr_items`) must match what
//! was asked for and what kvbench reported in its JSON.

mod common;

use std::collections::HashMap;
use std::process::Output;

use common::{Memcached, describe, kvbench_at};
use serde_json::Value;

const TEXT: &str = "memcache_text";
const BINARY: &str = "memcache_binary";

/// Run kvbench against `server` with `-P protocol` and `args`, writing JSON; panics
/// unless it exits 0 without an error line. Returns the parsed JSON.
fn run(server: &Memcached, protocol: &str, args: &[&str]) -> Value {
    let out = kvbench_at(server.port, &["-P", protocol, "--hide-histogram"])
        .args(args)
        .with_json()
        .run();
    assert_success(&out, args);
    out.json()
}

fn assert_success(out: &Output, args: &[&str]) {
    assert!(
        out.status.success(),
        "kvbench {args:?} failed\n{}",
        describe(out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("error"),
        "kvbench {args:?} reported an error\n{}",
        describe(out)
    );
}

/// `json["ALL STATS"][row][field]` as a number.
fn field(json: &Value, row: &str, name: &str) -> f64 {
    json["ALL STATS"][row][name]
        .as_f64()
        .unwrap_or_else(|| panic!("ALL STATS/{row}/{name} missing or not a number in {json}"))
}

fn count(json: &Value, row: &str) -> u64 {
    json["ALL STATS"][row]["Count"]
        .as_u64()
        .unwrap_or_else(|| panic!("ALL STATS/{row}/Count missing or not an integer"))
}

/// The hits kvbench measured, recovered exactly from rates that share one duration:
/// hits = Count * Hits/sec / Ops/sec (both rates are rounded to 0.01, far below one hit here).
fn measured_hits(json: &Value) -> f64 {
    let ops = field(json, "Gets", "Ops/sec");
    if ops == 0.0 {
        return 0.0;
    }
    count(json, "Gets") as f64 * field(json, "Gets", "Hits/sec") / ops
}

/// Counter deltas of `stats` between two snapshots (counters missing in `before` are 0).
fn delta(before: &HashMap<String, u64>, after: &HashMap<String, u64>, key: &str) -> u64 {
    let a = *after
        .get(key)
        .unwrap_or_else(|| panic!("memcached stats have no {key}"));
    a - before.get(key).copied().unwrap_or(0)
}

fn stat(stats: &HashMap<String, u64>, key: &str) -> u64 {
    *stats
        .get(key)
        .unwrap_or_else(|| panic!("memcached stats have no {key}: {stats:?}"))
}

// ---------------------------------------------------------------------------------------
// Exact command counts and the SET:GET split.

fn exact_count_and_split(protocol: &str, ratio: &str, sets: u64, gets: u64) {
    let server = Memcached::start();
    let ratio_arg = format!("--ratio={ratio}");
    let report = run(
        &server,
        protocol,
        &[
            "-t",
            "2",
            "-c",
            "5",
            "-n",
            "1000",
            &ratio_arg,
            "--key-maximum=1000",
        ],
    );
    let stats = server.stats();
    let (cmd_set, cmd_get) = (stat(&stats, "cmd_set"), stat(&stats, "cmd_get"));
    assert_eq!(
        cmd_set + cmd_get,
        10_000,
        "2 threads x 5 clients x 1000 requests"
    );
    assert_eq!(
        (cmd_set, cmd_get),
        (sets, gets),
        "split for --ratio={ratio}"
    );
    assert_eq!(
        count(&report, "Totals"),
        cmd_set + cmd_get,
        "JSON Totals Count"
    );
    assert_eq!(count(&report, "Sets"), cmd_set, "JSON Sets Count");
    assert_eq!(count(&report, "Gets"), cmd_get, "JSON Gets Count");
    assert_eq!(
        field(&report, "Totals", "Connection Errors"),
        0.0,
        "no connection errors"
    );
    // The hits kvbench saw are the hits memcached served, and so for misses.
    let hits = stat(&stats, "get_hits");
    let misses = stat(&stats, "get_misses");
    assert_eq!(hits + misses, cmd_get);
    let seen_hits = measured_hits(&report);
    assert!(
        (seen_hits - hits as f64).abs() < 1.0,
        "kvbench measured {seen_hits:.3} hits, memcached served {hits}"
    );
    let ops = field(&report, "Gets", "Ops/sec");
    let seen_misses = count(&report, "Gets") as f64 * field(&report, "Gets", "Misses/sec") / ops;
    assert!(
        (seen_misses - misses as f64).abs() < 1.0,
        "kvbench measured {seen_misses:.3} misses, memcached counted {misses}"
    );
}

#[test]
fn text_sends_exactly_the_requested_commands_1_to_1() {
    exact_count_and_split(TEXT, "1:1", 5_000, 5_000);
}

#[test]
fn binary_sends_exactly_the_requested_commands_1_to_1() {
    exact_count_and_split(BINARY, "1:1", 5_000, 5_000);
}

#[test]
fn text_split_follows_an_uneven_ratio() {
    exact_count_and_split(TEXT, "1:4", 2_000, 8_000);
}

#[test]
fn binary_split_follows_an_uneven_ratio() {
    exact_count_and_split(BINARY, "1:4", 2_000, 8_000);
}

// ---------------------------------------------------------------------------------------
// One pass over all keys.

/// `-n allkeys` over 1..=1000 with 6 clients (1000 does not divide evenly) stores every
/// key exactly once: 1000 sets and 1000 items (a key set twice would leave fewer items).
fn allkeys_stores_each_key_once(protocol: &str) {
    let server = Memcached::start();
    let report = run(
        &server,
        protocol,
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
        ],
    );
    let stats = server.stats();
    assert_eq!(stat(&stats, "curr_items"), 1000, "every key stored");
    assert_eq!(stat(&stats, "cmd_set"), 1000, "one set per key");
    assert_eq!(stat(&stats, "cmd_get"), 0, "--ratio=1:0 sends no get");
    assert_eq!(count(&report, "Totals"), 1000);
    assert_eq!(count(&report, "Sets"), 1000);
    // The range is inclusive at both ends and nothing outside it is written.
    assert!(server.get("memtier-1").is_some(), "key-minimum stored");
    assert!(server.get("memtier-1000").is_some(), "key-maximum stored");
    assert!(server.get("memtier-0").is_none(), "below key-minimum");
    assert!(server.get("memtier-1001").is_none(), "above key-maximum");
}

#[test]
fn text_allkeys_stores_each_key_once() {
    allkeys_stores_each_key_once(TEXT);
}

#[test]
fn binary_allkeys_stores_each_key_once() {
    allkeys_stores_each_key_once(BINARY);
}

// ---------------------------------------------------------------------------------------
// Hits and misses.

const PRELOAD: &[&str] = &[
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
];

/// With every key of the range stored, a GET-only run over the range hits every time;
/// a GET-only run over keys never written (another prefix) misses every time.
fn hits_and_misses_match_memcached(protocol: &str) {
    let server = Memcached::start();
    run(&server, protocol, PRELOAD);
    assert_eq!(
        stat(&server.stats(), "curr_items"),
        1000,
        "preload stored all keys"
    );

    let before = server.stats();
    let report = run(
        &server,
        protocol,
        &[
            "-t",
            "2",
            "-c",
            "5",
            "--ratio=0:1",
            "--key-minimum=1",
            "--key-maximum=1000",
            "-n",
            "500",
        ],
    );
    let after = server.stats();
    let gets = count(&report, "Gets");
    assert_eq!(gets, 5_000, "2 x 5 clients x 500 gets");
    assert_eq!(count(&report, "Sets"), 0, "--ratio=0:1 sends no set");
    assert_eq!(
        delta(&before, &after, "cmd_get"),
        gets,
        "memcached saw every get"
    );
    assert_eq!(delta(&before, &after, "cmd_set"), 0);
    assert_eq!(
        delta(&before, &after, "get_misses"),
        0,
        "all keys were preloaded"
    );
    assert_eq!(delta(&before, &after, "get_hits"), gets, "every get hit");
    assert_eq!(
        field(&report, "Gets", "Misses/sec"),
        0.0,
        "kvbench saw no miss"
    );
    assert_eq!(
        field(&report, "Gets", "Hits/sec"),
        field(&report, "Gets", "Ops/sec"),
        "kvbench counted every get as a hit"
    );

    let before = server.stats();
    let report = run(
        &server,
        protocol,
        &[
            "-t",
            "2",
            "-c",
            "5",
            "--ratio=0:1",
            "--key-prefix=never-written-",
            "--key-minimum=1",
            "--key-maximum=1000",
            "-n",
            "200",
        ],
    );
    let after = server.stats();
    let gets = count(&report, "Gets");
    assert_eq!(gets, 2_000, "2 x 5 clients x 200 gets");
    assert_eq!(delta(&before, &after, "cmd_get"), gets);
    assert_eq!(
        delta(&before, &after, "get_hits"),
        0,
        "no key of that prefix exists"
    );
    assert_eq!(
        delta(&before, &after, "get_misses"),
        gets,
        "every get missed"
    );
    assert_eq!(
        field(&report, "Gets", "Hits/sec"),
        0.0,
        "kvbench saw no hit"
    );
    assert_eq!(
        field(&report, "Gets", "Misses/sec"),
        field(&report, "Gets", "Ops/sec"),
        "kvbench counted every get as a miss"
    );
}

#[test]
fn text_hits_and_misses_match_memcached() {
    hits_and_misses_match_memcached(TEXT);
}

#[test]
fn binary_hits_and_misses_match_memcached() {
    hits_and_misses_match_memcached(BINARY);
}

// ---------------------------------------------------------------------------------------
// Pipelining.

fn pipeline_keeps_the_exact_count(protocol: &str) {
    let server = Memcached::start();
    // 1000 is not a multiple of 32: the last batch is a partial one.
    let report = run(
        &server,
        protocol,
        &[
            "-t",
            "2",
            "-c",
            "5",
            "-n",
            "1000",
            "--ratio=1:1",
            "--key-maximum=1000",
            "--pipeline=32",
        ],
    );
    let stats = server.stats();
    assert_eq!(stat(&stats, "cmd_set"), 5_000);
    assert_eq!(stat(&stats, "cmd_get"), 5_000);
    assert_eq!(count(&report, "Totals"), 10_000);
    let hits = stat(&stats, "get_hits");
    let seen_hits = measured_hits(&report);
    assert!(
        (seen_hits - hits as f64).abs() < 1.0,
        "pipelined: kvbench measured {seen_hits:.3} hits, memcached served {hits}"
    );
}

#[test]
fn text_pipeline_keeps_the_exact_count() {
    pipeline_keeps_the_exact_count(TEXT);
}

#[test]
fn binary_pipeline_keeps_the_exact_count() {
    pipeline_keeps_the_exact_count(BINARY);
}

/// A `--test-time` run ends with requests in flight; what memcached ran must be what
/// kvbench counted (`Count`) plus what it says it left unanswered (`"Unfinished"`), never
/// more: with a pipeline the worker's last wake-up used to end past the deadline with
/// other connections' replies come but unread, and those requests were in no figure.
fn timed_pipeline_counts_every_request_memcached_ran(protocol: &str) {
    let server = Memcached::start();
    let report = run(
        &server,
        protocol,
        &[
            "-t",
            "2",
            "-c",
            "3",
            "--test-time=1",
            "--ratio=1:1",
            "--key-maximum=100",
            "--pipeline=16",
        ],
    );
    let stats = server.stats();
    let ran = stat(&stats, "cmd_set") + stat(&stats, "cmd_get");
    let counted = count(&report, "Totals");
    let unanswered = report["ALL STATS"]["Unfinished"]["In Flight At End"]
        .as_u64()
        .unwrap_or(0);
    // memcached may not have run every request still in flight when kvbench closed its
    // connections, so the bound is one-sided there.
    assert!(
        counted <= ran && ran <= counted + unanswered,
        "memcached ran {ran} requests; kvbench counted {counted} and left {unanswered} unanswered"
    );
}

#[test]
fn text_timed_pipeline_counts_every_request_memcached_ran() {
    timed_pipeline_counts_every_request_memcached_ran(TEXT);
}

#[test]
fn binary_timed_pipeline_counts_every_request_memcached_ran() {
    timed_pipeline_counts_every_request_memcached_ran(BINARY);
}

// ---------------------------------------------------------------------------------------
// Value sizes.

/// A set-only pass stores values of exactly `-d SIZE` bytes, and a GET-only pass over them
/// reads every one back as a hit (large values arrive over many reads).
fn values_round_trip(protocol: &str, size: usize, keys: u64) {
    let server = Memcached::start();
    let size_arg = size.to_string();
    let max_arg = format!("--key-maximum={keys}");
    run(
        &server,
        protocol,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--ratio=1:0",
            "--key-pattern=S:S",
            "-n",
            "allkeys",
            "--key-minimum=1",
            &max_arg,
            "-d",
            &size_arg,
        ],
    );
    assert_eq!(stat(&server.stats(), "curr_items"), keys);
    for key in [1, keys / 2, keys] {
        let name = format!("memtier-{key}");
        let value = server
            .get(&name)
            .unwrap_or_else(|| panic!("{name} was not stored"));
        assert_eq!(value.len(), size, "length of {name}");
    }

    let before = server.stats();
    let report = run(
        &server,
        protocol,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--ratio=0:1",
            "--key-minimum=1",
            &max_arg,
            "-n",
            "50",
            "--pipeline=4",
            "-d",
            &size_arg,
        ],
    );
    let after = server.stats();
    assert_eq!(count(&report, "Gets"), 100);
    assert_eq!(delta(&before, &after, "get_hits"), 100);
    assert_eq!(field(&report, "Gets", "Misses/sec"), 0.0);
    // Every byte of every value came back: RX covers at least 100 values.
    let rx_kb = field(&report, "Gets", "KB/sec RX");
    let ops = field(&report, "Gets", "Ops/sec");
    let rx_per_get = rx_kb * 1024.0 / ops;
    assert!(
        rx_per_get >= size as f64,
        "kvbench received {rx_per_get:.1} bytes per get of a {size}-byte value"
    );
}

#[test]
fn text_one_byte_values_round_trip() {
    values_round_trip(TEXT, 1, 1000);
}

#[test]
fn binary_one_byte_values_round_trip() {
    values_round_trip(BINARY, 1, 1000);
}

#[test]
fn text_100k_values_round_trip() {
    values_round_trip(TEXT, 102_400, 50);
}

#[test]
fn binary_100k_values_round_trip() {
    values_round_trip(BINARY, 102_400, 50);
}

/// A `--key-prefix` memcached cannot take is refused before any connection: with a
/// space every text GET was two keys (the server counted 20 gets for kvbench's 10), a
/// CR LF sent a command of the prefix's own, and a key over 250 bytes ended the run with
/// an error that did not say why.
#[test]
fn key_prefixes_memcached_cannot_take_are_refused() {
    let server = Memcached::start();
    let long = "k".repeat(245);
    for (protocol, prefix, needle) in [
        (
            "memcache_text",
            "a b",
            "cannot hold spaces or control characters",
        ),
        (
            "memcache_text",
            "a\r\nversion\r\n",
            "cannot hold spaces or control characters",
        ),
        ("memcache_binary", long.as_str(), "at most 250 bytes"),
        ("memcache_text", long.as_str(), "at most 250 bytes"),
    ] {
        let prefix_arg = format!("--key-prefix={prefix}");
        let out = kvbench_at(
            server.port,
            &[
                "-P",
                protocol,
                "-n",
                "10",
                "--key-maximum=999999",
                &prefix_arg,
            ],
        )
        .run();
        assert_eq!(out.status.code(), Some(1), "{protocol}: {}", out.describe());
        let stderr = out.stderr_text();
        assert!(
            stderr.starts_with("error: ") && stderr.contains(needle) && stderr.lines().count() == 1,
            "{protocol} {prefix:?}: {stderr}"
        );
    }
    // The binary protocol's keys are bytes: a space is fine there.
    kvbench_at(
        server.port,
        &[
            "-P",
            "memcache_binary",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10",
            "--ratio=1:0",
            "--key-prefix=a b-",
        ],
    )
    .ok();
    let stats = server.stats();
    assert_eq!(
        stat(&stats, "cmd_set"),
        10,
        "only the binary run's SETs: {stats:?}"
    );
    assert_eq!(stat(&stats, "cmd_get"), 0);
}

#[test]
fn select_db_zero_runs_against_memcached_as_memtier_allows() {
    // memtier refuses --select-db only above 0 with memcached (database 0 needs no
    // SELECT), so a script that always passes --select-db=0 runs against either server.
    let server = Memcached::start();
    for protocol in [TEXT, BINARY] {
        let before = server.stats();
        let report = run(
            &server,
            protocol,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "10",
                "--ratio=1:1",
                "--select-db=0",
            ],
        );
        let after = server.stats();
        assert_eq!(delta(&before, &after, "cmd_set"), 10, "{protocol}");
        assert_eq!(delta(&before, &after, "cmd_get"), 10, "{protocol}");
        assert_eq!(report["configuration"]["select-db"], 0, "{protocol}");
    }
}
