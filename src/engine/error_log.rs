//! Server error replies and reconnects on stderr, at most one line a second per worker,
//! so a flood of errors neither floods the terminal nor slows the worker.

use std::time::{Duration, Instant};

/// One worker's rate-limited error lines.
#[derive(Default)]
pub struct ErrorLog {
    last_print: Option<Instant>,
    suppressed: u64,
    /// [`warn_once`](Self::warn_once) has printed its line.
    warned: bool,
    /// [`warn_connecting_once`](Self::warn_connecting_once) has printed its line (a
    /// flag of its own: a silent server's warning must not hide it, nor it that one).
    warned_connecting: bool,
}

impl ErrorLog {
    /// Prints `what` the first time only (a condition every client of the worker meets
    /// at once, said once).
    pub fn warn_once(&mut self, what: std::fmt::Arguments) {
        if !self.warned {
            self.warned = true;
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
