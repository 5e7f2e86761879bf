//! The plain closed loop's batch writer: a batch of plain SETs and GETs written from the
//! templates and put in flight in one call, the per-request bookkeeping of
//! [`begin`](Connection::begin) and [`finish_plain`](Connection::finish_plain) (the
//! set-up prefix, the stall watchdog's start, the opaque, the reconnect count) done once
//! per batch, and no call per request.

use std::time::Instant;

use crate::engine::connection::Connection;
use crate::engine::generator::PlainOp;
use crate::engine::in_flight::{Pending, Purpose, Request};
use crate::engine::in_flight_queue::PlainRequest;
use crate::protocol::Expect;
use crate::protocol::templates::{Form, Templates};
use crate::stats::rows;
use crate::workload::values::ValuePool;

impl Connection {
    /// Writes `ops` from `templates` and puts them in flight, all sent (as intended) at
    /// `sent`, `sent_ns` after the in-flight queue's epoch: the bytes and queue entries
    /// [`begin`](Self::begin), the templates and [`finish_plain`](Self::finish_plain)
    /// give one request at a time. `values` must not [`draw`](ValuePool::draws).
    pub fn write_plain_batch(
        &mut self,
        templates: &Templates,
        values: &ValuePool,
        ops: &[PlainOp],
        sent: Instant,
        sent_ns: u64,
    ) {
        // One loop per format, each with its format's branches only.
        match templates.form() {
            Form::Resp => self.write_batch_as(Form::Resp, templates, values, ops, sent, sent_ns),
            Form::Text => self.write_batch_as(Form::Text, templates, values, ops, sent, sent_ns),
            Form::Binary => {
                self.write_batch_as(Form::Binary, templates, values, ops, sent, sent_ns)
            }
        }
    }

    /// [`write_plain_batch`](Self::write_plain_batch) for templates of format `form`.
    #[inline(always)]
    fn write_batch_as(
        &mut self,
        form: Form,
        templates: &Templates,
        values: &ValuePool,
        ops: &[PlainOp],
        sent: Instant,
        sent_ns: u64,
    ) {
        if ops.is_empty() {
            return;
        }
        // Only the batch's first request can find the set-up prefix waiting or nothing
        // in flight.
        let first = self.begin(sent);
        self.next_opaque = first.opaque.wrapping_add(ops.len() as u32);
        self.sent_on_connection += ops.len() as u64;
        let out = &mut self.wbuf;
        let inflight = &mut self.inflight;
        let mut opaque = first.opaque;
        for op in ops {
            let start = out.len();
            match *op {
                PlainOp::Get { key_id } => {
                    templates.encode_get_as(form, out, key_id, opaque);
                    let tx = (out.len() - start) as u32;
                    inflight.push_plain(PlainRequest::Get { key_id }, opaque, tx, sent_ns);
                }
                PlainOp::Set { key_id, value_size } => {
                    let value = values.undrawn_value(value_size);
                    templates.encode_set_as(form, out, key_id, value, opaque);
                    let tx = (out.len() - start) as u32;
                    match PlainRequest::of(op.op()) {
                        Some(request) => inflight.push_plain(request, opaque, tx, sent_ns),
                        // Too large for a compact entry: kept whole.
                        None => {
                            let request = Request::plain(op.op(), rows::SET, Expect::Store);
                            let purpose = Purpose::Work(request);
                            inflight.push(Pending::sent_as_intended(purpose, opaque, tx, sent));
                        }
                    }
                }
            }
            opaque = opaque.wrapping_add(1);
        }
    }
}
