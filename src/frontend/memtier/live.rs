//! memtier's live output on stderr: the `[RUN #1] ...` notices, the progress line once a
//! second, the Ctrl-C notice, and the `--client-stats` files when a run ends.

use std::io::Write as _;
use std::time::Duration;

use crate::engine::{RunEnd, RunObserver, RunStart, Second};
use crate::frontend::memtier::progress::{Progress, progress_line};
use crate::report::client_stats;

/// The memtier front end's [`RunObserver`].
pub struct Live {
    /// `--client-stats=PREFIX`, when given.
    client_stats: Option<String>,
    /// A `--command` run's command rows (their histogram names), for the per-client
    /// files' arbitrary-command layout; `None` for SET/GET/WAIT.
    arbitrary: Option<Vec<String>>,
    /// `-c`, from the run's start: the progress line's `conns`.
    clients_per_thread: usize,
    /// The run's last progress line so far, which its end's line may repeat (see
    /// [`Progress::following`]).
    last: Option<Progress>,
}

impl Live {
    /// Live output; per-client files under `client_stats` when it is given, in the
    /// arbitrary-command layout with one column group per name of `arbitrary`.
    pub fn new(client_stats: Option<String>, arbitrary: Option<Vec<String>>) -> Self {
        Live {
            client_stats,
            arbitrary,
            clients_per_thread: 0,
            last: None,
        }
    }
}

impl RunObserver for Live {
    fn run_starting(&mut self, run: u32) {
        self.last = None;
        eprintln_safe!("[RUN #{run}] Preparing benchmark client...");
        eprintln_safe!("[RUN #{run}] Launching threads now...");
    }

    fn run_started(&mut self, start: &RunStart) -> Result<(), String> {
        let run = start.run;
        self.clients_per_thread = start.clients_per_thread;
        if let Some(rate) = start.target_rate {
            eprintln_safe!("[RUN #{run}] Open loop at {rate} requests/s in all...");
        }
        if !start.warmup.is_zero() {
            eprintln_safe!(
                "[RUN #{run}] Warming up for {} secs (left out of the results)...",
                start.warmup.as_secs()
            );
        }
        Ok(())
    }

    fn second(&mut self, second: &Second<'_>) {
        let progress = Progress::following(second, self.clients_per_thread, self.last.as_ref());
        let line = progress_line(&progress);
        self.last = Some(progress);
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "{line}\r");
        let _ = stderr.flush();
    }

    fn interrupted(&mut self, run: u32, after: Duration) {
        // memtier's words for Ctrl-C; a SIGTERM (a supervisor, `timeout`) or a SIGHUP (a
        // dropped session) is named as such.
        let by = match crate::signals::received() {
            Some(libc::SIGTERM) => "Terminated (SIGTERM)",
            Some(libc::SIGHUP) => "Hung up (SIGHUP)",
            _ => "Interrupted by user (Ctrl+C)",
        };
        eprintln_safe!(
            "\n[RUN #{run}] {by} after {:.1} secs, stopping threads...",
            after.as_secs_f64()
        );
    }

    fn run_finished(&mut self, end: &mut RunEnd) -> Result<(), String> {
        // memtier ends the progress line with `\n\n` (a blank line under it) once its
        // threads are done, before anything else of the run is said (its client-stats
        // notice included, which would otherwise overwrite the line on a terminal).
        eprint_safe!("\n\n");
        match &self.client_stats {
            Some(prefix) => client_stats::write_files(
                prefix,
                end.run,
                &end.client_series,
                self.arbitrary.as_deref(),
            )
            .map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}
