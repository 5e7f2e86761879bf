//! The HTML report as a browser sees it: a two-run report rendered by headless Chromium
//! must hold every chart's SVG with plotted lines (DOM dump) and paint them (screenshot).
//!
//! Skipped, with a printed reason, only where no `chromium` is installed. Set
//! `KVBENCH_KEEP_REPORT=1` to keep the page and its screenshot (the path is printed).

mod common;

use std::fs;

use common::TestDir;
use common::browser::{chromium_for, hex_colour, pixels_near, run_chromium, screenshot_not_blank};
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
