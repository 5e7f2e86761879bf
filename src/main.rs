//! The `kvbench` binary: parse flags, build the config, run, write reports, map errors to exit codes.

use std::process::ExitCode;
use std::sync::Arc;

use kvbench::cli::{Parsed, parse_args};
use kvbench::config::{Config, render_show_config};
use kvbench::error::Error;
use kvbench::{report, runner, signals};

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code() as u8)
        }
    }
}

fn real_main() -> Result<u8, Error> {
    // Temporary dispatch until the redesign's front-end selection lands.
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "intrinsic-latency") {
        argv.remove(1);
        return kvbench::frontend::intrinsic_latency::run(argv);
    }
    let cli = match parse_args(std::env::args())? {
        Parsed::Print(text) => {
            print!("{text}");
            return Ok(0);
        }
        Parsed::Run(cli) => cli,
    };
    let config = Arc::new(Config::from_cli(&cli)?);
    kvbench::debug::set_level(config.output.debug);
    if config.output.show_config {
        print!("{}", render_show_config(&config));
    }
    let outcome = runner::run(&config);
    let anything_measured = outcome
        .runs
        .iter()
        .any(|run| run.rows.iter().any(|row| row.count > 0));
    // A run that never got a reply has nothing worth a report; one cut short by an error
    // or Ctrl-C still writes what it measured.
    if anything_measured || outcome.error.is_none() {
        report::write_reports(&config, &outcome.runs, outcome.verification.as_ref())?;
    }
    if let Some(err) = outcome.error {
        return Err(err);
    }
    // Error replies have no column in memtier's formats: say how many there were, and
    // refuse to call a run where every reply was an error a benchmark.
    let (errors, count) = outcome
        .runs
        .iter()
        .filter_map(|run| run.totals())
        .fold((0, 0), |(e, c), t| (e + t.errors, c + t.count));
    if errors > 0 && errors == count {
        return Err(Error::run(format!(
            "every one of the {count} replies was an error (see the messages above): nothing was benchmarked"
        )));
    }
    if errors > 0 {
        eprintln!(
            "warning: {errors} of {count} requests got an error reply (the first ones are shown above)"
        );
    }
    if let Some(report) = &outcome.verification {
        eprint!("{}", report.render_failures());
        if report.failed() > 0 {
            return Err(Error::run(format!(
                "data verification failed: {} of {} keys did not hold the value written",
                report.failed(),
                report.failed() + report.verified()
            )));
        }
    }
    if let Some(signal) = outcome.signal {
        eprintln!("interrupted: results so far were written");
        return Ok(signals::exit_code(signal) as u8);
    }
    Ok(0)
}
