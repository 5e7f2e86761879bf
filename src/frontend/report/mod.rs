//! `kvbench report RUN.json [MORE.json ...] -o report.html`: result files rendered as one
//! self-contained HTML page (docs/report.md).
//!
//! ```text
//! argv -> flags (clap, validated Options)
//! each file -> resultfile::read_file -> JsonResult -> adapt -> report::html::Run
//! all runs -> settings: each setting listed once
//! report::html::Report -> render_page -> the page, written atomically (or to stdout)
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`flags`] | the files, `-o`, `--title`, `--label`, validated |
//! | [`adapt`] | one JSON result (kvbench's, memtier's, merged, a rate sweep) into the page's model |
//! | [`settings`] | what the configuration section lists of a file beyond its settings as written (a `--command` run's commands), and each setting once |
//!
//! Like `merge`, this front end reads files instead of running: it never calls the engine.

pub mod adapt;
pub mod flags;
pub mod settings;

use std::ffi::OsString;
use std::io::Write;

use crate::console::print_now;
use crate::error::Error;
use crate::report::html::{Report, render_page};
use crate::report::write_atomic;
use crate::resultfile::{Content, read_file};
use flags::{Options, Output, Parsed};

/// Runs `kvbench report` with its argv (the first item is the program name); returns the
/// exit status. Every failure (a file that cannot be read or is not a result, an output
/// that cannot be written) is one line and exit status 1; the output is left untouched then.
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let options = match flags::parse(args)? {
        Parsed::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        Parsed::Run(options) => options,
    };
    let page = render_page(&build_report(&options)?);
    match &options.output {
        Output::File(path) => write_atomic(path, page.as_bytes())?,
        Output::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(page.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| Error::run(format!("cannot write the report to stdout: {e}")))?;
        }
    }
    Ok(0)
}

/// Reads every file, in order, into the page's model.
pub fn build_report(options: &Options) -> Result<Report, Error> {
    let mut runs = Vec::with_capacity(options.files.len());
    for (path, label) in options.files.iter().zip(&options.labels) {
        let file = read_file(path)?;
        let json = match file.content {
            Content::Json(json) => json,
            Content::IntervalLog(_) => {
                return Err(Error::usage(format!(
                    "{}: an HdrHistogram interval log, not a JSON result: kvbench report reads \
                     --json-out-file results",
                    file.name
                )));
            }
        };
        runs.push(adapt::run_from_json(label.clone(), &json));
    }
    settings::list_each_setting_once(&mut runs);
    Ok(Report {
        title: options.title.clone(),
        runs,
    })
}
