//! Server error replies and reconnects on stderr, at most one line a second per worker,
//! so a flood of errors neither floods the terminal nor slows the worker; and the run's
//! one warning about a server that does not answer, shared by every worker, since a
//! stalled server stalls them all at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One worker's rate-limited error lines.
#[derive(Default)]
pub struct ErrorLog {
    last_print: Option<Instant>,
    suppressed: u64,
    /// [`warn_once`](Self::warn_once) has printed its line, in any worker of the run.
    warned: Arc<AtomicBool>,
    /// [`warn_connecting_once`](Self::warn_connecting_once) has printed its line (a
    /// flag of its own: a silent server's warning must not hide it, nor it that one).
    warned_connecting: bool,
}

impl ErrorLog {
    /// A worker's log whose [`warn_once`](Self::warn_once) line is said once among
    /// all the logs given the same `warned`.
    pub fn new(warned: Arc<AtomicBool>) -> Self {
        Self {
            warned,
            ..Self::default()
        }
    }

    /// Prints `what` the first time only, in this worker or any other sharing its flag (a
    /// condition every client of the run meets at once, said once).
    pub fn warn_once(&mut self, what: std::fmt::Arguments) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            eprintln_safe!("\n{what}");
        }
    }

    /// Prints `what`, about connects still pending, the first time only.
    pub fn warn_connecting_once(&mut self, what: std::fmt::Arguments) {
        if !self.warned_connecting {
            self.warned_connecting = true;
            eprintln_safe!("\n{what}");
        }
    }

    /// Prints `what` on its own line unless a line went out less than a second ago (then
    /// it is counted, and the next printed line says how many were left out).
    pub fn report(&mut self, what: std::fmt::Arguments) {
        let now = Instant::now();
        if self
            .last_print
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            self.suppressed += 1;
            return;
        }
        let more = if self.suppressed > 0 {
            format!(" ({} more since the last report)", self.suppressed)
        } else {
            String::new()
        };
        eprintln_safe!("\n{what}{more}");
        self.last_print = Some(now);
        self.suppressed = 0;
    }
}
