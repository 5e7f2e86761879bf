//! Tests of the `--hdr-log` writer: layout, and read back by kvbench's reader, the
//! hdrhistogram crate's reader and python hdrh's `HistogramLogReader`.

use std::process::Command;
use std::time::Duration;

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::resultfile::{Content, read_str};
use crate::results::{build_row, summarize_interval, value_at_percentile_us};
use crate::stats::OpStats;
use crate::stats::RowName;

const PCTS: [f64; 3] = [50.0, 99.0, 99.9];

fn name(row: &str, hist: &str) -> RowName {
    RowName {
        row: row.into(),
        hist: hist.into(),
        has_hits: false,
    }
}

/// A run of `seconds` seconds starting at `start_ms`: SET and GET with random latencies
/// (GET idle in second 1), plus an arbitrary-command row whose name needs a safe tag.
fn run(number: u32, start_ms: u64, seconds: u64, rng: &mut SmallRng) -> Results {
    let rows = [
        ("Sets", "SET"),
        ("Gets", "GET"),
        ("Set (line 2)s", "SET (LINE 2)"),
    ];
    let mut totals = vec![OpStats::new(); rows.len()];
    let mut series = vec![Vec::new(); rows.len()];
    let mut all_series = Vec::new();
    let finish_ms = start_ms + seconds * 1000 - 300;
    for s in 0..seconds {
        let start = start_ms + s * 1000;
        let end = (start + 1000).min(finish_ms);
        let mut all = OpStats::new();
        for (r, stats) in totals.iter_mut().enumerate() {
            let mut second = OpStats::new();
            let n = if r == 1 && s == 1 {
                0
            } else {
                rng.random_range(1..400)
            };
            for _ in 0..n {
                let us = (rng.random::<f64>().powi(4) * 20_000.0) as u64 + 20;
                second.record(us, 40, 10);
            }
            series[r].push(summarize_interval(&second, start, end, &PCTS));
            stats.merge(&second);
            all.merge(&second);
        }
        all_series.push(summarize_interval(&all, start, end, &PCTS));
    }
    let duration = Duration::from_millis(finish_ms - start_ms);
    let mut all = OpStats::new();
    let mut out: Vec<_> = rows
        .iter()
        .zip(&totals)
        .zip(series)
        .map(|(((row, hist), stats), series)| {
            all.merge(stats);
            build_row(name(row, hist), stats, duration, series)
        })
        .collect();
    out.push(build_row(
        name("Totals", "FULL_RUN"),
        &all,
        duration,
        all_series,
    ));
    Results {
        title: format!("RUN #{number} RESULTS"),
        run_number: number,
        start_epoch_ms: start_ms,
        finish_epoch_ms: finish_ms,
        duration_ms: finish_ms - start_ms,
        interrupted: false,
        stopped_by: None,
        cluster: false,
        rows: out,
        servers: Vec::new(),
        visibility: None,
        schedule: None,
        unanswered: None,
    }
}

fn sample_runs() -> Vec<Results> {
    let mut rng = SmallRng::seed_from_u64(12);
    vec![
        run(1, 1_796_032_471_890, 3, &mut rng),
        run(2, 1_796_032_475_100, 2, &mut rng),
    ]
}

/// Each row's whole-benchmark histogram over all runs, keyed by histogram name (`None`:
/// Totals).
fn expected(runs: &[Results]) -> Vec<(Option<String>, Histogram<u64>)> {
    let mut out: Vec<(Option<String>, Histogram<u64>)> = Vec::new();
    for r in runs {
        let n = r.rows.len();
        for (i, row) in r.rows.iter().enumerate() {
            let hist = (i + 1 < n).then(|| row.name.hist.clone());
            match out.iter_mut().find(|(t, _)| *t == hist) {
                Some((_, h)) => h.add(&row.histogram).unwrap(),
                None => out.push((hist, row.histogram.clone())),
            }
        }
    }
    out
}

/// The log holding `hist`'s intervals (`None`: the totals' log).
fn log_of(runs: &[Results], hist: Option<&str>) -> String {
    match hist {
        Some(h) => render_command_log(runs, h),
        None => render_hdr_log(runs),
    }
}

#[test]
fn layout_header_and_lines() {
    let runs = sample_runs();
    let log = render_hdr_log(&runs);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "#[kvbench latency log: one interval per second, all commands; each command's own log is FILE_<CMD>; values in microseconds]",
            "#[Histogram log format version 1.3]",
            "#[StartTime: 1796032471.890 (seconds since epoch), Mon Nov 30 09:54:31 UTC 2026]",
            "#[BaseTime: 1796032471.890 (seconds since epoch)]",
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
        ]
    );
    let s0 = &runs[0].rows[3].series[0];
    assert_eq!(
        lines[5],
        format!(
            "0.000,1.000,{}.0,{}",
            s0.max_latency_us, s0.compressed_histogram
        )
    );
    assert!(lines[6].starts_with("1.000,1.000,"), "{}", lines[6]);
    // The last second of run 1 is cut at its finish; run 2 follows on the same base.
    assert!(lines[7].starts_with("2.000,0.700,"), "{}", lines[7]);
    assert!(lines[8].starts_with("3.210,1.000,"), "{}", lines[8]);
    assert_eq!(lines.len(), 5 + 3 + 2, "no tagged line:\n{log}");
    assert!(!log.contains("Tag="));

    // GET's own log: its title, then only the seconds in which it ran (not second 1).
    let get = render_command_log(&runs, "GET");
    let lines: Vec<&str> = get.lines().collect();
    assert_eq!(lines[0], "#[GET command HDR latency histogram results]");
    assert_eq!(lines[1..5], log.lines().collect::<Vec<_>>()[1..5]);
    let g0 = &runs[0].rows[1].series[0];
    assert_eq!(
        lines[5],
        format!(
            "0.000,1.000,{}.0,{}",
            g0.max_latency_us, g0.compressed_histogram
        )
    );
    assert!(lines[6].starts_with("2.000,0.700,"), "{}", lines[6]);
    assert!(lines[7].starts_with("3.210,1.000,"), "{}", lines[7]);
    assert_eq!(lines.len(), 5 + 2 + 1);
    assert_eq!(logged_commands(&runs), ["SET", "GET", "SET (LINE 2)"]);
}

#[test]
fn command_logs_are_named_beside_the_file() {
    assert_eq!(
        command_log_path(Path::new("out/all.hlog"), "SET"),
        PathBuf::from("out/all_SET.hlog")
    );
    assert_eq!(
        command_log_path(Path::new("all"), "SET (LINE 2)"),
        PathBuf::from("all_SET_(LINE_2)")
    );
    assert_eq!(
        command_log_path(Path::new("a.b.log"), "X/Y"),
        PathBuf::from("a.b_X_Y.log")
    );
}

#[test]
fn empty_runs_give_a_header_only() {
    let log = render_hdr_log(&[]);
    assert_eq!(log.lines().count(), 5);
    assert!(
        log.contains("#[StartTime: 0.000 (seconds since epoch), Thu Jan 01 00:00:00 UTC 1970]")
    );
}

#[test]
fn reads_back_through_kvbench_and_the_crate() {
    let runs = sample_runs();
    for (hist, want) in expected(&runs) {
        let log = log_of(&runs, hist.as_deref());
        let Content::IntervalLog(read) = read_str("run.hlog", &log).unwrap().content else {
            panic!("not read as a log");
        };
        assert_eq!(read.format_version.as_deref(), Some("1.3"));
        assert_eq!(read.base_time_ms, Some(1_796_032_471_890));
        assert_eq!(read.title_command(), hist.as_deref());
        let first = &read.intervals[0];
        assert_eq!(
            (
                first.start_epoch_ms,
                first.end_epoch_ms,
                first.tag.as_deref()
            ),
            (1_796_032_471_890, 1_796_032_472_890, None)
        );
        let mut sum = crate::stats::new_histogram();
        for iv in &read.intervals {
            sum.add(&iv.histogram).unwrap();
        }
        assert_eq!(sum, want, "{hist:?}");

        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        let entries: Vec<LogEntry> = IntervalLogIterator::new(log.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        let intervals = entries
            .iter()
            .filter(|e| matches!(e, LogEntry::Interval(i) if i.tag().is_none()))
            .count();
        assert_eq!(intervals, read.intervals.len(), "{hist:?}");
    }
}

/// python3 with hdrh, or `None` (and a note on stderr) when it is not installed.
fn python_hdrh() -> Option<()> {
    let ok = Command::new("python3")
        .args(["-c", "import hdrh.log"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: python3 with hdrh is not installed (pip install hdrhistogram)");
    }
    ok.then_some(())
}

/// Every line of a log summed, as hdrh's documentation reads a log: the count, maximum
/// and percentiles of the sum, and the first interval's times.
const PY_READ_LOG: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
out = {}
for path in sys.argv[1:]:
    first = HistogramLogReader(path, HdrHistogram(1, 3600000000, 3)).get_next_interval_histogram()
    total = HdrHistogram(1, 3600000000, 3)
    reader = HistogramLogReader(path, HdrHistogram(1, 3600000000, 3))
    while reader.add_next_interval_histogram(total):
        pass
    out[path] = {"first": [first.get_start_time_stamp(), first.get_end_time_stamp()],
                 "figures": [total.get_total_count(), total.get_max_value()] + [total.get_value_at_percentile(p) for p in (50, 99, 99.9)]}
print(json.dumps(out))
"#;

/// python hdrh sums each file [`write_hdr_log`] writes to exactly its row's histogram:
/// nothing counted twice.
#[test]
fn python_hdrh_reads_the_log_with_the_same_percentiles() {
    if python_hdrh().is_none() {
        return;
    }
    let runs = sample_runs();
    let dir = std::env::temp_dir().join(format!("kvbench-hdrlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.hlog");
    write_hdr_log(&path, &runs).unwrap();
    let want = expected(&runs);
    let paths: Vec<PathBuf> = want
        .iter()
        .map(|(hist, _)| match hist {
            Some(h) => command_log_path(&path, h),
            None => path.clone(),
        })
        .collect();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "run.hlog",
            "run_GET.hlog",
            "run_SET.hlog",
            "run_SET_(LINE_2).hlog"
        ]
    );
    let out = Command::new("python3")
        .args(["-c", PY_READ_LOG])
        .args(&paths)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for ((hist, h), path) in want.into_iter().zip(&paths) {
        let got = &v[path.display().to_string()];
        // Absolute times: BaseTime + the relative start, in milliseconds.
        assert_eq!(got["first"][0].as_f64(), Some(1_796_032_471_890.0));
        assert_eq!(got["first"][1].as_f64(), Some(1_796_032_472_890.0));
        let mut figures = vec![h.len(), h.max()];
        figures.extend(PCTS.iter().map(|&p| value_at_percentile_us(&h, p)));
        let got: Vec<u64> = got["figures"]
            .as_array()
            .unwrap_or_else(|| panic!("python read no {path:?}"))
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(got, figures, "{hist:?}: count, max, p50, p99, p99.9");
    }
}
