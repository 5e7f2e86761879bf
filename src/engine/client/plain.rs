//! The closed loop's common case, decided once when the client is made: one server (or
//! the one cluster master a client is pinned to; a cluster's masters and a pool's members
//! are `plain_routed`'s), no rate, no think time, no request stream, transactions or
//! visibility probe.
//! Such a client sends and records without asking, per request, about schedules,
//! redirections, warm-up, service times or per-client series; anything else (and any
//! error reply, a redirection among them) takes the general path in `send` and `record`.

use std::time::Instant;

use crate::debug;
use crate::engine::client::counts::{Elapsed, hits_and_misses};
use crate::engine::client::encode::{key_of, set_value};
use crate::engine::client::send::Pacing;
use crate::engine::client::{Client, ClientContext};
use crate::engine::clock::Stamp;
use crate::engine::connection::Take;
use crate::engine::generator::{Op, PlainOp};
use crate::engine::in_flight::{Pending, Purpose, Redirects, Request};
use crate::engine::in_flight_queue::{PlainEntry, PlainRequest};
use crate::plan::{BatchWrap, Plan};
use crate::protocol::templates::Templates;
use crate::protocol::{Expect, Reply, ReplyKind};
use crate::stats::{OpStats, rows};

/// The plain path's request templates for a run whose keys are generated (the prefix and
/// the id, no imported data set) and sent as they are (no data offset); one set serves
/// every client of a worker, since the templates are only read.
pub fn plain_templates(plan: &Plan) -> Option<Templates> {
    let generated = plan.workload.dataset.import.is_none();
    if !generated || plan.load.shape.data_offset != 0 {
        return None;
    }
    Templates::new(plan.server.protocol, plan.workload.keys.prefix.as_bytes())
}

/// Requests drawn at once by [`Client::send_plain_batch`] (a pipeline-16 batch is one
/// chunk).
const PLAIN_CHUNK: usize = 32;

/// The chunk of a batch this small or smaller (pipeline 1, or a few replies' room).
const SMALL_CHUNK: usize = 4;

impl Client {
    /// Whether this client's shape allows the plain path at all (fixed for the run).
    pub(super) fn is_plain(&self) -> bool {
        matches!(self.pacing, Pacing::Closed)
            && self.think_time.is_none()
            // One server, or a router by key (a cluster's slot map, a pool's placement).
            && (self.router.by_key() || self.conns.len() == 1)
            && self.visibility.is_none()
            && self.stream.is_none()
            && self.wrap == BatchWrap::Plain
            && !self.idle
            && self.reconnect_interval.is_none()
    }

    /// Whether [`fill`](Self::fill) can take the plain path now: nothing waiting to be
    /// sent again, no start time to wait for, no verification pass or warm-up on top of a
    /// shared budget. (A client routing by key sends its held request on its plain path.)
    pub(super) fn sends_plainly(&self, ctx: &ClientContext) -> bool {
        self.plain
            && self.hold.is_none()
            && (self.held.is_none() || self.router.by_key())
            && self.resends.is_empty()
            && self.retries.is_empty()
            && ctx.verify.is_none()
            // A shared budget is taken a batch at a time below; a run with a warm-up on
            // top of it takes the general path throughout.
            && (ctx.budget.is_none() || ctx.discard.is_none())
    }

    /// The plain closed loop's fill: as many new requests from the generator as the
    /// pipeline has room for (or the client's share, or the shared budget, has left), all
    /// stamped with one clock reading: `read_at`, the read in the same visit that made
    /// their room, or the clock read now (see [`clock`](crate::engine::clock)). A plain
    /// SET or GET, or the plan's request template, is written here; any other request,
    /// a data offset, keys marked for a later verification or request lines to print
    /// take [`Client::send_op`].
    pub(super) fn fill_plain(
        &mut self,
        read_at: Option<Stamp>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        if self.router.by_key() {
            return self.fill_plain_routed(read_at, plan, ctx);
        }
        let lean = plan.load.shape.data_offset == 0 && ctx.written.is_none() && !debug::enabled(2);
        let conn = &self.conns[0];
        if !conn.has_room(self.pipeline, None) || (self.whole_batch && conn.in_flight() > 0) {
            return;
        }
        let room = (self.pipeline - conn.in_flight()) as u64;
        let count = self.take_requests(room, ctx);
        if count == 0 {
            return;
        }
        if let (Some(templates), None) = (ctx.templates, &plan.workload.template) {
            // Room for the batch's GETs at once (a SET's value may still grow the buffer;
            // a request template's requests grow it as they need).
            let room = templates.get_room() * count as usize;
            self.conns[0].encoder().1.reserve(room);
        }
        let Stamp { at, ns: at_ns } = read_at.unwrap_or_else(Stamp::now);
        if let (Some(templates), None, true) = (ctx.templates, &plan.workload.template, lean)
            && self.ops.is_plain()
            && !ctx.values.draws()
        {
            // The chunk array is filled in before its first use on every batch: a
            // pipeline-1 visit's one request would pay for zeroing 32 (80 instructions,
            // more than its draw).
            let count = count as usize;
            return if count <= SMALL_CHUNK {
                self.send_plain_batch::<SMALL_CHUNK>(count, templates, at, at_ns, ctx)
            } else {
                self.send_plain_batch::<PLAIN_CHUNK>(count, templates, at, at_ns, ctx)
            };
        }
        for _ in 0..count {
            let op = self.ops.next_op();
            match op {
                Op::Get { .. } | Op::Set { .. } if lean => {
                    self.send_plain(0, op, at, at_ns, plan, ctx)
                }
                Op::Template if lean => self.send_template_plain(at, at_ns, plan),
                _ => self.send_op(0, op, false, Redirects::None, 0, at, at, plan, ctx),
            }
        }
    }

    /// [`fill_plain`](Self::fill_plain)'s `count` requests when the generator's are all
    /// plain SETs and GETs written from the templates and no value draws: drawn `N` at a
    /// time, then written and put in flight `N` at a time (the same draws in the same
    /// order, the same bytes and entries as [`send_plain`](Self::send_plain) one by one).
    #[inline(always)]
    fn send_plain_batch<const N: usize>(
        &mut self,
        count: usize,
        templates: &Templates,
        at: Instant,
        at_ns: u64,
        ctx: &ClientContext,
    ) {
        let mut ops = [PlainOp::Get { key_id: 0 }; N];
        let mut left = count;
        while left > 0 {
            let chunk = &mut ops[..left.min(N)];
            self.ops.next_plain_ops(chunk);
            self.conns[0].write_plain_batch(templates, ctx.values, chunk, at, at_ns);
            left -= chunk.len();
        }
    }

    /// Takes up to `n` new requests: from the client's own share (all it wants when the
    /// run is time-bound), then, once that share is spent, from the shared budget (a
    /// client of the budget has no share of its own, or only a redirected request given
    /// back to it). Returns how many it got.
    #[inline]
    pub(super) fn take_requests(&mut self, n: u64, ctx: &ClientContext) -> u64 {
        let own = self.remaining.map_or(n, |left| left.min(n));
        if let Some(left) = self.remaining.as_mut() {
            *left -= own;
        }
        match (self.remaining, ctx.budget) {
            (Some(0), Some(budget)) if own < n => {
                let (start, got) = budget.take_numbered(n - own);
                // A request given back (own) goes first and draws from the client's
                // generator; the budget's have their places.
                self.ops.number_requests(own, start, got);
                own + got
            }
            _ => own,
        }
    }

    /// Writes a plain SET or GET (no data offset, nothing marked) on connection `i` and
    /// puts it in flight, sent at `sent` (`sent_ns` after the in-flight queue's epoch).
    #[inline]
    pub(super) fn send_plain(
        &mut self,
        i: usize,
        op: Op,
        sent: Instant,
        sent_ns: u64,
        plan: &Plan,
        ctx: &ClientContext,
    ) {
        let conn = &mut self.conns[i];
        let started = conn.begin(sent);
        let mut digits = itoa::Buffer::new();
        let (codec, out) = conn.encoder();
        let (row, expect) = match (op, ctx.templates) {
            (Op::Get { key_id }, Some(templates)) => {
                templates.encode_get(out, key_id, started.opaque);
                (rows::GET, Expect::Get)
            }
            (
                Op::Set {
                    key_id,
                    value_size,
                    expiry_secs: 0,
                },
                Some(templates),
            ) => {
                // Templates exist only for generated keys: the value is the pool's.
                let value = ctx.values.value(value_size, self.ops.rng());
                templates.encode_set(out, key_id, value, started.opaque);
                (rows::SET, Expect::Store)
            }
            (
                Op::Set {
                    key_id,
                    value_size,
                    expiry_secs,
                },
                _,
            ) => {
                let (key, item) = key_of(plan, key_id, &mut digits);
                let rng = self.ops.rng();
                let (value, expiry) =
                    set_value(plan, ctx.values, item, value_size, expiry_secs, rng);
                codec.encode_set(out, key, value, expiry, started.opaque);
                (rows::SET, Expect::Store)
            }
            (Op::Get { key_id }, _) => {
                let (key, _) = key_of(plan, key_id, &mut digits);
                codec.encode_get(out, key, started.opaque);
                (rows::GET, Expect::Get)
            }
            _ => return,
        };
        match PlainRequest::of(op) {
            // The common case: a compact entry in the queue.
            Some(plain) => conn.finish_plain(started, plain, sent_ns),
            None => {
                let request = Request::plain(op, row, expect);
                conn.finish_as_intended(started, Purpose::Work(request), sent);
            }
        }
    }

    /// Writes the plan's request template (redis-benchmark's tests; a client pinned to a
    /// cluster master fills its `{tag}` fields with the master's current slot) and puts it in
    /// flight, as [`Client::send_op`] would.
    #[inline]
    fn send_template_plain(&mut self, sent: Instant, sent_ns: u64, plan: &Plan) {
        let started = self.conns[0].begin(sent);
        self.encode_template(0, plan);
        self.conns[0].finish_plain(started, PlainRequest::Template, sent_ns);
    }

    /// Whether replies can be recorded the plain way now: no per-client series,
    /// samples, verification, SCAN cursors, warm-up or request lines to print. (In
    /// cluster mode a redirection is an error reply, which the general path takes.)
    #[inline]
    pub(super) fn records_plainly(&self, ctx: &ClientContext) -> bool {
        self.records_plain && ctx.verify.is_none() && ctx.discard.is_none()
    }

    /// [`records_plainly`](Self::records_plainly)'s part fixed for the client's run,
    /// decided when it is made (asked twice a visit otherwise).
    pub(super) fn may_record_plainly(&self, plan: &Plan) -> bool {
        self.plain
            && self.series.is_none()
            && self.scan.is_none()
            && plan.outputs.samples.is_none()
            && !debug::enabled(2)
    }
}

/// Records replies the plain way (see [`Take`]): a workload reply that is not an error,
/// to a request outside MULTI, whose row keeps no service times or reply sizes; anything
/// else is declined (nothing recorded) and the general path takes it.
pub(super) struct PlainRecorder<'a> {
    stats: &'a mut [OpStats],
    elapsed: Elapsed,
    plan: &'a Plan,
    /// A pool: the row of the member whose connection the replies came on, which counts
    /// each reply too.
    server_row: Option<usize>,
    /// Whether reads count hits and misses (not with arbitrary commands).
    counts_hits: bool,
    /// Reads are GETRANGEs (a data offset): an empty value is a miss.
    ranged: bool,
    /// Whether a compact entry's row (SET or GET, by its number) may be recorded the
    /// plain way (see [`plain_row`]): asked once here rather than per reply.
    compact_rows: [bool; 2],
}

// A compact entry's row number indexes `compact_rows`.
const _: () = assert!(rows::SET == 0 && rows::GET == 1);

impl<'a> PlainRecorder<'a> {
    /// Into `stats` (and a pool member's row, `server_row`), for replies whose elapsed
    /// times `elapsed` computes.
    pub(super) fn new(
        stats: &'a mut [OpStats],
        elapsed: Elapsed,
        plan: &'a Plan,
        server_row: Option<usize>,
        compact_rows: [bool; 2],
    ) -> Self {
        PlainRecorder {
            stats,
            elapsed,
            plan,
            server_row,
            counts_hits: plan.workload.arbitrary.is_none(),
            ranged: plan.load.shape.data_offset > 0,
            compact_rows,
        }
    }

    /// A pool: counts a reply in its member's row too, as the general path's
    /// `record_server` does for a reply that is not an error.
    #[inline(always)]
    fn record_server(&mut self, latency_us: u64, tx: u64, rx: u64) {
        if let Some(stats) = self.server_row.and_then(|row| self.stats.get_mut(row)) {
            stats.record_batched(latency_us, tx, rx);
        }
    }

    /// The elapsed times computed so far, for the general path's replies of this read.
    pub(super) fn into_elapsed(self) -> Elapsed {
        self.elapsed
    }
}

/// Whether rows SET and GET of `stats` may be recorded the plain way (see
/// `plain_row`), in the order of their row numbers: asked once a wake-up by the worker
/// ([`ClientContext::compact_rows`]) rather than once a visit.
pub fn compact_rows(stats: &mut [OpStats]) -> [bool; 2] {
    [rows::SET, rows::GET].map(|row| plain_row(stats, row).is_some())
}

/// Row `row` of `stats` if the plain way may record in it: it keeps no service times or
/// reply sizes (those rows take the general path).
#[inline(always)]
fn plain_row(stats: &mut [OpStats], row: usize) -> Option<&mut OpStats> {
    stats
        .get_mut(row)
        .filter(|stats| stats.service.is_none() && stats.reply_sizes.is_none())
}

/// Counts a one-key read's reply as a hit or a miss: what `hits_and_misses` says of one,
/// without its other cases (`ranged`: reads are GETRANGEs, an empty value is a miss).
#[inline(always)]
fn count_one_key_read(stats: &mut OpStats, reply: &Reply, ranged: bool) {
    let miss = reply.kind == ReplyKind::Nil
        || (ranged && reply.kind == ReplyKind::Bulk && reply.payload.1 == 0);
    // A branch, not two adds: the adds were vectorised, nine instructions a reply.
    if miss {
        stats.misses += 1;
    } else {
        stats.hits += 1;
    }
}

impl Take for PlainRecorder<'_> {
    #[inline(always)]
    fn take(&mut self, pending: &Pending, reply: &Reply) -> bool {
        let Purpose::Work(request) = &pending.purpose else {
            return false;
        };
        if reply.kind == ReplyKind::Error || request.queued {
            return false;
        }
        let row = usize::from(request.row);
        let Some(stats) = plain_row(self.stats, row) else {
            return false;
        };
        let latency_us = self.elapsed.since(pending.intended);
        let (tx, rx) = (u64::from(pending.tx), reply.len as u64);
        stats.record_batched(latency_us, tx, rx);
        if self.counts_hits && row == rows::GET {
            if let Expect::Get = request.expect {
                count_one_key_read(stats, reply, self.ranged);
            } else {
                let (hits, misses) = hits_and_misses(reply, request, self.plan);
                stats.hits += hits;
                stats.misses += misses;
            }
        }
        self.record_server(latency_us, tx, rx);
        true
    }

    #[inline(always)]
    fn takes_plain(&self) -> bool {
        self.compact_rows.contains(&true)
    }

    #[inline(always)]
    fn take_plain(&mut self, entry: &PlainEntry, reply: &Reply) -> bool {
        if reply.kind == ReplyKind::Error {
            return false;
        }
        // A compact entry's row is SET or GET, whose plain-ness was asked at the start
        // (the mask only spares a bounds check).
        let row = usize::from(entry.row);
        debug_assert!(row == rows::SET || row == rows::GET);
        if !self.compact_rows[row & 1] {
            return false;
        }
        let stats = &mut self.stats[row];
        let latency_us = self.elapsed.since_ns(entry.sent_ns);
        let (tx, rx) = (u64::from(entry.tx), reply.len as u64);
        stats.record_batched(latency_us, tx, rx);
        if self.counts_hits && row == rows::GET {
            // A compact entry's read is a one-key read.
            count_one_key_read(stats, reply, self.ranged);
        }
        self.record_server(latency_us, tx, rx);
        true
    }
}
