//! What the worker hands the runner: each finished second's stats, and at the load's end
//! its last (partial) second with the time the load ended.

use std::time::Instant;

use super::{Worker, WorkerMsg};
use crate::engine::tally::Tally;
use crate::results::Unanswered;
use crate::stats::{OpStats, ScheduleStats};

impl Worker {
    /// Hands the current second's stats to the runner and starts a fresh second.
    pub(super) fn send_snapshot(&self, tally: &mut Tally, second: u32, connected: u32) {
        let (snapshot, health) = Self::take_second(tally);
        let _ = self.tx.send(WorkerMsg::Snapshot {
            thread: self.thread,
            second,
            stats: snapshot,
            health,
            connected,
        });
    }

    /// The load is over: hands the runner its last (partial) second and the open-loop
    /// health, and when it ended; what the thread records from here is the wait for
    /// tracked writes' alone.
    pub(super) fn send_load_done(&self, tally: &mut Tally, second: u32, unanswered: Unanswered) {
        let at = Instant::now();
        let (stats, health) = Self::take_second(tally);
        let _ = self.tx.send(WorkerMsg::LoadDone {
            thread: self.thread,
            at,
            second,
            stats,
            health,
            unanswered,
        });
    }

    /// The second's stats and open-loop health, leaving the tally's rows empty for the
    /// next (their histograms' memory kept).
    fn take_second(tally: &mut Tally) -> (Vec<OpStats>, Option<ScheduleStats>) {
        for row in tally.stats.iter_mut() {
            row.flush_latencies();
        }
        let stats = tally.stats.to_vec();
        for row in tally.stats.iter_mut() {
            row.reset();
        }
        let health = tally.health.as_mut().map(|health| {
            let copy = health.clone();
            health.reset();
            copy
        });
        (stats, health)
    }
}
