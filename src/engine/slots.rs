//! A worker's client slots and the timers their clients asked for: a heap of
//! (instant, slot) with superseded entries skipped, not removed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use crate::engine::budget::RequestBudget;
use mio::Token;

use crate::engine::client::{Client, split_token};
use crate::engine::prefetch::prefetch_slice;
use crate::engine::schedule::Schedule;
use crate::results::Unanswered;
use crate::stats::{ClientSeries, ScheduleStats};

/// Client slots plus the timers they asked for.
pub(super) struct Slots {
    pub(super) clients: Vec<Option<Client>>,
    /// `--client-stats` figures of clients already retired.
    pub(super) series: Vec<(usize, ClientSeries)>,
    /// The timer each slot has armed, so stale heap entries can be skipped.
    pub(super) armed: Vec<Option<Instant>>,
    pub(super) timers: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Scratch list of timers due in one pass.
    pub(super) due: Vec<(Instant, usize)>,
    pub(super) active: usize,
}

impl Slots {
    /// Asks the processor for the memory of the client an event for `token` goes to
    /// (see [`prefetch`](crate::engine::prefetch)): the worker does so two events ahead.
    #[inline(always)]
    pub(super) fn prefetch_client(&self, token: Token) {
        let (slot, _) = split_token(token);
        if let Some(client) = self.clients.get(slot) {
            prefetch_slice(std::slice::from_ref(client), Client::HOT_LINES);
        }
    }

    /// Asks for the memory of the connection an event for `token` goes to; its client's
    /// was asked for an event before, so finding the connection costs no wait.
    #[inline(always)]
    pub(super) fn prefetch_connection(&self, token: Token) {
        let (slot, conn) = split_token(token);
        if let Some(Some(client)) = self.clients.get(slot) {
            client.prefetch_connection(conn);
        }
    }

    /// Asks for the client of the first two of a wake-up's events and returns what asks
    /// for the rest as the worker goes: at each event, the client two events on and the
    /// connection of the next (see [`Lookahead::step`]).
    pub(super) fn look_ahead<I: Iterator<Item = Token>>(
        &self,
        tokens: impl Fn() -> I,
    ) -> Lookahead<I> {
        let mut clients = tokens();
        for token in clients.by_ref().take(2) {
            self.prefetch_client(token);
        }
        let mut connections = tokens();
        connections.next();
        Lookahead {
            clients,
            connections,
        }
    }

    /// Re-arms `slot`'s timer if the client now wants a different one.
    #[inline(always)]
    pub(super) fn arm(&mut self, slot: usize) {
        let want = self.clients[slot].as_ref().and_then(Client::next_timer);
        if want != self.armed[slot] {
            if let Some(at) = want {
                self.timers.push(Reverse((at, slot)));
            }
            self.armed[slot] = want;
        }
    }

    /// Whether a busy poll of `spin` is worth it before a sleep of `timeout`: only for
    /// what can come within it, a reply (or a connection's set-up) or the wake-up itself.
    pub(super) fn worth_spinning(&self, spin: Duration, timeout: Duration) -> bool {
        !timeout.is_zero()
            && (timeout <= spin || self.clients.iter().flatten().any(Client::awaits_reply))
    }

    /// Open loop, at the end of the run (`end`): what was due by then but never answered,
    /// into `health`: each client's, and the worker's shared schedule's backlog (`shared`,
    /// with whether the run was bound by time and its shared budget). A run bound by
    /// requests counts no more due positions than were left to send: the clients' shares
    /// and the budget's rest (which every worker sees whole: with several, an upper bound).
    pub(super) fn count_unfinished(
        &mut self,
        shared: Option<(&mut Schedule, bool, Option<&RequestBudget>)>,
        end: Instant,
        measure_from: Instant,
        health: &mut ScheduleStats,
    ) {
        if let Some((schedule, time_bound, budget)) = shared {
            let cap = match time_bound {
                true => u64::MAX,
                false => self
                    .clients
                    .iter()
                    .flatten()
                    .map(Client::left_to_send)
                    .chain(budget.map(RequestBudget::left))
                    .fold(0, u64::saturating_add),
            };
            schedule.count_backlog(end, measure_from, cap, health);
        }
        for client in self.clients.iter_mut().flatten() {
            client.count_unfinished(end, measure_from, health);
        }
    }

    /// Whether every client still running is done with its load (see
    /// [`Client::load_done`]). Cheap while the load runs: the first client with work
    /// left ends the search.
    pub(super) fn load_done(&self, budget: Option<&RequestBudget>) -> bool {
        self.clients.iter().flatten().all(|c| c.load_done(budget))
    }

    /// Whether any client has a reply come but not read (see [`Client::reply_waiting`]).
    pub(super) fn reply_waiting(&self) -> bool {
        self.clients.iter().flatten().any(Client::reply_waiting)
    }

    /// Closed loop, at the end of the run (`end`): the requests its clients sent since
    /// `measure_from` and never got an answer to, and the oldest one's age at `end`.
    /// `read_at_end`: every reply come was read after the deadline (see
    /// [`Client::unanswered_since`]).
    pub(super) fn unanswered(
        &self,
        end: Instant,
        measure_from: Instant,
        read_at_end: bool,
    ) -> Unanswered {
        let mut all = Unanswered::default();
        for client in self.clients.iter().flatten() {
            let (requests, oldest) = client.unanswered_since(measure_from, read_at_end);
            all.merge(&Unanswered {
                requests,
                oldest_age_us: oldest
                    .map_or(0, |t| end.saturating_duration_since(t).as_micros() as u64),
                ..Unanswered::default()
            });
        }
        all
    }

    pub(super) fn next_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    /// The earliest client timers still armed, up to `out.len()` of them, in order, into
    /// `out`; returns how many (the heap also holds superseded entries, skipped here).
    pub(super) fn next_timers(&self, out: &mut [Instant]) -> usize {
        let mut n = 0;
        for &Reverse((at, slot)) in self.timers.as_slice() {
            if self.armed[slot] != Some(at) || (n == out.len() && at >= out[n - 1]) {
                continue;
            }
            // Insertion into the short sorted list, dropping its last when full.
            let mut i = n.min(out.len() - 1);
            while i > 0 && out[i - 1] > at {
                out[i] = out[i - 1];
                i -= 1;
            }
            out[i] = at;
            n = (n + 1).min(out.len());
        }
        n
    }

    pub(super) fn connected(&self) -> u32 {
        self.clients
            .iter()
            .flatten()
            .filter(|c| c.is_connected())
            .count() as u32
    }
}

/// A wake-up's events ahead of the one being handled, whose memory the worker asks for
/// (see [`prefetch`](crate::engine::prefetch)).
pub(super) struct Lookahead<I> {
    /// The events two on and later: their clients are asked for.
    clients: I,
    /// The next event and later: their connections are asked for.
    connections: I,
}

impl<I: Iterator<Item = Token>> Lookahead<I> {
    /// Before an event is handled: asks for the client of the event two on, and the
    /// connection of the next (whose client was asked for an event before).
    #[inline(always)]
    pub(super) fn step(&mut self, slots: &Slots) {
        if let Some(token) = self.clients.next() {
            slots.prefetch_client(token);
        }
        if let Some(token) = self.connections.next() {
            slots.prefetch_connection(token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_timers_are_the_earliest_still_armed_in_order() {
        let t0 = Instant::now();
        let us = |n| t0 + Duration::from_micros(n);
        let mut slots = Slots {
            clients: Vec::new(),
            series: Vec::new(),
            armed: vec![Some(us(30)), Some(us(10)), Some(us(50)), None, Some(us(20))],
            timers: BinaryHeap::new(),
            due: Vec::new(),
            active: 0,
        };
        // Slot 3's entry and slot 0's earlier one are superseded.
        for (at, slot) in [(30, 0), (10, 1), (50, 2), (5, 3), (20, 4), (1, 0)] {
            slots.timers.push(Reverse((us(at), slot)));
        }
        let mut out = [t0; 3];
        assert_eq!(slots.next_timers(&mut out), 3);
        assert_eq!(out, [us(10), us(20), us(30)]);
        let mut out = [t0; 8];
        assert_eq!(slots.next_timers(&mut out), 4);
        assert_eq!(out[..4], [us(10), us(20), us(30), us(50)]);
    }
}
