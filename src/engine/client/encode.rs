//! How a client writes a request: `op` encoded into its connection's write buffer (the
//! key, a SET's value, a read at the data offset, the request template, an arbitrary
//! command) and put in flight; what to send next is `send.rs`'s.

use std::num::NonZeroU64;
use std::time::Instant;

use rand::rngs::SmallRng;

use crate::debug_log;
use crate::engine::client::{Client, ClientContext};
use crate::engine::connection::Connection;
use crate::engine::generator::Op;
use crate::engine::in_flight::{Purpose, Redirects, Request};
use crate::plan::{BatchWrap, Plan};
use crate::protocol::{Expect, Key, resp_encode};
use crate::stats::rows;
use crate::workload::commands::ScanState;
use crate::workload::keys::write_key;
use crate::workload::values::ValuePool;

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

impl Client {
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
    /// number, each `{tag}` field the master's current slot (pinned cluster clients).
    pub(super) fn encode_template(&mut self, i: usize, plan: &Plan) {
        let Some(templated) = plan.workload.template.as_deref() else {
            return;
        };
        let template = &templated.template;
        // The plan's tags first: without them (nearly every template) the client's
        // pinned slots, outside its hot lines, are not read.
        let tag = match templated.slot_tags.as_deref() {
            Some(tags) if !template.tag_positions().is_empty() => {
                self.pinned.as_ref().map(|pinned| pinned.tag(tags))
            }
            _ => None,
        };
        let below = templated.random_below;
        let mut draws = self.ops.template_draws();
        let out = self.conns[i].encoder().1;
        template.write_request(
            out,
            || {
                if below == 0 { 0 } else { draws.below(below) }
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
