//! Render finished results: the text table, JSON, HDR histogram files and interval log, and
//! the HTML page ([`html`], filled by a front end from result files).
//!
//! [`write_reports`] is the one entry point the binary calls after the runs; the submodules
//! render strings (pure, testable against memtier's samples) and this module writes them.

pub mod client_stats;
pub mod hdr;
pub mod hdr_log;
pub mod html;
pub mod json;
pub mod open_loop;
pub mod table;
mod write;

pub use write::{WriteFailures, check_writable, regular_target, write_atomic};

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Error;
use crate::results::{Results, Row, SweepReport, best_worst_aggregate};
use crate::workload::verify::{VERIFY_BANNER, VerifyReport};

/// What bounds each client, as the report headers state it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A number of requests per client.
    RequestsPerClient(u64),
    /// A number of seconds.
    Seconds(u64),
}

/// A staircase ramp-up of clients, for the JSON "Active Clients" section: `start`
/// clients per thread, `step` more every `step_duration`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientRamp {
    pub start: usize,
    pub step: usize,
    pub step_duration: Duration,
}

/// The facts about a benchmark that every report states before the results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunInfo {
    pub threads: usize,
    pub connections_per_thread: usize,
    pub limit: Limit,
    pub ramp: Option<ClientRamp>,
}

/// What to render, besides the results: supplied by the front end, so the reports need
/// no front end's configuration.
#[derive(Clone, Copy, Debug)]
pub struct Rendering<'a> {
    pub info: RunInfo,
    /// Percentiles for the JSON, e.g. `[50.0, 99.0, 99.9]`, each once.
    pub percentiles: &'a [f64],
    /// The text table's percentile columns: `percentiles`, or memtier's list as given
    /// with its repeats (one column each, as memtier's table prints them).
    pub columns: &'a [f64],
    /// No latency distribution in the text report, no histogram arrays in the JSON.
    pub hide_histogram: bool,
    /// With several runs, each run's block too (not only BEST/WORST/AGGREGATED).
    pub print_all_runs: bool,
    /// The JSON "configuration" object: names and JSON literals, in order.
    pub configuration: &'a [(&'a str, String)],
    /// A rate sweep's curve: the runs are its steps, each shown as it is (no best,
    /// worst or average), then the curve.
    pub sweep: Option<&'a SweepReport>,
}

/// Where the reports go: the text report to stdout or `out_file`, and the optional
/// JSON file and HDR file prefix.
#[derive(Clone, Debug, Default)]
pub struct Destinations {
    pub out_file: Option<PathBuf>,
    pub json_out_file: Option<PathBuf>,
    pub hdr_file_prefix: Option<String>,
    /// The front end named the JSON and text files on stderr before the run, where
    /// memtier does ([`announce`]): [`write_reports`] does not name them again. Otherwise
    /// it names the text file before writing it and the JSON file once it was written, so
    /// no file is said to be created that was not.
    pub announced: bool,
    /// No text report on stdout (a run that failed before any reply: only the files
    /// named, which say why, so none of them is left holding an older run's figures).
    pub files_only: bool,
}

/// memtier's first stderr lines, before `[RUN #1] Preparing benchmark client...`: the
/// JSON file and the text report's file, when given.
pub fn announce(to: &Destinations) {
    if let Some(path) = &to.json_out_file {
        eprintln_safe!("Json file {} created...", path.display());
    }
    if let Some(path) = &to.out_file {
        eprintln_safe!("Writing results to {}...", path.display());
    }
}

/// The result blocks every report shows, in order: the only run as it is; for several runs
/// each run (only with `print_all_runs`), then BEST, WORST and AGGREGATED AVERAGE of the
/// whole runs (of every run when none is whole).
pub fn report_blocks(runs: &[Results], print_all_runs: bool) -> Vec<Cow<'_, Results>> {
    if runs.len() <= 1 {
        return runs.iter().map(Cow::Borrowed).collect();
    }
    let mut blocks: Vec<Cow<'_, Results>> = Vec::with_capacity(runs.len() + 3);
    let cut_short = |r: &Results| r.interrupted || r.stopped_by.is_some();
    // A run cut short (Ctrl-C, an error) is no candidate for best or worst and no part
    // of the average while whole runs exist: one partial second would win as the best.
    // It is shown on its own instead (with --print-all-runs or not), so that its figures
    // and what stopped it are somewhere.
    let whole: Vec<Results> = runs.iter().filter(|r| !cut_short(r)).cloned().collect();
    if print_all_runs {
        blocks.extend(runs.iter().map(Cow::Borrowed));
    } else if !whole.is_empty() {
        blocks.extend(runs.iter().filter(|r| cut_short(r)).map(Cow::Borrowed));
    }
    let compared = if whole.is_empty() { runs } else { &whole[..] };
    let (best, worst, mut aggregate) = best_worst_aggregate(compared);
    // The aggregate still says the whole command was cut short.
    aggregate.interrupted = runs.iter().any(|r| r.interrupted);
    aggregate.stopped_by = runs.iter().rev().find_map(|r| r.stopped_by.clone());
    blocks.extend([best, worst, aggregate].map(Cow::Owned));
    blocks
}

/// Writes every report `to` asks for, with memtier's stderr notices: the text report
/// (stdout, or a file), HDR files for each run and the JSON file.
///
/// Files are written atomically. A failure does not stop the other reports; every one
/// is returned, in one error, as `cannot write FILE: reason` (see [`WriteFailures`]).
pub fn write_reports(
    to: &Destinations,
    rendering: &Rendering<'_>,
    runs: &[Results],
    verification: Option<&VerifyReport>,
) -> Result<(), Error> {
    let out = to;
    let info = rendering.info;
    let blocks = match rendering.sweep {
        Some(_) => runs.iter().map(Cow::Borrowed).collect(),
        None => report_blocks(runs, rendering.print_all_runs),
    };
    let block_refs: Vec<&Results> = blocks.iter().map(|b| b.as_ref()).collect();
    let mut failures = WriteFailures::default();
    let mut keep = |result: Result<(), Error>| failures.keep(result);

    // Unannounced, the JSON file is named as created once it has been (below).
    if !out.announced
        && let Some(path) = &out.out_file
    {
        eprintln_safe!("Writing results to {}...", path.display());
    }

    let mut text = if runs.is_empty() {
        String::new()
    } else {
        table::render_report(
            &info,
            &block_refs,
            rendering.columns,
            rendering.hide_histogram,
        )
    };
    if let Some(sweep) = rendering.sweep {
        text.push_str("\n\n");
        text.push_str(&open_loop::render_sweep(sweep));
    }
    if let Some(report) = verification {
        text.push_str(VERIFY_BANNER);
        text.push_str(&report.render_text());
    }
    match &out.out_file {
        Some(path) => keep(write_atomic(path, text.as_bytes())),
        None if out.files_only => {}
        None => {
            let mut stdout = std::io::stdout().lock();
            keep(
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush())
                    .map_err(|e| match e.kind() {
                        // `| head -3` read what it wanted: the end, not a failure.
                        std::io::ErrorKind::BrokenPipe => Error::ReaderGone,
                        _ => Error::run(format!("cannot write standard output: {e}")),
                    }),
            );
        }
    }

    if let Some(prefix) = &out.hdr_file_prefix {
        for run in runs {
            keep(hdr::write_run_files(prefix, run));
        }
    }

    if let Some(path) = &out.json_out_file {
        eprintln_safe!("Saving JSON output file: {}", path.display());
        let mut json = json::render_json_with_sweep(
            rendering.configuration,
            &info,
            &block_refs,
            rendering.percentiles,
            rendering.hide_histogram,
            rendering.sweep,
        );
        if let Some(report) = verification {
            // The verification object is the root's last member, as memtier writes it.
            if let Some(root_end) = json.rfind("\n\t}") {
                json.insert_str(root_end, &report.render_json_member());
            }
        }
        let written = write_atomic(path, json.as_bytes());
        if written.is_ok() {
            if !out.announced {
                eprintln_safe!("Json file {} created...", path.display());
            }
            eprintln_safe!("Json file closed.");
        }
        keep(written);
    }

    failures.into_result()
}

/// Checks before a run that every file of `to` can be written ([`check_writable`]):
/// `cannot write FILE: reason`, or for the HDR prefix `cannot write
/// --hdr-file-prefix=PREFIX files: reason`.
pub fn check_destinations(to: &Destinations) -> Result<(), Error> {
    for path in [to.out_file.as_ref(), to.json_out_file.as_ref()]
        .into_iter()
        .flatten()
    {
        check_file(path)?;
    }
    if let Some(prefix) = &to.hdr_file_prefix {
        check_prefix("--hdr-file-prefix", prefix)?;
    }
    Ok(())
}

/// Checks before a run that the file `path` can be written: `cannot write FILE: reason`.
pub fn check_file(path: &Path) -> Result<(), Error> {
    check_writable(path).map_err(|e| Error::run(format!("cannot write {}: {e}", path.display())))
}

/// Checks before a run that files named `PREFIX...` can be written, for `flag`.
pub fn check_prefix(flag: &str, prefix: &str) -> Result<(), Error> {
    // A probe beside the files the prefix will name (`PREFIX_FULL_RUN_1.txt`, ...).
    check_writable(Path::new(&format!("{prefix}-probe")))
        .map_err(|e| Error::run(format!("cannot write {flag}={prefix} files: {e}")))
}

/// Width of a rate cell (`%12.2f`), without the separating space.
pub(crate) const RATE_WIDTH: usize = 12;
/// Width of a latency cell (`%15.05f`), without the separating space.
pub(crate) const LATENCY_WIDTH: usize = 15;
/// What a cell shows when it does not apply.
pub(crate) const NOT_APPLICABLE: &str = "---";

/// Appends the latency columns' headers every table shares: `Avg. Latency`, then one
/// per percentile.
pub(crate) fn push_latency_headers(header: &mut String, percentiles: &[f64]) {
    use std::fmt::Write as _;
    let _ = write!(header, "{:>LATENCY_WIDTH$} ", "Avg. Latency");
    for &p in percentiles {
        let _ = write!(header, "{:>LATENCY_WIDTH$} ", percentile_label(p));
    }
}

/// Column label of a percentile: `p50 Latency`, `p99.9 Latency`, `p99.99 Latency`
/// (shortest decimal form, as `%g` prints it).
pub(crate) fn percentile_label(p: f64) -> String {
    format!("p{} Latency", finite(p))
}

/// Width of a table's first column: its longest row name, at least 6, plus a space.
pub(crate) fn name_width(rows: &[Row]) -> usize {
    rows.iter()
        .map(|r| r.name.row.chars().count())
        .max()
        .unwrap_or(0)
        .max(6)
        + 1
}

/// `x`, or 0 when it is NaN or infinite: no report ever prints `nan` or `inf`.
pub(crate) fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

/// Appends `x` with `decimals` places, as C's `%.Nf` does, after [`finite`].
pub(crate) fn push_fixed(out: &mut String, x: f64, decimals: usize) {
    use std::fmt::Write as _;
    let _ = write!(out, "{:.*}", decimals, finite(x));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_replaces_nan_and_infinity() {
        assert_eq!(finite(f64::NAN), 0.0);
        assert_eq!(finite(f64::INFINITY), 0.0);
        assert_eq!(finite(f64::NEG_INFINITY), 0.0);
        assert_eq!(finite(1.5), 1.5);
        let mut s = String::new();
        push_fixed(&mut s, f64::NAN, 2);
        assert_eq!(s, "0.00");
    }
}
