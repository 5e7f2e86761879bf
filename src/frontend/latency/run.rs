//! `kvbench latency`'s main: the probe's plan runs on an engine thread while this thread
//! turns each reply's times into the session's lines, and stops the engine when the
//! session has printed what it owes (or on Ctrl-C).
//!
//! ```text
//! engine thread:  engine::run(probe plan, observer: "stop when the session says so")
//!                   every reply -> Sample (intended, sent, received) over a channel
//! this thread:    recv_timeout(10 ms) -> Session::sample / Session::tick -> stdout
//!                 Flow::Stop or Ctrl-C -> the engine's StopSwitch, join, write --hdr-file
//! ```
//!
//! The stop is exact: the session decides on each sample as it arrives, and the engine's
//! [`StopSwitch`] wakes its worker at once, well inside the 10 ms before the next probe is
//! due; so the server sees the probes whose replies were counted and, unless this thread
//! was kept off the CPU past that period, no more (Ctrl-C, seen within one sample period,
//! may leave the one probe in flight then uncounted).
//!
//! A sample's latency: redis-cli's default (closed loop) times each request from its
//! send; `--open-loop` from when it was due, so a stall counts in every probe it held. An
//! open-loop one-shot window goes further: the run is bounded to the probes it can count
//! and the window closes by due time, so the server sees exactly the probes counted even
//! when a stall spans the window's end.
//!
//! Exit status: 0 after a one-shot window; 128 + the signal after Ctrl-C (at the
//! `--askpass` prompt too), and 141 (128 +
//! SIGPIPE, silently) when stdout's reader has gone, as a shell reports redis-cli; 1 for a bad
//! flag, an unreachable server, a refused password or TLS handshake, an error reply, or a
//! server that went away mid-run (after the current window's figures, as Ctrl-C prints).

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::askpass::{self, Asked};
use super::flags::{Options, Parsed, SAMPLE_PERIOD_US, asks_intrinsic_latency, parse};
use super::probe::{one_window_probes, probe_plan};
use super::session::{Flow, Session};
use super::windows::Mode;
use crate::console::print_now;
use crate::engine::{self, Outcome, RunObserver, StopSwitch};
use crate::error::Error;
use crate::plan::{Sample, StopAt};
use crate::report::check_file;
use crate::signals;

/// Runs `kvbench latency`'s command line `args` (program name first); returns the exit
/// status.
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    if asks_intrinsic_latency(&args) {
        // The tutorials' `redis-cli --intrinsic-latency 30`, with only the tool's name
        // changed: that test, as redis-cli runs it, not a probe.
        return crate::frontend::intrinsic_latency::main(args);
    }
    let mut options = match parse(args)? {
        Parsed::Print(text) => {
            print_now(&text);
            return Ok(0);
        }
        Parsed::Run(options) => *options,
    };
    if let Some(path) = &options.hdr_file {
        // A file that cannot be written fails now, not when the probe ends.
        check_file(path)?;
    }
    if options.askpass {
        match askpass::ask()? {
            Asked::Password(password) => {
                options.conn.authenticate = Some(password);
                options.whole_password = true;
            }
            Asked::Stopped(signal) => return Ok(signals::exit_code(signal) as u8),
        }
    }
    let (tx, rx) = crossbeam_channel::unbounded();
    let stdout = std::io::stdout();
    let stdout_is_tty = stdout.is_terminal();
    let mut plan = probe_plan(&options, tx)?;
    let resolved = options.resolve(stdout_is_tty);
    if resolved.mode == Mode::Live && options.interval_us.is_some() {
        // As redis-cli on a terminal, but said: -i there sets nothing.
        eprintln!(
            "warning: -i is ignored: on a terminal, without --history or --dist, the figures \
             run from the start until Ctrl-C (--raw prints one window of -i seconds)"
        );
    }
    if let Some(probes) = one_window_probes(&options, &resolved) {
        plan.load.stop = StopAt::RequestsPerClient(probes);
    }
    let plan = Arc::new(plan);
    // The clock the session reads every time on: before the engine can send a probe, so
    // that no due time falls before it (and none is cut to 0).
    let origin = Instant::now();
    signals::install();
    let stop = Stop::default();
    let engine_stop = stop.clone();
    let engine = thread::Builder::new()
        .name("kvbench-latency-engine".to_string())
        .spawn(move || {
            let outcome = engine::run(&plan, &mut StopWhen(engine_stop));
            // The plan holds the sample sender: dropping it tells the session the run ended.
            drop(plan);
            outcome
        })
        .map_err(|e| Error::run(format!("cannot start the probe: {e}")))?;
    let probed = probe(&options, stdout_is_tty, origin, &rx, stdout.lock(), &stop);
    stop.stop();
    let outcome = engine.join().map_err(|_| {
        Error::run("internal error: the probe's engine thread stopped unexpectedly")
    })?;
    let ended = probed?;
    finish(outcome, ended)
}

/// How the session's side ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// The session printed what it owed (a one-shot window).
    Done,
    /// Ctrl-C or SIGTERM: the current window was printed.
    Signal(i32),
    /// The engine stopped on its own (an error, most likely).
    RunStopped,
    /// Standard output's reader went away (`| head -3`).
    ReaderGone,
}

/// The exit status, or the engine's error.
fn finish(outcome: Outcome, ended: Ended) -> Result<u8, Error> {
    if let Some(err) = outcome.error {
        // Ctrl-C while connecting is an interruption, not a failure to report.
        if outcome.signal.is_none() {
            return Err(err);
        }
    }
    match ended {
        Ended::Done => Ok(0),
        // Quiet, with what a shell reports for redis-cli there (killed by SIGPIPE).
        Ended::ReaderGone => Err(Error::ReaderGone),
        Ended::Signal(signal) => Ok(signals::exit_code(signal) as u8),
        Ended::RunStopped => match outcome.signal {
            Some(signal) => Ok(signals::exit_code(signal) as u8),
            None => Err(Error::run("the probe ended without a reply")),
        },
    }
}

/// Feeds the session from the engine's samples until it stops, the run ends or a signal
/// arrives; writes the `--hdr-file` at the end.
fn probe<W: Write>(
    options: &Options,
    stdout_is_tty: bool,
    origin: Instant,
    rx: &Receiver<Sample>,
    out: W,
    stop: &Stop,
) -> Result<Ended, Error> {
    // An open-loop one-shot window holds the probes due within it and the first due
    // after it (the run sends no more: `one_window_probes`), whenever their replies come:
    // a stall that spans the end still counts in every probe it held.
    let by_due_time = one_window_probes(options, &options.resolve(stdout_is_tty)).is_some();
    let us = |t: Instant| t.saturating_duration_since(origin).as_micros() as u64;
    let period = Duration::from_micros(SAMPLE_PERIOD_US);
    // The first window starts with the first probe, not with connecting.
    let mut session: Option<Session<W>> = None;
    let mut out = Some(out);
    let ended = loop {
        if let Some(signal) = signals::received() {
            stop.stop();
            let now = us(Instant::now());
            // Ctrl-C before the first reply still prints its (empty) window and writes
            // the --hdr-file, so no output is missing and no older file is left.
            if session.is_none()
                && let Some(out) = out.take()
            {
                session = Some(Session::new(options, stdout_is_tty, now, out));
            }
            if let Some(s) = session.as_mut() {
                s.interrupt(now)?;
            }
            break Ended::Signal(signal);
        }
        let flow = match rx.recv_timeout(period) {
            Ok(sample) => {
                if session.is_none()
                    && let Some(out) = out.take()
                {
                    session = Some(Session::new(
                        options,
                        stdout_is_tty,
                        us(sample.intended),
                        out,
                    ));
                }
                let Some(s) = session.as_mut() else {
                    continue;
                };
                let latency_us = if options.open_loop {
                    sample.response_us()
                } else {
                    sample.service_us()
                };
                let at = if by_due_time {
                    sample.intended
                } else {
                    sample.received
                };
                s.sample(us(at), latency_us)?
            }
            Err(RecvTimeoutError::Timeout) => match session.as_mut() {
                Some(s) => s.tick(us(Instant::now()))?,
                None => Flow::Continue,
            },
            // The engine saw a Ctrl-C first, or failed (the server went away): either way
            // end the line and print what the window holds, as Ctrl-C does, so the error
            // that follows on stderr starts a line of its own.
            Err(RecvTimeoutError::Disconnected) => {
                if let Some(s) = session.as_mut() {
                    s.interrupt(us(Instant::now()))?;
                }
                match signals::received() {
                    Some(signal) => {
                        if session.is_none()
                            && let Some(out) = out.take()
                        {
                            let mut s =
                                Session::new(options, stdout_is_tty, us(Instant::now()), out);
                            s.interrupt(us(Instant::now()))?;
                            session = Some(s);
                        }
                        break Ended::Signal(signal);
                    }
                    None => break Ended::RunStopped,
                }
            }
        };
        match flow {
            Flow::Continue => {}
            // Before anything else: the next probe is due within one sample period.
            Flow::Stop => {
                stop.stop();
                break Ended::Done;
            }
            Flow::ReaderGone => {
                stop.stop();
                break Ended::ReaderGone;
            }
        }
    };
    if let Some(s) = session {
        s.finish()?;
    }
    Ok(ended)
}

/// The session's side of stopping the engine: the run's [`StopSwitch`] once the engine
/// hands it over, and whether the session asked for the stop (for a switch handed over
/// after that, or a run not started yet).
#[derive(Clone, Default)]
struct Stop {
    switch: Arc<OnceLock<StopSwitch>>,
    asked: Arc<AtomicBool>,
}

impl Stop {
    /// Stops the engine's run now (or as soon as it starts).
    fn stop(&self) {
        self.asked.store(true, Ordering::SeqCst);
        if let Some(switch) = self.switch.get() {
            switch.stop();
        }
    }
}

/// Ends the engine's run once the session has stopped.
struct StopWhen(Stop);

impl RunObserver for StopWhen {
    fn stop_switch(&mut self, switch: &StopSwitch) {
        let _ = self.0.switch.set(switch.clone());
    }

    fn stop_requested(&mut self) -> bool {
        self.0.asked.load(Ordering::SeqCst)
    }
}
