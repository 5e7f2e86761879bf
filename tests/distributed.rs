//! One workload over several kvbench processes, against a real redis-server: `--shard`
//! covers every key exactly once, `--start-at` connects first and starts the shards
//! together, `kvbench merge` adds their results exactly (python hdrh as the referee), and
//! `--hdr-log` writes an interval log that python hdrh reads back.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::python::{PY_LOG_SUMS, PY_UNION, figures, python, python_hdrh};
use common::{
    CONDITION_TIMEOUT, KVBENCH_TIMEOUT, RedisServer, TestDir, kvbench, kvbench_at, wait_until,
};

const SHARDS: u32 = 3;
const KEYS: u64 = 3000;

/// The union of the inputs' first-second `Totals` histograms: `{"0": [count, p50...]}`.
const PY_SECOND_UNION: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
h = HdrHistogram(1, 3600000000, 3)
for path in sys.argv[1:]:
    second = json.load(open(path))["ALL STATS"]["Totals"]["Time-Serie"]["0"]
    h.add(HdrHistogram.decode(second["Compressed Histogram"]))
print(json.dumps({"0": [h.get_total_count()] + [h.get_value_at_percentile(p) for p in (50, 99, 99.9)]}))
"#;

fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as u64
}

/// `[count, p50, p99, p99.9]` of a JSON row (or second), latencies in microseconds.
fn json_figures(row: &serde_json::Value, percentiles: &serde_json::Value) -> Vec<u64> {
    let us = |key: &str| (percentiles[key].as_f64().expect(key) * 1000.0).round() as u64;
    vec![
        row["Count"].as_u64().expect("Count"),
        us("p50.00"),
        us("p99.00"),
        us("p99.90"),
    ]
}

#[test]
fn three_shards_started_together_write_every_key_once_and_merge_exactly() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("shards");
    // Far enough ahead for three processes to start and connect on a loaded machine.
    let start = SystemTime::now() + Duration::from_secs(5);
    let start_ms = epoch_ms(start);
    let start_arg = format!("--start-at={}.{:03}", start_ms / 1000, start_ms % 1000);
    let jsons: Vec<PathBuf> = (0..SHARDS)
        .map(|i| dir.file(&format!("shard{i}.json")))
        .collect();
    let running: Vec<_> = jsons
        .iter()
        .enumerate()
        .map(|(i, json)| {
            kvbench_at(
                server.port,
                &[
                    "-t",
                    "1",
                    "-c",
                    "2",
                    "-n",
                    "allkeys",
                    "--ratio=1:0",
                    "--key-pattern=P:P",
                    "--key-minimum=1",
                    &format!("--key-maximum={KEYS}"),
                    "--hide-histogram",
                    &format!("--shard={i}/{SHARDS}"),
                    &start_arg,
                    &format!("--json-out-file={}", json.display()),
                ],
            )
            .spawn()
        })
        .collect();

    // Connected (6 clients and the harness's redis-cli), and nothing sent yet.
    // Past the start time, the first shards may be done and gone before the last one
    // connects: then there is nothing left to check here.
    common::wait_until("every shard connected", CONDITION_TIMEOUT, || {
        server.connected_clients() >= 7 || SystemTime::now() >= start
    });
    let sets_before = server.commandstats().get("set").copied().unwrap_or(0);
    let checked_at = SystemTime::now();
    if checked_at + Duration::from_millis(200) < start {
        assert_eq!(sets_before, 0, "a shard sent before its start time");
    } else {
        eprintln!("the shards connected too close to the start time to check they waited");
    }
    for shard in running {
        let run = shard.wait(KVBENCH_TIMEOUT);
        assert!(run.status.success(), "{}", run.describe());
        assert!(run.stderr_text().contains("Connecting now, starting at"));
    }

    // What the server saw: keys 1..3000, each written once.
    assert_eq!(server.dbsize(), KEYS);
    assert_eq!(server.commandstats().get("set").copied(), Some(KEYS));
    assert_eq!(
        server.cli(&["EXISTS", "memtier-1", &format!("memtier-{KEYS}")]),
        "2"
    );
    assert_eq!(
        server.cli(&["EXISTS", "memtier-0", &format!("memtier-{}", KEYS + 1)]),
        "0"
    );

    // Each began at the start time, so within 100 ms of each other; each wrote its third.
    let docs: Vec<serde_json::Value> = jsons.iter().map(|p| common::read_json(p)).collect();
    let starts: Vec<u64> = docs
        .iter()
        .map(|d| {
            d["ALL STATS"]["Runtime"]["Start time"]
                .as_u64()
                .expect("Start time")
        })
        .collect();
    for (i, d) in docs.iter().enumerate() {
        assert!(
            starts[i].abs_diff(start_ms) <= 5,
            "{starts:?} vs {start_ms}"
        );
        assert_eq!(d["ALL STATS"]["Totals"]["Count"].as_u64(), Some(KEYS / 3));
        assert_eq!(d["configuration"]["shard"], format!("{i}/{SHARDS}"));
        // Sending began in the first second, not a second late.
        let first = &d["ALL STATS"]["Totals"]["Time-Serie"]["0"];
        assert!(first["Count"].as_u64().unwrap_or(0) > 0, "{first}");
    }
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(spread <= 100, "starts {starts:?}");

    // Merged by the command: counts summed, percentiles from the summed histograms.
    let merged_path = dir.file("merged.json");
    let mut args = vec![
        "merge".to_string(),
        format!("--json-out-file={}", merged_path.display()),
    ];
    args.extend(jsons.iter().map(|p| p.display().to_string()));
    let merge = kvbench(&args.iter().map(String::as_str).collect::<Vec<_>>()).ok();
    let table = merge.stdout_text();
    assert_eq!(table.matches("ALL STATS").count(), 1, "{table}");
    let merged = common::read_json(&merged_path);
    let all = &merged["ALL STATS"];
    assert_eq!(all["Totals"]["Count"].as_u64(), Some(KEYS));
    assert_eq!(all["Sets"]["Count"].as_u64(), Some(KEYS));
    assert_eq!(
        merged["configuration"]["shard"].as_array().map(Vec::len),
        Some(3)
    );
    assert!(
        !merge.stderr_text().contains("note:"),
        "{}",
        merge.describe()
    );

    // Two of the three: merged, with a note naming the shard not given.
    let part_path = dir.file("part.json");
    let part = kvbench(&[
        "merge",
        &format!("--json-out-file={}", part_path.display()),
        &jsons[0].display().to_string(),
        &jsons[2].display().to_string(),
    ])
    .ok();
    assert!(
        part.stderr_text()
            .contains("note: 2 of the 3 shards merged; not given: 1/3"),
        "{}",
        part.describe()
    );
    let part = common::read_json(&part_path);
    assert_eq!(
        part["ALL STATS"]["Totals"]["Count"].as_u64(),
        Some(2 * KEYS / 3)
    );

    if !python_hdrh() {
        return;
    }
    let refs: Vec<&Path> = jsons.iter().map(PathBuf::as_path).collect();
    let union = python(PY_UNION, &refs);
    for row in ["Sets", "Totals"] {
        assert_eq!(
            json_figures(&all[row], &all[row]["Percentile Latencies"]),
            figures(&union, row),
            "{row}: count, p50, p99, p99.9"
        );
    }
    // The merged first second: exact percentiles from the shards' per-second histograms.
    let second = &all["Totals"]["Time-Serie"]["0"];
    assert_eq!(
        json_figures(second, second),
        figures(&python(PY_SECOND_UNION, &refs), "0"),
        "merged second 0"
    );
}

#[test]
fn hdr_log_reads_back_with_python_hdrh_and_merges() {
    let server = RedisServer::start();
    let dir = TestDir::new("hdr-log");
    let log = dir.file("run.hlog");
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "1500",
            "--ratio=1:1",
            "--hide-histogram",
            &format!("--hdr-log={}", log.display()),
        ],
    )
    .with_json()
    .ok();
    let json = run.json();
    let text = std::fs::read_to_string(&log).expect("log written");
    assert!(
        text.contains("#[Histogram log format version 1.3]"),
        "{text}"
    );
    // The whole workload in FILE, each command in FILE_<CMD>, no line tagged.
    let set_log = dir.file("run_SET.hlog");
    let get_log = dir.file("run_GET.hlog");
    for path in [&log, &set_log, &get_log] {
        let text = std::fs::read_to_string(path).expect("log written");
        assert!(!text.contains("Tag="), "{}:\n{text}", path.display());
    }
    assert_eq!(json["configuration"]["hdr_log"], log.display().to_string());

    // The logs merge like any result: one row per command, the counts the run had.
    let merged = kvbench(&[
        "merge",
        &log.to_string_lossy(),
        &set_log.to_string_lossy(),
        &get_log.to_string_lossy(),
    ])
    .ok();
    let table = merged.stdout_text();
    assert!(table.lines().any(|l| l.starts_with("Sets")), "{table}");

    if !python_hdrh() {
        return;
    }
    // Each file read as hdrh's documentation reads a log (every line summed) gives its
    // row's count and percentiles: nothing counted twice.
    let sums = python(PY_LOG_SUMS, &[&log, &set_log, &get_log]);
    let all = &json["ALL STATS"];
    for (path, row) in [(&set_log, "Sets"), (&get_log, "Gets"), (&log, "Totals")] {
        assert_eq!(
            figures(&sums, &path.display().to_string()),
            json_figures(&all[row], &all[row]["Percentile Latencies"]),
            "{} vs {row}",
            path.display()
        );
    }
}

#[test]
fn bad_shards_and_start_times_are_usage_errors() {
    let past = SystemTime::now() - Duration::from_secs(10);
    let past_arg = format!("--start-at={}", epoch_ms(past) / 1000);
    for (args, says) in [
        (
            vec!["--shard=3/3"],
            "--shard=3/3: the shard number must be below",
        ),
        (
            vec!["--shard=0/0"],
            "--shard=0/0: the number of shards must be at least 1",
        ),
        (vec!["--shard=x"], "--shard=x: expected I/N"),
        (vec![past_arg.as_str()], "s in the past"),
        (
            vec!["--start-at=tomorrow"],
            "--start-at=tomorrow: expected seconds",
        ),
    ] {
        let began = Instant::now();
        let run = kvbench_at(1, &args).run();
        assert_eq!(run.status.code(), Some(1), "{args:?}: {}", run.describe());
        let stderr = run.stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(says),
            "{stderr}"
        );
        assert!(began.elapsed() < KVBENCH_TIMEOUT);
    }
}

/// Starts `shards` shards of `args` at one `--start-at` a few seconds ahead; returns
/// the start time (epoch ms) and their JSON files once every one has finished.
fn run_shards_together(
    server: &RedisServer,
    dir: &TestDir,
    shards: u32,
    args: &[&str],
) -> (u64, Vec<PathBuf>) {
    let start_ms = epoch_ms(SystemTime::now() + Duration::from_secs(4));
    let start_arg = format!("--start-at={}.{:03}", start_ms / 1000, start_ms % 1000);
    let jsons: Vec<PathBuf> = (0..shards)
        .map(|i| dir.file(&format!("shard{i}.json")))
        .collect();
    let running: Vec<_> = jsons
        .iter()
        .enumerate()
        .map(|(i, json)| {
            let shard = format!("--shard={i}/{shards}");
            let out = format!("--json-out-file={}", json.display());
            let mut all = args.to_vec();
            all.extend([shard.as_str(), start_arg.as_str(), out.as_str()]);
            kvbench_at(server.port, &all).spawn()
        })
        .collect();
    for shard in running {
        let run = shard.wait(KVBENCH_TIMEOUT);
        assert!(run.status.success(), "{}", run.describe());
    }
    (start_ms, jsons)
}

/// `--rate` is the whole workload's: two shards of `--rate=2000` each send about 1000/s
/// (the shards' rates add up to 2000 exactly), their merge about 2000/s with exact
/// response-time percentiles. With `--warmup` the warm-up starts at the start time and
/// the measured part (the JSON's Start time) after it.
#[test]
fn shards_divide_a_total_rate_and_merge_to_it() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("shard-rate");
    let (start_ms, jsons) = run_shards_together(
        &server,
        &dir,
        2,
        &[
            "-t",
            "1",
            "-c",
            "4",
            "--rate=2000",
            "--warmup=1",
            "--test-time=3",
            "--ratio=1:1",
            "--key-maximum=1000",
        ],
    );
    let docs: Vec<serde_json::Value> = jsons.iter().map(|p| common::read_json(p)).collect();
    let mut measured = 0;
    for d in &docs {
        assert_eq!(d["configuration"]["rate"], 2000, "the rate as given");
        let schedule = &d["ALL STATS"]["Schedule"];
        assert_eq!(schedule["Target Rate"], 1000, "{schedule}");
        let achieved = schedule["Achieved Rate"].as_f64().expect("Achieved Rate");
        assert!((700.0..=1100.0).contains(&achieved), "{schedule}");
        // Measuring starts once the second of warm-up after the start time is over.
        let start = d["ALL STATS"]["Runtime"]["Start time"]
            .as_u64()
            .expect("Start time");
        assert!(
            start.abs_diff(start_ms + 1000) <= 5,
            "{start} vs {start_ms} + 1000"
        );
        measured += d["ALL STATS"]["Totals"]["Count"].as_u64().expect("Count");
    }
    // The server saw the measured requests and the warm-up's (about 2000 in all).
    let stats = server.commandstats();
    let calls = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    assert!(
        calls >= measured + 1000 && calls <= measured + 3000,
        "server {calls}, measured {measured}"
    );

    let merged_path = dir.file("merged.json");
    let merged_arg = format!("--json-out-file={}", merged_path.display());
    let mut args = vec!["merge", merged_arg.as_str()];
    let names: Vec<String> = jsons.iter().map(|p| p.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let table = kvbench(&args).ok().stdout_text();
    assert_eq!(table.matches("ALL STATS").count(), 1, "{table}");
    let merged = common::read_json(&merged_path);
    let totals = &merged["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"].as_u64(), Some(measured));
    let ops = totals["Ops/sec"].as_f64().expect("Ops/sec");
    assert!((1400.0..=2200.0).contains(&ops), "merged {ops}/s");

    if !python_hdrh() {
        return;
    }
    let refs: Vec<&Path> = jsons.iter().map(PathBuf::as_path).collect();
    let union = python(PY_UNION, &refs);
    let all = &merged["ALL STATS"];
    for row in ["Sets", "Gets", "Totals"] {
        assert_eq!(
            json_figures(&all[row], &all[row]["Percentile Latencies"]),
            figures(&union, row),
            "{row}: count, p50, p99, p99.9 (response time)"
        );
    }
}

/// A shard stopped while it waits for `--start-at` (Ctrl-C before its start) writes
/// valid results with nothing run; merged with a shard that ran, the merged run is the
/// one that ran: its start, duration and requests. (The stopped shard's start lay 30 s
/// ahead, which stretched the merged runtime by that much.)
#[test]
fn a_shard_stopped_before_its_start_does_not_stretch_the_merge() {
    let server = RedisServer::start();
    let dir = TestDir::new("stopped-before-start");
    let (early, ran, merged) = (
        dir.file("early.json"),
        dir.file("ran.json"),
        dir.file("merged.json"),
    );
    let start_ms = epoch_ms(SystemTime::now() + Duration::from_secs(30));
    let start_arg = format!("--start-at={}.{:03}", start_ms / 1000, start_ms % 1000);
    let json_arg = |p: &Path| format!("--json-out-file={}", p.display());
    let waiting = kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "--test-time=1", "--hide-histogram"],
    )
    .args(&[start_arg.as_str(), &json_arg(&early)])
    .spawn();
    waiting.wait_for_stderr("Connecting now, starting at");
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    assert_eq!(
        unsafe { libc::kill(waiting.pid() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = waiting.wait(CONDITION_TIMEOUT);
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "-n", "200", "--hide-histogram"],
    )
    .args(&[json_arg(&ran)])
    .ok();
    kvbench(&["merge"])
        .args(&[early.display().to_string(), ran.display().to_string()])
        .args(&[json_arg(&merged)])
        .ok();
    let runtime = |p: &Path| common::read_json(p)["ALL STATS"]["Runtime"].clone();
    let (m, r) = (runtime(&merged), runtime(&ran));
    assert_eq!(m["Start time"], r["Start time"], "{m}");
    let duration = |v: &serde_json::Value| v["Total duration"].as_u64().expect("duration");
    assert!(duration(&m) <= duration(&r) + 1000, "{m} against {r}");
    let totals = common::read_json(&merged)["ALL STATS"]["Totals"]["Count"].clone();
    assert_eq!(totals.as_u64(), Some(200));
    // Nor the per-second series: the stopped shard's one empty second at its planned
    // start made the series 30 s long, a throughput chart falling to 0 for 29 of them.
    let seconds = |p: &Path| {
        common::read_json(p)["ALL STATS"]["Totals"]["Time-Serie"]
            .as_object()
            .map_or(0, |series| series.len())
    };
    assert!(seconds(&ran) >= 1, "the shard that ran has a series");
    assert_eq!(
        seconds(&merged),
        seconds(&ran),
        "merged series against the shard's"
    );
}

/// A connection whose handshake ends after `--start-at` (here the server is stopped
/// across the start time, so AUTH is answered late) starts late and says so: the run
/// used to begin in silence with its first second empty.
#[test]
fn a_handshake_that_ends_after_the_start_time_is_said() {
    let server = RedisServer::start_with(&["--requirepass", "s3cret"]);
    server.signal(libc::SIGSTOP);
    let start = SystemTime::now() + Duration::from_secs(2);
    let start_ms = epoch_ms(start);
    let start_arg = format!("--start-at={}.{:03}", start_ms / 1000, start_ms % 1000);
    let run = kvbench_at(
        server.port,
        &["-t", "1", "-c", "1", "--test-time=2", "-a", "s3cret"],
    )
    .args(&[start_arg.as_str(), "--hide-histogram"])
    .with_json()
    .spawn();
    run.wait_for_stderr("Connecting now, starting at");
    wait_until("half a second past the start", CONDITION_TIMEOUT, || {
        SystemTime::now() > start + Duration::from_millis(500)
    });
    server.signal(libc::SIGCONT);
    let out = run.wait(CONDITION_TIMEOUT);
    assert!(out.status.success(), "{}", out.describe());
    let stderr = out.stderr_text();
    assert!(
        stderr.contains("warning: the connection to 127.0.0.1:")
            && stderr.contains(
                "s after the start time: this client's first requests went out that late"
            ),
        "{stderr}"
    );
    let count = out.json()["ALL STATS"]["Totals"]["Count"]
        .as_u64()
        .unwrap_or(0);
    assert!(count > 0, "{}", out.describe());
}
