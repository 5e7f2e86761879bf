//! What a client may touch of its worker's while it handles one event or timer: the
//! current second's stats, the run's shared pieces (value pool, templates, budget,
//! verification), the flag the visit reports back (`time_up`) and the one it is told
//! (`settling`).

use std::time::Instant;

use mio::Registry;

use crate::engine::budget::RequestBudget;
use crate::engine::error_log::ErrorLog;
use crate::engine::error_reply::FirstErrorReply;
use crate::engine::resolver::Resolver;
use crate::engine::schedule::Schedule;
use crate::engine::verify::VerifyJob;
use crate::protocol::templates::Templates;
use crate::stats::{OpStats, ScheduleStats};
use crate::workload::values::ValuePool;
use crate::workload::verify::WrittenKeys;

/// Everything a client needs from its worker while handling one event.
pub struct ClientContext<'a> {
    /// The worker's stats for the current second, indexed by stats row.
    pub stats: &'a mut [OpStats],
    pub values: &'a ValuePool,
    pub errors: &'a mut ErrorLog,
    pub registry: &'a Registry,
    /// Keys written so far, when a verification pass will check them afterwards.
    pub written: Option<&'a WrittenKeys>,
    /// The verification pass, when this run is one.
    pub verify: Option<&'a VerifyJob>,
    /// Node names looked up off the event loop, in cluster mode.
    pub resolver: Option<&'a Resolver>,
    /// The run's current second (0-based), for per-client series.
    pub second: u32,
    /// Requests intended before this are warm-up: recorded into `discard`, not `stats`.
    pub measure_from: Instant,
    /// Where warm-up requests are recorded (and forgotten); `None` without warm-up.
    pub discard: Option<&'a mut [OpStats]>,
    /// Open loop at a total rate: the worker's schedule.
    pub shared: Option<&'a mut Schedule>,
    /// Open loop: the schedule's health this second.
    pub health: Option<&'a mut ScheduleStats>,
    /// `StopAt::TotalRequests`: the budget every client takes its requests from.
    pub budget: Option<&'a RequestBudget>,
    /// Where the error reply that stops the run is kept (`ErrorReplies::Stop`).
    pub error_reply: &'a FirstErrorReply,
    /// The plain path's SET and GET templates, when the run's keys are generated ones
    /// ([`plain_templates`](super::plain_templates)).
    pub templates: Option<&'a Templates>,
    /// The run's `--test-time` deadline (the end of its time, warm-up included), if it
    /// has one.
    pub deadline: Option<Instant>,
    /// The deadline has passed (the poll returned after it, or a read this visit came
    /// after it: a stall held the process off the CPU across it): replies are still
    /// recorded, but no request goes out.
    pub time_up: bool,
    /// The load is over and the worker waits for the tracked writes of
    /// `--visibility-from` still waiting (`time_up` is set too): replica-visibility polls
    /// still go out, and a reply to a request of the workload still in flight (sent
    /// before a deadline) is not recorded, as it would not be without the wait.
    pub settling: bool,
    /// Whether `stats`' SET and GET rows may be recorded the plain way (see
    /// [`compact_rows`](super::compact_rows)): fixed for the run, asked once per context.
    pub compact_rows: [bool; 2],
}
