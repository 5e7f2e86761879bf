//! What a client sends next and how: redirected requests first, then new ones from its
//! generator (or the verification pass), each encoded into the connection its key
//! routes to. In open loop a new request goes out only when a position of the schedule
//! (the worker's, or the client's own) is due, and carries that position's intended
//! send time. A client with a share of its own counts it down; under a shared budget it
//! takes each new measured request from the budget (warm-up requests come on top).

use std::num::NonZeroU64;
use std::time::Instant;

use rand::Rng;
use rand::rngs::SmallRng;

use crate::debug_log;
use crate::engine::budget::RequestBudget;
use crate::engine::client::held::NOT_HELD;
use crate::engine::client::{Client, ClientContext};
use crate::engine::connection::{Connection, Phase};
use crate::engine::generator::Op;
use crate::engine::in_flight::{Purpose, Redirects, Request};
use crate::engine::schedule::Schedule;
use crate::plan::{BatchWrap, Plan};
use crate::protocol::{Expect, Key, resp_encode};
use crate::stats::rows;
use crate::workload::commands::ScanState;
use crate::workload::keys::write_key;
use crate::workload::values::ValuePool;

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

/// The key of `key_id` (an imported item's key, or the key prefix and the id's digits,
/// formatted into `digits`) and its imported item, if any.
#[inline]
pub(super) fn key_of<'a>(
    plan: &'a Plan,
    key_id: u64,
    digits: &'a mut itoa::Buffer,
) -> (Key<'a>, Option<usize>) {
    let dataset = &plan.workload.dataset;
    let item = dataset.item_index(key_id, &plan.workload.keys);
    match (item, &dataset.import) {
        (Some(index), Some(data)) if !data.generated_keys() => {
            (Key::from(data.item(index).key), item)
        }
        _ => {
            let prefix = plan.workload.keys.prefix.as_bytes();
            (Key::new(prefix, digits.format(key_id).as_bytes()), item)
        }
    }
}

/// The value and expiry of a SET: imported item `item`'s, or `value_size` bytes from the
/// value pool.
#[inline]
pub(super) fn set_value<'a>(
    plan: &'a Plan,
    values: &'a ValuePool,
    item: Option<usize>,
    value_size: usize,
    expiry_secs: u32,
    rng: &mut SmallRng,
) -> (&'a [u8], u32) {
    match (item, &plan.workload.dataset.import) {
        (Some(index), Some(data)) => {
            let item = data.item(index);
            // An expiry range overrides the file's expiry, as in memtier.
            let expiry = if plan.load.shape.expiry_range.is_some() {
                expiry_secs
            } else {
                item.expiry_secs
            };
            (item.value, expiry)
        }
        _ => (values.value(value_size, rng), expiry_secs),
    }
}

/// A read of `key` on `conn`: GET, or GETRANGE at the plan's data offset.
#[inline]
fn encode_read(conn: &mut Connection, plan: &Plan, key: Key, opaque: u32) {
    let (codec, out) = conn.encoder();
    let offset = plan.load.shape.data_offset;
    if offset > 0 {
        codec.encode_getrange(out, key, offset);
    } else {
        codec.encode_get(out, key, opaque);
    }
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
    pub(super) fn fill(&mut self, plan: &Plan, ctx: &mut ClientContext) {
        if self.sends_plainly(ctx) {
            self.fill_plain(plan, ctx);
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
        if let Some(pinned) = self.pinned.as_mut() {
            pinned.start_batch();
        }
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
                            None if ctx.budget.is_some_and(RequestBudget::take) => {}
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
                let held = Held { op, due };
                let queues = self.router.by_key() && self.wrap == BatchWrap::Plain;
                let held = match queues && Client::can_wait(op) {
                    true => match self.backlog.try_push(i, held) {
                        Ok(()) => continue,
                        Err(held) => held,
                    },
                    false => held,
                };
                self.held = Some(held);
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

    /// Encodes `op` on connection `i` (after `ASKING` when `asking`) and puts it in
    /// flight, intended for `intended` and sent at `sent`.
    #[allow(clippy::too_many_arguments)] // the request, its redirection state, and its context
    pub(super) fn send_op(
        &mut self,
        i: usize,
        op: Op,
        asking: bool,
        redirects: Redirects,
        tries: u8,
        intended: Instant,
        sent: Instant,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        if asking {
            let conn = &mut self.conns[i];
            let started = conn.begin(sent);
            resp_encode::encode_command(conn.encoder().1, &[b"ASKING"]);
            conn.finish(started, Purpose::Asking, sent, sent);
        }
        let queued = matches!(op, Op::Stream { .. }) && self.wrap == BatchWrap::MultiExec;
        if queued {
            self.open_transaction(i, sent);
        }
        let started = self.conns[i].begin(sent);
        let (row, expect, scan, stamp) = self.encode_op(i, op, started.opaque, plan, ctx);
        let conn = &mut self.conns[i];
        debug_log!(
            2,
            "request to {}: {}",
            conn.peer(),
            String::from_utf8_lossy(conn.written_since(started)).escape_debug()
        );
        let request = Request {
            op,
            row: row as u8,
            expect,
            redirects,
            tries,
            scan,
            stamp,
            queued,
        };
        conn.finish(started, Purpose::Work(request), intended, sent);
        if queued {
            self.txn.commands += 1;
            if self.stream_ends_batch || self.txn.commands >= self.pipeline {
                self.close_transaction(sent);
            }
        }
    }

    /// Puts the key of `key_id` in `key_buf`: an imported item's key, or prefix + id.
    pub(super) fn load_key(&mut self, plan: &Plan, key_id: u64) -> Option<usize> {
        let dataset = &plan.workload.dataset;
        let item = dataset.item_index(key_id, &plan.workload.keys);
        match (item, &dataset.import) {
            (Some(index), Some(data)) if !data.generated_keys() => {
                self.key_buf.clear();
                self.key_buf.extend_from_slice(data.item(index).key);
            }
            _ => write_key(&mut self.key_buf, &plan.workload.keys.prefix, key_id),
        }
        item
    }

    /// Encodes `op` on connection `i`; returns its stats row, what its reply looks like,
    /// whether it is a SCAN to follow, and a tracked write's stamp.
    fn encode_op(
        &mut self,
        i: usize,
        op: Op,
        opaque: u32,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> (usize, Expect, bool, Option<NonZeroU64>) {
        let prefix = &plan.workload.keys.prefix;
        let shape = &plan.load.shape;
        let dataset = &plan.workload.dataset;
        match op {
            Op::Set {
                key_id,
                value_size,
                expiry_secs,
            } => {
                let mut digits = itoa::Buffer::new();
                let (key, item) = key_of(plan, key_id, &mut digits);
                let (value, expiry) = set_value(
                    plan,
                    ctx.values,
                    item,
                    value_size,
                    expiry_secs,
                    self.ops.rng(),
                );
                let (stamp, value) = match self.visibility.as_mut() {
                    Some(vis) => (vis.stamp_next(value), &vis.value[..]),
                    None => (None, value),
                };
                let (codec, out) = self.conns[i].encoder();
                if shape.data_offset > 0 {
                    codec.encode_setrange(out, key, shape.data_offset, value);
                } else {
                    codec.encode_set(out, key, value, expiry, opaque);
                }
                if let Some(written) = ctx.written {
                    written.mark(item.map_or(key_id, |index| index as u64));
                }
                (rows::SET, Expect::Store, false, stamp)
            }
            Op::Get { key_id } => {
                let mut digits = itoa::Buffer::new();
                let (key, _) = key_of(plan, key_id, &mut digits);
                encode_read(&mut self.conns[i], plan, key, opaque);
                (rows::GET, Expect::Get, false, None)
            }
            Op::Verify { index } => {
                if let Some(job) = ctx.verify {
                    job.verifier.write_key(index, &mut self.key_buf);
                }
                encode_read(&mut self.conns[i], plan, Key::from(&self.key_buf), opaque);
                (rows::GET, Expect::Get, false, None)
            }
            Op::MultiGet => {
                self.multi_keys.clear();
                for &id in self.ops.multi_keys() {
                    match (dataset.item_index(id, &plan.workload.keys), &dataset.import) {
                        (Some(index), Some(data)) if !data.generated_keys() => {
                            self.multi_keys.push(data.item(index).key)
                        }
                        _ => self.multi_keys.push_key(prefix, id),
                    }
                }
                let (codec, out) = self.conns[i].encoder();
                codec.encode_multi_get(out, &self.multi_keys, opaque);
                let keys = self.multi_keys.len() as u32;
                (rows::GET, Expect::MultiGet(keys), false, None)
            }
            Op::Wait {
                replicas,
                timeout_ms,
            } => {
                let (codec, out) = self.conns[i].encoder();
                codec.encode_wait(out, replicas, timeout_ms);
                (rows::WAIT, Expect::Store, false, None)
            }
            Op::Template => {
                self.encode_template(i, plan);
                (rows::SET, Expect::Store, false, None)
            }
            Op::Probe => {
                let (codec, out) = self.conns[i].encoder();
                codec.encode_probe(out, opaque);
                (rows::SET, Expect::Probe, false, None)
            }
            Op::Stream { held } => {
                let cmd = match self.stream_copies.as_deref().and_then(|h| h.get(held)) {
                    Some(cmd) => cmd,
                    None => &self.stream_cmd,
                };
                cmd.encode_resp(self.conns[i].encoder().1);
                (rows::SET, Expect::Store, false, None)
            }
            Op::Command { index, value_size } => {
                let (row, scan) = self.encode_command(i, plan, ctx, index, value_size);
                // Arbitrary commands speak RESP, whose decoder reads any reply alike; the
                // row only tells which stats row to record in.
                let expect = if row == rows::GET {
                    Expect::Get
                } else {
                    Expect::Store
                };
                (row, expect, scan, None)
            }
        }
    }

    /// Encodes the plan's request template on connection `i`: each random field a fresh
    /// number, each `{tag}` field the batch's slot (pinned cluster clients).
    pub(super) fn encode_template(&mut self, i: usize, plan: &Plan) {
        let Some(templated) = plan.workload.template.as_deref() else {
            return;
        };
        let template = &templated.template;
        let tag = match (self.pinned.as_mut(), templated.slot_tags.as_deref()) {
            (Some(pinned), Some(tags)) if !template.tag_positions().is_empty() => {
                Some(pinned.tag(tags, self.ops.rng()))
            }
            _ => None,
        };
        let below = templated.random_below;
        let rng = self.ops.rng();
        let out = self.conns[i].encoder().1;
        template.write_request(
            out,
            || {
                if below == 0 {
                    0
                } else {
                    rng.random_range(0..below)
                }
            },
            tag.as_ref(),
        );
    }

    /// Encodes arbitrary command `index` with fresh keys and data on connection `i`;
    /// returns its stats row and whether it is a SCAN to follow.
    fn encode_command(
        &mut self,
        i: usize,
        plan: &Plan,
        ctx: &mut ClientContext,
        index: usize,
        value_size: usize,
    ) -> (usize, bool) {
        let Some(arbitrary) = plan.workload.arbitrary.as_deref() else {
            return (0, false);
        };
        let cmd = &arbitrary.list.commands[index];
        self.command_keys.clear();
        for &id in self.ops.multi_keys() {
            self.command_keys.push_key(&plan.workload.keys.prefix, id);
        }
        let value = ctx.values.value(value_size, self.ops.rng());
        let out = self.conns[i].encoder().1;
        if let (Some(scan), Some(cursor)) = (
            &arbitrary.list.scan,
            self.scan.as_ref().and_then(ScanState::next_cursor),
        ) {
            let key = self.command_keys.get(0).unwrap_or(b"");
            scan.continuation
                .encode_resp_cursor(out, cursor, key, value);
            return (scan.row, true);
        }
        let monitor = arbitrary.monitor.as_deref();
        let monitor_index = match monitor {
            Some(m) if cmd.template.is_monitor_random() => {
                m.pick(arbitrary.monitor_pattern, self.ops.rng())
            }
            _ => 0,
        };
        cmd.template
            .encode_resp_keys(out, &self.command_keys, value, monitor, monitor_index);
        (cmd.stat_row(monitor, monitor_index), self.scan.is_some())
    }
}
