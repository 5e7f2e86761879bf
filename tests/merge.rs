//! Merging the results of three kvbench runs against one real redis-server, as shards of a
//! distributed benchmark would produce them: the merged counts are what the server ran,
//! the merged percentiles are those of the union of the three histograms (checked with
//! python hdrh), the merged JSON reads back, and the `.hgrm` files merge into a tagged
//! interval log that python hdrh reads with the same figures. `--command` runs keep the
//! commands their configuration records, and merge with files written before it did.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::python::{PY_LOG_SUMS, PY_UNION, python, python_hdrh};
use common::{KVBENCH_TIMEOUT, RedisServer, TestDir, kvbench_at, read_json};
use kvbench::merge::{MergeOptions, MergedResult, merge_files};
use kvbench::report::{hdr_log, json::render_json};
use kvbench::resultfile::{Content, read_file};

const SHARDS: usize = 3;
const REQUESTS_PER_CLIENT: u64 = 400;
const CLIENTS: u64 = 2;

/// Runs three kvbench processes at once against `server`, each writing its JSON and HDR
/// files into `dir` (`shardI.json`, `shardI_*.hgrm`).
fn run_shards(server: &RedisServer, dir: &TestDir) -> Vec<PathBuf> {
    let n = REQUESTS_PER_CLIENT.to_string();
    let clients = CLIENTS.to_string();
    let running: Vec<_> = (0..SHARDS)
        .map(|i| {
            let json = dir.file_arg(&format!("shard{i}.json"));
            let prefix = dir.file_arg(&format!("shard{i}"));
            kvbench_at(
                server.port,
                &[
                    "-t",
                    "1",
                    "-c",
                    &clients,
                    "-n",
                    &n,
                    "--ratio=1:1",
                    "--key-maximum=5000",
                    "--hide-histogram",
                    &format!("--json-out-file={json}"),
                    &format!("--hdr-file-prefix={prefix}"),
                ],
            )
            .spawn()
        })
        .collect();
    for shard in running {
        let run = shard.wait(KVBENCH_TIMEOUT);
        assert!(run.status.success(), "{}", run.describe());
    }
    (0..SHARDS)
        .map(|i| dir.file(&format!("shard{i}.json")))
        .collect()
}

/// `[count, p50, p99, p99.9]` of a merged JSON row, latencies back in microseconds.
fn merged_figures(merged: &serde_json::Value, row: &str) -> Vec<u64> {
    let r = &merged["ALL STATS"][row];
    let p = &r["Percentile Latencies"];
    let us = |key: &str| (p[key].as_f64().expect(key) * 1000.0).round() as u64;
    vec![
        r["Count"].as_u64().expect("Count"),
        us("p50.00"),
        us("p99.00"),
        us("p99.90"),
    ]
}

fn write_merged_json(m: &MergedResult, path: &Path) {
    let text = render_json(
        &m.shown(),
        &m.run_info,
        &[&m.results],
        &m.percentiles,
        m.hide_histogram,
    );
    std::fs::write(path, text).expect("write merged JSON");
}

#[test]
fn three_shards_merge_exactly() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("merge");
    let inputs = run_shards(&server, &dir);

    let m = merge_files(&inputs, &MergeOptions::default()).expect("merge");
    let totals = m.results.totals().expect("Totals");
    let expected = SHARDS as u64 * CLIENTS * REQUESTS_PER_CLIENT;
    assert_eq!(totals.count, expected);
    // What the server saw: every merged request is a SET or GET it ran.
    let stats = server.commandstats();
    let sets = stats.get("set").copied().unwrap_or(0);
    let gets = stats.get("get").copied().unwrap_or(0);
    assert_eq!(sets + gets, expected, "server commandstats: {stats:?}");
    let row = |name: &str| {
        m.results
            .rows
            .iter()
            .find(|r| r.name.row == name)
            .expect(name)
    };
    assert_eq!(row("Sets").count, sets);
    assert_eq!(row("Gets").count, gets);
    assert_eq!(m.run_info.threads, SHARDS);
    assert_eq!(
        totals.series.iter().map(|s| s.count).sum::<u64>(),
        expected,
        "every request is in one merged second"
    );

    // The merged JSON, written by the usual writer, reads back with the same figures.
    let merged_path = dir.file("merged.json");
    write_merged_json(&m, &merged_path);
    let back = read_file(&merged_path).expect("merged JSON reads back");
    let Content::Json(back) = back.content else {
        panic!("merged JSON read as a log");
    };
    let back_totals = back.blocks[0].totals().expect("Totals");
    assert_eq!(back_totals.count, expected);
    assert_eq!(back_totals.histogram.as_ref(), Some(&totals.histogram));
    let merged_json = common::read_json(&merged_path);
    assert_eq!(merged_json["run information"]["Threads"].as_u64(), Some(3));
    let from = merged_json["configuration"]["merged_from"]
        .as_array()
        .expect("merged_from");
    assert_eq!(from.len(), SHARDS);

    // The .hgrm files of every shard merge into one tagged interval log.
    let mut hgrms: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hgrm"))
        .collect();
    hgrms.sort();
    assert_eq!(hgrms.len(), SHARDS * 3, "FULL_RUN, SET and GET per shard");
    let from_logs = merge_files(&hgrms, &MergeOptions::default()).expect("merge logs");
    let names: Vec<&str> = from_logs
        .results
        .rows
        .iter()
        .map(|r| r.name.row.as_str())
        .collect();
    assert_eq!(names, ["Gets", "Sets", "Totals"], "in file-name order");
    for r in &from_logs.results.rows {
        let json_row = m
            .results
            .rows
            .iter()
            .find(|x| x.name.row == r.name.row)
            .expect("row");
        assert_eq!(r.count, json_row.count, "{}", r.name.row);
        assert_eq!(r.histogram, json_row.histogram, "{}", r.name.row);
    }
    let log_path = dir.file("merged.hlog");
    hdr_log::write_hdr_log(&log_path, std::slice::from_ref(&from_logs.results)).expect("write log");

    if !python_hdrh() {
        return;
    }
    let refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let union = python(PY_UNION, &refs);
    for row in ["Sets", "Gets", "Totals"] {
        let want: Vec<u64> = union[row]
            .as_array()
            .unwrap_or_else(|| panic!("python has no {row}"))
            .iter()
            .map(|x| x.as_u64().expect("a number"))
            .collect();
        assert_eq!(
            merged_figures(&merged_json, row),
            want,
            "{row}: count, p50, p99, p99.9"
        );
    }
    // The merged --hdr-log: the totals in its file, each command in its own, each summed
    // whole by python hdrh to that row's figures.
    let set_log = dir.file("merged_SET.hlog");
    let get_log = dir.file("merged_GET.hlog");
    let sums = python(PY_LOG_SUMS, &[&log_path, &set_log, &get_log]);
    for (path, row) in [
        (&set_log, "Sets"),
        (&get_log, "Gets"),
        (&log_path, "Totals"),
    ] {
        let key = path.display().to_string();
        let got: Vec<u64> = sums[&key]
            .as_array()
            .unwrap_or_else(|| panic!("python read no {key}: {sums}"))
            .iter()
            .map(|x| x.as_u64().expect("a number"))
            .collect();
        assert_eq!(got, merged_figures(&merged_json, row), "{key} vs {row}");
    }
}

#[test]
fn merging_mismatched_files_names_the_file() {
    let dir = TestDir::new("merge-bad");
    let good = dir.file("good.json");
    std::fs::write(&good, "{\"configuration\": {}}").expect("write");
    let err = merge_files(&[&good], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "{}: not a kvbench or memtier_benchmark result file (no \"ALL STATS\" or run results)",
            good.display()
        )
    );
}

/// One file given twice, under two spellings (a glob matching it twice, a link), is
/// refused: merged, its requests would be counted twice.
#[test]
fn a_file_given_twice_is_refused() {
    let dir = TestDir::new("merge-twice");
    let file = dir.file("run.json");
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/resultfile/testdata");
    let any_json = std::fs::read_dir(&reference)
        .expect("testdata")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a JSON result in testdata");
    std::fs::copy(any_json, &file).expect("copy");
    let link = dir.file("link.json");
    std::os::unix::fs::symlink(&file, &link).expect("link");
    let err = merge_files(&[&file, &link], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "{}: given twice (also as {}): its requests would be counted twice",
            link.display(),
            file.display()
        )
    );
}

/// A copy of a run's JSON under another name is that run again: refused, naming both
/// (it was merged and counted twice; only a link or the same path was caught).
#[test]
fn a_copy_of_a_result_is_refused() {
    let server = RedisServer::start();
    let dir = TestDir::new("merge-copy");
    let json = dir.file_arg("run.json");
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "200",
            "--hide-histogram",
            &format!("--json-out-file={json}"),
        ],
    )
    .run();
    assert!(run.status.success(), "{}", run.describe());
    assert_eq!(
        server.calls(),
        200 + 1,
        "the run's requests and the harness's INFO"
    );
    let copy = dir.file("copy.json");
    std::fs::copy(dir.file("run.json"), &copy).expect("copy");
    let err = merge_files(
        &[dir.file("run.json"), copy.clone()],
        &MergeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "{}: the same run as {} (the same start, finish and figures: a copy?): its \
             requests would be counted twice",
            copy.display(),
            dir.file("run.json").display()
        )
    );
}

/// One run written as both `--hdr-log` and `--hdr-file-prefix` files: merging its
/// command log beside the same command's `.hgrm` is refused (it counted the run twice),
/// while each format merges on its own to what the server executed.
#[test]
fn one_runs_logs_in_two_formats_are_refused_together() {
    let server = RedisServer::start();
    let dir = TestDir::new("merge-two-formats");
    let prefix = dir.file_arg("r");
    let log = dir.file_arg("all.hlog");
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "300",
            "--ratio=1:1",
            "--hide-histogram",
            &format!("--hdr-file-prefix={prefix}"),
            &format!("--hdr-log={log}"),
        ],
    )
    .run();
    assert!(run.status.success(), "{}", run.describe());
    let stats = server.commandstats();
    let sets = stats.get("set").copied().unwrap_or(0);
    assert_eq!(sets, 300, "{stats:?}");
    let (hlog, hgrm) = (
        dir.file("all_SET.hlog"),
        dir.file("r_SET_command_run_1.hgrm"),
    );
    let err = merge_files(&[&hlog, &hgrm], &MergeOptions::default()).unwrap_err();
    assert!(
        err.message().starts_with(&format!(
            "{}: its SET intervals are {}'s (the same run written twice",
            hgrm.display(),
            hlog.display()
        )),
        "{}",
        err.message()
    );
    let totals = merge_files(
        &[dir.file("all.hlog"), dir.file("r_FULL_RUN_1.hgrm")],
        &MergeOptions::default(),
    )
    .unwrap_err();
    assert!(
        totals.message().contains("its whole-run intervals are"),
        "{}",
        totals.message()
    );
    // Each format on its own: the run's SETs, once.
    for files in [
        vec![
            dir.file("all.hlog"),
            dir.file("all_SET.hlog"),
            dir.file("all_GET.hlog"),
        ],
        vec![
            dir.file("r_FULL_RUN_1.hgrm"),
            dir.file("r_SET_command_run_1.hgrm"),
            dir.file("r_GET_command_run_1.hgrm"),
        ],
    ] {
        let m = merge_files(&files, &MergeOptions::default()).expect("one format merges");
        let set_row = m
            .results
            .rows
            .iter()
            .find(|r| r.name.row == "Sets")
            .expect("Sets");
        assert_eq!(set_row.count, sets);
    }
}

/// Per row, the union of the inputs' whole-run histograms in their own layout (memtier
/// keeps 2 significant figures): each file's `ALL STATS`, else its AGGREGATED block,
/// whose `Totals` histogram memtier leaves empty and which is the sum of its rows'.
const PY_UNION_MEMTIER: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
sums = {}
def add(row, h):
    if row in sums:
        sums[row].add(h)
    else:
        sums[row] = h
for path in sys.argv[1:]:
    doc = json.load(open(path))
    name = "ALL STATS" if "ALL STATS" in doc else [k for k in doc if k.startswith("AGGREGATED")][0]
    total = None
    for row, v in doc[name].items():
        if not isinstance(v, dict) or "Count" not in v or v["Count"] == 0 or row == "Totals":
            continue
        enc = v["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
        add(row, HdrHistogram.decode(enc))
        if total is None:
            total = HdrHistogram.decode(enc)
        else:
            total.add(HdrHistogram.decode(enc))
    add("Totals", total)
print(json.dumps({r: [h.get_total_count()] + [h.get_value_at_percentile(p) for p in (50, 99, 99.9)] for r, h in sums.items()}))
"#;

/// `kvbench merge` on two of memtier_benchmark's own sample files (a single run and a
/// `-x 3` run): one ALL STATS table on stdout, a JSON whose counts are the sums and
/// whose percentiles are those of the union of the inputs' histograms.
/// Two shards of a `--command` run: each file's configuration lists the commands as given,
/// with their `--command-ratio` and `--command-key-pattern`, named as the flags; the
/// server's counts bear them out, and so does a run from a `--config` file of those three
/// keys. The merge keeps them, and a file without them (as kvbench wrote before it
/// recorded them, and as memtier writes) still merges.
#[test]
fn command_runs_keep_their_commands_through_a_merge() {
    let server = RedisServer::start();
    let dir = TestDir::new("merge-commands");
    let load = ["-t", "1", "-c", "2", "-n", "100", "--hide-histogram"];
    server.config_resetstat();
    let shards: Vec<PathBuf> = (0..2)
        .map(|i| {
            let json = dir.file(&format!("shard{i}.json"));
            kvbench_at(server.port, &load)
                .args(&[
                    "--command=hset __key__ f __data__",
                    "--command-ratio=2",
                    "--command-key-pattern=S",
                    "--command=get __key__",
                    "--command=ping",
                    &format!("--shard={i}/2"),
                    &format!("--json-out-file={}", json.display()),
                ])
                .ok();
            json
        })
        .collect();
    // Each client sends HSET, HSET, GET, PING in turn: its 100 requests are 25 rounds.
    let calls = |server: &RedisServer| {
        let stats = server.commandstats();
        let calls = |c: &str| stats.get(c).copied().unwrap_or(0);
        (calls("hset"), calls("get"), calls("ping"))
    };
    assert_eq!(calls(&server), (200, 100, 100));

    let keys = ["command", "command-ratio", "command-key-pattern"];
    let recorded = serde_json::json!({
        "command": ["hset __key__ f __data__", "get __key__", "ping"],
        "command-ratio": [2, 1, 1],
        "command-key-pattern": ["S", "R", "R"],
    });
    for shard in &shards {
        let configuration = &read_json(shard)["configuration"];
        for key in keys {
            assert_eq!(configuration[key], recorded[key], "{key}");
        }
    }
    // The three keys are a --config file that sends the same commands again.
    let config = dir.file("commands.json");
    fs::write(&config, recorded.to_string()).expect("write the config file");
    server.config_resetstat();
    kvbench_at(server.port, &load)
        .args(&[&format!("--config={}", config.display())])
        .ok();
    assert_eq!(calls(&server), (100, 50, 50), "one shard's worth, rerun");

    let merged_path = dir.file("merged.json");
    write_merged_json(
        &merge_files(&shards, &MergeOptions::default()).expect("merge"),
        &merged_path,
    );
    let merged = read_json(&merged_path);
    for key in keys {
        assert_eq!(merged["configuration"][key], recorded[key], "{key}");
    }
    assert_eq!(merged["ALL STATS"]["Totals"]["Count"].as_u64(), Some(400));

    let text = fs::read_to_string(&shards[1]).expect("shard 1");
    let without: Vec<&str> = text
        .lines()
        .filter(|l| !keys.iter().any(|k| l.contains(&format!("\"{k}\":"))))
        .collect();
    assert_eq!(without.len() + 3, text.lines().count(), "a line per key");
    let old = dir.file("old1.json");
    fs::write(&old, without.join("\n")).expect("write the older file");
    let mixed = merge_files(&[shards[0].clone(), old], &MergeOptions::default())
        .expect("a file without the commands merges");
    write_merged_json(&mixed, &merged_path);
    let merged = read_json(&merged_path);
    assert_eq!(merged["ALL STATS"]["Totals"]["Count"].as_u64(), Some(400));
    assert_eq!(
        merged["configuration"]["command"],
        serde_json::json!([recorded["command"], null]),
        "known in one file only"
    );
}

#[test]
fn merge_command_merges_two_memtier_files() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata");
    let a = data.join("memtier_default.json");
    let b = data.join("memtier_runs3.json");
    let dir = TestDir::new("merge-memtier");
    let out = dir.file("merged.json");
    let prefix = dir.file_arg("merged");
    let log = dir.file("merged.hlog");
    let run = common::kvbench(&[
        "merge",
        &format!("--json-out-file={}", out.display()),
        &format!("--hdr-file-prefix={prefix}"),
        &format!("--hdr-log={}", log.display()),
        &a.to_string_lossy(),
        &b.to_string_lossy(),
    ])
    .ok();
    let table = run.stdout_text();
    assert_eq!(table.matches("ALL STATS").count(), 1, "{table}");
    let totals_line = table
        .lines()
        .find(|l| l.starts_with("Totals"))
        .unwrap_or_else(|| panic!("no Totals line:\n{table}"));
    // 44725.22 + 60549.10 ops/sec, summed as each file wrote its rate.
    assert!(totals_line.contains("105274.32"), "{totals_line}");
    assert!(dir.file("merged_FULL_RUN_1.hgrm").exists());
    assert!(log.exists());

    let merged = common::read_json(&out);
    let all = &merged["ALL STATS"];
    assert_eq!(all["Sets"]["Count"].as_u64(), Some(400 + 60));
    assert_eq!(all["Gets"]["Count"].as_u64(), Some(400 + 540));
    assert_eq!(all["Totals"]["Count"].as_u64(), Some(800 + 600));
    assert_eq!(
        merged["configuration"]["merged_from"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    if !python_hdrh() {
        return;
    }
    let union = python(PY_UNION_MEMTIER, &[a.as_path(), b.as_path()]);
    for row in ["Sets", "Gets", "Totals"] {
        let want: Vec<u64> = union[row]
            .as_array()
            .unwrap_or_else(|| panic!("python has no {row}: {union}"))
            .iter()
            .map(|x| x.as_u64().expect("a number"))
            .collect();
        assert_eq!(
            merged_figures(&merged, row),
            want,
            "{row}: count, p50, p99, p99.9"
        );
    }
}

#[test]
fn merge_command_refuses_a_file_that_is_not_a_result() {
    let dir = TestDir::new("merge-cli-bad");
    let bad = dir.file("bad.json");
    std::fs::write(&bad, "{\"configuration\": {}}").expect("write");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata");
    let run = common::kvbench(&[
        "merge",
        &data.join("memtier_default.json").to_string_lossy(),
        &bad.to_string_lossy(),
    ])
    .run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    let stderr = run.stderr_text();
    assert_eq!(
        stderr.trim(),
        format!(
            "error: {}: not a kvbench or memtier_benchmark result file (no \"ALL STATS\" or run results)",
            bad.display()
        )
    );
    assert!(run.stdout_text().is_empty());
}

/// `kvbench merge` checks every output path before it writes any, as a run does: one that
/// cannot be written is a one-line error, exit 1, with no other output left behind and no
/// `Json file ... created...` said of a file that was not.
#[test]
fn merge_checks_every_output_before_writing_any() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata");
    let a = data.join("memtier_default.json").display().to_string();
    let b = data.join("memtier_runs3.json").display().to_string();
    let dir = TestDir::new("merge-outputs");
    let ok_json = dir.file("ok.json");
    let ok_flag = format!("--json-out-file={}", ok_json.display());
    let missing = dir.file_arg("no-such-dir/x");
    let cases = [
        (
            vec![ok_flag.clone(), "-o".into(), missing.clone()],
            format!("cannot write {missing}: "),
        ),
        (
            vec![ok_flag.clone(), format!("--hdr-log={missing}.hlog")],
            format!("cannot write {missing}.hlog: "),
        ),
        (
            vec![ok_flag.clone(), format!("--hdr-file-prefix={missing}")],
            format!("cannot write --hdr-file-prefix={missing} files: "),
        ),
        (
            vec![format!("--json-out-file={missing}.json")],
            format!("cannot write {missing}.json: "),
        ),
    ];
    for (flags, message) in cases {
        let mut args = vec!["merge".to_string(), a.clone(), b.clone()];
        args.extend(flags.iter().cloned());
        let run = common::kvbench(&args.iter().map(String::as_str).collect::<Vec<_>>()).run();
        assert_eq!(run.status.code(), Some(1), "{flags:?}: {}", run.describe());
        let stderr = run.stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{flags:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {message}")),
            "{flags:?}: {stderr}"
        );
        assert!(!stderr.contains("created"), "{flags:?}: {stderr}");
        assert!(run.stdout_text().is_empty(), "{flags:?}: no table either");
        assert!(!ok_json.exists(), "{flags:?}: the JSON was written");
    }
    // A good merge names its JSON file as created once it is.
    let run = common::kvbench(&["merge", &a, &b, &ok_flag]).ok();
    let stderr = run.stderr_text();
    let created = format!("Json file {} created...", ok_json.display());
    assert_eq!(stderr.matches(&created).count(), 1, "{stderr}");
    assert!(ok_json.exists());
}

/// An `-x 2` file with its runs beside one with only its aggregate (no `--print-all-runs`,
/// so no seconds): the merged rows have no per-second series rather than the first
/// file's seconds alone, which added up to half the merged count.
#[test]
fn a_merge_with_an_input_without_seconds_has_no_series() {
    let server = RedisServer::start();
    let dir = TestDir::new("merge-no-seconds");
    let load = [
        "-x",
        "2",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "250",
        "--hide-histogram",
    ];
    let (runs, aggregate) = (dir.file("runs.json"), dir.file("aggregate.json"));
    kvbench_at(server.port, &load)
        .args(&[
            "--print-all-runs",
            &format!("--json-out-file={}", runs.display()),
        ])
        .ok();
    kvbench_at(server.port, &load)
        .args(&[&format!("--json-out-file={}", aggregate.display())])
        .ok();
    let merged = merge_files(&[runs, aggregate], &MergeOptions::default()).expect("merged");
    let path = dir.file("merged.json");
    write_merged_json(&merged, &path);
    let totals = &read_json(&path)["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"], 2000, "{totals}");
    let seconds = totals["Time-Serie"].as_object().map_or(0, |s| s.len());
    assert_eq!(seconds, 0, "{totals}");
    // Two runs of 2 × 250 requests each, twice.
    let stats = server.commandstats();
    assert_eq!(stats["set"] + stats["get"], 2000);
}
