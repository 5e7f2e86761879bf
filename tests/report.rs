//! `kvbench report` end to end: real kvbench runs against a real redis-server rendered and
//! looked at in headless Chromium; memtier_benchmark's own JSON; merged results; a rate
//! sweep's curve; a merge of files of different run counts (`-x 3`, `-x 2`), noted by
//! `kvbench merge` and on the page; one-line errors that leave the output untouched; `-o -`.
//!
//! The browser test is skipped, with a printed reason, only where no `chromium` is
//! installed. Set `KVBENCH_KEEP_REPORT=1` to keep the page and its screenshot.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::browser::{chromium_for, hex_colour, pixels_near, run_chromium, screenshot_not_blank};
use common::{RedisServer, TestDir, describe, kvbench, kvbench_at, read_json};
use kvbench::merge::{MergeOptions, merge_files};
use kvbench::report::html::svg::PALETTE;
use kvbench::report::json::render_json;

fn testdata(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata")
        .join(name)
        .display()
        .to_string()
}

/// `kvbench report ARGS`, which must succeed; returns the page it wrote to `out`.
fn report_ok(args: &[&str], out: &Path) -> String {
    let mut all = vec!["report"];
    all.extend(args);
    let out_arg = out.display().to_string();
    all.extend(["-o", &out_arg]);
    let run = kvbench(&all).run();
    assert!(run.status.success(), "{}", describe(&run));
    assert!(run.stdout.is_empty(), "{}", describe(&run));
    fs::read_to_string(out).expect("the report was written")
}

/// `kvbench report ARGS`, which must fail with one line on stderr and exit status 1;
/// returns that line.
fn report_err(args: &[&str]) -> String {
    let mut all = vec!["report"];
    all.extend(args);
    let run = kvbench(&all).run();
    assert_eq!(run.status.code(), Some(1), "{}", describe(&run));
    let stderr = run.stderr_text();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr.trim_end().to_string()
}

/// A `--test-time` run against `server` writing `json`; returns the server's SET + GET
/// calls it caused.
fn timed_run(server: &RedisServer, pipeline: &str, json: &Path) -> u64 {
    server.config_resetstat();
    kvbench_at(
        server.port,
        &[
            "-t",
            "2",
            "-c",
            "4",
            "--ratio=1:4",
            "-d",
            "128",
            "--key-maximum=5000",
            "--test-time=3",
            "--pipeline",
            pipeline,
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    )
    .ok();
    let stats = server.commandstats();
    stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0)
}

fn totals_count(json: &Path) -> u64 {
    read_json(json)["ALL STATS"]["Totals"]["Count"]
        .as_u64()
        .expect("Totals count")
}

/// The paths of every `<path class="line" d="...">` in `svg`.
fn plotted_lines(svg: &str) -> Vec<&str> {
    svg.split("<path class=\"line\" d=\"")
        .skip(1)
        .map(|p| &p[..p.find('"').expect("closed d")])
        .collect()
}

#[test]
fn two_real_runs_report_draws_in_chromium() {
    let server = RedisServer::start();
    let scratch = TestDir::new("report-real");
    let dir = scratch.path();
    let (before, after) = (dir.join("pipeline1.json"), dir.join("pipeline8.json"));
    for (pipeline, path) in [("1", &before), ("8", &after)] {
        let calls = timed_run(&server, pipeline, path);
        let counted = totals_count(path);
        // The server saw every counted request; the ones in flight at the deadline are
        // not counted (at most a pipeline per connection).
        let in_flight: u64 = 2 * 4 * pipeline.parse::<u64>().unwrap();
        assert!(
            counted <= calls && calls - counted <= in_flight,
            "pipeline {pipeline}: counted {counted}, the server saw {calls}"
        );
    }
    let page_path = dir.join("report.html");
    let page = report_ok(
        &[
            &before.display().to_string(),
            &after.display().to_string(),
            "--title",
            "pipeline 1 vs 8",
        ],
        &page_path,
    );
    assert!(page.contains("pipeline1.json") && page.contains("pipeline8.json"));

    let Some(chromium) = chromium_for("the report of a real run") else {
        return;
    };
    let dom = run_chromium(
        &chromium,
        dir,
        "dom",
        &["--dump-dom".to_string()],
        &page_path,
    );
    assert!(dom.contains("<h1>pipeline 1 vs 8</h1>"), "{dom:.2000}");
    assert!(
        dom.contains("<tr class=\"ratio\">"),
        "no ratios to the baseline"
    );
    assert!(!dom.contains("<script"));
    let svgs: Vec<&str> = dom
        .split("<svg ")
        .skip(1)
        .map(|s| &s[..s.find("</svg>").expect("closed svg")])
        .collect();
    // Totals, Sets and Gets each: a spectrum, throughput and latency per second.
    assert!(svgs.len() >= 9, "{} charts", svgs.len());
    let spectra = svgs.iter().filter(|s| s.contains(">99%</text>")).count();
    assert!(spectra >= 3, "{spectra} spectra");
    for svg in &svgs {
        let lines = plotted_lines(svg);
        // Both runs plotted, each with at least one segment (3 seconds, many points).
        assert!(lines.len() >= 2, "a chart without both runs: {svg:.400}");
        for d in lines {
            assert!(d.starts_with('M') && d.contains('L'), "{d:.200}");
        }
    }

    let pixels = screenshot_not_blank(&chromium, dir, &page_path);
    for (run, hex) in PALETTE[..2].iter().enumerate() {
        let painted = pixels_near(&pixels, hex_colour(hex));
        assert!(painted > 500, "run {run}'s colour {hex}: {painted} pixels");
    }
    if std::env::var_os("KVBENCH_KEEP_REPORT").is_some() {
        println!("kept the report and its screenshot in {}", dir.display());
        std::mem::forget(scratch);
    }
}

#[test]
fn memtier_json_files_report_memtier_figures() {
    let scratch = TestDir::new("report-memtier");
    let page = report_ok(
        &[
            &testdata("memtier_default.json"),
            &testdata("memtier_runs3.json"),
            &testdata("memtier_memcache_text.json"),
        ],
        &scratch.file("r.html"),
    );
    // memtier's own text tables (default.out, runs3.out): Totals ops/sec of the single run
    // and of the 3-run aggregate, and the aggregate's Totals p99 (memtier's JSON writes
    // 0.007 there; the summed histogram gives the table's 0.175).
    for figure in ["44,725.22", "60,549.10", "<td>0.175</td>", "<td>0.231</td>"] {
        assert!(page.contains(figure), "{figure} missing");
    }
    assert!(page.contains("AGGREGATED AVERAGE RESULTS (3 runs)"));
    assert!(page.contains("memcache_text"));
    assert!(page.matches("<svg ").count() >= 3);
}

#[test]
fn merged_results_report_the_sum_of_their_shards() {
    let server = RedisServer::start();
    let scratch = TestDir::new("report-merged");
    let shards: Vec<PathBuf> = (0..2)
        .map(|i| scratch.file(&format!("shard{i}.json")))
        .collect();
    for shard in &shards {
        kvbench_at(
            server.port,
            &[
                "-t",
                "1",
                "-c",
                "3",
                "-n",
                "400",
                "--hide-histogram",
                &format!("--json-out-file={}", shard.display()),
            ],
        )
        .ok();
    }
    let stats = server.commandstats();
    let calls = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    assert_eq!(calls, 2 * 3 * 400);

    let merged = merge_files(&shards, &MergeOptions::default()).expect("merge");
    let merged_path = scratch.file("merged.json");
    fs::write(
        &merged_path,
        render_json(
            &merged.shown(),
            &merged.run_info,
            &[&merged.results],
            &merged.percentiles,
            merged.hide_histogram,
        ),
    )
    .expect("write merged JSON");
    assert_eq!(totals_count(&merged_path), calls);

    let page = report_ok(
        &[
            &merged_path.display().to_string(),
            &shards[0].display().to_string(),
        ],
        &scratch.file("r.html"),
    );
    // The merged Totals count (the server's) beside one shard's, with the merge's inputs
    // in the configuration.
    assert!(page.contains("<td>2,400</td>"), "merged count");
    assert!(page.contains("<td>1,200</td>"), "shard count");
    assert!(page.contains("merged_from"));
}

/// `-x 3` and `-x 2` files merged: `kvbench merge` notes that the inputs stand for
/// different numbers of runs and what the merged figures then are, its file records each
/// input's `run_count`, and the report of it names each file's runs above the table.
#[test]
fn a_merge_of_different_run_counts_says_so() {
    let server = RedisServer::start();
    let scratch = TestDir::new("report-run-counts");
    let (x3, x2) = (scratch.file("x3.json"), scratch.file("x2.json"));
    for (runs, path) in [("3", &x3), ("2", &x2)] {
        kvbench_at(
            server.port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "100",
                "-x",
                runs,
                "--hide-histogram",
                &format!("--json-out-file={}", path.display()),
            ],
        )
        .ok();
    }
    let merged_path = scratch.file("merged.json");
    let merge = kvbench(&[
        "merge",
        &x3.display().to_string(),
        &x2.display().to_string(),
        &format!("--json-out-file={}", merged_path.display()),
    ])
    .ok();
    let note = format!(
        "note: inputs of different run counts ({}: 3 runs, {}: 2 runs): the merged counts and \
         latencies are all 5 runs' requests, the merged rates the sum of each input's mean run\n",
        x3.display(),
        x2.display()
    );
    let stderr = merge.stderr_text();
    assert!(stderr.contains(&note), "{stderr}");
    // Every run's requests: five runs of 2 clients x 100, as the server counted them.
    let stats = server.commandstats();
    let calls = stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0);
    assert_eq!(calls, 5 * 2 * 100);
    assert_eq!(totals_count(&merged_path), calls);
    assert_eq!(
        read_json(&merged_path)["configuration"]["run_count"],
        serde_json::json!([3, 2])
    );

    let page = report_ok(
        &[&merged_path.display().to_string()],
        &scratch.file("r.html"),
    );
    let expected = format!(
        "<strong>Files of different run counts merged ({}: 3 runs, {}: 2 runs), \
         aggregated:</strong>",
        x3.display(),
        x2.display()
    );
    assert!(page.contains(&expected), "no {expected:?} in the page");
    assert!(page.contains("the sum of each file's mean run"));
}

/// A rate sweep's `"Rate Steps"` (the open-loop sweep's JSON) draws the curve and its table.
#[test]
fn a_rate_sweep_draws_its_curve() {
    let server = RedisServer::start();
    let scratch = TestDir::new("report-sweep");
    let base = scratch.file("run.json");
    kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "50",
            "--hide-histogram",
            &format!("--json-out-file={}", base.display()),
        ],
    )
    .ok();
    let text = fs::read_to_string(&base).unwrap();
    let end = text.rfind('}').unwrap();
    let sweep = scratch.file("sweep.json");
    fs::write(
        &sweep,
        format!(
            "{},\"Rate Steps\":{{\"SLO\":\"p99:5\",\"Highest Rate Held\":2000,\"Planned Steps\":3,\"Steps\":[\
             {{\"Target Rate\":1000,\"Achieved Rate\":999.5,\"p50.00\":0.12,\"p99.00\":0.4,\"p99.90\":0.9,\"Late\":0,\"Unfinished\":0,\"SLO Value\":0.4,\"Held\":\"true\"}},\
             {{\"Target Rate\":2000,\"Achieved Rate\":1990.2,\"p50.00\":0.2,\"p99.00\":4.1,\"p99.90\":9.5,\"Late\":3,\"Unfinished\":1,\"SLO Value\":4.1,\"Held\":\"true\"}},\
             {{\"Target Rate\":3000,\"Achieved Rate\":2400.0,\"p50.00\":7.0,\"p99.00\":55.0,\"p99.90\":80.0,\"Late\":900,\"Unfinished\":40,\"SLO Value\":55.0,\"Held\":\"false\"}}]}}}}",
            &text[..end]
        ),
    )
    .unwrap();
    let page = report_ok(&[&sweep.display().to_string()], &scratch.file("r.html"));
    assert!(page.contains("Rate sweep"), "no sweep section");
    assert!(
        page.contains("2,400.00") || page.contains("2,400"),
        "the last step"
    );
    assert!(page.contains("p99:5"));
}

/// The configuration of a real sweep's page gives the sweep's span (its steps, when the
/// first started, how long all took) and the seconds per step (once: `step_duration`, which
/// the run information's seconds per step repeat), not the first step's title, start and
/// duration as if they were the sweep's.
#[test]
fn a_real_sweep_shows_its_own_span() {
    let server = RedisServer::start();
    let scratch = TestDir::new("report-sweep-span");
    let json = scratch.file("sweep.json");
    kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--rate-sweep=200:400:200",
            "--step-duration=1",
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    )
    .ok();
    let page = report_ok(&[&json.display().to_string()], &scratch.file("r.html"));
    let setting = |key: &str| -> String {
        let marker = format!("<span class=\"k\">{key}</span><span class=\"v\">");
        let at = page.find(&marker).unwrap_or_else(|| panic!("no {key}"));
        let rest = &page[at + marker.len()..];
        rest[..rest.find('<').unwrap()].to_string()
    };
    assert_eq!(setting("results"), "2 rate steps");
    assert_eq!(setting("step_duration"), "1");
    assert!(!page.contains(">Seconds per step<"), "listed twice");
    let secs: f64 = setting("duration")
        .trim_end_matches(" s")
        .parse()
        .expect("a duration in seconds");
    assert!(secs >= 2.0, "both steps' time: {secs} s");
    assert!(
        !page.contains("STEP #1"),
        "the first step stood for the sweep"
    );
    // What the server saw: the two steps' requests, about 200 + 400.
    let calls: u64 = server.commandstats().values().sum();
    assert!((500..=700).contains(&calls), "{calls} requests");
}

#[test]
fn errors_are_one_line_and_leave_the_output_untouched() {
    let scratch = TestDir::new("report-errors");
    let out = scratch.file("r.html");
    fs::write(&out, "old").unwrap();
    let out_arg = out.display().to_string();
    let missing = scratch.file("missing.json").display().to_string();
    let e = report_err(&[&missing, "-o", &out_arg]);
    assert!(e.contains("missing.json: cannot read"), "{e}");
    let junk = scratch.file("junk.json");
    fs::write(&junk, "{\"hello\": 1}").unwrap();
    let e = report_err(&[&junk.display().to_string(), "-o", &out_arg]);
    assert!(
        e.contains("not a kvbench or memtier_benchmark result file"),
        "{e}"
    );
    let log = scratch.file("set.hgrm");
    fs::write(&log, "#[StartTime: 1.0 (seconds since epoch)]\n").unwrap();
    let e = report_err(&[&log.display().to_string(), "-o", &out_arg]);
    assert!(e.contains("set.hgrm: an HdrHistogram interval log"), "{e}");
    // A good file but an output that cannot be written.
    let e = report_err(&[
        &testdata("memtier_default.json"),
        "-o",
        &scratch.file("no/such/dir/r.html").display().to_string(),
    ]);
    assert!(e.contains("cannot write"), "{e}");
    let e = report_err(&[&testdata("memtier_default.json")]);
    assert!(e.contains("--out-file"), "{e}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "old");
}

#[test]
fn dash_writes_the_page_to_stdout() {
    let run = kvbench(&["report", &testdata("memtier_default.json"), "-o", "-"]).run();
    assert!(run.status.success(), "{}", describe(&run));
    let page = run.stdout_text();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page:.200}");
    assert!(page.trim_end().ends_with("</html>"));
}
