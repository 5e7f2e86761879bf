//! Requests generated for a connection whose pipeline was full, kept per connection in
//! the order they were generated and sent first once it has room: memtier_benchmark's
//! per-connection key pools in cluster mode. A client that routes by key (a cluster, a
//! pool of servers) then goes on generating for its other connections instead of
//! stopping at the first full one, so every connection's pipeline refills whole, in one
//! write, rather than a request or two at a time behind whichever connection was full.
//!
//! Each connection keeps at most one pipeline's worth; past that the generator stops
//! (the client's one held request, as before), so a slow node bounds how far ahead the
//! client generates. Batches sent as transactions (MULTI/EXEC) never queue here: an
//! open transaction holds every other connection until the next request for another
//! connection closes it, so that request must stop the generator, not wait in a queue.
//! Nor does a request whose keys live in the generator's state rather than in the
//! request (`Client::can_wait`): the generator moves on while it waits.

use std::collections::VecDeque;
use std::time::Instant;

use crate::engine::client::held::NOT_HELD;
use crate::engine::client::send::{Held, row_of};
use crate::engine::client::{Client, ClientContext};
use crate::engine::connection::Phase;
use crate::engine::generator::Op;
use crate::plan::Plan;

/// Per-connection queues of generated requests waiting for room.
#[derive(Debug)]
pub(super) struct Backlog {
    queues: Vec<VecDeque<Held>>,
    /// Requests in all queues.
    len: usize,
    /// Most requests one connection's queue takes (its pipeline depth).
    cap: usize,
    /// The slot map changed since the queues were routed: they must be routed again
    /// before they are sent (the plain path sends them where they are otherwise).
    stale: bool,
}

impl Backlog {
    /// Queues of at most `cap` requests each, made as connections need them.
    pub(super) fn new(cap: usize) -> Backlog {
        Backlog {
            queues: Vec::new(),
            len: 0,
            cap,
            stale: false,
        }
    }

    /// Marks the queues as routed by an older slot map.
    pub(super) fn mark_stale(&mut self) {
        self.stale = !self.is_empty();
    }

    /// Whether the queues were routed by an older slot map.
    pub(super) fn is_stale(&self) -> bool {
        self.stale
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `held` for connection `conn`; gives it back when that queue is full.
    pub(super) fn try_push(&mut self, conn: usize, held: Held) -> Result<(), Held> {
        if self.queues.get(conn).is_some_and(|q| q.len() >= self.cap) {
            return Err(held);
        }
        self.push(conn, held);
        Ok(())
    }

    /// Queues `held` for connection `conn` whatever its length (a request moved there by
    /// a new slot map, which must not be lost).
    fn push(&mut self, conn: usize, held: Held) {
        if conn >= self.queues.len() {
            let cap = self.cap;
            self.queues
                .resize_with(conn + 1, || VecDeque::with_capacity(cap));
        }
        self.queues[conn].push_back(held);
        self.len += 1;
    }

    /// The oldest request queued for connection `conn`.
    pub(super) fn pop(&mut self, conn: usize) -> Option<Held> {
        let held = self.queues.get_mut(conn)?.pop_front()?;
        self.len -= 1;
        Some(held)
    }

    /// Every queued request, connection by connection.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Held> {
        self.queues.iter().flatten()
    }
}

impl Client {
    /// Whether `op` can wait in a queue while the generator goes on: it carries what it
    /// sends. A multi-key GET's and an arbitrary command's keys are the generator's current
    /// ones, and a stream command without a copy of its own is the stream's current one;
    /// those are held instead, which stops the generator until they are sent.
    pub(super) fn can_wait(op: Op) -> bool {
        match op {
            Op::Set { .. }
            | Op::Get { .. }
            | Op::Verify { .. }
            | Op::Wait { .. }
            | Op::Template
            | Op::Probe => true,
            Op::Stream { held } => held != NOT_HELD,
            Op::MultiGet | Op::Command { .. } => false,
        }
    }

    /// A request for connection `i`, which is full: queued for it when the client
    /// `queues` and the request can wait (`true`: the generator goes on), else held (the
    /// generator stops until it is sent).
    pub(super) fn wait_for_room(&mut self, i: usize, held: Held, queues: bool) -> bool {
        let held = match queues && Client::can_wait(held.op) {
            true => match self.backlog.try_push(i, held) {
                Ok(()) => return true,
                Err(held) => held,
            },
            false => held,
        };
        self.held = Some(held);
        false
    }

    /// A request for connection `i`, whose node is down: it cannot be sent, and counts
    /// as failed.
    pub(super) fn count_connection_error(&self, i: usize, op: &Op, ctx: &mut ClientContext) {
        let row = row_of(op);
        if row < ctx.stats.len() {
            ctx.stats[row].connection_errors += 1;
        }
        self.count_server_connection_error(i, ctx);
    }

    /// Routes every queued request again, by the slot map as it is now: the queues of
    /// full connections too, which the pass in [`send_backlog`](Self::send_backlog) does
    /// not reach, and which the plain path would otherwise send where they wait.
    fn reroute_backlog(&mut self, plan: &Plan, ctx: &ClientContext) {
        self.backlog.stale = false;
        let mut queued = Vec::with_capacity(self.backlog.len);
        for i in 0..self.backlog.queues.len() {
            while let Some(held) = self.backlog.pop(i) {
                queued.push(held);
            }
        }
        for held in queued {
            self.prepare_key(held.op, plan, ctx);
            let to = self.route();
            self.backlog.push(to, held);
        }
    }

    /// Whether a fill that has counted `failed` requests for nodes that are down stops
    /// generating: after a pipeline's worth per connection, once every live connection
    /// has a reply to wake the client with (a node down or connecting has its timer);
    /// after 64 times that in any case (every key on a down node: nothing can go out
    /// until its back-off ends).
    pub(super) fn gives_up_after(&self, failed: usize) -> bool {
        let enough = self.pipeline * self.conns.len();
        failed >= enough
            && (failed >= enough * 64
                || self
                    .conns
                    .iter()
                    .all(|c| !c.is_ready() || c.in_flight() > 0))
    }

    /// Sends what the backlog holds for each connection with room, oldest first, each
    /// routed again by its key (a new slot map may have moved it; the pass repeats until
    /// nothing moved, so a request moved to a connection already passed is not left
    /// behind). A request for a connection whose node is down goes where the slot map
    /// now says, or, if that is the same node, counts as a connection error, as a new
    /// request for it would.
    pub(super) fn send_backlog(
        &mut self,
        batch_time: &mut Option<Instant>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        if self.backlog.stale {
            self.reroute_backlog(plan, ctx);
        }
        loop {
            let mut moved = false;
            for i in 0..self.conns.len() {
                let down = self.conns[i].phase() == Phase::Backoff;
                while down || self.has_room(i) {
                    let Some(held) = self.backlog.pop(i) else {
                        break;
                    };
                    self.prepare_key(held.op, plan, ctx);
                    let to = self.route();
                    if to != i {
                        self.backlog.push(to, held);
                        moved = true;
                    } else if down {
                        self.count_connection_error(i, &held.op, ctx);
                    } else {
                        self.send_generated(i, held.op, held.due, batch_time, plan, ctx);
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(key_id: u64) -> Held {
        Held {
            op: Op::Get { key_id },
            due: None,
        }
    }

    fn key_of(held: Held) -> u64 {
        match held.op {
            Op::Get { key_id } => key_id,
            other => panic!("not a GET: {other:?}"),
        }
    }

    #[test]
    fn each_connection_keeps_its_own_order_up_to_its_cap() {
        let mut backlog = Backlog::new(2);
        assert!(backlog.is_empty());
        assert!(backlog.try_push(1, get(10)).is_ok());
        assert!(backlog.try_push(0, get(20)).is_ok());
        assert!(backlog.try_push(1, get(11)).is_ok());
        // Connection 1's queue is full: the request comes back.
        let refused = backlog.try_push(1, get(12)).expect_err("full");
        assert_eq!(key_of(refused), 12);
        assert_eq!(backlog.iter().count(), 3);
        assert_eq!(backlog.pop(1).map(key_of), Some(10));
        assert_eq!(backlog.pop(1).map(key_of), Some(11));
        assert_eq!(backlog.pop(1).map(key_of), None);
        assert_eq!(backlog.pop(5).map(key_of), None);
        assert!(!backlog.is_empty());
        assert_eq!(backlog.pop(0).map(key_of), Some(20));
        assert!(backlog.is_empty());
    }

    #[test]
    fn only_requests_that_carry_their_keys_wait() {
        assert!(Client::can_wait(Op::Get { key_id: 1 }));
        assert!(Client::can_wait(Op::Verify { index: 2 }));
        assert!(Client::can_wait(Op::Stream { held: 7 }));
        assert!(!Client::can_wait(Op::Stream { held: NOT_HELD }));
        assert!(!Client::can_wait(Op::MultiGet));
        assert!(!Client::can_wait(Op::Command {
            index: 0,
            value_size: 8
        }));
    }

    #[test]
    fn a_moved_request_is_kept_past_the_cap() {
        let mut backlog = Backlog::new(1);
        assert!(backlog.try_push(0, get(1)).is_ok());
        backlog.push(0, get(2));
        assert_eq!(
            backlog.iter().map(|h| key_of(*h)).collect::<Vec<_>>(),
            [1, 2]
        );
    }
}
