//! `kvbench merge`: many result files into one. Reads the flags ([`flags`]), merges with
//! `crate::merge`, and writes what a run writes with the shared report writers: the ALL
//! STATS table (stdout or `-o`), `--json-out-file`, `--hdr-file-prefix` files and the
//! `--hdr-log` interval log.
//!
//! ```text
//! argv -> flags -> merge::merge_files (resultfile reads each) -> MergedResult
//!      -> stderr: notes, and what the shards left unanswered when it hides a stall
//!      -> report::write_reports (table, JSON, HDR files) + report::hdr_log
//! ```

pub mod flags;

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use crate::console::print_now;
use crate::error::Error;
use crate::frontend::common::usage::one_line;
use crate::frontend::utf8_args;
use crate::merge::merge_files;
use crate::report::{self, Destinations, Rendering, hdr_log};

pub use flags::MergeFlags;

/// What the command line asks for.
enum Parsed {
    Run(MergeFlags),
    /// `--help`: print this and exit 0.
    Print(String),
}

fn parse(args: Vec<OsString>) -> Result<Parsed, Error> {
    let args = utf8_args(args)?;
    let matches = match MergeFlags::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Parsed::Print(e.to_string()));
        }
        Err(e) => return Err(one_line(&e)),
    };
    MergeFlags::from_arg_matches(&matches)
        .map(Parsed::Run)
        .map_err(|e| one_line(&e))
}

/// Runs `kvbench merge` with its argv (program name first); returns the exit status: 0,
/// or an error (a file that cannot be read or merged, an output that cannot be written).
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let flags = match parse(args)? {
        Parsed::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        Parsed::Run(flags) => flags,
    };
    let destinations = Destinations {
        out_file: flags.out_file.clone(),
        json_out_file: flags.json_out_file.clone(),
        hdr_file_prefix: flags.hdr_file_prefix.clone(),
        announced: false,
        files_only: false,
    };
    // Every output is checked before any is written, as a run checks them before it
    // starts: a bad `-o` must not leave a JSON file written and the command failed.
    report::check_destinations(&destinations)?;
    if let Some(path) = &flags.hdr_log {
        hdr_log::check_log_path(path)?;
    }
    let merged = merge_files(&flags.files, &flags.options())?;
    let n = merged.inputs.len();
    eprintln_safe!(
        "merged {n} result file{}: {}",
        if n == 1 { "" } else { "s" },
        merged.inputs.join(", ")
    );
    for note in &merged.notes {
        eprintln_safe!("{note}");
    }
    // The shards' unanswered requests, added up, may hide a stall the merged figures do
    // not show: the same words as the memtier front end's, which wrote the inputs.
    let runs = merged.blocks();
    for run in runs {
        if let Some(warning) = run.unanswered_warning() {
            match runs.len() > 1 {
                true => eprintln_safe!("warning: run {}: {warning}", run.run_number),
                false => eprintln_safe!("warning: {warning}"),
            }
        }
    }
    let shown = merged.shown();
    let rendering = Rendering {
        info: merged.run_info,
        percentiles: &merged.percentiles,
        columns: &merged.percentiles,
        hide_histogram: flags.hide_histogram || merged.hide_histogram,
        print_all_runs: false,
        configuration: &shown,
        sweep: merged.sweep.as_ref(),
    };
    let written = report::write_reports(&destinations, &rendering, runs, None);
    // The log too when another output failed: each is worth having on its own, and
    // each failure is named (a reader gone only when no file failed).
    let logged = match &flags.hdr_log {
        Some(path) => hdr_log::write_hdr_log(path, runs),
        None => Ok(()),
    };
    let mut failures = report::WriteFailures::default();
    failures.keep(written);
    failures.keep(logged);
    failures.into_result()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("kvbench merge")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn help_prints_and_bad_flags_are_one_line_usage_errors() {
        match parse(argv(&["--help"])) {
            Ok(Parsed::Print(text)) => assert!(text.contains("--hdr-log"), "{text}"),
            _ => panic!("--help should print"),
        }
        let e = match parse(argv(&["--nope", "a.json"])) {
            Err(e) => e,
            Ok(_) => panic!("--nope parsed"),
        };
        assert!(matches!(e, Error::Usage(_)));
        assert_eq!(e.message(), "unexpected argument '--nope'; see --help");
        assert!(matches!(parse(argv(&[])), Err(Error::Usage(_))));
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = main(argv(&["/nonexistent-kvbench/a.json"])).unwrap_err();
        assert!(
            e.message().contains("/nonexistent-kvbench/a.json"),
            "{}",
            e.message()
        );
    }
}
