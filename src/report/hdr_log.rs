//! The `--hdr-log=FILE` file: one standard HdrHistogram interval log for the whole
//! benchmark, one interval per second, each command's lines tagged with its name.
//!
//! ```text
//! #[kvbench latency log: one interval per second; untagged lines are all commands, Tag= lines one command; values in microseconds]
//! #[Histogram log format version 1.3]
//! #[StartTime: 1796032471.890 (seconds since epoch), Mon Nov 30 09:54:31 UTC 2026]
//! #[BaseTime: 1796032471.890 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! 0.000,1.000,8067.0,HISTFAAAAvp4nC1Q...
//! Tag=SET,0.000,1.000,5011.0,HISTFAAAAux4nC1R...
//! Tag=GET,0.000,1.000,8067.0,HISTFAAAAy14nC1S...
//! ```
//!
//! Timestamps are seconds since BaseTime (the first run's start), then the interval's
//! length; the maximum is in microseconds, like the histograms. The untagged lines hold
//! every command of the second (`Totals`), so HdrHistogram's `HistogramLogProcessor`
//! without `-tag` reports the whole workload and with `-tag SET` one command. Seconds in
//! which a command saw no request have no line. With `-x N` the runs follow each other in
//! time order in the one file. Lines are written by the `.hgrm` files' own line writer.
//!
//! The hdrhistogram crate's `IntervalLogWriter` is not used: it re-encodes a histogram per
//! line where the results already hold each second's encoding, and writes no legend.

use std::path::Path;

use crate::error::Error;
use crate::report::hdr::{epoch_ms_as_secs, format_epoch_date, push_interval_line};
use crate::report::write_atomic;
use crate::results::{IntervalSummary, Results};

/// `SET` as a log tag: the characters a tag may not hold (`,`, space, line breaks)
/// become `_`.
fn tag_of(hist_name: &str) -> String {
    hist_name
        .chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

fn push_second(out: &mut String, tag: Option<&str>, base_ms: u64, s: &IntervalSummary) {
    if s.count == 0 || s.compressed_histogram.is_empty() {
        return;
    }
    push_interval_line(
        out,
        tag,
        s.start_epoch_ms.saturating_sub(base_ms),
        s.end_epoch_ms.saturating_sub(s.start_epoch_ms),
        s.max_latency_us,
        &s.compressed_histogram,
    );
}

/// The interval log of `runs` (in run order), as the module documentation shows it.
pub fn render_hdr_log(runs: &[Results]) -> String {
    let base_ms = runs.first().map_or(0, |r| r.start_epoch_ms);
    let mut out = String::from(
        "#[kvbench latency log: one interval per second; untagged lines are all commands, \
         Tag= lines one command; values in microseconds]\n\
         #[Histogram log format version 1.3]\n",
    );
    let base = epoch_ms_as_secs(base_ms);
    out.push_str(&format!(
        "#[StartTime: {base} (seconds since epoch), {}]\n#[BaseTime: {base} (seconds since epoch)]\n",
        format_epoch_date(base_ms / 1000)
    ));
    out.push_str(
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
    for run in runs {
        let Some(totals) = run.totals() else {
            continue;
        };
        let tags: Vec<String> = run
            .command_rows()
            .iter()
            .map(|r| tag_of(&r.name.hist))
            .collect();
        for (i, second) in totals.series.iter().enumerate() {
            push_second(&mut out, None, base_ms, second);
            for (row, tag) in run.command_rows().iter().zip(&tags) {
                if let Some(s) = row.series.get(i) {
                    push_second(&mut out, Some(tag), base_ms, s);
                }
            }
        }
    }
    out
}

/// Writes [`render_hdr_log`] to `path` atomically; an error names the file.
pub fn write_hdr_log(path: &Path, runs: &[Results]) -> Result<(), Error> {
    write_atomic(path, render_hdr_log(runs).as_bytes())
}

#[cfg(test)]
mod tests;
