//! The HTML report as a browser sees it: a two-run report rendered by headless Chromium
//! must hold every chart's SVG with plotted lines (DOM dump) and paint them (screenshot).
//! Then what the page says of real runs against a real redis-server: a `-x N` result
//! names its counts as summed and its rates as averaged; a `--command` run lists its
//! commands; a setting the file holds twice is listed once.
//!
//! The browser test is skipped, with a printed reason, only where no `chromium` is
//! installed. Set `KVBENCH_KEEP_REPORT=1` to keep the page and its screenshot (the path is
//! printed).

mod common;

use std::fs;
use std::path::Path;

use common::browser::{chromium_for, hex_colour, pixels_near, run_chromium, screenshot_not_blank};
use common::{RedisServer, TestDir, kvbench, kvbench_at, read_json};
use hdrhistogram::Histogram;
use kvbench::report::html::svg::PALETTE;
use kvbench::report::html::{Report, Row, Run, SecondPoint, render_page};
use kvbench::stats::new_histogram;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, LogNormal};

const SECONDS: u64 = 20;

/// Latency as a log-normal around `median_us` with a 1% slow tail, and a throughput that
/// wobbles from second to second: what a real run looks like, recorded into HdrHistograms
/// as kvbench records them (µs, one per second, summed for the run).
fn synthetic_run(label: &str, median_us: f64, ops_per_sec: u64, seed: u64) -> Run {
    let mut rng = SmallRng::seed_from_u64(seed);
    let body = LogNormal::new(median_us.ln(), 0.3).expect("valid log-normal");
    let tail = LogNormal::new((median_us * 8.0).ln(), 0.5).expect("valid log-normal");
    let mut rows: Vec<Row> = ["Sets", "Gets", "Totals"]
        .iter()
        .map(|n| Row::named(n))
        .collect();
    let mut whole: Vec<Histogram<u64>> = (0..3).map(|_| new_histogram()).collect();
    for second in 0..SECONDS {
        let mut per_second: Vec<Histogram<u64>> = (0..3).map(|_| new_histogram()).collect();
        let n = ops_per_sec / 2 + (second * 37 % 11) * ops_per_sec / 200;
        for command in 0..2 {
            for i in 0..n {
                let d = if i % 100 == 0 { &tail } else { &body };
                let us = (d.sample(&mut rng) as u64).clamp(1, 60_000_000);
                per_second[command].record(us).expect("in bounds");
                per_second[2].record(us).expect("in bounds");
            }
        }
        for (i, h) in per_second.iter().enumerate() {
            rows[i].per_second.push(SecondPoint {
                second,
                ops_per_sec: h.len() as f64,
                p50_ms: Some(h.value_at_quantile(0.5) as f64 / 1000.0),
                p99_ms: Some(h.value_at_quantile(0.99) as f64 / 1000.0),
            });
            whole[i].add(h).expect("same bounds");
        }
    }
    for (row, h) in rows.iter_mut().zip(whole) {
        row.count = h.len();
        row.ops_per_sec = h.len() as f64 / SECONDS as f64;
        row.avg_ms = Some(h.mean() / 1000.0);
        row.p50_ms = Some(h.value_at_quantile(0.5) as f64 / 1000.0);
        row.p99_ms = Some(h.value_at_quantile(0.99) as f64 / 1000.0);
        row.p999_ms = Some(h.value_at_quantile(0.999) as f64 / 1000.0);
        row.kb_per_sec = row.ops_per_sec * 0.07;
        if row.name != "Sets" {
            row.hits_per_sec = Some(row.ops_per_sec * 0.1);
            row.misses_per_sec = Some(row.ops_per_sec * 0.9);
        }
        row.histogram = Some(h);
    }
    Run {
        label: label.to_string(),
        config: vec![
            ("server".to_string(), "127.0.0.1".to_string()),
            (
                "pipeline".to_string(),
                if seed == 1 { "1" } else { "4" }.to_string(),
            ),
            ("key_prefix".to_string(), "<memtier-&>".to_string()),
        ],
        interrupted: false,
        rows,
        ..Run::default()
    }
}

#[test]
fn a_two_run_report_draws_its_charts_in_chromium() {
    let Some(chromium) = chromium_for("the HTML report") else {
        return;
    };
    let scratch = TestDir::new("html-report");
    let dir = scratch.path();

    let report = Report {
        title: "pipeline 1 vs 4".to_string(),
        runs: vec![
            synthetic_run("before.json", 180.0, 20_000, 1),
            synthetic_run("after.json", 120.0, 45_000, 2),
        ],
    };
    let page = dir.join("report.html");
    fs::write(&page, render_page(&report)).expect("write report");

    // The DOM as Chromium parsed it: every chart's SVG, each with plotted lines.
    let dom = run_chromium(&chromium, dir, "dom", &["--dump-dom".to_string()], &page);
    assert!(
        dom.contains("<h1>pipeline 1 vs 4</h1>"),
        "no page in the DOM dump:\n{dom:.2000}"
    );
    let svgs: Vec<&str> = dom.split("<svg ").skip(1).collect();
    // Totals, Sets and Gets: throughput and latency per second, and a spectrum each.
    assert_eq!(svgs.len(), 9, "charts in the DOM");
    for svg in &svgs {
        let svg = &svg[..svg.find("</svg>").expect("closed svg")];
        let lines: Vec<&str> = svg
            .split("<path class=\"line\" d=\"")
            .skip(1)
            .map(|p| &p[..p.find('"').expect("closed d")])
            .collect();
        assert!(lines.len() >= 2, "a chart without two lines: {svg:.400}");
        for d in lines {
            assert!(
                d.starts_with('M') && d.matches('L').count() >= SECONDS as usize - 1,
                "{d:.200}"
            );
        }
        assert!(svg.contains("class=\"legend\""));
    }
    assert!(
        dom.contains(">99.9%</text>"),
        "the spectrum's log axis labels"
    );
    assert!(
        dom.contains("<tr class=\"ratio\">"),
        "the side-by-side table's ratios"
    );
    assert!(
        dom.contains("&lt;memtier-&amp;&gt;"),
        "escaped configuration"
    );
    assert!(!dom.contains("<script"));

    // The screenshot: the right size, not blank, and both runs' colours painted.
    let pixels = screenshot_not_blank(&chromium, dir, &page);
    for (run, hex) in PALETTE[..2].iter().enumerate() {
        let painted = pixels_near(&pixels, hex_colour(hex));
        assert!(
            painted > 500,
            "run {run}'s colour {hex}: only {painted} pixels"
        );
    }
    if std::env::var_os("KVBENCH_KEEP_REPORT").is_some() {
        println!("kept the report and its screenshot in {}", dir.display());
        // Skip the scratch directory's removal: the files are what was asked for.
        std::mem::forget(scratch);
    }
}

/// `kvbench report FILES -o out`, which must succeed; returns the page.
fn report_page(files: &[&Path], out: &Path) -> String {
    let mut args = vec!["report".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["-o".to_string(), out.display().to_string()]);
    kvbench(&args.iter().map(String::as_str).collect::<Vec<_>>()).ok();
    fs::read_to_string(out).expect("the report was written")
}

/// The page's `<section id="ID">`, whole.
fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no {id} section"));
    let rest = &page[start..];
    &rest[..rest.find("</section>").expect("closed section")]
}

/// The SET and GET calls the server counted since its last `CONFIG RESETSTAT`.
fn sets_and_gets(server: &RedisServer) -> u64 {
    let stats = server.commandstats();
    stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0)
}

/// `-x 3` shows the runs' aggregate, whose Count is every run's requests summed while its
/// Ops/sec is the runs' mean (memtier's AGGREGATED block): the page says so above the
/// table, and both claims hold against the server's count and the runs' own figures. One
/// run's page says nothing of the kind.
#[test]
fn a_run_count_page_says_its_count_is_summed_and_its_rates_averaged() {
    let server = RedisServer::start();
    let scratch = TestDir::new("html-run-count");
    let (runs3, single) = (scratch.file("runs3.json"), scratch.file("single.json"));
    server.config_resetstat();
    let json_arg = |path: &Path| format!("--json-out-file={}", path.display());
    let load = ["-t", "1", "-c", "2", "-n", "100", "--hide-histogram"];
    kvbench_at(server.port, &load)
        .args(&["-x", "3", "--print-all-runs", &json_arg(&runs3)])
        .ok();
    assert_eq!(sets_and_gets(&server), 3 * 2 * 100, "three runs' requests");

    let doc = read_json(&runs3);
    let totals = &doc["AGGREGATED AVERAGE RESULTS (3 runs)"]["Totals"];
    assert_eq!(totals["Count"].as_u64(), Some(600), "summed: {totals}");
    let ops = |block: &str| {
        doc[block]["Totals"]["Ops/sec"]
            .as_f64()
            .unwrap_or_else(|| panic!("{block} Totals Ops/sec"))
    };
    let mean = (1..=3)
        .map(|i| ops(&format!("RUN #{i} RESULTS")))
        .sum::<f64>()
        / 3.0;
    let aggregate = ops("AGGREGATED AVERAGE RESULTS (3 runs)");
    assert!(
        (aggregate - mean).abs() < 0.02,
        "{aggregate} is not the mean {mean}"
    );

    let page = report_page(&[&runs3], &scratch.file("runs3.html"));
    let stats = section(&page, "stats");
    let note_at = stats
        .find("<p class=\"note averaged\">")
        .unwrap_or_else(|| panic!("no note on the runs' aggregate:\n{stats:.1500}"));
    assert!(
        note_at < stats.find("<table").expect("the table"),
        "the note comes first"
    );
    let note = &stats[note_at..];
    let note = &note[..note.find("</p>").expect("closed note")];
    for words in [
        "3 runs (-x 3), aggregated",
        "Count: all 3 runs summed",
        "Ops/sec, Hits/sec, Misses/sec, KB/sec: the mean of the 3 runs",
        "latencies: all 3 runs' requests together",
    ] {
        assert!(note.contains(words), "{words:?} not in {note}");
    }
    // The figures the note describes, as the file has them.
    assert!(stats.contains("<td>600</td>"), "{stats:.3000}");

    kvbench_at(server.port, &load)
        .args(&[&json_arg(&single)])
        .ok();
    let page = report_page(&[&single], &scratch.file("single.html"));
    assert!(!page.contains("averaged"), "one run is no aggregate");
}

/// A `--command` run's page lists its commands as given, in order, with their ratios and
/// key patterns (the server's counts are what they say), and not again among the settings.
/// A file without them (memtier's, or kvbench's before it recorded them) still makes a
/// page, without the list; beside it, the list names the run it belongs to.
#[test]
fn a_command_runs_page_lists_its_commands() {
    let server = RedisServer::start();
    let scratch = TestDir::new("html-commands");
    let json = scratch.file("commands.json");
    server.config_resetstat();
    kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "99",
            "--command=hset __key__ f __data__",
            "--command-ratio=2",
            "--command-key-pattern=S",
            "--command=get __key__",
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    )
    .ok();
    let stats = server.commandstats();
    let calls = |c: &str| stats.get(c).copied().unwrap_or(0);
    // Each client sends HSET, HSET, GET in turn: its 99 requests are 33 rounds.
    assert_eq!((calls("hset"), calls("get")), (132, 66), "{stats:?}");

    let page = report_page(&[&json], &scratch.file("commands.html"));
    let configuration = section(&page, "configuration");
    for line in [
        "<tr><td>1</td><td class=\"command\">hset __key__ f __data__</td><td>2</td>\
         <td>S (sequential)</td></tr>",
        "<tr><td>2</td><td class=\"command\">get __key__</td><td>1</td><td>R (random)</td></tr>",
    ] {
        assert!(
            configuration.contains(line),
            "{line}\n{configuration:.3000}"
        );
    }
    assert!(
        !configuration.contains("<span class=\"k\">command"),
        "the commands listed again as settings:\n{configuration}"
    );
    // The SET:GET ratio and key pattern were not used: not listed as if they were.
    for unused in ["ratio", "key_pattern"] {
        let setting = format!("<span class=\"k\">{unused}</span>");
        assert!(
            !configuration.contains(&setting),
            "{unused} listed:\n{configuration}"
        );
    }
    assert!(
        configuration.contains("<span class=\"k\">key_prefix</span>"),
        "{configuration:.3000}"
    );

    let text = fs::read_to_string(&json).expect("the run's JSON");
    let older: Vec<&str> = text.lines().filter(|l| !l.contains("\"command")).collect();
    assert_eq!(
        older.len() + 3,
        text.lines().count(),
        "three keys, a line each"
    );
    let old = scratch.file("older.json");
    fs::write(&old, older.join("\n")).expect("write the older file");
    let page = report_page(&[&old], &scratch.file("older.html"));
    assert!(
        page.contains("<td class=\"name\">Hsets</td>"),
        "{page:.2000}"
    );
    assert!(!page.contains("<h3>Commands</h3>"));
    // Without the command list the file reads as a SET/GET run's: its ratio is a setting.
    assert!(
        section(&page, "configuration").contains("<span class=\"k\">ratio</span>"),
        "{page:.3000}"
    );

    let page = report_page(&[&old, &json], &scratch.file("both.html"));
    let configuration = section(&page, "configuration");
    // The second run's colour names it.
    let named = format!(
        "rowspan=\"2\"><span class=\"swatch\" style=\"background:{}\"></span>commands.json</td>",
        PALETTE[1]
    );
    assert!(configuration.contains(&named), "{configuration:.3000}");
    assert!(!configuration.contains("</span>older.json</td>"));
}

/// Threads, clients, requests and seconds are in both the JSON's `configuration` and its
/// `run information`: the page lists each once, under the configuration's name, for one run
/// and beside another. A merge keeps both where they differ (`threads` is each file's,
/// `Threads` their sum).
#[test]
fn a_setting_held_twice_is_listed_once() {
    let server = RedisServer::start();
    let scratch = TestDir::new("html-settings-once");
    let json_arg = |path: &Path| format!("--json-out-file={}", path.display());
    let (counted, timed) = (scratch.file("counted.json"), scratch.file("timed.json"));
    server.config_resetstat();
    kvbench_at(
        server.port,
        &["-t", "1", "-c", "2", "-n", "50", "--hide-histogram"],
    )
    .args(&[&json_arg(&counted)])
    .ok();
    // What the listed settings say: 1 thread × 2 clients × 50 requests.
    assert_eq!(sets_and_gets(&server), 100);
    kvbench_at(server.port, &["-t", "2", "-c", "1", "--test-time=1"])
        .args(&["--hide-histogram", &json_arg(&timed)])
        .ok();
    let twins = [
        "Threads",
        "Connections per thread",
        "Requests per client",
        "Seconds",
    ];

    let page = report_page(&[&counted], &scratch.file("counted.html"));
    let configuration = section(&page, "configuration");
    for (key, value) in [("threads", "1"), ("clients", "2"), ("requests", "50")] {
        let line = format!("<span class=\"k\">{key}</span><span class=\"v\">{value}</span>");
        assert_eq!(configuration.matches(&line).count(), 1, "{line}");
    }
    for twin in twins {
        let line = format!("<span class=\"k\">{twin}</span>");
        assert!(!configuration.contains(&line), "{twin} listed twice");
    }

    let page = report_page(&[&counted, &timed], &scratch.file("both.html"));
    let configuration = section(&page, "configuration");
    let every_setting = &configuration[configuration.find("<details>").expect("all settings")..];
    for key in ["threads", "clients", "requests", "test_time"] {
        let line = format!("<td class=\"key\">{key}</td>");
        assert_eq!(every_setting.matches(&line).count(), 1, "{key}");
    }
    for twin in twins {
        let line = format!("<td class=\"key\">{twin}</td>");
        assert!(!configuration.contains(&line), "{twin} listed twice");
    }

    let merged = scratch.file("merged.json");
    kvbench(&[
        "merge",
        &json_arg(&merged),
        &counted.display().to_string(),
        &timed.display().to_string(),
    ])
    .ok();
    let page = report_page(&[&merged], &scratch.file("merged.html"));
    let configuration = section(&page, "configuration");
    for line in [
        "<span class=\"k\">threads</span>",
        "<span class=\"k\">Threads</span>",
    ] {
        assert!(
            configuration.contains(line),
            "{line}\n{configuration:.4000}"
        );
    }
}
