//! The HTML report as a browser sees it: a two-run report rendered by headless Chromium
//! must hold every chart's SVG with plotted lines (DOM dump) and paint them (screenshot).
//!
//! Skipped, with a printed reason, only where no `chromium` is installed. Set
//! `KVBENCH_KEEP_REPORT=1` to keep the page and its screenshot (the path is printed).

mod common;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{TestDir, run_with_timeout};
use hdrhistogram::Histogram;
use kvbench::report::html::svg::PALETTE;
use kvbench::report::html::{Report, Row, Run, SecondPoint, render_page};
use kvbench::stats::new_histogram;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, LogNormal};

/// Chromium starts slowly on a loaded 2-core machine; this only bounds a hung browser.
const CHROMIUM_DEADLINE: Duration = Duration::from_secs(180);
const SECONDS: u64 = 20;
const WINDOW: (u32, u32) = (1280, 2400);

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
        sweep: None,
    }
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Runs headless Chromium on `page` with `extra` arguments, in a fresh profile; returns its
/// standard output. Panics with what it printed if it fails or outlives the deadline.
fn run_chromium(chromium: &Path, dir: &Path, name: &str, extra: &[String], page: &Path) -> String {
    let profile = dir.join(format!("profile-{name}"));
    fs::create_dir_all(&profile).expect("create profile dir");
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    let out = run_with_timeout(cmd, CHROMIUM_DEADLINE);
    assert!(
        out.status.success(),
        "chromium {name} failed\n{}",
        common::describe(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An 8-bit RGB or RGBA, non-interlaced PNG decoded to RGB pixels: (width, height, pixels).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = be32(&bytes[at..]) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = be32(data);
                height = be32(&data[4..]);
                let (depth, colour, interlace) = (data[8], data[9], data[12]);
                assert_eq!((depth, interlace), (8, 0), "unexpected PNG layout");
                channels = match colour {
                    2 => 3,
                    6 => 4,
                    other => panic!("unexpected PNG colour type {other}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len; // length, type, data, CRC
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("inflate PNG data");
    let stride = width as usize * channels;
    assert_eq!(raw.len(), (stride + 1) * height as usize, "PNG data size");
    let mut image = vec![0u8; stride * height as usize];
    for y in 0..height as usize {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= channels {
                image[y * stride + x - channels]
            } else {
                0
            };
            let b = if y > 0 {
                image[(y - 1) * stride + x]
            } else {
                0
            };
            let c = if x >= channels && y > 0 {
                image[(y - 1) * stride + x - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => {
                    let p = a as i16 + b as i16 - c as i16;
                    let (pa, pb, pc) = (
                        (p - a as i16).abs(),
                        (p - b as i16).abs(),
                        (p - c as i16).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("bad PNG filter {other}"),
            };
            image[y * stride + x] = line[x].wrapping_add(predicted);
        }
    }
    let pixels = image
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (width, height, pixels)
}

fn hex_colour(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).expect("hex colour");
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Pixels within a small distance of `colour` (anti-aliasing blends line edges).
fn pixels_near(pixels: &[[u8; 3]], colour: [u8; 3]) -> usize {
    pixels
        .iter()
        .filter(|p| (0..3).all(|i| (p[i] as i16 - colour[i] as i16).abs() <= 24))
        .count()
}

#[test]
fn a_two_run_report_draws_its_charts_in_chromium() {
    let Some(chromium) = find_chromium() else {
        println!(
            "SKIPPED: no chromium on PATH (Debian package `chromium`); the HTML report was not checked in a browser"
        );
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
    let png_path = dir.join("report.png");
    run_chromium(
        &chromium,
        dir,
        "screenshot",
        &[
            format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            format!("--screenshot={}", png_path.display()),
        ],
        &page,
    );
    let (width, height, pixels) = decode_png(&fs::read(&png_path).expect("screenshot written"));
    assert_eq!((width, height), WINDOW);
    let first = pixels[0];
    let distinct = pixels.iter().filter(|p| **p != first).count();
    assert!(
        distinct > pixels.len() / 100,
        "the screenshot is (nearly) blank"
    );
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
