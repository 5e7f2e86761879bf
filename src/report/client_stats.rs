//! `--client-stats=PREFIX`: what each client did, second by second, written as one CSV
//! file per client in memtier_benchmark's layout.
//!
//! A worker keeps one [`ClientSeries`] per client and records into it beside its
//! per-thread stats; after the run [`write_files`] writes
//! `PREFIX-<run>-<thread>-<client>.csv` for each:
//!
//! ```text
//! Per-Second Benchmark Data
//! Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,GET Total Bytes TX,GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT Average Latency
//! 0,950,0.000104,83600,79800,3800,9500,0.000098,418000,380000,38000,9100,400,0,0.000000
//! 1,...
//!
//! Full-Test GET Latency
//! Latency (<= msec),Percent
//!    0.047,0.000
//!    0.083,50.000
//!    ...
//!
//! Full-Test SET Latency
//! Latency (<= msec),Percent
//! ...
//!
//! Full-Test WAIT Latency
//! Latency (<= msec),Percent
//! ```
//!
//! Average latencies are in seconds (`%u.%06u` of whole microseconds, truncated). The
//! latency blocks walk each row's full-run histogram in percentile ticks (see
//! [`percentile_ticks`]); a row that saw no request has an empty block. A `--command`
//! run's files take memtier's arbitrary-command layout instead ([`render_arbitrary_csv`]). Unlike memtier,
//! which skips seconds in which a client completed nothing, every second from 0 to the
//! client's last active one has a row (zeros when idle), so files line up second by
//! second.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::error::Error;
use crate::report::hdr::{TICKS_PER_HALF_DISTANCE, percentile_ticks};
use crate::report::{WriteFailures, write_atomic};
use crate::stats::client_series::RowSecond;
use crate::stats::{ClientSeries, rows};

/// The per-second header line, exactly as memtier writes it.
pub const PER_SECOND_HEADER: &str = "Second,SET Requests,SET Average Latency,SET Total Bytes,\
SET Total Bytes TX,SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,\
GET Total Bytes TX,GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT Average Latency";

/// One client's whole CSV file, as the module documentation shows it.
pub fn render_csv(series: &ClientSeries) -> String {
    let seconds = series.seconds();
    let mut out = String::with_capacity(512 + seconds * 96);
    out.push_str("Per-Second Benchmark Data\n");
    out.push_str(PER_SECOND_HEADER);
    out.push('\n');
    for i in 0..seconds {
        let [set, get, wait] = series.second(i) else {
            continue;
        };
        let (hits, misses) = series.hits_misses(i);
        let _ = write!(out, "{i},");
        push_row(&mut out, set);
        out.push(',');
        push_row(&mut out, get);
        let _ = write!(out, ",{misses},{hits},");
        let _ = write!(out, "{},", wait.requests);
        push_avg_seconds(&mut out, wait);
        out.push('\n');
    }
    for (title, row) in [("GET", rows::GET), ("SET", rows::SET), ("WAIT", rows::WAIT)] {
        push_latency_block(&mut out, title, series, row);
    }
    out
}

/// One client's CSV file for arbitrary commands (`--command`), in memtier's
/// arbitrary-command layout: per command (`names`, one per stats row, as its histogram
/// is named: `SET`, `HSET`, `SET_2`), requests, average latency and bytes per second
/// (each field followed by a comma, as memtier writes them), then each command's
/// full-run latency block.
///
/// ```text
/// Per-Second Benchmark Arbitrary Commands Data
/// Second,HSET Requests,HSET Average Latency,HSET Total Bytes,HSET Total Bytes TX,HSET Total Bytes RX,GET Requests,...,
/// 0,950,0.000104,83600,79800,3800,...,
///
/// Full-Test HSET Latency
/// Latency (<= msec),Percent
/// ...
/// ```
pub fn render_arbitrary_csv(series: &ClientSeries, names: &[String]) -> String {
    let seconds = series.seconds();
    let mut out = String::with_capacity(512 + seconds * 48 * names.len());
    out.push_str("Per-Second Benchmark Arbitrary Commands Data\nSecond,");
    for name in names {
        let _ = write!(
            out,
            "{name} Requests,{name} Average Latency,{name} Total Bytes,{name} Total Bytes TX,{name} Total Bytes RX,"
        );
    }
    out.push('\n');
    for i in 0..seconds {
        let _ = write!(out, "{i},");
        for row in series.second(i).iter().take(names.len()) {
            push_row(&mut out, row);
            out.push(',');
        }
        out.push('\n');
    }
    for (row, name) in names.iter().enumerate() {
        push_latency_block(&mut out, name, series, row);
    }
    out
}

/// `Full-Test TITLE Latency` and its percentile ticks (none when the row saw nothing).
fn push_latency_block(out: &mut String, title: &str, series: &ClientSeries, row: usize) {
    let _ = write!(
        out,
        "\nFull-Test {title} Latency\nLatency (<= msec),Percent\n"
    );
    if let Some(h) = series.latency(row) {
        for t in percentile_ticks(h, TICKS_PER_HALF_DISTANCE) {
            let _ = writeln!(out, "{:8.3},{:.3}", t.value as f64 / 1000.0, t.percentile);
        }
    }
}

/// `requests,avg latency,total bytes,bytes tx,bytes rx` of one row.
fn push_row(out: &mut String, r: &RowSecond) {
    let _ = write!(out, "{},", r.requests);
    push_avg_seconds(out, r);
    let _ = write!(
        out,
        ",{},{},{}",
        r.bytes_tx + r.bytes_rx,
        r.bytes_tx,
        r.bytes_rx
    );
}

/// The row's mean latency in seconds as memtier's `%u.%06u`: whole microseconds
/// (truncated), `0.000000` when nothing completed.
fn push_avg_seconds(out: &mut String, r: &RowSecond) {
    let avg_us = r.latency_sum_us.checked_div(r.requests).unwrap_or(0);
    let _ = write!(out, "{}.{:06}", avg_us / 1_000_000, avg_us % 1_000_000);
}

/// Writes one CSV per client, `<prefix>-<run>-<thread>-<client>.csv` (`run` 1-based,
/// `thread` and `client` — the client's index within its thread — 0-based, as memtier
/// numbers them), after memtier's `[RUN <run>] Writing client stats files...` notice on
/// stderr. `arbitrary`: the command rows' names of a `--command` run (its files take
/// memtier's arbitrary-command layout); `None` for SET/GET/WAIT.
///
/// Each file is written atomically. A failure does not stop the other files; every one
/// is named in the error, `cannot write FILE: reason` (see [`WriteFailures`]).
pub fn write_files(
    prefix: &str,
    run: u32,
    per_client: &[(usize, usize, ClientSeries)],
    arbitrary: Option<&[String]>,
) -> Result<(), Error> {
    eprintln_safe!("[RUN {run}] Writing client stats files...");
    let mut failures = WriteFailures::default();
    for (thread, client, series) in per_client {
        let path = PathBuf::from(format!("{prefix}-{run}-{thread}-{client}.csv"));
        let csv = match arbitrary {
            Some(names) => render_arbitrary_csv(series, names),
            None => render_csv(series),
        };
        failures.keep(write_atomic(&path, csv.as_bytes()));
    }
    failures.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_series_has_header_and_three_empty_blocks() {
        let csv = render_csv(&ClientSeries::new(rows::COUNT));
        let want = format!(
            "Per-Second Benchmark Data\n{PER_SECOND_HEADER}\n\
             \nFull-Test GET Latency\nLatency (<= msec),Percent\n\
             \nFull-Test SET Latency\nLatency (<= msec),Percent\n\
             \nFull-Test WAIT Latency\nLatency (<= msec),Percent\n"
        );
        assert_eq!(csv, want);
    }

    #[test]
    fn rows_hold_each_seconds_figures() {
        let mut s = ClientSeries::new(rows::COUNT);
        s.record(0, rows::SET, 100, 50, 5);
        s.record(0, rows::SET, 201, 50, 5);
        s.record(0, rows::GET, 1_500_000, 20, 40);
        s.hit(0, 1);
        s.miss(0, 2);
        // Second 1 idle; second 2 has one WAIT.
        s.record(2, rows::WAIT, 7, 10, 4);
        // Out-of-range rows are ignored, not a panic.
        s.record(2, 7, 1, 1, 1);
        assert_eq!(
            (s.requests(rows::SET), s.requests(rows::GET), s.requests(7)),
            (2, 1, 0)
        );
        let csv = render_csv(&s);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "Per-Second Benchmark Data");
        assert_eq!(lines[1], PER_SECOND_HEADER);
        // SET mean 150.5 µs truncates to 150; GET 1.5 s.
        assert_eq!(
            lines[2],
            "0,2,0.000150,110,100,10,1,1.500000,60,20,40,2,1,0,0.000000"
        );
        assert_eq!(
            lines[3],
            "1,0,0.000000,0,0,0,0,0.000000,0,0,0,0,0,0,0.000000"
        );
        assert_eq!(
            lines[4],
            "2,0,0.000000,0,0,0,0,0.000000,0,0,0,0,0,1,0.000007"
        );
        assert_eq!(lines[5], "");
        assert_eq!(lines[6], "Full-Test GET Latency");
    }

    #[test]
    fn arbitrary_commands_have_a_column_group_and_a_block_each() {
        let mut s = ClientSeries::new(2);
        s.record(0, 0, 100, 40, 4);
        s.record(0, 0, 201, 40, 4);
        s.record(1, 1, 7, 10, 30);
        let names = ["HSET".to_string(), "GET".to_string()];
        let csv = render_arbitrary_csv(&s, &names);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "Per-Second Benchmark Arbitrary Commands Data");
        assert_eq!(
            lines[1],
            "Second,HSET Requests,HSET Average Latency,HSET Total Bytes,HSET Total Bytes TX,HSET Total Bytes RX,\
             GET Requests,GET Average Latency,GET Total Bytes,GET Total Bytes TX,GET Total Bytes RX,"
        );
        assert_eq!(lines[2], "0,2,0.000150,88,80,8,0,0.000000,0,0,0,");
        assert_eq!(lines[3], "1,0,0.000000,0,0,0,1,0.000007,40,10,30,");
        assert_eq!(lines[4], "");
        assert_eq!(lines[5], "Full-Test HSET Latency");
        assert!(csv.contains("\nFull-Test GET Latency\nLatency (<= msec),Percent\n"));
        assert!(!csv.contains("WAIT"), "{csv}");
    }

    #[test]
    fn latency_blocks_walk_percentile_ticks_in_milliseconds() {
        let mut s = ClientSeries::new(rows::COUNT);
        for us in [100, 100, 100, 1000] {
            s.record(0, rows::GET, us, 1, 1);
        }
        let csv = render_csv(&s);
        let get_block: Vec<&str> = csv
            .split("\nFull-Test GET Latency\nLatency (<= msec),Percent\n")
            .nth(1)
            .unwrap()
            .split("\n\n")
            .next()
            .unwrap()
            .lines()
            .collect();
        // 2 significant figures: 100 µs is exact, 1000 µs lands in a bucket whose
        // highest equivalent value is 1003 µs.
        assert_eq!(get_block.first(), Some(&"   0.100,0.000"));
        assert_eq!(get_block.last(), Some(&"   1.003,100.000"));
        assert!(get_block.contains(&"   0.100,75.000"), "{get_block:?}");
        assert!(get_block.contains(&"   1.003,76.250"), "{get_block:?}");
        let set_block = csv
            .split("\nFull-Test SET Latency\nLatency (<= msec),Percent\n")
            .nth(1)
            .unwrap();
        assert!(
            set_block.starts_with("\nFull-Test WAIT Latency\n"),
            "{set_block}"
        );
    }
}
