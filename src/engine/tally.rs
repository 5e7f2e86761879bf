//! What a worker records into the current second (its stats rows, and the warm-up's
//! apart), the open-loop state and the plain request templates its clients share, and
//! its running totals for progress.

use std::time::Instant;

use crate::engine::client::plain_templates;
use crate::engine::schedule::Schedule;
use crate::plan::{Pacing, Plan};
use crate::protocol::templates::Templates;
use crate::stats::{OpStats, ReplySizes, ScheduleStats};

/// This worker's totals since the run started, for [`WorkerProgress`]: the seconds
/// already sent plus the current one.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Totals {
    pub(super) requests: u64,
    pub(super) latency_sum_us: u64,
}

impl Totals {
    pub(super) fn plus(self, stats: &[OpStats]) -> Totals {
        stats.iter().fold(self, |t, s| Totals {
            requests: t.requests + s.count,
            latency_sum_us: t.latency_sum_us + s.latency_sum_us,
        })
    }
}

/// What the worker records into the current second, and the open-loop state and plain
/// request templates its clients share.
pub(super) struct Tally {
    pub(super) stats: Vec<OpStats>,
    /// Warm-up requests' figures, never read.
    pub(super) discard: Option<Vec<OpStats>>,
    /// Open loop: how the schedule was kept this second.
    pub(super) health: Option<ScheduleStats>,
    /// Open loop at a total rate: this worker's share of the schedule.
    pub(super) shared: Option<Schedule>,
    /// The plain path's SET and GET templates (generated keys only).
    pub(super) templates: Option<Templates>,
    /// The deadline has passed (see [`ClientContext::time_up`]).
    pub(super) time_up: bool,
    /// A closed loop read, past its deadline, every reply come (see the worker's event
    /// loop): a reply waiting unread after that came after the end.
    pub(super) read_at_end: bool,
    /// The load is over; tracked writes are waited for (see [`ClientContext::settling`]).
    pub(super) settling: bool,
}

impl Tally {
    pub(super) fn new(plan: &Plan, rows: usize, thread: usize, start: Instant) -> Tally {
        let open = plan.load.pacing.is_open();
        let fresh = || -> Vec<OpStats> {
            (0..rows)
                .map(|_| {
                    let mut stats = if open {
                        OpStats::open_loop()
                    } else {
                        OpStats::new()
                    };
                    if plan.outputs.reply_sizes {
                        stats.reply_sizes = Some(Box::new(ReplySizes::new()));
                    }
                    stats
                })
                .collect()
        };
        Tally {
            stats: fresh(),
            discard: (!plan.load.warmup.is_zero()).then(fresh),
            health: open.then(ScheduleStats::new),
            shared: match plan.load.pacing {
                Pacing::Total(rate) => Schedule::of_worker(rate, start, plan, thread),
                _ => None,
            },
            templates: plain_templates(plan),
            time_up: false,
            read_at_end: false,
            settling: false,
        }
    }

    /// Whether a position of the shared schedule is due by `now`.
    pub(super) fn due(&self, now: Instant) -> bool {
        self.shared.as_ref().is_some_and(|s| s.peek() <= now)
    }

    /// Forgets what the warm-up recorded (connection errors, counts) as measuring starts.
    pub(super) fn start_measuring(&mut self) {
        for row in &mut self.stats {
            row.reset();
        }
        if let Some(health) = self.health.as_mut() {
            health.reset();
        }
    }
}
