//! HDR histogram files (`--hdr-file-prefix=P`): the classic percentile distribution (`.txt`)
//! and the HdrHistogram interval log (`.hgrm`) for each run, whole and per command.
//!
//! Also home of [`percentile_ticks`], the walk over a histogram's percentile ticks that the
//! text table's "Request Latency Distribution" and the JSON arrays print as well.

use std::fmt::Write as _;
use std::path::PathBuf;

use hdrhistogram::Histogram;

use crate::date::civil_from_days;
use crate::error::Error;
use crate::report::{WriteFailures, finite, write_atomic};
use crate::results::{IntervalSummary, Results, Row};

/// Ticks per half distance to 100% in every printed distribution: steps of 5% up to 50%,
/// 2.5% up to 75%, 1.25% up to 87.5%, ... as memtier prints them.
pub const TICKS_PER_HALF_DISTANCE: u32 = 10;

/// One printed point of a percentile distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// Highest value equivalent to the bucket reached, in the histogram's unit (µs).
    pub value: u64,
    /// The percentile ticked to, 0-100 (not the bucket's own percentile).
    pub percentile: f64,
    /// Number of values at or below `value`.
    pub total_count: u64,
}

/// Walks `h` in percentile ticks the way HdrHistogram C's percentile iterator does (and so
/// memtier's outputs): `ticks_per_half_distance` equal steps in each half of the remaining
/// distance to 100%, several ticks per bucket when a bucket spans them, exactly one tick in
/// the last bucket, then a final tick at 100%. Empty histograms yield nothing.
///
/// The steps are accumulated in percent, not in quantiles: the Rust crate's
/// `iter_quantiles(10)` reaches 0.75 as 0.7500000000000001 and 0.875 as 0.87499999..., so it
/// skips or misplaces ticks (88.125%, 94.062%, the 75% tick one bucket late) that memtier's
/// samples show.
pub fn percentile_ticks(h: &Histogram<u64>, ticks_per_half_distance: u32) -> Vec<Tick> {
    let total = h.len();
    let mut ticks = Vec::new();
    if total == 0 {
        return ticks;
    }
    let per_half = f64::from(ticks_per_half_distance.max(1));
    let mut to = 0.0_f64;
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        let value = v.value_iterated_to();
        let last = seen >= total;
        let reached = 100.0 * seen as f64 / total as f64;
        while to <= reached && to < 100.0 {
            ticks.push(Tick {
                value,
                percentile: to,
                total_count: seen,
            });
            let halvings = (100.0 / (100.0 - to)).log2().floor() + 1.0;
            let next = to + 100.0 / (per_half * halvings.exp2());
            // Near 100% the step can vanish below f64 resolution; move to the next bucket
            // rather than loop for ever.
            if last || next <= to {
                break;
            }
            to = next;
        }
        if last {
            ticks.push(Tick {
                value,
                percentile: 100.0,
                total_count: seen,
            });
            break;
        }
    }
    ticks
}

/// The classic HdrHistogram percentile distribution of `h` (microseconds) in milliseconds,
/// as `default_FULL_RUN_1.txt` lays it out:
///
/// ```text
///        Value   Percentile   TotalCount 1/(1-Percentile)
///
///         0.01     0.000000            2         1.00
///         ...
///         0.31     1.000000          800          inf
/// #[Mean    =        0.089, StdDeviation   =        0.042]
/// #[Max     =        0.311, Total count    =          800]
/// #[Buckets =           20, SubBuckets     =          256]
/// ```
///
/// Buckets and SubBuckets are this histogram's own (kvbench keeps 3 significant figures,
/// memtier 2).
pub fn render_percentile_distribution(h: &Histogram<u64>) -> String {
    let mut out = String::from("       Value   Percentile   TotalCount 1/(1-Percentile)\n\n");
    for t in percentile_ticks(h, TICKS_PER_HALF_DISTANCE) {
        let q = t.percentile / 100.0;
        let inverse = if q >= 1.0 {
            "inf".to_string()
        } else {
            format!("{:.2}", finite(1.0 / (1.0 - q)))
        };
        let _ = writeln!(
            out,
            "{:12.2} {:12.6} {:12} {:>12}",
            t.value as f64 / 1000.0,
            q,
            t.total_count,
            inverse
        );
    }
    let max_ms = if h.is_empty() {
        0.0
    } else {
        h.max() as f64 / 1000.0
    };
    let sub_buckets = (2 * 10u64.pow(u32::from(h.sigfig()))).next_power_of_two();
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        finite(h.mean() / 1000.0),
        finite(h.stdev() / 1000.0)
    );
    let _ = writeln!(
        out,
        "#[Max     = {max_ms:12.3}, Total count    = {:12}]",
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {sub_buckets:12}]",
        h.buckets()
    );
    out
}

/// The `.hgrm` interval log of one row, as `default_FULL_RUN_1.hgrm` lays it out: one line
/// per non-empty interval with absolute start and end times in seconds, the interval's
/// maximum in microseconds and its compressed histogram.
///
/// ```text
/// #[Full Run command HDR latency histogram results]
/// #[Histogram log format version 1.2]
/// #[StartTime: 1795979180.809 (seconds since epoch), Sun Nov 29 19:06:20 UTC 2026]
/// "StartTimestamp","EndTimestamp","Interval_Max","Interval_Compressed_Histogram"
/// 1795979180.809,1795979180.827,311.0,HISTFAAAAEZ4nJ...
/// ```
///
/// memtier's date lacks the day of the month (`Sun Nov 19:06:20 GMT 2026`); ours has it.
pub fn render_interval_log(title: &str, start_epoch_ms: u64, series: &[IntervalSummary]) -> String {
    let lines = series.iter().map(|s| {
        (
            s.start_epoch_ms,
            s.end_epoch_ms,
            s.count,
            s.max_latency_us,
            s.compressed_histogram.as_str(),
        )
    });
    render_log(&format!("{title} HDR latency"), start_epoch_ms, lines)
}

/// The service-time `.hgrm` of one open-loop row (`..._service.hgrm`): the same layout as
/// [`render_interval_log`], titled `#[Full Run command HDR service time histogram
/// results]`, one untagged line per interval from each second's service times. Its own
/// file, not tagged lines in the response-time one: HdrHistogram's readers that sum a
/// log's lines (python hdrh's `HistogramLogReader`) do not skip tagged lines, and would
/// count every request twice. `None` when no interval has service times (closed loop).
pub fn render_service_interval_log(
    title: &str,
    start_epoch_ms: u64,
    series: &[IntervalSummary],
) -> Option<String> {
    if series.iter().all(|s| s.service.is_none()) {
        return None;
    }
    let lines = series.iter().filter_map(|s| {
        let service = s.service.as_deref()?;
        Some((
            s.start_epoch_ms,
            s.end_epoch_ms,
            s.count,
            service.max_latency_us,
            service.compressed_histogram.as_str(),
        ))
    });
    Some(render_log(
        &format!("{title} HDR service time"),
        start_epoch_ms,
        lines,
    ))
}

/// A format 1.2 log titled `#[<what> histogram results]`, from (start ms, end ms, count,
/// max µs, compressed histogram) per interval.
fn render_log<'a>(
    what: &str,
    start_epoch_ms: u64,
    lines: impl Iterator<Item = (u64, u64, u64, u64, &'a str)>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "#[{what} histogram results]");
    out.push_str("#[Histogram log format version 1.2]\n");
    let _ = writeln!(
        out,
        "#[StartTime: {} (seconds since epoch), {}]",
        epoch_ms_as_secs(start_epoch_ms),
        format_epoch_date(start_epoch_ms / 1000)
    );
    out.push_str(
        "\"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
    for (start, end, count, max_us, histogram) in lines {
        // An empty interval has no histogram to give, and an empty field would break
        // log readers.
        if count == 0 || histogram.is_empty() {
            continue;
        }
        push_interval_line(&mut out, None, start, end, max_us, histogram);
    }
    out
}

/// Appends one interval line of an HdrHistogram log, shared by the `.hgrm` files and the
/// `--hdr-log` file (`report::hdr_log`):
///
/// ```text
/// [Tag=SET,]<first>,<second>,<max>.0,<compressed histogram>
/// ```
///
/// `first_ms` and `second_ms` are milliseconds written as seconds with three decimals
/// (start and end since the epoch in a `.hgrm` file; start since BaseTime and length in a
/// `--hdr-log`); the maximum is in the histogram's unit (microseconds), as HdrHistogram C
/// writes it.
pub(crate) fn push_interval_line(
    out: &mut String,
    tag: Option<&str>,
    first_ms: u64,
    second_ms: u64,
    max_us: u64,
    compressed_histogram: &str,
) {
    if let Some(tag) = tag {
        out.push_str("Tag=");
        out.push_str(tag);
        out.push(',');
    }
    let _ = writeln!(
        out,
        "{},{},{max_us}.0,{compressed_histogram}",
        epoch_ms_as_secs(first_ms),
        epoch_ms_as_secs(second_ms),
    );
}

/// Milliseconds as seconds with three decimals, exactly (no float).
pub(crate) fn epoch_ms_as_secs(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// `date`-style UTC time of `epoch_secs`: `Sun Nov 29 19:06:20 UTC 2026` (day of the
/// month zero-padded, so the line always splits into the same fields).
pub fn format_epoch_date(epoch_secs: u64) -> String {
    const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = epoch_secs / 86_400;
    let secs_of_day = epoch_secs % 86_400;
    // 1970-01-01 was a Thursday.
    let weekday = WEEKDAYS[((days + 4) % 7) as usize];
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{weekday} {} {day:02} {:02}:{:02}:{:02} UTC {year}",
        MONTHS[(month - 1) as usize],
        secs_of_day / 3600,
        secs_of_day % 3600 / 60,
        secs_of_day % 60
    )
}

/// One file pair to write: the title used in the header and notices, and the file stem.
fn targets<'a>(prefix: &str, run: &'a Results) -> Vec<(String, PathBuf, &'a Row)> {
    let n = run.run_number;
    let mut out = Vec::new();
    if let Some(totals) = run.totals() {
        out.push((
            "Full Run command".to_string(),
            PathBuf::from(format!("{prefix}_FULL_RUN_{n}")),
            totals,
        ));
    }
    let mut commands: Vec<&Row> = run.command_rows().iter().filter(|r| r.count > 0).collect();
    // memtier writes its per-command files in name order.
    commands.sort_by(|a, b| a.name.hist.cmp(&b.name.hist));
    for row in commands {
        let safe: String = row
            .name
            .hist
            .chars()
            .map(|c| if c == '/' || c == '\0' { '_' } else { c })
            .collect();
        out.push((
            format!("{} command", row.name.hist),
            PathBuf::from(format!("{prefix}_{safe}_command_run_{n}")),
            row,
        ));
    }
    out
}

/// Writes `P_FULL_RUN_N.{txt,hgrm}` from `Totals` and `P_<CMD>_command_run_N.{txt,hgrm}`
/// for each command that ran, announcing each file on stderr as memtier does. In open loop
/// those hold response times; service times go to `..._service.txt` and
/// `..._service.hgrm` beside them. A file that cannot be written does not stop the
/// others; every one is named in the error (see [`WriteFailures`]).
pub fn write_run_files(prefix: &str, run: &Results) -> Result<(), Error> {
    let mut failures = WriteFailures::default();
    for (title, stem, row) in targets(prefix, run) {
        let mut txt = stem.clone().into_os_string();
        txt.push(".txt");
        let txt = PathBuf::from(txt);
        eprintln_safe!(
            "Writing {title} HDR latency histogram results to {}...",
            txt.display()
        );
        failures.keep(write_atomic(
            &txt,
            render_percentile_distribution(&row.histogram).as_bytes(),
        ));
        if let Some(service) = row.service.as_deref() {
            let mut path = stem.clone().into_os_string();
            path.push("_service.txt");
            let path = PathBuf::from(path);
            eprintln_safe!(
                "Writing {title} HDR service time histogram results to {}...",
                path.display()
            );
            failures.keep(write_atomic(
                &path,
                render_percentile_distribution(&service.histogram).as_bytes(),
            ));
        }

        let mut hgrm = stem.clone().into_os_string();
        hgrm.push(".hgrm");
        let hgrm = PathBuf::from(hgrm);
        eprintln_safe!(
            "Writing {title} HDR latency histogram results in HistogramLogProcessor format to {}...",
            hgrm.display()
        );
        let log = render_interval_log(&title, run.start_epoch_ms, &row.series);
        failures.keep(write_atomic(&hgrm, log.as_bytes()));
        if let Some(log) = render_service_interval_log(&title, run.start_epoch_ms, &row.series) {
            let mut path = stem.into_os_string();
            path.push("_service.hgrm");
            let path = PathBuf::from(path);
            eprintln_safe!(
                "Writing {title} HDR service time histogram results in HistogramLogProcessor format to {}...",
                path.display()
            );
            failures.keep(write_atomic(&path, log.as_bytes()));
        }
    }
    failures.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compress_histogram;
    use crate::results::test_support::{
        DEFAULT_FULL_RUN_HGRM, DEFAULT_FULL_RUN_TXT, DEFAULT_GET_TXT, DEFAULT_JSON, decode,
        sample_histogram, sample_totals_histogram,
    };
    use crate::stats::RowName;

    #[test]
    fn txt_of_memtier_histogram_matches_sample_byte_for_byte() {
        // Same histogram as memtier's (decoded from default.json), so even the footer's
        // Buckets/SubBuckets line must come out identical.
        let h = sample_totals_histogram();
        assert_eq!(render_percentile_distribution(&h), DEFAULT_FULL_RUN_TXT);
    }

    #[test]
    fn txt_of_get_histogram_matches_sample_byte_for_byte() {
        let h = sample_histogram(DEFAULT_JSON, "ALL STATS", "Gets");
        assert_eq!(render_percentile_distribution(&h), DEFAULT_GET_TXT);
    }

    #[test]
    fn txt_footer_reports_kvbench_bucket_layout() {
        let mut h = crate::stats::new_histogram();
        h.record(100).unwrap();
        h.record(300).unwrap();
        let txt = render_percentile_distribution(&h);
        let lines: Vec<&str> = txt.lines().collect();
        assert_eq!(
            lines[0],
            "       Value   Percentile   TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert_eq!(
            lines[2],
            "        0.10     0.000000            1         1.00"
        );
        assert_eq!(
            lines[lines.len() - 4],
            "        0.30     1.000000            2          inf"
        );
        assert_eq!(
            lines[lines.len() - 3],
            "#[Mean    =        0.200, StdDeviation   =        0.100]"
        );
        assert_eq!(
            lines[lines.len() - 2],
            "#[Max     =        0.300, Total count    =            2]"
        );
        let buckets = format!(
            "#[Buckets = {:12}, SubBuckets     =         2048]",
            h.buckets()
        );
        assert_eq!(lines[lines.len() - 1], buckets);
    }

    #[test]
    fn empty_histogram_txt_has_no_rows_and_finite_footer() {
        let txt = render_percentile_distribution(&crate::stats::new_histogram());
        assert!(!txt.contains("nan") && !txt.contains("inf"), "{txt}");
        assert_eq!(txt.lines().count(), 5);
    }

    #[test]
    fn ticks_walk_halves_the_distance() {
        let mut h = crate::stats::new_histogram();
        for v in 1..=1000 {
            h.record(v).unwrap();
        }
        let p: Vec<f64> = percentile_ticks(&h, 10)
            .iter()
            .map(|t| t.percentile)
            .collect();
        assert_eq!(
            &p[..12],
            &[
                0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 52.5
            ]
        );
        assert_eq!(p.last(), Some(&100.0));
        assert!(p.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn ticks_stop_on_a_huge_single_bucket_count() {
        let mut h = crate::stats::new_histogram();
        h.record_n(5, u64::MAX / 4).unwrap();
        h.record(7).unwrap();
        let ticks = percentile_ticks(&h, 10);
        assert_eq!(ticks.last().map(|t| t.percentile), Some(100.0));
        assert!(ticks.len() < 10_000);
    }

    #[test]
    fn hgrm_matches_sample_layout_and_parses() {
        let h = sample_totals_histogram();
        let series = vec![
            IntervalSummary {
                start_epoch_ms: 1_795_979_180_809,
                end_epoch_ms: 1_795_979_180_827,
                count: h.len(),
                max_latency_us: h.max(),
                compressed_histogram: compress_histogram(&h),
                ..Default::default()
            },
            // Empty intervals are left out.
            IntervalSummary {
                start_epoch_ms: 1_795_979_181_809,
                end_epoch_ms: 1_795_979_182_809,
                ..Default::default()
            },
        ];
        let log = render_interval_log("Full Run command", 1_795_979_180_809, &series);
        let ours: Vec<&str> = log.lines().collect();
        let theirs: Vec<&str> = DEFAULT_FULL_RUN_HGRM.lines().collect();
        assert_eq!(ours.len(), 5);
        assert_eq!(ours[0], theirs[0]);
        assert_eq!(ours[1], theirs[1]);
        assert_eq!(
            ours[2],
            "#[StartTime: 1795979180.809 (seconds since epoch), Sun Nov 29 19:06:20 UTC 2026]"
        );
        assert_eq!(ours[3], theirs[3]);
        assert!(
            ours[4].starts_with("1795979180.809,1795979180.827,311.0,HISTF"),
            "{}",
            ours[4]
        );

        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        let entries: Vec<_> = IntervalLogIterator::new(log.as_bytes()).collect();
        assert_eq!(entries.len(), 2, "StartTime and one interval");
        let Ok(LogEntry::Interval(iv)) = &entries[1] else {
            panic!("second entry is not an interval: {:?}", entries[1].is_ok());
        };
        assert_eq!(iv.max(), 311.0);
        assert_eq!(decode(iv.encoded_histogram()).len(), 800);
    }

    #[test]
    fn dates_format_like_date_in_utc() {
        assert_eq!(format_epoch_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(
            format_epoch_date(951_782_400),
            "Tue Feb 29 00:00:00 UTC 2000"
        );
        assert_eq!(
            format_epoch_date(1_795_979_180),
            "Sun Nov 29 19:06:20 UTC 2026"
        );
    }

    #[test]
    fn files_are_named_and_written_per_run_and_command() {
        let dir = std::env::temp_dir().join(format!("kvbench-hdr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("p").display().to_string();
        let h = sample_totals_histogram();
        let row = |name: &str, hist: &str, count: u64| Row {
            name: RowName {
                row: name.into(),
                hist: hist.into(),
                has_hits: false,
            },
            count,
            histogram: if count > 0 {
                h.clone()
            } else {
                crate::stats::new_histogram()
            },
            ..crate::results::test_support::zero_row()
        };
        let run = Results {
            title: "ALL STATS".into(),
            run_number: 2,
            start_epoch_ms: 1000,
            finish_epoch_ms: 2000,
            duration_ms: 1000,
            interrupted: false,
            stopped_by: None,
            cluster: false,
            rows: vec![
                row("Sets", "SET", 5),
                row("Waits", "WAIT", 0),
                row("Gets", "GET", 5),
                row("Totals", "FULL_RUN", 10),
            ],
            servers: Vec::new(),
            visibility: None,
            schedule: None,
            unanswered: None,
        };
        write_run_files(&prefix, &run).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "p_FULL_RUN_2.hgrm",
                "p_FULL_RUN_2.txt",
                "p_GET_command_run_2.hgrm",
                "p_GET_command_run_2.txt",
                "p_SET_command_run_2.hgrm",
                "p_SET_command_run_2.txt"
            ]
        );
        let hgrm = std::fs::read_to_string(dir.join("p_SET_command_run_2.hgrm")).unwrap();
        assert!(hgrm.starts_with("#[SET command HDR latency histogram results]\n"));
        std::fs::remove_dir_all(&dir).unwrap();

        // Every file that cannot be written is named, not only the first.
        let err = write_run_files("/nonexistent-kvbench-dir/p", &run).unwrap_err();
        assert!(
            err.message()
                .starts_with("cannot write /nonexistent-kvbench-dir/p_FULL_RUN_2.txt: ")
        );
        assert!(
            err.message()
                .contains("; cannot write /nonexistent-kvbench-dir/p_SET_command_run_2.hgrm: "),
            "{err}"
        );
    }
}
