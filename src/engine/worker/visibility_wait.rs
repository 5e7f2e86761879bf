//! After the load: the wait for `--visibility-from`'s tracked writes still waiting (the
//! last ones acknowledged, or every one a stalled replica never showed), so that each is
//! seen or a timeout.
//!
//! The wait is not the load's: the worker has handed over its load's last second and
//! end time already ([`WorkerMsg::LoadDone`](super::WorkerMsg::LoadDone)), so the run's
//! time, rates and seconds end with the load, as they would without the flag (a stalled
//! replica held a `-n` run up to `--visibility-timeout` longer, and its Ops/sec counted
//! that wait). What the wait settles goes to the runner with `Finished`. Nothing but
//! polls goes out: the clients see `time_up` and `settling`, and a workload reply still
//! coming (sent before a deadline) is not recorded. The workload's own timers (pace,
//! think time) are no longer asked; a client is woken for its polls alone.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::Events;

use super::{Slots, TIMER_TOKEN, WAKE_TOKEN, Worker};
use crate::engine::client::{Client, Status, longest_visibility_wait, split_token};
use crate::engine::clock::Stamp;
use crate::engine::error_log::ErrorLog;
use crate::engine::tally::Tally;

/// Past every tracked write's own deadline: the wait's bound, should a poll never have
/// gone out (its connection never ready again).
const GRACE: Duration = Duration::from_millis(200);

impl Worker {
    /// Waits until no client has a tracked write waiting, a stop, or (at the latest)
    /// every write's deadline; a write still waiting then is a timeout. Records into
    /// `second`'s (the load's last) stats, which the runner adds to the lag's row.
    pub(super) fn wait_for_visibility(
        &mut self,
        slots: &mut Slots,
        tally: &mut Tally,
        errors: &mut ErrorLog,
        second: u32,
    ) -> Result<(), String> {
        let Some(probe) = self.plan.server.visibility.as_ref() else {
            return Ok(());
        };
        if slots.active == 0 {
            return Ok(());
        }
        tally.time_up = true;
        tally.settling = true;
        // Every tracked write was acknowledged before now.
        let until = Instant::now() + longest_visibility_wait(probe) + GRACE;
        let mut events = Events::with_capacity(256);
        loop {
            for slot in 0..slots.clients.len() {
                if slots.clients[slot]
                    .as_ref()
                    .is_some_and(Client::visibility_settled)
                {
                    self.settle(slots, slot, Status::Finished)?;
                }
            }
            if slots.active == 0 || self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let now = Instant::now();
            if now >= until {
                let mut ctx = self.context(tally, errors, second);
                for client in slots.clients.iter_mut().flatten() {
                    client.give_up_visibility(&mut ctx);
                }
                return Ok(());
            }
            let mut wake_at = until;
            for slot in 0..slots.clients.len() {
                let Some(client) = slots.clients[slot].as_mut() else {
                    continue;
                };
                let mut next = client.visibility_timer();
                if next.is_some_and(|at| at <= now) {
                    let mut ctx = self.context(tally, errors, second);
                    let status = client.on_timer(now, &self.plan, &mut ctx);
                    next = client.visibility_timer();
                    self.settle(slots, slot, status)?;
                }
                if let Some(at) = next {
                    wake_at = wake_at.min(at);
                }
            }
            let timeout = wake_at.saturating_duration_since(now);
            if let Err(err) = self.poll.poll(&mut events, Some(timeout)) {
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("event loop failed: {err}"));
            }
            // The first connection's replies were waiting when the poll returned.
            let mut first = Some(Stamp::now());
            let mut ctx = self.context(tally, errors, second);
            for event in events.iter() {
                if event.token() == WAKE_TOKEN || event.token() == TIMER_TOKEN {
                    continue;
                }
                let (slot, conn) = split_token(event.token());
                let Some(client) = slots.clients.get_mut(slot).and_then(Option::as_mut) else {
                    continue;
                };
                let status = client.handle_event(conn, event, first.take(), &self.plan, &mut ctx);
                self.settle(slots, slot, status)?;
            }
        }
    }
}
