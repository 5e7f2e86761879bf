//! What a client sends next: redirected requests first, then queued ones, then new
//! ones from its generator (or the verification pass), each routed to the connection
//! its key goes to and written there by `encode.rs`. In open loop a new request goes out only when a position of the schedule
//! (the worker's, or the client's own) is due, and carries that position's intended
//! send time. A client with a share of its own counts it down; under a shared budget it
//! takes each new measured request from the budget (warm-up requests come on top).

use std::time::Instant;

use crate::engine::budget::RequestBudget;
use crate::engine::client::held::NOT_HELD;
use crate::engine::client::{Client, ClientContext};
use crate::engine::clock::Stamp;
use crate::engine::connection::Phase;
use crate::engine::generator::Op;
use crate::engine::in_flight::Redirects;
use crate::engine::schedule::Schedule;
use crate::plan::{BatchWrap, Plan};
use crate::stats::rows;
use crate::workload::keys::write_key;

/// How a client paces its requests.
pub(super) enum Pacing {
    /// Closed loop: send whenever a connection has room.
    Closed,
    /// Open loop at a total rate: take due positions from the worker's schedule.
    Shared,
    /// Open loop at a rate per connection: this client's own schedule.
    Own(Schedule),
}

/// A scheduled position taken: its intended send time, and whether it waited for a
/// connection with room (rather than for the generator).
#[derive(Clone, Copy, Debug)]
pub(super) struct Due {
    pub at: Instant,
    pub blocked: bool,
}

/// A generated request waiting for its connection (not ready, or pipeline full).
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    pub op: Op,
    /// Open loop: the position it was generated for.
    pub due: Option<Due>,
}

/// A request to send again after a cluster redirection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Resend {
    /// The connection it goes to.
    pub conn: usize,
    pub op: Op,
    /// An ASK: send `ASKING` before it.
    pub asking: bool,
    pub redirects: Redirects,
    /// Times it was sent again after `-TRYAGAIN`.
    pub tries: u8,
    /// Open loop: the intended send time of the request, kept through redirections.
    pub intended: Option<Instant>,
}

/// A request answered `-TRYAGAIN`, waiting for its back-off to end; it is routed by its
/// key again then (the slot may have moved meanwhile).
#[derive(Clone, Copy, Debug)]
pub(super) struct Retry {
    pub at: Instant,
    pub op: Op,
    pub redirects: Redirects,
    pub tries: u8,
    pub intended: Option<Instant>,
}

/// Records how late a scheduled request went out (not for warm-up requests).
fn note_lag(due: Due, sent: Instant, ctx: &mut ClientContext) {
    if due.at < ctx.measure_from {
        return;
    }
    if let Some(health) = ctx.health.as_deref_mut() {
        let lag_us = sent.saturating_duration_since(due.at).as_micros() as u64;
        health.record_send(lag_us, due.blocked);
    }
}

/// Under a shared budget, the warm-up comes on top of it: a request intended before the
/// measured part starts takes nothing from the budget and keeps that intended time (the
/// clock now, in closed loop), so it is recorded as warm-up whenever it goes out. `None`
/// for a measured request (or without a warm-up).
fn warm_up(due: Option<Due>, batch_time: &mut Option<Instant>, ctx: &ClientContext) -> Option<Due> {
    ctx.discard.as_ref()?;
    let at = match due {
        Some(due) => due.at,
        None => *batch_time.get_or_insert_with(Instant::now),
    };
    (at < ctx.measure_from).then_some(Due {
        at,
        blocked: due.is_some_and(|d| d.blocked),
    })
}

/// The stats row an operation is counted in.
pub(super) fn row_of(op: &Op) -> usize {
    match op {
        // A template's requests have one row.
        Op::Set { .. } | Op::Template | Op::Probe | Op::Stream { .. } => rows::SET,
        Op::Wait { .. } => rows::WAIT,
        _ => rows::GET,
    }
}

impl Client {
    /// A pool: counts a connection error in member `i`'s row.
    pub(super) fn count_server_connection_error(&self, i: usize, ctx: &mut ClientContext) {
        if let Some(row) = self.server_rows.map(|first| first + i)
            && row < ctx.stats.len()
        {
            ctx.stats[row].connection_errors += 1;
        }
    }

    /// Whether connection `i` can take one more request now.
    pub(super) fn has_room(&self, i: usize) -> bool {
        match self.wrap {
            BatchWrap::Plain => self.conns[i].has_room(self.pipeline, self.reconnect_interval),
            // MULTI and EXEC take a place in flight each.
            BatchWrap::MultiExec => {
                !self.txn.blocks(i, self.pipeline)
                    && self.conns[i].has_room(self.pipeline + 2, self.reconnect_interval)
            }
        }
    }

    /// Sends redirected requests first, then new ones, until connections are full, the
    /// client's share is sent, or (open loop) no position of the schedule is due.
    /// `read_at`: this visit's last read, whose clock reading the plain closed loop
    /// stamps its requests with.
    pub(super) fn fill(&mut self, read_at: Option<Stamp>, plan: &Plan, ctx: &mut ClientContext) {
        if ctx.time_up {
            return;
        }
        if self.sends_plainly(ctx) {
            self.fill_plain(read_at, plan, ctx);
            return;
        }
        if self.awaits_batch() {
            return;
        }
        if let Some(at) = self.hold {
            if Instant::now() < at {
                return;
            }
            self.hold = None;
            if let Pacing::Own(schedule) = &mut self.pacing {
                // Its own schedule runs from the start time, not from the first moment
                // after it that the client was woken.
                schedule.start_at(at);
            }
        }
        let mut batch_time = None;
        if !self.retries.is_empty() {
            self.take_due_retries(plan, ctx);
        }
        while let Some(&resend) = self.resends.front() {
            if !self.has_room(resend.conn) {
                break;
            }
            self.resends.pop_front();
            let sent = *batch_time.get_or_insert_with(Instant::now);
            self.send_op(
                resend.conn,
                resend.op,
                resend.asking,
                resend.redirects,
                resend.tries,
                resend.intended.unwrap_or(sent),
                sent,
                plan,
                ctx,
            );
        }
        // Requests queued for room go before new ones.
        if !self.backlog.is_empty() {
            self.send_backlog(&mut batch_time, plan, ctx);
        }
        // Requests for a node that is down count as failed and the generator goes on.
        let mut failed = 0;
        loop {
            // A think time holds the next request (new, or held for room) back after a
            // reply.
            if let Some(at) = self.resume_at {
                let now = *batch_time.get_or_insert_with(Instant::now);
                if now < at {
                    break;
                }
                self.resume_at = None;
            }
            let (op, due) = match self.held.take() {
                Some(held) => (held.op, held.due),
                None => {
                    // A client with no share of its own takes from the shared budget, if
                    // any is left (checked before a scheduled position is used up).
                    let budgeted = self.remaining == Some(0);
                    if budgeted && !ctx.budget.is_some_and(RequestBudget::has_left) {
                        break;
                    }
                    let mut due = match self.pacing {
                        Pacing::Closed => None,
                        Pacing::Shared | Pacing::Own(_) => {
                            let now = *batch_time.get_or_insert_with(Instant::now);
                            match self.take_due(now, ctx) {
                                Some(due) => Some(due),
                                None => break,
                            }
                        }
                    };
                    if budgeted {
                        match warm_up(due, &mut batch_time, ctx) {
                            Some(warm) => due = Some(warm),
                            None if let Some(budget) = ctx.budget
                                && let (start, 1) = budget.take_numbered(1) =>
                            {
                                self.ops.number_requests(0, start, 1);
                            }
                            // Another client took the last one.
                            None => break,
                        }
                    }
                    let op = match ctx.verify {
                        Some(job) => match job.take() {
                            Some(index) => Op::Verify { index },
                            None => {
                                self.remaining = Some(0);
                                break;
                            }
                        },
                        None if self.stream.is_some() => match self.next_from_stream() {
                            Some(op) => op,
                            None => {
                                self.remaining = Some(0);
                                break;
                            }
                        },
                        None => self.ops.next_op(),
                    };
                    if !budgeted && let Some(left) = self.remaining.as_mut() {
                        *left -= 1;
                    }
                    if self.stream.is_some() && due.is_some() {
                        self.stream_batch_due = match self.stream_ends_batch {
                            true => None,
                            false => self.stream_batch_due.or(due),
                        };
                    }
                    (op, due)
                }
            };
            let i = if self.router.by_key() {
                self.prepare_key(op, plan, ctx);
                self.route()
            } else {
                0
            };
            if self.txn.open && self.txn.conn != i {
                // The batch left its connection's slots: it ends here.
                self.close_transaction(*batch_time.get_or_insert_with(Instant::now));
            }
            if !self.has_room(i) {
                if self.router.by_key() && self.conns[i].phase() == Phase::Backoff {
                    // The node is down: this request cannot be sent, and counts as failed.
                    self.count_connection_error(i, &op, ctx);
                    failed += 1;
                    if self.gives_up_after(failed) {
                        break;
                    }
                    continue;
                }
                // It waits for its connection (if late, that is why): queued behind it
                // when the client routes by key, so the generator goes on for the other
                // connections; held, which stops the generator, when that queue is full,
                // the client has one connection, the request's keys are the generator's
                // (`Client::can_wait`), or its batches are transactions (a transaction
                // holds every other connection until it is closed, which only the next
                // request for another connection does).
                let due = due.map(|d| Due { blocked: true, ..d });
                let queues = self.router.by_key() && self.wrap == BatchWrap::Plain;
                if self.wait_for_room(i, Held { op, due }, queues) {
                    continue;
                }
                break;
            }
            self.send_generated(i, op, due, &mut batch_time, plan, ctx);
        }
        if self.txn.open && self.remaining == Some(0) && self.held.is_none() {
            // The stream ended inside a batch.
            self.close_transaction(*batch_time.get_or_insert_with(Instant::now));
        }
    }

    /// Sends a generated request (new, held or queued) on connection `i`, which has room.
    pub(super) fn send_generated(
        &mut self,
        i: usize,
        op: Op,
        due: Option<Due>,
        batch_time: &mut Option<Instant>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        // One clock read per batch: every request in it goes out in the same write.
        let sent = *batch_time.get_or_insert_with(Instant::now);
        let intended = match due {
            Some(due) => {
                note_lag(due, sent, ctx);
                due.at
            }
            None => sent,
        };
        self.send_op(i, op, false, Redirects::None, 0, intended, sent, plan, ctx);
    }

    /// Moves the `-TRYAGAIN` retries whose back-off ended to the resends, each routed by
    /// its key as the slot map says now.
    fn take_due_retries(&mut self, plan: &Plan, ctx: &mut ClientContext) {
        let now = Instant::now();
        let mut i = 0;
        while i < self.retries.len() {
            if self.retries[i].at > now {
                i += 1;
                continue;
            }
            let retry = self.retries.swap_remove(i);
            self.prepare_key(retry.op, plan, ctx);
            let conn = self.route();
            self.resends.push_back(Resend {
                conn,
                op: retry.op,
                asking: false,
                redirects: retry.redirects,
                tries: retry.tries,
                intended: retry.intended,
            });
        }
    }

    /// The stream's next command, kept in `stream_cmd`; `None` when it has ended.
    fn next_from_stream(&mut self) -> Option<Op> {
        let step = self.stream.as_mut()?.next(&mut self.stream_cmd)?;
        self.stream_ends_batch = step.ends_batch;
        let held = match self.stream_copies.as_mut() {
            Some(held) => held.hold(&self.stream_cmd),
            None => NOT_HELD,
        };
        Some(Op::Stream { held })
    }

    /// Open loop: takes the schedule's next position if it is due by `now` and, when
    /// the connection is known before the key is (no cluster routing), that connection
    /// has room; a full connection leaves the position to another client.
    fn take_due(&mut self, now: Instant, ctx: &mut ClientContext) -> Option<Due> {
        if !self.router.by_key() && !self.has_room(0) {
            return None;
        }
        let schedule = match &mut self.pacing {
            Pacing::Own(schedule) => schedule,
            Pacing::Shared => ctx.shared.as_deref_mut()?,
            Pacing::Closed => return None,
        };
        // The first request that can go out starts the schedule (not the connects).
        schedule.start_at(now);
        // The rest of a stream's batch goes out with its first command, at its time: a
        // batch that took the last positions of one burst would otherwise wait for the
        // next burst for the rest (with MULTI/EXEC, holding a transaction open), as when
        // a client's last, shorter batch leaves a burst to the next client.
        if let Some(first) = self.stream_batch_due {
            schedule.take();
            return Some(first);
        }
        let (at, blocked) = schedule.take_due(now)?;
        Some(Due { at, blocked })
    }

    /// Puts the key of `op` into `key_buf` (for routing).
    pub(super) fn prepare_key(&mut self, op: Op, plan: &Plan, ctx: &ClientContext) {
        match op {
            Op::Set { key_id, .. } | Op::Get { key_id } => {
                self.load_key(plan, key_id);
            }
            Op::Verify { index } => {
                if let Some(job) = ctx.verify {
                    job.verifier.write_key(index, &mut self.key_buf);
                }
            }
            Op::Command { .. } => match self.ops.multi_keys().first() {
                Some(&id) => write_key(&mut self.key_buf, &plan.workload.keys.prefix, id),
                None => self.key_buf.clear(),
            },
            // The keys of one multi-get share a hash tag in cluster mode: the first one
            // routes them all.
            Op::MultiGet => match self.ops.multi_keys().first() {
                Some(&id) => write_key(&mut self.key_buf, &plan.workload.keys.prefix, id),
                None => self.key_buf.clear(),
            },
            Op::Stream { held } => {
                self.key_buf.clear();
                let cmd = match self.stream_copies.as_deref().and_then(|h| h.get(held)) {
                    Some(cmd) => cmd,
                    None => &self.stream_cmd,
                };
                self.key_buf.extend_from_slice(cmd.key());
            }
            Op::Wait { .. } | Op::Template | Op::Probe => self.key_buf.clear(),
        }
    }
}
