//! The plain closed loop of a client that routes by key: a cluster client (a connection
//! per master, each request sent where its key's slot lives) or a pool's (a connection
//! per member, each key where ketama or modula places it). What `plain` does for one
//! server (compact in-flight entries, requests written from the templates, one clock
//! reading per fill, the visit's read when it made one), with the per-connection queues
//! of `backlog` between the generator and full connections, as the general path keeps
//! them (memtier_benchmark's per-connection key pools): a request for a full connection
//! waits in that connection's queue while the generator goes on for the others, and
//! stops only when that queue is full too.
//!
//! A generated key's cluster slot is hashed from its id's digits without writing the key
//! out (`PrefixedSlots::id_slot`); a pool's placement, and any other request (a
//! multi-key GET, an arbitrary command), takes the key written out. A queue routed by an
//! older slot map, or any queue while a node is down, goes the general way for that step.

use crate::debug;
use crate::engine::client::send::Held;
use crate::engine::client::{Client, ClientContext};
use crate::engine::clock::Stamp;
use crate::engine::connection::Phase;
use crate::engine::generator::Op;
use crate::engine::in_flight::Redirects;
use crate::plan::Plan;

/// The time a fill's requests are sent at: the visit's read, or the clock read once,
/// when the first goes out.
struct FillClock(Option<Stamp>);

impl FillClock {
    /// The send time and its nanoseconds after the epoch.
    #[inline]
    fn now(&mut self) -> Stamp {
        *self.0.get_or_insert_with(Stamp::now)
    }
}

impl Client {
    /// [`fill_plain`](Self::fill_plain) for a client that routes by key: the
    /// queued requests of every connection with room first, then the held one, then new
    /// ones, until a request finds its connection full and that connection's queue full
    /// too (it is held), or the client's share (or the shared budget) is spent.
    pub(super) fn fill_plain_routed(
        &mut self,
        read_at: Option<Stamp>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        let lean = plan.load.shape.data_offset == 0 && ctx.written.is_none() && !debug::enabled(2);
        let mut clock = FillClock(read_at);
        if !self.backlog.is_empty() {
            self.send_backlog_plainly(lean, &mut clock, plan, ctx);
        }
        // Requests for a node that is down count as failed and the generator goes on.
        let mut failed = 0;
        let mut held = self.held.take();
        loop {
            let op = match held.take() {
                Some(held) => held.op,
                None if self.take_requests(1, ctx) == 1 => self.ops.next_op(),
                None => break,
            };
            let i = self.route_op(op, plan, ctx);
            if !self.has_room(i) {
                if self.conns[i].phase() == Phase::Backoff {
                    self.count_connection_error(i, &op, ctx);
                    failed += 1;
                    if self.gives_up_after(failed) {
                        break;
                    }
                    continue;
                }
                if self.wait_for_room(i, Held { op, due: None }, true) {
                    continue;
                }
                break;
            }
            self.send_routed(i, op, lean, &mut clock, plan, ctx);
        }
    }

    /// Sends what the queues hold for each connection with room, oldest first. Queues
    /// routed by an older slot map, or any queue while a node is down, go the general way
    /// (`send_backlog`), which routes every request again.
    fn send_backlog_plainly(
        &mut self,
        lean: bool,
        clock: &mut FillClock,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        let any_down = self.conns.iter().any(|c| c.phase() == Phase::Backoff);
        if self.backlog.is_stale() || any_down {
            let mut batch_time = None;
            self.send_backlog(&mut batch_time, plan, ctx);
            return;
        }
        for i in 0..self.conns.len() {
            while self.has_room(i) {
                let Some(queued) = self.backlog.pop(i) else {
                    break;
                };
                self.send_routed(i, queued.op, lean, clock, plan, ctx);
            }
        }
    }

    /// Sends `op` on connection `i` (which has room): the plain way for a SET or GET, the
    /// general way for anything else.
    #[inline]
    fn send_routed(
        &mut self,
        i: usize,
        op: Op,
        lean: bool,
        clock: &mut FillClock,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        let Stamp { at, ns: at_ns } = clock.now();
        match op {
            Op::Get { .. } | Op::Set { .. } if lean => self.send_plain(i, op, at, at_ns, plan, ctx),
            _ => self.send_op(i, op, false, Redirects::None, 0, at, at, plan, ctx),
        }
    }

    /// The connection `op` goes to: a generated key's cluster slot from its id, anything
    /// else (a pool's placement too) from its key written out.
    #[inline]
    fn route_op(&mut self, op: Op, plan: &Plan, ctx: &ClientContext) -> usize {
        if let (Op::Get { key_id } | Op::Set { key_id, .. }, Some(_)) = (op, ctx.templates)
            && let Some(i) = self.router.route_id(key_id, self.conns.len())
        {
            return i;
        }
        self.prepare_key(op, plan, ctx);
        self.route()
    }
}
