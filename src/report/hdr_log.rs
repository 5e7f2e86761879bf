//! The `--hdr-log=FILE` files: standard HdrHistogram interval logs for the whole
//! benchmark, one interval per second: FILE holds every command (`Totals`), and
//! `FILE_<CMD>` (the command before FILE's extension: `all_SET.hlog`) each command.
//!
//! ```text
//! #[kvbench latency log: one interval per second, all commands; each command's own log is FILE_<CMD>; values in microseconds]
//! #[Histogram log format version 1.3]
//! #[StartTime: 1796032471.890 (seconds since epoch), Mon Nov 30 09:54:31 UTC 2026]
//! #[BaseTime: 1796032471.890 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! 0.000,1.000,8067.0,HISTFAAAAvp4nC1Q...
//! ```
//!
//! A command's log opens with `#[SET command HDR latency histogram results]`, as its
//! `.hgrm` file does, so `kvbench merge` reads the command from it. No line is tagged:
//! readers that sum a log's lines (python hdrh's `HistogramLogReader`) add tagged lines in
//! too, so commands tagged into the totals' file would be counted twice.
//!
//! Timestamps are seconds since BaseTime (the first run's start), then the interval's
//! length; the maximum is in microseconds, like the histograms. Seconds in which a
//! command saw no request have no line. With `-x N` the runs follow each other in time
//! order in each file. Lines are written by the `.hgrm` files' own line writer.
//!
//! The hdrhistogram crate's `IntervalLogWriter` is not used: it re-encodes a histogram per
//! line where the results already hold each second's encoding, and writes no legend.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::report::hdr::{epoch_ms_as_secs, format_epoch_date, push_interval_line};
use crate::report::{WriteFailures, check_writable, regular_target, write_atomic};
use crate::results::{IntervalSummary, Results};

/// A command's name as part of a file name: the characters a log tag or a file name may
/// not hold (`,`, space, line breaks, `/`, NUL) become `_`.
fn file_part(hist_name: &str) -> String {
    hist_name
        .chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n' | '/' | '\0') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `all.hlog` and `SET` -> `all_SET.hlog`; `all` -> `all_SET`.
pub fn command_log_path(path: &Path, hist_name: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let mut name = format!("{stem}_{}", file_part(hist_name));
    if let Some(ext) = path.extension() {
        name.push('.');
        name.push_str(&ext.to_string_lossy());
    }
    path.with_file_name(name)
}

fn push_second(out: &mut String, base_ms: u64, s: &IntervalSummary) {
    if s.count == 0 || s.compressed_histogram.is_empty() {
        return;
    }
    push_interval_line(
        out,
        None,
        s.start_epoch_ms.saturating_sub(base_ms),
        s.end_epoch_ms.saturating_sub(s.start_epoch_ms),
        s.max_latency_us,
        &s.compressed_histogram,
    );
}

/// The header every log shares after its title: version, StartTime, BaseTime, legend.
fn push_header(out: &mut String, base_ms: u64) {
    out.push_str("#[Histogram log format version 1.3]\n");
    let base = epoch_ms_as_secs(base_ms);
    out.push_str(&format!(
        "#[StartTime: {base} (seconds since epoch), {}]\n#[BaseTime: {base} (seconds since epoch)]\n",
        format_epoch_date(base_ms / 1000)
    ));
    out.push_str(
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
}

fn base_ms(runs: &[Results]) -> u64 {
    runs.first().map_or(0, |r| r.start_epoch_ms)
}

/// The totals' log of `runs` (in run order), as the module documentation shows it.
pub fn render_hdr_log(runs: &[Results]) -> String {
    let base_ms = base_ms(runs);
    let mut out = String::from(
        "#[kvbench latency log: one interval per second, all commands; each command's own \
         log is FILE_<CMD>; values in microseconds]\n",
    );
    push_header(&mut out, base_ms);
    for totals in runs.iter().filter_map(Results::totals) {
        for second in &totals.series {
            push_second(&mut out, base_ms, second);
        }
    }
    out
}

/// The commands that ran in any of `runs` (by histogram name, first seen first).
pub fn logged_commands(runs: &[Results]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for row in runs.iter().flat_map(Results::command_rows) {
        if row.count > 0 && !out.contains(&row.name.hist.as_str()) {
            out.push(&row.name.hist);
        }
    }
    out
}

/// The log of the command named `hist` over `runs`, titled as its `.hgrm` file is.
pub fn render_command_log(runs: &[Results], hist: &str) -> String {
    let base_ms = base_ms(runs);
    let mut out = format!("#[{hist} command HDR latency histogram results]\n");
    push_header(&mut out, base_ms);
    for run in runs {
        for row in run.command_rows().iter().filter(|r| r.name.hist == hist) {
            for second in &row.series {
                push_second(&mut out, base_ms, second);
            }
        }
    }
    out
}

/// Writes [`render_hdr_log`] to `path` and each command's log beside it, each whole; a
/// file that cannot be written does not stop the others, and the error names every one
/// (see [`WriteFailures`]).
pub fn write_hdr_log(path: &Path, runs: &[Results]) -> Result<(), Error> {
    // The commands' logs go beside the file the totals land in (a link's target).
    let home = log_home(path)?;
    let mut failures = WriteFailures::default();
    failures.keep(write_atomic(path, render_hdr_log(runs).as_bytes()));
    for hist in logged_commands(runs) {
        failures.keep(write_atomic(
            &command_log_path(&home, hist),
            render_command_log(runs, hist).as_bytes(),
        ));
    }
    failures.into_result()
}

/// The regular file `--hdr-log=FILE` names, its links followed: FILE_<CMD> logs are
/// written beside it, so it cannot be a FIFO or a device (`/dev/stdout`), which has no
/// place beside it. Checked before a run, with the directory's permissions, so that
/// nothing fails after it.
pub fn check_log_path(path: &Path) -> Result<(), Error> {
    let home = log_home(path)?;
    check_writable(&command_log_path(&home, "probe"))
        .map_err(|e| Error::run(format!("cannot write {}: {e}", path.display())))?;
    check_writable(path).map_err(|e| Error::run(format!("cannot write {}: {e}", path.display())))
}

fn log_home(path: &Path) -> Result<PathBuf, Error> {
    match regular_target(path) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => Err(Error::usage(format!(
            "--hdr-log={}: not a regular file; the log writes FILE and a FILE_<CMD> log per command beside it",
            path.display()
        ))),
        Err(e) => Err(Error::run(format!("cannot write {}: {e}", path.display()))),
    }
}

#[cfg(test)]
mod tests;
