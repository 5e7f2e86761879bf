//! When a client wants waking: the next instant the worker should call
//! [`Client::on_timer`] for, the plain closed loop's answer (its connections' phase
//! timers alone) apart from the general one (pace, think time, redirection lookups,
//! retries, visibility polls, a start time).

use std::time::{Duration, Instant};

use crate::engine::client::Client;
use crate::engine::client::send::Pacing;
use crate::engine::connection::Connection;

/// How often a client checks on a node name being looked up for a redirection.
const LOOKUP_POLL: Duration = Duration::from_millis(5);

impl Client {
    /// When the worker should next call [`Client::on_timer`], if at all.
    #[inline(always)]
    pub fn next_timer(&self) -> Option<Instant> {
        if self.plain
            && self.hold.is_none()
            && self.resume_at.is_none()
            && self.retries.is_empty()
            && self.parked.is_empty()
        {
            // The plain closed loop (asked after every event, so in the worker's loop,
            // not a call): no pace, lookup, retry or poll timer can be set, only its
            // connections' phase timers.
            return match self.conns.as_slice() {
                [conn] => conn.timer(),
                conns => conns.iter().filter_map(Connection::timer).min(),
            };
        }
        self.next_timer_general()
    }

    /// [`next_timer`](Self::next_timer) for every client but the plain closed loop's.
    #[inline(never)]
    fn next_timer_general(&self) -> Option<Instant> {
        let conn_timer = self.conns.iter().filter_map(Connection::timer).min();
        // Only when a request could go out at that time: a full pipeline waits for a
        // reply instead (a timer now would fire again and again).
        let room = !self.awaits_batch() && (0..self.work_conns()).any(|i| self.has_room(i));
        let could_send = self.remaining != Some(0) && self.held.is_none() && room;
        let pace_timer = match &self.pacing {
            // Held for a start time: nothing is due before it.
            Pacing::Own(schedule) if could_send && self.hold.is_none() => Some(schedule.peek()),
            // A think time holds back a held request too: wake for it as for a new one.
            Pacing::Closed if room => self.resume_at,
            _ => None,
        };
        let lookup_timer = (!self.parked.is_empty()).then(|| Instant::now() + LOOKUP_POLL);
        let retry_timer = self.retries.iter().map(|r| r.at).min();
        let poll_timer = self
            .visibility
            .as_ref()
            .and_then(|v| v.next_poll(self.conns[v.conn].is_ready()));
        [
            conn_timer,
            pace_timer,
            lookup_timer,
            retry_timer,
            poll_timer,
            self.hold,
        ]
        .into_iter()
        .flatten()
        .min()
    }
}
