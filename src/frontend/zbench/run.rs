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
//! stdout's reader gone (EPIPE, `| head -3`): nothing more printed, the run stopped as
//!   Ctrl-C stops it, -json-out-file written, Error::ReaderGone
//! ```
//!
//! Exit status: 0; 1 for a bad flag or a failed run; 128 + the signal after Ctrl-C,
//! SIGTERM or SIGHUP; 141, silently, once stdout's reader has gone (what a shell reports
//! for redis-zbench-go there: Go's runtime ends a program whose write to stdout fails
//! with EPIPE by SIGPIPE).

use std::ffi::OsString;
use std::io::{ErrorKind, Write};
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
    let mut live = Live {
        out: Out::new(std::io::stdout()),
        progress: Progress::new(render::total_commands(&spec)),
        reply_sizes: ReplySizes::new(),
    };
    live.out.print(&render::header(&spec));
    live.out.print(&render::progress_header());
    if live.out.reader_gone {
        // Gone before the run: redis-zbench-go dies here, before its first command, and
        // so no command is sent. The file asked for is written all the same (cut short,
        // nothing measured), so it never keeps an older run's figures.
        if let Some(path) = &spec.json_out_file {
            let mut results = Results::empty("ALL STATS".to_string(), None);
            results.interrupted = true;
            write_json(&spec, &plan, path, &results)?;
        }
        return Err(Error::ReaderGone);
    }
    let mut outcome = engine::run(&plan, &mut live);
    // The reader went away during the run and stopped it, as Ctrl-C does: the figures are
    // the run's so far, and the file says the run was cut short.
    let cut_short = live.out.reader_gone;
    if let Some(signal) = outcome.signal {
        live.out.print(render::interrupted(signal));
    }
    if let Some(err) = outcome.error.take() {
        // What was measured before the failure is still worth showing; a run that failed
        // before its first successful reply (an unreachable server, a refused or missing
        // password) has nothing to show, so it only ends the progress row, and the error
        // stands alone. The JSON file is written either way, saying why, so a script
        // finds the failure there and never an older run's figures.
        let mut written = Ok(());
        match outcome.runs.pop() {
            Some(mut results) => {
                if succeeded(&results) {
                    let text = summary(&spec, &results, &live.reply_sizes, &added);
                    live.out.print(&text);
                } else {
                    live.out.print("\n");
                }
                // A frozen server ends a run by -reply-timeout: what it left unanswered
                // is said before the error, which stays the last line; not once stdout's
                // reader has gone, which ends quietly (the summary it qualifies unread).
                if !live.out.reader_gone {
                    warn_unanswered(&results);
                }
                if let Some(path) = &spec.json_out_file {
                    results.title = "ALL STATS".to_string();
                    results.stopped_by = Some(err.to_string());
                    results.interrupted |= cut_short;
                    written = write_json(&spec, &plan, path, &results);
                }
            }
            None => {
                live.out.print("\n");
                // The run never began (cluster discovery failed): the file says why.
                if let Some(path) = &spec.json_out_file {
                    let results = Results::empty("ALL STATS".to_string(), Some(err.to_string()));
                    written = write_json(&spec, &plan, path, &results);
                }
            }
        }
        if live.out.reader_gone {
            // As the memtier front end ends: a file not written is still said (exit 1),
            // else the end is quiet, the run's error kept in the file's "Stopped by error".
            written?;
            return Err(Error::ReaderGone);
        }
        // The run's own error is the one to exit with; a file that could not be written
        // is said first.
        if let Err(write_err) = written {
            eprintln_safe!("error: {write_err}");
        }
        return Err(err);
    }
    let Some(mut results) = outcome.runs.pop() else {
        return Ok(0);
    };
    results.title = "ALL STATS".to_string();
    results.interrupted |= cut_short;
    let text = summary(&spec, &results, &live.reply_sizes, &added);
    live.out.print(&text);
    if !live.out.reader_gone {
        warn_unfinished(&results);
        warn_unanswered(&results);
    }
    if let Some(path) = &spec.json_out_file {
        write_json(&spec, &plan, path, &results)?;
    }
    // The file is whole: a reader gone now ends the invocation, quietly.
    live.out.still_read()?;
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
fn summary(
    spec: &ZbenchSpec,
    results: &Results,
    reply_sizes: &ReplySizes,
    added: &Added,
) -> String {
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
        reply_sizes: query.then_some(reply_sizes),
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

/// Standard output as zbench prints to it: as it goes, each text flushed (a progress row
/// has no newline to flush it). A write that finds the reader gone (EPIPE: `| head -3`
/// has read its lines) is where SIGPIPE ends redis-zbench-go: from then on nothing more is
/// written, the run is stopped ([`Live::stop_requested`]) and the invocation ends as
/// [`Error::ReaderGone`]. Any other failed write is dropped, as `print_now` drops it.
struct Out<W: Write> {
    writer: W,
    reader_gone: bool,
}

impl<W: Write> Out<W> {
    fn new(writer: W) -> Self {
        Out {
            writer,
            reader_gone: false,
        }
    }

    /// Writes and flushes `text`, unless the reader has gone.
    fn print(&mut self, text: &str) {
        if self.reader_gone {
            return;
        }
        let written = self
            .writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush());
        if let Err(e) = written
            && e.kind() == ErrorKind::BrokenPipe
        {
            self.reader_gone = true;
        }
    }

    /// [`Error::ReaderGone`] once a write found the reader gone.
    fn still_read(&self) -> Result<(), Error> {
        match self.reader_gone {
            true => Err(Error::ReaderGone),
            false => Ok(()),
        }
    }
}

/// The live part of the output: one progress row a second, and the reply sizes.
struct Live<W: Write> {
    out: Out<W>,
    progress: Progress,
    reply_sizes: ReplySizes,
}

impl<W: Write> RunObserver for Live<W> {
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
        let row = self.progress.row(&tick);
        self.out.print(&row);
    }

    /// A row that found stdout's reader gone ends the run, as Ctrl-C would: the engine
    /// stops its clients the same way (no request more is sent) and hands back what was
    /// measured, for `-json-out-file`. redis-zbench-go dies of SIGPIPE at that write;
    /// carrying on would load the server for figures no one reads.
    fn stop_requested(&mut self) -> bool {
        self.out.reader_gone
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::io;

    use super::*;
    use crate::stats::OpStats;

    /// A stdout whose writes go as scripted: each takes the next outcome (`None` accepts,
    /// `Some(kind)` fails so), and accepts once the script is done.
    #[derive(Default)]
    struct Pipe {
        script: VecDeque<Option<ErrorKind>>,
        written: String,
    }

    impl Pipe {
        fn scripted(script: &[Option<ErrorKind>]) -> Self {
            Pipe {
                script: script.iter().copied().collect(),
                written: String::new(),
            }
        }
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if let Some(Some(kind)) = self.script.pop_front() {
                return Err(io::Error::from(kind));
            }
            self.written.push_str(&String::from_utf8_lossy(buf));
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_reader_gone_ends_the_output_there() {
        let mut out = Out::new(Pipe::scripted(&[None, Some(ErrorKind::BrokenPipe)]));
        out.print("header\n");
        assert_eq!(out.still_read(), Ok(()));
        out.print("row\t\r");
        // Even once the pipe would take it again (the script is done), nothing more goes:
        // the first EPIPE is where redis-zbench-go died.
        out.print("summary\n");
        assert!(out.reader_gone);
        assert_eq!(out.still_read(), Err(Error::ReaderGone));
        assert_eq!(out.writer.written, "header\n");
    }

    #[test]
    fn another_failed_write_is_dropped_and_the_output_goes_on() {
        let mut out = Out::new(Pipe::scripted(&[Some(ErrorKind::StorageFull), None]));
        out.print("lost\n");
        out.print("kept\n");
        assert!(!out.reader_gone);
        assert_eq!(out.still_read(), Ok(()));
        assert_eq!(out.writer.written, "kept\n");
    }

    fn second_at<'a>(index: u32, stats: &'a OpStats) -> Second<'a> {
        Second {
            run: 1,
            index,
            elapsed: Duration::from_secs(u64::from(index) + 1),
            percent: 0.0,
            threads_running: 1,
            connections: 1,
            connected: 1,
            rows: std::slice::from_ref(stats),
            last: stats,
            so_far: stats,
        }
    }

    #[test]
    fn a_row_that_finds_the_reader_gone_stops_the_run() {
        let mut live = Live {
            out: Out::new(Pipe::scripted(&[None, Some(ErrorKind::BrokenPipe)])),
            progress: Progress::new(1_000_000),
            reply_sizes: ReplySizes::new(),
        };
        let mut stats = OpStats::new();
        stats.record(100, 10, 10);
        live.second(&second_at(0, &stats));
        assert!(!live.stop_requested(), "the first row was read");
        live.second(&second_at(1, &stats));
        assert!(
            live.stop_requested(),
            "the second row found the reader gone"
        );
        live.second(&second_at(2, &stats));
        assert_eq!(live.out.writer.written.matches("\t\r").count(), 1);
        assert_eq!(live.out.still_read(), Err(Error::ReaderGone));
    }
}
