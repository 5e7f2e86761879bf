//! What the engine tells a front end while it runs: run start and end, and each merged
//! second, so front ends render their own live lines and live sinks update.
//!
//! ```text
//! run_starting(1)            before anything of run 1 is set up
//! run_started(start)         threads launched, the run's clock started
//! second(s) x N              each second once every running thread reported it
//! progress(p) x N            every `Outputs::progress_every`, when the plan asks
//! interrupted(run, after)    Ctrl-C / SIGTERM seen (also during the verification pass)
//! stop_switch(switch)        threads launched: a switch that stops them at once, from any thread
//! stop_requested() x N       polled between events: `true` ends the run as a deadline would
//! run_finished(&mut end)     threads joined: per-client series handed over
//! ```
//!
//! Every method but `interrupted` is called for benchmark runs only, not for the
//! `--data-verify` read-back. An `Err` from `run_started` or `run_finished` becomes the
//! run's error (after any error the run itself had), so the run still ends normally and
//! what it measured is still reported.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mio::Waker;

use crate::engine::progress::Progress;
use crate::stats::{ClientSeries, OpStats};

/// Receives the engine's live events; every method has a do-nothing default.
pub trait RunObserver {
    /// Run `run` (1-based) is about to be set up.
    fn run_starting(&mut self, _run: u32) {}

    /// The run's threads are launched and its clock has started.
    fn run_started(&mut self, _start: &RunStart) -> Result<(), String> {
        Ok(())
    }

    /// One second of the run, merged over every thread.
    fn second(&mut self, _second: &Second<'_>) {}

    /// The run so far, every `Outputs::progress_every` (only when the plan asks).
    fn progress(&mut self, _progress: &Progress) {}

    /// A stop signal arrived `after` the run started; the run is being stopped.
    fn interrupted(&mut self, _run: u32, _after: Duration) {}

    /// The run's threads are launched: `switch` stops them at once from any thread (no
    /// wait for the next [`RunObserver::stop_requested`] poll), for an observer that must
    /// not let one more request out after it has seen enough.
    fn stop_switch(&mut self, _switch: &StopSwitch) {}

    /// Polled by the run's gathering loop (after each worker message, at least every
    /// 100 ms): `true` stops the run's threads as a deadline would, so an observer that
    /// has seen enough (a latency probe's last window) ends the run. Not a signal: the
    /// outcome carries none.
    fn stop_requested(&mut self) -> bool {
        false
    }

    /// The run's threads are done. `end.client_series` holds each client's own figures
    /// when the plan asked for them; an observer that keeps them takes them out.
    fn run_finished(&mut self, _end: &mut RunEnd) -> Result<(), String> {
        Ok(())
    }
}

/// Stops a run's worker threads from any thread: raises their stop flag and wakes their
/// event loops, so none sends another request after [`StopSwitch::stop`] returns (one
/// already being written goes out).
#[derive(Clone)]
pub struct StopSwitch {
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) wakers: Arc<Vec<Waker>>,
}

impl StopSwitch {
    /// Stops the run as a deadline would. Idempotent.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        for waker in self.wakers.iter() {
            // A waker that fails leaves its thread to the next poll of the flag.
            let _ = waker.wake();
        }
    }
}

impl std::fmt::Debug for StopSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopSwitch")
            .field("stopped", &self.stop.load(Ordering::Relaxed))
            .finish()
    }
}

/// A run whose threads were just launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStart {
    pub run: u32,
    pub threads: usize,
    pub clients_per_thread: usize,
    /// Load before the measured part starts (no `second` is reported meanwhile).
    pub warmup: Duration,
    /// Open loop: requests per second aimed at, all connections together.
    pub target_rate: Option<u64>,
}

/// One merged second of a run: per row, all rows together, and the run so far.
#[derive(Clone, Copy, Debug)]
pub struct Second<'a> {
    pub run: u32,
    /// 0-based second of the run.
    pub index: u32,
    /// Time since the run started, taken when the second was merged.
    pub elapsed: Duration,
    /// How far the run is, 0-100: by time, or by requests answered.
    pub percent: f64,
    /// Worker threads still running.
    pub threads_running: usize,
    /// Connections (clients) in the run, all threads, as configured.
    pub connections: usize,
    /// Clients with a connection up, all threads, each thread as of its last report.
    pub connected: usize,
    /// This second, one entry per stats row (the plan's rows, in table order).
    pub rows: &'a [OpStats],
    /// This second, all rows merged.
    pub last: &'a OpStats,
    /// The run so far, all rows merged.
    pub so_far: &'a OpStats,
}

/// A finished run's hand-over to observers.
#[derive(Debug, Default)]
pub struct RunEnd {
    pub run: u32,
    /// `(thread, client within the thread, figures)`, ordered by thread then client;
    /// empty unless the plan asked for per-client series.
    pub client_series: Vec<(usize, usize, ClientSeries)>,
}

/// Several observers called in order, as one. The first error wins.
pub struct Fanout<'a>(pub Vec<&'a mut dyn RunObserver>);

impl RunObserver for Fanout<'_> {
    fn run_starting(&mut self, run: u32) {
        for o in &mut self.0 {
            o.run_starting(run);
        }
    }

    fn run_started(&mut self, start: &RunStart) -> Result<(), String> {
        let mut first = Ok(());
        for o in &mut self.0 {
            let result = o.run_started(start);
            if first.is_ok() {
                first = result;
            }
        }
        first
    }

    fn second(&mut self, second: &Second<'_>) {
        for o in &mut self.0 {
            o.second(second);
        }
    }

    fn progress(&mut self, progress: &Progress) {
        for o in &mut self.0 {
            o.progress(progress);
        }
    }

    fn interrupted(&mut self, run: u32, after: Duration) {
        for o in &mut self.0 {
            o.interrupted(run, after);
        }
    }

    fn stop_switch(&mut self, switch: &StopSwitch) {
        for o in &mut self.0 {
            o.stop_switch(switch);
        }
    }

    fn stop_requested(&mut self) -> bool {
        // Every observer is asked, so none misses the poll it may count on.
        let mut any = false;
        for o in &mut self.0 {
            any |= o.stop_requested();
        }
        any
    }

    fn run_finished(&mut self, end: &mut RunEnd) -> Result<(), String> {
        let mut first = Ok(());
        for o in &mut self.0 {
            let result = o.run_finished(end);
            if first.is_ok() {
                first = result;
            }
        }
        first
    }
}

/// An observer that ignores everything (tests, and front ends without live output).
pub struct Quiet;

impl RunObserver for Quiet {}
