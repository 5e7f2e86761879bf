//! `kvbench redis-benchmark`: the command line parsed, the servers asked what the report
//! quotes, then one engine run per test, each printed as redis-benchmark prints it, and
//! kvbench's result files at the end.
//!
//! ```text
//! flags -> spec (-x reads stdin) -> warnings on stderr
//! server part (resolve, TLS) -> engine::prepare (cluster: masters, slot map)
//! --cluster banner, CONFIG GET (warn and omit on failure; a refused AUTH or a NOAUTH
//!   ends the run: `Node host:port replied with error:`), -k 0 warning
//! -I: idle connections, `clients: N` until Ctrl-C
//! else: CSV header; for each pass (-l: until Ctrl-C), for each test:
//!         engine::run_prepared(test's plan, live line observer) -> block / -q / CSV row
//!         (stderr: `warning: TITLE: ...` for the requests a frozen server left unanswered)
//!       an empty line after the default suite
//! --json-out-file / --hdr-file-prefix: the tests run, one row each
//! ```
//!
//! Exit status: 0; 1 for a bad flag, a failed connection or an error reply (`Error from
//! server: ...` on stderr, as redis-benchmark); 128 + the signal after Ctrl-C.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use super::flags::{BenchmarkSpec, Parsed, parse};
use super::live::{Live, Showing};
use super::outputs::{self, Collected};
use super::plan::{self as rb_plan, ServerError, rb_threads, shows_live};
use super::render::{
    CSV_HEADER, KEEPALIVE_WARNING, OutputMode, RunInfo, TestResult, cluster_masters, idle_banner,
    render_test, suite_footer,
};
use super::server_info;
use super::suite::{PayloadGenerator, Test};
use super::tests_for;
use crate::console::print_now;
use crate::engine::{self, Outcome, Prepared};
use crate::error::Error;
use crate::plan::Server;
use crate::results::Results;
use crate::signals;

/// Runs redis-benchmark's command line `args` (program name first); returns the exit
/// status.
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let mut spec = match parse(args)? {
        Parsed::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        Parsed::Run(spec) => *spec,
    };
    spec.read_last_arg(std::io::stdin().lock())?;
    for warning in &spec.warnings {
        eprintln_safe!("{warning}");
    }
    let server = match rb_plan::server(&spec) {
        Ok(server) => server,
        // A host that resolves to nothing ends the run as an unreachable server does:
        // redis-benchmark's line, status 1, and the files asked for say why they are
        // empty (so their paths are checked first, as for any run).
        Err(ServerError::Unresolved(line)) => {
            outputs::check(&spec)?;
            write_no_tests(&spec, &line);
            eprintln_safe!("{line}");
            return Ok(1);
        }
        Err(ServerError::Invalid(e)) => return Err(e),
    };
    outputs::check(&spec)?;
    signals::install();
    // The server part is the same for every plan: discovery and queries use the idle one.
    let probe = rb_plan::test_plan(&spec, &server, 1, None, None, false);
    let mut prepared = match engine::prepare(&probe) {
        Ok(prepared) => prepared,
        Err(e) => {
            if signals::received().is_some() {
                return Ok(write_interrupted(&spec));
            }
            // The seed node unreachable: redis-benchmark's own line, as without --cluster.
            if let Some((peer, why)) = unreachable_seed(&e, &server) {
                let line = format!("Could not connect to Redis at {peer}: {why}");
                write_no_tests(&spec, &line);
                eprintln_safe!("{line}");
                return Ok(1);
            }
            // The seed refused the AUTH (cluster discovery is the first to send it):
            // redis-benchmark's two lines and status 1, as without --cluster.
            if let Some(refused) = refused_auth(&e, &server) {
                write_no_tests(&spec, &refused.replace('\n', " "));
                eprintln_safe!("{refused}");
                return Ok(1);
            }
            let err = Error::run(match spec.cluster {
                true => format!("Failed to fetch cluster configuration: {e}"),
                false => e,
            });
            write_no_tests(&spec, &err.to_string());
            return Err(err);
        }
    };
    let masters = if spec.cluster {
        server_info::order_masters(&probe, &mut prepared)
    } else {
        Vec::new()
    };
    if spec.cluster {
        print_now(&cluster_masters(&server_info::banner_masters(&masters)));
    }
    let server_info = match server_info::read_server_info(&probe, &masters) {
        Ok(info) => info,
        Err(_) if signals::received().is_some() => return Ok(write_interrupted(&spec)),
        Err(refused) => {
            // The files first: their "Writing ..." lines go before the error, which ends
            // the output.
            write_no_tests(&spec, &refused.replace('\n', " "));
            eprintln_safe!("{refused}");
            return Ok(1);
        }
    };
    let threads = rb_threads(&spec, prepared.masters().len());
    if !spec.keep_alive {
        eprint_safe!("{KEEPALIVE_WARNING}");
    }
    let run = Runner {
        live: shows_live(spec.output, std::io::stdout().is_terminal()),
        info: RunInfo {
            clients: spec.clients,
            keep_alive: spec.keep_alive,
            threads,
            server: server_info,
            precision: spec.precision,
        },
        slot_tags: rb_plan::slot_tags(&spec),
        spec: &spec,
        server: &server,
        prepared: &prepared,
    };
    if spec.idle {
        return run.idle();
    }
    if spec.output == OutputMode::Csv {
        print_now(CSV_HEADER);
    }
    let mut collected = Collected::default();
    let status = run.passes(&mut collected);
    let written = outputs::write(&spec, &collected, threads as usize);
    let status = status?;
    written?;
    Ok(status)
}

/// What every test of the invocation shares.
struct Runner<'a> {
    spec: &'a BenchmarkSpec,
    server: &'a Server,
    prepared: &'a Prepared,
    info: RunInfo,
    slot_tags: Option<Arc<[[u8; 3]]>>,
    /// The live line is shown (a terminal, not `--csv`).
    live: bool,
}

/// How a test ended when the invocation cannot go on.
enum Stop {
    /// Exit with this status (an error reply, Ctrl-C).
    Exit(u8),
    /// A failure, printed as `error: ...`.
    Failed(Error),
}

impl Runner<'_> {
    /// The passes over the tests (one, or until Ctrl-C with `-l`); the exit status.
    fn passes(&self, collected: &mut Collected) -> Result<u8, Error> {
        let mut payload = PayloadGenerator::default();
        loop {
            for test in tests_for(self.spec, &mut payload) {
                match self.test(&test, collected) {
                    Ok(()) => {}
                    Err(Stop::Exit(status)) => return Ok(status),
                    Err(Stop::Failed(err)) => {
                        collected.stopped_by = Some(err.to_string());
                        return Err(err);
                    }
                }
            }
            if self.spec.command.is_none() {
                print_now(suite_footer(self.spec.output));
            }
            if !self.spec.loop_forever {
                return Ok(0);
            }
            if let Some(signal) = signals::received() {
                return Ok(signals::exit_code(signal) as u8);
            }
        }
    }

    /// Runs one test and prints its result.
    fn test(&self, test: &Test, collected: &mut Collected) -> Result<(), Stop> {
        let plan = rb_plan::test_plan(
            self.spec,
            self.server,
            self.info.threads,
            Some(test),
            self.slot_tags.as_ref(),
            self.live,
        );
        let showing = if self.live {
            Showing::Test(test.title.clone())
        } else {
            Showing::Nothing
        };
        let mut live = Live::new(showing);
        let mut outcome = engine::run_prepared(&Arc::new(plan), self.prepared, &mut live);
        live.clear();
        // A server frozen under a test (ended by --reply-timeout or Ctrl-C) leaves its
        // requests unanswered and out of every figure; stdout stays redis-benchmark's, so
        // the word goes to stderr, before the error or status that ends the invocation.
        if let Some(warning) = outcome.runs.last().and_then(Results::unanswered_warning) {
            eprintln_safe!("warning: {}: {warning}", test.title);
        }
        let keep = self.spec.json_out_file.is_some() || self.spec.hdr_file_prefix.is_some();
        if keep && (outcome.error.is_some() || outcome.signal.is_some()) {
            // A test an error or Ctrl-C cut short: what it measured goes into the files too;
            // so does a first test that measured nothing (an unreachable server, Ctrl-C
            // before a reply), so the files are written, saying why, and none keeps an
            // older invocation's figures.
            if let Some(results) = outcome
                .runs
                .pop()
                .filter(|r| r.answered() || collected.is_empty())
            {
                collected.push(results);
            }
            // The files name what ended the invocation, an error reply's stop included
            // (it exits as redis-benchmark does, with its own line, not as a failure).
            if let Some(err) = &outcome.error {
                collected.stopped_by = Some(err.to_string());
            }
        }
        let mut outcome = match self.check(outcome) {
            // A server that drops the connections in mid-test (restarted, CLIENT KILL):
            // redis-benchmark's `Error: ...` line and status 1, as scripts expect it.
            Err(Stop::Failed(err)) => match lost_connection_line(err.message()) {
                Some(line) => {
                    eprintln_safe!("{line}");
                    return Err(Stop::Exit(1));
                }
                None => return Err(Stop::Failed(err)),
            },
            checked => checked?,
        };
        let Some(results) = outcome.runs.pop() else {
            return Ok(());
        };
        if let Some(row) = results.rows.first() {
            let elapsed = if row.ops_per_sec > 0.0 {
                Duration::from_secs_f64(row.count as f64 / row.ops_per_sec)
            } else {
                Duration::from_millis(results.duration_ms)
            };
            let result = TestResult {
                title: test.title.clone(),
                requests: row.count,
                elapsed,
                payload_bytes: test.payload_bytes,
                latency: row.histogram.clone(),
            };
            print_now(&render_test(&self.info, &result, self.spec.output));
        }
        // Kept only for the files that need them: a histogram each is memory.
        if keep {
            collected.push(results);
        }
        Ok(())
    }

    /// `-I`: connections that send nothing, until Ctrl-C or a refusal.
    fn idle(&self) -> Result<u8, Error> {
        print_now(&idle_banner(self.spec.clients));
        let plan = rb_plan::test_plan(self.spec, self.server, self.info.threads, None, None, true);
        // redis-benchmark's status ticker prints nothing under --csv: the banner alone.
        let showing = match self.spec.output {
            OutputMode::Csv => Showing::Nothing,
            _ => Showing::Idle,
        };
        let mut live = Live::new(showing);
        let outcome = engine::run_prepared(&Arc::new(plan), self.prepared, &mut live);
        match self.check(outcome) {
            Ok(_) => Ok(0),
            Err(Stop::Exit(status)) => Ok(status),
            Err(Stop::Failed(err)) => Err(err),
        }
    }

    /// Whether a run's outcome lets the invocation go on: an error reply is
    /// redis-benchmark's `Error from server` and status 1, Ctrl-C ends it with 128 + the
    /// signal, any other failure is an error.
    fn check(&self, mut outcome: Outcome) -> Result<Outcome, Stop> {
        if let Some((server, text)) = &outcome.error_reply {
            if self.spec.cluster {
                eprintln_safe!("Error from server {server}: {text}");
            } else {
                eprintln_safe!("Error from server: {text}");
            }
            return Err(Stop::Exit(1));
        }
        if let Some(err) = outcome.error.take() {
            return Err(Stop::Failed(err));
        }
        if let Some(signal) = outcome.signal {
            return Err(Stop::Exit(signals::exit_code(signal) as u8));
        }
        Ok(outcome)
    }
}

/// redis-benchmark's line for a connection the server dropped while a test ran, from the
/// engine's message: hiredis's `Error: Server closed the connection` for an orderly close,
/// `Error: Connection reset by peer` (the OS's words, capitalised as strerror gives them)
/// for a failed read or write. `None` for any other failure (garbage replies, the reply
/// timeout), which keeps kvbench's own words.
fn lost_connection_line(message: &str) -> Option<String> {
    if message.starts_with("connection closed by server ") {
        return Some("Error: Server closed the connection".to_string());
    }
    let (_, why) = message
        .strip_prefix("connection to ")?
        .split_once(" failed: ")?;
    Some(format!("Error: {}", server_info::as_strerror(why)))
}

/// The node and the reason from discovery's "cannot connect to PEER: why", the seed
/// named as redis-benchmark names it (the host as given, an IPv6 address without
/// brackets), the reason capitalised as strerror words it (`Connection refused`).
fn unreachable_seed(message: &str, server: &Server) -> Option<(String, String)> {
    let (peer, why) = message
        .strip_prefix("cannot connect to ")?
        .split_once(": ")?;
    Some((
        named_as_redis_benchmark(peer, server),
        server_info::as_strerror(why),
    ))
}

/// A node named in one of the engine's messages, the seed named as redis-benchmark names
/// it (the host as given, an IPv6 address without brackets), any other node as it came.
fn named_as_redis_benchmark(peer: &str, server: &Server) -> String {
    match peer == server.endpoint.name() {
        true => server_info::hiredis_name(&server.endpoint),
        false => peer.to_string(),
    }
}

/// redis-benchmark's `Node host:port replied with error:` and the server's error on the
/// next line, from discovery's "authentication with PEER failed: TEXT" (the seed named as
/// redis-benchmark names it).
fn refused_auth(message: &str, server: &Server) -> Option<String> {
    let (peer, text) = message
        .strip_prefix("authentication with ")?
        .split_once(" failed: ")?;
    let peer = named_as_redis_benchmark(peer, server);
    Some(format!("Node {peer} replied with error:\n{text}"))
}

/// Ctrl-C (or SIGTERM) ended the set-up before any test (its waits fail as
/// "interrupted"): the files say the invocation was interrupted, not that it failed;
/// returns the status, 128 + the signal.
fn write_interrupted(spec: &BenchmarkSpec) -> u8 {
    let signal = signals::received().unwrap_or(libc::SIGINT);
    let mut collected = Collected::default();
    collected.push(Results {
        interrupted: true,
        ..Results::empty("ALL STATS".to_string(), None)
    });
    if let Err(write_err) = outputs::write(spec, &collected, spec.threads.max(1) as usize) {
        eprintln_safe!("error: {write_err}");
    }
    signals::exit_code(signal) as u8
}

/// No test could begin (`why`): the output files asked for are written all the same,
/// saying why they hold no figures.
fn write_no_tests(spec: &BenchmarkSpec, why: &str) {
    let mut collected = Collected::default();
    collected.push(Results::empty("ALL STATS".to_string(), None));
    collected.stopped_by = Some(why.to_string());
    if let Err(write_err) = outputs::write(spec, &collected, spec.threads.max(1) as usize) {
        eprintln_safe!("error: {write_err}");
    }
}
