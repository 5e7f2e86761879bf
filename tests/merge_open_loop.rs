//! `kvbench merge` of shards (`--shard=I/2`) that carry more than the ALL STATS rows, run
//! against real servers: a rate sweep merged step by step, an open-loop run's service
//! times and schedule, a memcached pool's per-server rows and a replica's visibility lag.
//! Counts are checked against the shards' sums and what the servers saw; every merged
//! percentile against python hdrh's reading of the union of the shards' histograms.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::python::{python, python_hdrh};
use common::{Memcached, RedisServer, TestDir, kvbench, kvbench_at, read_json, wait_until};
use serde_json::Value;

/// `[count, p50_us, p99_us, p99.9_us]` of the sum of the compressed histograms found at
/// every key path of `argv[1]` (a JSON list of lists of keys) in every file that follows.
const PY_SUM_AT: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
paths = json.loads(sys.argv[1])
total = HdrHistogram(1, 3600000000, 3)
for f in sys.argv[2:]:
    doc = json.load(open(f))
    for path in paths:
        v = doc
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if v:
            total.add(HdrHistogram.decode(v))
print(json.dumps([total.get_total_count()] + [total.get_value_at_percentile(p) for p in (50, 99, 99.9)]))
"#;

/// What python hdrh makes of the union of the histograms at `paths` in `files`.
fn union_at(paths: &[Vec<&str>], files: &[PathBuf]) -> Vec<u64> {
    let spec = serde_json::to_string(paths).expect("paths as JSON");
    let mut args: Vec<&Path> = vec![Path::new(&spec)];
    args.extend(files.iter().map(PathBuf::as_path));
    python(PY_SUM_AT, &args)
        .as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_u64().expect("a number"))
        .collect()
}

/// The compressed histogram under a row-like object's "Percentile Latencies".
fn row_hist<'a>(prefix: &[&'a str]) -> Vec<&'a str> {
    let mut p = prefix.to_vec();
    p.extend([
        "Percentile Latencies",
        "Histogram log format",
        "Compressed Histogram",
    ]);
    p
}

/// `[p50, p99, p99.9]` of a JSON object's `p50.00`... keys, in microseconds.
fn pcts_us(obj: &Value) -> Vec<u64> {
    ["p50.00", "p99.00", "p99.90"]
        .iter()
        .map(|k| {
            let ms = obj[*k].as_f64().unwrap_or_else(|| panic!("{k} in {obj}"));
            (ms * 1000.0).round() as u64
        })
        .collect()
}

fn count(v: &Value) -> u64 {
    v["Count"]
        .as_u64()
        .unwrap_or_else(|| panic!("Count in {v}"))
}

/// Runs the two shards of `args` at once (each adds `--shard=I/2` and its own JSON file)
/// and returns their JSON files.
fn two_shards(dir: &TestDir, start: impl Fn() -> common::Kvbench) -> Vec<PathBuf> {
    let running: Vec<_> = (0..2)
        .map(|i| {
            let json = dir.file_arg(&format!("shard{i}.json"));
            start()
                .args(&[
                    format!("--shard={i}/2"),
                    format!("--json-out-file={json}"),
                    "--hide-histogram".to_string(),
                ])
                .spawn()
        })
        .collect();
    for shard in running {
        let run = shard.wait(common::KVBENCH_TIMEOUT);
        assert!(run.status.success(), "{}", run.describe());
    }
    (0..2)
        .map(|i| dir.file(&format!("shard{i}.json")))
        .collect()
}

/// `kvbench merge` of `inputs` into `dir/merged.json`: its stdout and the JSON.
fn merge(dir: &TestDir, inputs: &[PathBuf]) -> (String, Value) {
    let out = dir.file("merged.json");
    let mut args = vec![
        "merge".to_string(),
        format!("--json-out-file={}", out.display()),
    ];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = kvbench(&refs).ok();
    (run.stdout_text(), read_json(&out))
}

fn shard_json(inputs: &[PathBuf]) -> Vec<Value> {
    inputs.iter().map(|p| read_json(p)).collect()
}

#[test]
fn sweep_shards_merge_step_by_step() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("merge-sweep");
    let inputs = two_shards(&dir, || {
        kvbench_at(
            server.port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "--ratio=1:1",
                "--rate-sweep=400:800:400",
                "--step-duration=1",
                "--slo=p99:10000",
            ],
        )
    });
    let shards = shard_json(&inputs);
    let titles = [
        "STEP #1 RESULTS (400 requests/s)",
        "STEP #2 RESULTS (800 requests/s)",
    ];
    // Each shard names the whole rate in its titles and aims at its half of it.
    for s in &shards {
        for (title, half) in titles.iter().zip([200, 400]) {
            assert_eq!(
                s[*title]["Schedule"]["Target Rate"].as_u64(),
                Some(half),
                "{title}"
            );
        }
        let whole: Vec<u64> = s["Rate Steps"]["Steps"]
            .as_array()
            .expect("Steps")
            .iter()
            .map(|st| st["Whole Rate"].as_u64().expect("Whole Rate"))
            .collect();
        assert_eq!(whole, [400, 800]);
    }

    let (table, merged) = merge(&dir, &inputs);
    assert!(
        table.contains("STEP #2 RESULTS (800 requests/s)"),
        "{table}"
    );
    assert!(table.contains("RATE STEPS"), "{table}");
    assert!(
        table.contains("Highest rate that held p99 <= 10000 ms: 800 requests/s"),
        "{table}"
    );
    let steps = merged["Rate Steps"]["Steps"].as_array().expect("Steps");
    assert_eq!(steps.len(), 2);
    assert_eq!(
        merged["Rate Steps"]["Highest Rate Held"].as_u64(),
        Some(800)
    );
    let mut answered = 0;
    let mut in_flight = 0;
    for (k, title) in titles.iter().enumerate() {
        let step = &steps[k];
        let block = &merged[*title];
        assert_eq!(step["Target Rate"].as_u64(), Some([400, 800][k]));
        assert_eq!(
            block["Schedule"]["Target Rate"].as_u64(),
            Some([400, 800][k])
        );
        let sum = |f: &dyn Fn(&Value) -> f64| shards.iter().map(|s| f(&s[*title])).sum::<f64>();
        let achieved = sum(&|b| b["Totals"]["Ops/sec"].as_f64().expect("Ops/sec"));
        let got = step["Achieved Rate"].as_f64().expect("Achieved Rate");
        assert!((got - achieved).abs() < 0.02, "{got} vs {achieved}");
        let totals = sum(&|b| count(&b["Totals"]) as f64) as u64;
        assert_eq!(count(&block["Totals"]), totals);
        answered += totals;
        in_flight += block["Schedule"]["In Flight At End"]
            .as_u64()
            .expect("In flight");
        assert_eq!(step["Held"].as_str(), Some("true"));

        if python_hdrh() {
            // The step's curve: its answered requests and its unfinished ones at their age.
            let want = union_at(
                &[
                    row_hist(&[title, "Totals"]),
                    vec![
                        title,
                        "Schedule",
                        "Unfinished Age",
                        "Histogram log format",
                        "Compressed Histogram",
                    ],
                ],
                &inputs,
            );
            assert_eq!(pcts_us(step), want[1..], "{title}");
            let rows = union_at(&[row_hist(&[title, "Totals"])], &inputs);
            assert_eq!(rows[0], totals);
            assert_eq!(pcts_us(&block["Totals"]["Percentile Latencies"]), rows[1..]);
        }
    }
    // What the server saw: every answered request, and at most those left in flight.
    let stats = server.commandstats();
    let ran = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    assert!(
        (answered..=answered + in_flight).contains(&ran),
        "server ran {ran}, merged {answered} answered + {in_flight} in flight"
    );
}

#[test]
fn open_loop_shards_merge_service_time_and_schedule() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("merge-open-loop");
    let inputs = two_shards(&dir, || {
        kvbench_at(
            server.port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "--ratio=1:1",
                "--rate=1000",
                "--test-time=2",
            ],
        )
    });
    let shards = shard_json(&inputs);
    let (table, merged) = merge(&dir, &inputs);
    assert!(
        table.contains("\nSERVICE TIME (actual send -> reply"),
        "{table}"
    );
    assert!(
        table.contains(
            "\nOPEN LOOP SCHEDULE\nTarget        1000 requests/s in all (uniform arrivals)\n"
        ),
        "{table}"
    );
    let all = &merged["ALL STATS"];
    let schedule = &all["Schedule"];
    let sum = |key: &str| -> u64 {
        shards
            .iter()
            .map(|s| s["ALL STATS"]["Schedule"][key].as_u64().expect(key))
            .sum()
    };
    assert_eq!(schedule["Target Rate"].as_u64(), Some(1000));
    for key in [
        "Sent",
        "Late",
        "Late Waiting For Connection",
        "In Flight At End",
    ] {
        assert_eq!(schedule[key].as_u64(), Some(sum(key)), "{key}");
    }
    let achieved: f64 = shards
        .iter()
        .map(|s| {
            s["ALL STATS"]["Schedule"]["Achieved Rate"]
                .as_f64()
                .expect("rate")
        })
        .sum();
    let got = schedule["Achieved Rate"].as_f64().expect("Achieved Rate");
    assert!((got - achieved).abs() < 0.02, "{got} vs {achieved}");
    let totals = count(&all["Totals"]);
    let shard_totals: u64 = shards
        .iter()
        .map(|s| count(&s["ALL STATS"]["Totals"]))
        .sum();
    assert_eq!(totals, shard_totals);
    let stats = server.commandstats();
    let ran = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    let in_flight = sum("In Flight At End");
    assert!(
        (totals..=totals + in_flight).contains(&ran),
        "server ran {ran}, merged {totals}"
    );
    // Every second's service times carry their histogram, and the seconds add up.
    let series = all["Totals"]["Time-Serie"].as_object().expect("series");
    let per_second: u64 = series.values().map(count).sum();
    assert_eq!(per_second, totals);
    assert!(series.values().filter(|s| count(s) > 0).all(|s| {
        s["Service Latency"]["Compressed Histogram"]
            .as_str()
            .is_some_and(|h| h.starts_with("HIST"))
    }));

    if !python_hdrh() {
        return;
    }
    for row in ["Sets", "Gets", "Totals"] {
        let want = union_at(&[row_hist(&["ALL STATS", row, "Service Latency"])], &inputs);
        assert_eq!(want[0], count(&all[row]), "{row}");
        assert_eq!(
            pcts_us(&all[row]["Service Latency"]["Percentile Latencies"]),
            want[1..],
            "{row} service"
        );
    }
    let lag = union_at(
        &[vec![
            "ALL STATS",
            "Schedule",
            "Lag",
            "Histogram log format",
            "Compressed Histogram",
        ]],
        &inputs,
    );
    assert_eq!(lag[0], sum("Sent"));
    assert_eq!(pcts_us(&schedule["Lag"]), lag[1..]);
}

#[test]
fn pool_shards_merge_per_server_rows() {
    let servers = [Memcached::start(), Memcached::start()];
    let list = format!("{},{}", servers[0].addr(), servers[1].addr());
    let dir = TestDir::new("merge-pool");
    let inputs = two_shards(&dir, || {
        kvbench(&[
            "-P",
            "memcache_text",
            &format!("--servers={list}"),
            "--ratio=1:1",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "300",
        ])
    });
    let shards = shard_json(&inputs);
    let (table, merged) = merge(&dir, &inputs);
    assert!(table.contains("\n\nPER SERVER\n"), "{table}");
    let rows = merged["ALL STATS"]["Servers"].as_object().expect("Servers");
    assert_eq!(rows.len(), 2);
    let mut all = 0;
    for server in &servers {
        let addr = server.addr();
        let row = &rows[&addr];
        let want: u64 = shards
            .iter()
            .map(|s| count(&s["ALL STATS"]["Servers"][&addr]))
            .sum();
        assert_eq!(count(row), want, "{addr}");
        // What the server saw.
        let stats = server.stats();
        assert_eq!(
            stats["cmd_get"] + stats["cmd_set"],
            want,
            "{addr}: {stats:?}"
        );
        assert_eq!(row["Errors"].as_u64(), Some(0));
        all += want;
        if python_hdrh() {
            let union = union_at(&[row_hist(&["ALL STATS", "Servers", &addr])], &inputs);
            assert_eq!(union[0], want);
            assert_eq!(pcts_us(&row["Percentile Latencies"]), union[1..], "{addr}");
        }
    }
    assert_eq!(all, 2 * 2 * 300);
    assert_eq!(count(&merged["ALL STATS"]["Totals"]), all);
}

#[test]
fn replica_shards_merge_visibility() {
    let primary = RedisServer::start();
    let port = primary.port.to_string();
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_until("the replica's link is up", Duration::from_secs(30), || {
        replica
            .cli(&["INFO", "replication"])
            .contains("master_link_status:up")
    });
    let from = replica.addr();
    let dir = TestDir::new("merge-visibility");
    let inputs = two_shards(&dir, || {
        kvbench_at(
            primary.port,
            &[
                "--visibility-from",
                &from,
                "--visibility-ratio=5",
                "--ratio=1:0",
                "--distinct-client-seed",
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "500",
            ],
        )
    });
    let shards = shard_json(&inputs);
    let (table, merged) = merge(&dir, &inputs);
    assert!(table.contains("\n\nREPLICA VISIBILITY\n"), "{table}");
    let vis = &merged["ALL STATS"]["Replica Visibility"];
    let sum = |f: &dyn Fn(&Value) -> u64| -> u64 {
        shards
            .iter()
            .map(|s| f(&s["ALL STATS"]["Replica Visibility"]))
            .sum()
    };
    let seen = sum(&|v| count(&v["Lag"]));
    assert_eq!(count(&vis["Lag"]), seen);
    assert!(seen > 0);
    for key in ["Timeouts", "Untracked"] {
        assert_eq!(
            vis[key].as_u64(),
            Some(sum(&|v| v[key].as_u64().expect(key))),
            "{key}"
        );
    }
    // Two shards x 2 clients x 500 SETs, one in 5 tracked: each seen or accounted for.
    assert_eq!(
        seen + vis["Timeouts"].as_u64().unwrap_or(0) + vis["Untracked"].as_u64().unwrap_or(0),
        400
    );
    assert_eq!(primary.commandstats().get("set").copied(), Some(2000));
    let series: u64 = vis["Lag"]["Time-Serie"]
        .as_object()
        .expect("series")
        .values()
        .map(count)
        .sum();
    assert_eq!(series, seen);
    if python_hdrh() {
        let union = union_at(
            &[row_hist(&["ALL STATS", "Replica Visibility", "Lag"])],
            &inputs,
        );
        assert_eq!(union[0], seen);
        assert_eq!(pcts_us(&vis["Lag"]["Percentile Latencies"]), union[1..]);
    }
}

/// A closed-loop run and a `--rate-limiting` one are not merged, and the refusal names
/// the flag the open-loop run used (it said `--rate` whichever it was).
#[test]
fn a_closed_loop_run_is_not_merged_with_a_paced_one() {
    let server = RedisServer::start();
    let dir = TestDir::new("merge-closed-paced");
    for (name, extra) in [("paced", &["--rate-limiting=200"][..]), ("closed", &[][..])] {
        let json = dir.file_arg(&format!("{name}.json"));
        kvbench_at(
            server.port,
            &["-t", "1", "-c", "1", "-n", "50", "--hide-histogram"],
        )
        .args(extra)
        .args(&[format!("--json-out-file={json}")])
        .ok();
    }
    let paced = dir.file_arg("paced.json");
    let closed = dir.file_arg("closed.json");
    let run = kvbench(&["merge", &paced, &closed]).run();
    assert_eq!(run.out.status.code(), Some(1), "{}", run.describe());
    let stderr = run.stderr_text();
    assert!(
        stderr.contains("a closed-loop run cannot be merged")
            && stderr.contains("(--rate-limiting)"),
        "{stderr}"
    );
}
