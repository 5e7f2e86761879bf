//! The memtier_benchmark front end, kvbench's default command line: memtier's flags and
//! `--config` files into the engine's plan, memtier's live output, and its reports (ALL
//! STATS table, JSON, HDR and client-stats files) with memtier's notices and exit codes.

pub mod arbitrary;
pub mod cli;
pub mod commands;
pub mod config_file;
pub mod dataset;
pub mod live;
pub mod open_loop;
pub mod outputs;
pub mod parse;
pub mod progress;
pub mod settings;
pub mod shape;
pub mod show_config;

use std::ffi::OsString;
use std::sync::Arc;

use crate::console::print_now;
use crate::engine::{self, Fanout, RunObserver};
use crate::error::Error;
use crate::frontend::common::distributed::epoch_seconds_text;
use crate::frontend::utf8_args;
use crate::plan::{Plan, StopAt};
use crate::report::{self, ClientRamp, Destinations, Limit, Rendering, RunInfo, hdr_log};
use crate::results::Results;
use crate::signals;
use crate::sinks::prometheus::PrometheusObserver;
use crate::sinks::statsd::{self, StatsdObserver};
pub use cli::{Cli, Parsed};
pub use parse::parse_args;
pub use settings::Settings;
pub use show_config::render_show_config;

use live::Live;
use outputs::OutputConfig;

/// Runs memtier's command line `args` (program name first); returns the exit status.
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let cli = match parse_args(utf8_args(args)?)? {
        Parsed::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        Parsed::Run(cli) => cli,
    };
    let Settings {
        plan,
        output: out,
        shown,
        ..
    } = Settings::from_cli(&cli)?;
    let plan = Arc::new(plan);
    crate::debug::set_level(out.debug);
    check_outputs(&out)?;
    if out.show_config {
        // memtier's banners go to stderr, the values between them to stdout.
        eprintln_safe!("============== Configuration values: ==============");
        print_now(&render_show_config(&shown, out.json_out_file.as_deref()));
        eprintln_safe!("===================================================");
    }
    if let Some(at) = plan.load.start_at {
        let ahead = at
            .duration_since(std::time::SystemTime::now())
            .unwrap_or_default();
        eprintln_safe!(
            "Connecting now, starting at {} (in {:.1} s)...",
            epoch_seconds_text(at),
            ahead.as_secs_f64()
        );
    }

    // memtier names its JSON and text files first, before the run.
    report::announce(&destinations(&out));
    let arbitrary_rows = plan
        .workload
        .arbitrary
        .as_ref()
        .map(|_| plan.row_names().into_iter().map(|r| r.hist).collect());
    let mut live = Live::new(out.client_stats.clone(), arbitrary_rows);
    let mut statsd = out
        .statsd
        .clone()
        .map(|c| StatsdObserver::new(c, out.print_percentiles.clone()));
    // Up before the run (a port in use fails before any connection), down once it ended.
    let mut prometheus = match &out.prometheus {
        Some(settings) => Some(PrometheusObserver::start(
            settings,
            plan.row_names().into_iter().map(|r| r.hist).collect(),
            plan.load.run_count,
        )?),
        None => None,
    };
    let mut observers: Vec<&mut dyn RunObserver> = Vec::new();
    if let Some(statsd) = statsd.as_mut() {
        observers.push(statsd);
    }
    if let Some(prometheus) = prometheus.as_mut() {
        observers.push(prometheus);
    }
    observers.push(&mut live);
    let mut outcome = engine::run(&plan, &mut Fanout(observers));
    if let Some(prometheus) = prometheus {
        prometheus.stop();
    }
    name_runs(&mut outcome.runs, &plan);
    // The files say why a run's figures stop short (the error itself goes to stderr).
    if let (Some(err), Some(last)) = (&outcome.error, outcome.runs.last_mut()) {
        last.stopped_by = Some(err.to_string());
    }
    if let (Some(report), Some(sweep)) = (outcome.sweep.as_mut(), plan.load.sweep)
        && plan.load.shard.count > 1
    {
        // The steps ran this shard's share; the reports name the rate the user asked for.
        report.whole_rates = sweep.rates().collect();
    }

    let anything_measured = outcome.runs.iter().any(Results::answered);
    // A run that never got a reply has nothing worth a table on stdout, but the files
    // named (and announced as created) are written, saying why ("Stopped by error"), so
    // none keeps an older run's figures; a run cut short by an error or Ctrl-C writes
    // what it measured.
    let failed_before_replies = !anything_measured && outcome.error.is_some();
    if let (Some(err), true) = (&outcome.error, outcome.runs.is_empty()) {
        // The run never began (cluster discovery failed): its files say why all the same.
        outcome.runs.push(Results::empty(
            "ALL STATS".to_string(),
            Some(err.to_string()),
        ));
    }
    if !failed_before_replies || !outcome.runs.is_empty() {
        let destinations = Destinations {
            files_only: failed_before_replies,
            ..destinations(&out)
        };
        let rendering = Rendering {
            info: run_info(&plan),
            percentiles: &out.print_percentiles,
            columns: &out.percentile_columns,
            hide_histogram: out.hide_histogram,
            print_all_runs: out.print_all_runs,
            configuration: &shown,
            sweep: outcome.sweep.as_ref(),
        };
        let written = report::write_reports(
            &destinations,
            &rendering,
            &outcome.runs,
            outcome.verification.as_ref(),
        );
        // The log too when another output failed: each is worth having on its own, and
        // each failure is named (a reader gone only when no file failed).
        let logged = match &out.hdr_log {
            Some(path) => hdr_log::write_hdr_log(path, &outcome.runs),
            None => Ok(()),
        };
        let mut failures = report::WriteFailures::default();
        failures.keep(written);
        failures.keep(logged);
        failures.into_result()?;
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
        eprintln_safe!(
            "warning: {errors} of {count} requests got an error reply (the first ones are shown above)"
        );
    }
    // A run that went on without a server (--reconnect-on-error, or a cluster master
    // down) reads as a short healthy run in the table: say it had connection errors (a
    // count of connections lost or refused; the requests a lost one held were sent again).
    let lost: u64 = outcome
        .runs
        .iter()
        .filter_map(|run| run.totals())
        .map(|t| t.connection_errors)
        .sum();
    if lost > 0 {
        eprintln_safe!(
            "warning: connections were lost or refused {lost} times (see the messages above; the JSON's \"Connection Errors\")"
        );
    }
    // A closed loop's figures count answered requests only: a server that stopped
    // answering would otherwise pass for a healthy short run (exit status 0 still: the
    // run did what was asked, as with error replies).
    let several = outcome.runs.len() > 1;
    for run in &outcome.runs {
        if let Some(warning) = run.unanswered_warning() {
            match several {
                true => eprintln_safe!("warning: run {}: {warning}", run.run_number),
                false => eprintln_safe!("warning: {warning}"),
            }
        }
    }
    if let Some(report) = &outcome.verification {
        eprint_safe!("{}", report.render_failures());
        if report.failed() > 0 {
            return Err(Error::run(format!(
                "data verification failed: {} of {} keys did not hold the value written",
                report.failed(),
                report.failed() + report.verified()
            )));
        }
    }
    if let Some(signal) = outcome.signal {
        eprintln_safe!("interrupted: results so far were written");
        return Ok(signals::exit_code(signal) as u8);
    }
    Ok(0)
}

/// memtier's block titles: `ALL STATS` for a single run, `RUN #n RESULTS` with `-x`;
/// a rate sweep's steps are `STEP #n RESULTS (R requests/s)`.
fn name_runs(runs: &mut [Results], plan: &Plan) {
    for run in runs {
        run.title = match (plan.load.sweep, plan.load.run_count) {
            (Some(sweep), _) => {
                let index = run.run_number.saturating_sub(1) as usize;
                let rate = sweep.rates().nth(index).unwrap_or(0);
                format!("STEP #{} RESULTS ({rate} requests/s)", run.run_number)
            }
            (None, count) if count > 1 => format!("RUN #{} RESULTS", run.run_number),
            (None, _) => "ALL STATS".to_string(),
        };
    }
}

/// Every file the run will write can be written: an output directory that is missing or
/// read-only fails now, in one line, rather than after the whole run.
fn check_outputs(out: &OutputConfig) -> Result<(), Error> {
    report::check_destinations(&destinations(out))?;
    if let Some(statsd) = &out.statsd {
        statsd::resolve(statsd)?;
    }
    if let Some(path) = &out.hdr_log {
        hdr_log::check_log_path(path)?;
    }
    if let Some(prefix) = &out.client_stats {
        report::check_prefix("--client-stats", prefix)?;
    }
    Ok(())
}

/// Where the reports go.
fn destinations(out: &OutputConfig) -> Destinations {
    Destinations {
        out_file: out.out_file.clone(),
        json_out_file: out.json_out_file.clone(),
        hdr_file_prefix: out.hdr_file_prefix.clone(),
        announced: true,
        files_only: false,
    }
}

/// The facts every report states first. For `-n allkeys` the requests per client are the
/// key range (this shard's slice of it) divided among all clients, rounded up.
fn run_info(plan: &Plan) -> RunInfo {
    let limit = match plan.load.stop {
        StopAt::RequestsPerClient(n) => Limit::RequestsPerClient(n),
        StopAt::AllKeys => Limit::RequestsPerClient(
            plan.shard_key_count()
                .div_ceil(plan.total_clients().max(1) as u64),
        ),
        StopAt::TotalRequests(n) | StopAt::Stream(n) => {
            Limit::RequestsPerClient(n.div_ceil(plan.total_clients().max(1) as u64))
        }
        StopAt::Time(d) => Limit::Seconds(d.as_secs()),
        StopAt::Idle => Limit::Seconds(0),
    };
    RunInfo {
        threads: plan.load.threads,
        connections_per_thread: plan.load.clients,
        limit,
        ramp: plan.load.shape.ramp.map(|r| ClientRamp {
            start: r.start,
            step: r.step,
            step_duration: r.step_duration,
        }),
    }
}
