//! `kvbench zbench`: the command line parsed, one engine run over zbench's request
//! streams, its progress table live, then the summary (and the reply histogram) in
//! redis-zbench-go's layout, and kvbench's JSON with `-json-out-file`.
//!
//! ```text
//! flags -> spec -> open files (the soft limit raised, or refused) -> plan -> header
//! engine::run(plan, Live) -> one progress row a second (Ctrl-C: "received Ctrl-c",
//!   SIGTERM / SIGHUP: "received SIGTERM" / "received SIGHUP")
//! results -> summary (+ Average zcard | reply histogram) -> -json-out-file
//!         -> stderr: what a frozen server left unanswered (-rps: unfinished)
//! ```
//!
//! Exit status: 0; 1 for a bad flag or a failed run; 128 + the signal after Ctrl-C,
//! SIGTERM or SIGHUP.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use super::connection;
use super::flags::{Mode, QueryKind, SizeDist, ZbenchCommand, ZbenchSpec, parse};
use super::plan::{self as zb_plan, Added, PERCENTILES};
use super::render::{self, Progress, ReplySizes, Summary, Tick};
use crate::console::print_now;
use crate::engine::{self, RunObserver, Second};
use crate::error::Error;
use crate::frontend::common::open_files;
use crate::frontend::utf8_args;
use crate::report::{self, Limit, RunInfo};
use crate::results::Results;
use crate::signals;

/// Runs zbench's command line `args` (program name first); returns the exit status.
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let words = utf8_args(args)?;
    let spec = match parse(words.into_iter().skip(1))? {
        ZbenchCommand::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        ZbenchCommand::Run(spec) => *spec,
    };
    for warning in &spec.warnings {
        eprintln_safe!("{warning}");
    }
    crate::debug::set_level(spec.debug);
    // Each client is a connection, each connection an open file (two under TLS, for the
    // handshake's timer): the soft limit is raised to fit, or the run is refused now,
    // before any socket, not failed half-connected. With -oss-cluster a client holds one
    // per master, known only once the run asks; the engine says if the files run out then.
    let per_connection = if spec.conn.tls.is_some() { 2 } else { 1 };
    open_files::ensure(
        open_files::needed(
            u64::from(spec.clients),
            zb_plan::threads(spec.clients) as u64,
            per_connection,
        ),
        &format!("-c {}", spec.clients),
    )?;
    let credentials = connection::credentials(spec.password.as_deref(), &spec.conn);
    let tls = connection::tls_settings(&spec.conn, &spec.host)?;
    let server = zb_plan::server(&spec, credentials, tls)?;
    if let Some(path) = &spec.json_out_file {
        // A file that cannot be written fails now, not after the whole run.
        report::check_file(path)?;
    }
    let added = Arc::new(Added::default());
    let plan = Arc::new(zb_plan::plan(&spec, server, Arc::clone(&added)));
    signals::install();
    print_now(&render::header(&spec));
    print_now(&render::progress_header());
    let mut live = Live {
        progress: Progress::new(render::total_commands(&spec)),
        reply_sizes: ReplySizes::new(),
    };
    let mut outcome = engine::run(&plan, &mut live);
    if let Some(signal) = outcome.signal {
        print_now(render::interrupted(signal));
    }
    if let Some(err) = outcome.error.take() {
        // What was measured before the failure is still worth showing; a run that failed
        // before its first successful reply (an unreachable server, a refused or missing
        // password) has nothing to show, so it only ends the progress row, and the error
        // stands alone. The JSON file is written either way, saying why, so a script
        // finds the failure there and never an older run's figures.
        match outcome.runs.pop() {
            Some(mut results) => {
                if succeeded(&results) {
                    print_now(&summary(&spec, &results, &live, &added));
                } else {
                    print_now("\n");
                }
                // A frozen server ends a run by -reply-timeout: what it left unanswered
                // is said before the error, which stays the last line.
                warn_unanswered(&results);
                if let Some(path) = &spec.json_out_file {
                    results.title = "ALL STATS".to_string();
                    results.stopped_by = Some(err.to_string());
                    // The run's own error is the one to exit with; a file that could not
                    // be written is said first.
                    if let Err(write_err) = write_json(&spec, &plan, path, &results) {
                        eprintln_safe!("error: {write_err}");
                    }
                }
            }
            None => {
                print_now("\n");
                // The run never began (cluster discovery failed): the file says why.
                if let Some(path) = &spec.json_out_file {
                    let results = Results::empty("ALL STATS".to_string(), Some(err.to_string()));
                    if let Err(write_err) = write_json(&spec, &plan, path, &results) {
                        eprintln_safe!("error: {write_err}");
                    }
                }
            }
        }
        return Err(err);
    }
    let Some(mut results) = outcome.runs.pop() else {
        return Ok(0);
    };
    results.title = "ALL STATS".to_string();
    print_now(&summary(&spec, &results, &live, &added));
    warn_unfinished(&results);
    warn_unanswered(&results);
    if let Some(path) = &spec.json_out_file {
        write_json(&spec, &plan, path, &results)?;
    }
    // As the memtier front end: a run in which the server refused every command measured
    // the server's refusals, not the benchmark, and must not pass for one.
    if let Some(totals) = results.totals()
        && totals.errors > 0
        && totals.errors == totals.count
    {
        return Err(Error::run(format!(
            "every one of the {} replies was an error (see the messages above): nothing was benchmarked",
            totals.count
        )));
    }
    Ok(outcome
        .signal
        .map_or(0, |signal| signals::exit_code(signal) as u8))
}

/// Under `-rps`, a run cut short (Ctrl-C) while the server was stalled leaves commands
/// that fell due and were never answered; the latency summary cannot hold them, so say
/// how many there were and how long the oldest waited (the JSON's `Schedule` has them).
fn warn_unfinished(results: &Results) {
    let Some(health) = results.schedule.as_ref().map(|s| &s.health) else {
        return;
    };
    let unfinished = health.unsent_at_end + health.in_flight_at_end;
    if unfinished == 0 {
        return;
    }
    let oldest_s = health.unfinished_age.max() as f64 / 1e6;
    eprintln_safe!(
        "warning: {unfinished} commands were due and never answered when the run ended \
         ({} never sent, {} in flight; the oldest waited {oldest_s:.3} s): the latency summary leaves them out",
        health.unsent_at_end,
        health.in_flight_at_end
    );
}

/// Without `-rps`, a run whose server froze (ended by Ctrl-C or `-reply-timeout`) leaves
/// its requests unanswered and out of every figure: the summary would read as a healthy
/// short run, so say so on stderr (stdout stays redis-zbench-go's), as the memtier front
/// end does; the JSON's `"Unfinished"` has the same words.
fn warn_unanswered(results: &Results) {
    if let Some(warning) = results.unanswered_warning() {
        eprintln_safe!("warning: {warning}");
    }
}

/// Whether the run got any reply that was not an error: an error reply measures no
/// command (a refusal such as NOAUTH is the run's failure, not a result).
fn succeeded(results: &Results) -> bool {
    results
        .totals()
        .is_some_and(|totals| totals.count > totals.errors)
}

/// The summary block of a run's results.
fn summary(spec: &ZbenchSpec, results: &Results, live: &Live, added: &Added) -> String {
    let row = results.command_rows().first().or(results.totals());
    let empty = crate::stats::new_histogram();
    let (issued, errors, latency) = match row {
        Some(row) => (row.count, row.errors, &row.histogram),
        None => (0, 0, &empty),
    };
    let duration = match row {
        Some(row) if row.ops_per_sec > 0.0 => {
            Duration::from_secs_f64(row.count as f64 / row.ops_per_sec)
        }
        _ => Duration::from_millis(results.duration_ms),
    };
    let query = matches!(spec.mode, Mode::Query(_));
    // No set was added when every ZADD was refused: there is no average to show.
    let added_any = issued == 0 || errors < issued;
    render::summary(&Summary {
        duration,
        issued,
        errors,
        latency_us: latency,
        // Sets still in flight when nothing was answered (Ctrl-C during a stall) are
        // no figure of the run's: 0, beside its 0 commands.
        average_zcard: (!query && added_any)
            .then(|| added.average().filter(|_| issued > 0).unwrap_or(0.0)),
        reply_sizes: query.then_some(&live.reply_sizes),
    })
}

/// Writes kvbench's JSON results of the run to `path`.
fn write_json(
    spec: &ZbenchSpec,
    plan: &crate::plan::Plan,
    path: &std::path::Path,
    results: &Results,
) -> Result<(), Error> {
    let json_str = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let (mode, query) = match spec.mode {
        Mode::Load => ("load", None),
        Mode::Query(kind) => (
            "query",
            QueryKind::NAMES
                .iter()
                .find(|(_, k)| *k == kind)
                .map(|&(name, _)| name),
        ),
    };
    let dist = match spec.elements.dist {
        SizeDist::Zipf => "zipf",
        SizeDist::Uniform => "uniform",
    };
    let configuration: Vec<(&str, String)> = vec![
        ("tool", json_str("zbench")),
        ("server", json_str(&spec.host)),
        ("port", spec.port.to_string()),
        ("mode", json_str(mode)),
        ("query", query.map_or("null".to_string(), json_str)),
        ("member size", spec.member_size.to_string()),
        ("key elements min", spec.elements.min.to_string()),
        ("key elements max", spec.elements.max.to_string()),
        ("key elements dist", json_str(dist)),
        ("clients", spec.clients.to_string()),
        ("requests", render::total_commands(spec).to_string()),
        ("pipeline", spec.pipeline.to_string()),
        ("multi", spec.multi.to_string()),
        ("rps", spec.rps.unwrap_or(0).to_string()),
        ("keyspace start", spec.keyspace.start.to_string()),
        ("keyspace length", spec.keyspace.len.to_string()),
        ("cluster mode", spec.oss_cluster.to_string()),
        ("random seed", spec.seed.to_string()),
    ];
    let info = RunInfo {
        threads: plan.load.threads,
        connections_per_thread: plan.load.clients,
        limit: Limit::RequestsPerClient(
            render::total_commands(spec).div_ceil(u64::from(spec.clients)),
        ),
        ramp: None,
    };
    // "Errors" beside "Count" in each row: the text's "Total Errors".
    let json =
        report::json::render_json_with_errors(&configuration, &info, &[results], &PERCENTILES);
    report::write_atomic(path, json.as_bytes())
}

/// The live part of the output: one progress row a second, and the reply sizes.
struct Live {
    progress: Progress,
    reply_sizes: ReplySizes,
}

impl RunObserver for Live {
    fn second(&mut self, second: &Second<'_>) {
        let start = Duration::from_secs(u64::from(second.index));
        let interval = second
            .elapsed
            .saturating_sub(start)
            .min(Duration::from_secs(1));
        let p50_us = if second.so_far.latency.is_empty() {
            0
        } else {
            second.so_far.latency.value_at_quantile(0.5)
        };
        let tick = Tick {
            elapsed: second.elapsed,
            interval,
            commands: second.last.count,
            errors: second.last.errors,
            p50_us,
        };
        if let Some(sizes) = second.last.reply_sizes.as_deref() {
            self.reply_sizes.merge(sizes);
        }
        print_now(&self.progress.row(&tick));
    }
}
