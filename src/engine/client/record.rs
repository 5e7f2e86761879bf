//! What a reply means: its latency and bytes into the worker's stats (and the client's
//! own series), hits and misses, error replies, SCAN cursors, verification reads, and the
//! cluster redirections and slot-map refreshes to act on.

use std::time::Instant;

use crate::debug_log;
use crate::engine::client::counts::{Elapsed, hits_and_misses};
use crate::engine::client::plain::PlainRecorder;
use crate::engine::client::{Client, ClientContext, held, route};
use crate::engine::clock::Stamp;
use crate::engine::cluster::{self, Redirect};
use crate::engine::connection::{Answer, Failure, full_server};
use crate::engine::generator::Op;
use crate::engine::in_flight::{Purpose, Request};
use crate::plan::{Endpoint, ErrorReplies, Plan, Sample};
use crate::protocol::ReplyKind;
use crate::protocol::resp_value::{self, first_bulk};
use crate::stats::ClientSeries;
use crate::workload::commands::{ScanState, scan_cursor};

impl Client {
    /// Records every complete reply in connection `i`'s read buffer.
    pub(super) fn take_answers(
        &mut self,
        i: usize,
        received: Stamp,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), Failure> {
        if self.records_plainly(ctx) {
            return self.take_plainly(i, received, plan, ctx);
        }
        let mut elapsed = Elapsed::new(received);
        while self.conns[i].next_answer(plan)? {
            self.take_answer(i, &mut elapsed, plan, ctx)?;
        }
        Ok(())
    }

    /// [`take_answers`](Self::take_answers) the plain way: the batch's plain replies in
    /// one call, each one they decline the general way.
    fn take_plainly(
        &mut self,
        i: usize,
        received: Stamp,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), Failure> {
        let mut elapsed = Elapsed::new(received);
        loop {
            let server_row = self.server_rows.map(|first| first + i);
            let mut recorder =
                PlainRecorder::new(&mut *ctx.stats, elapsed, plan, server_row, ctx.compact_rows);
            let found = self.conns[i].drain_plain(plan, &mut recorder)?;
            elapsed = recorder.into_elapsed();
            if !found {
                return Ok(());
            }
            self.take_answer(i, &mut elapsed, plan, ctx)?;
        }
    }

    /// Records the answer connection `i` just decoded, whatever it is.
    fn take_answer(
        &mut self,
        i: usize,
        elapsed: &mut Elapsed,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), Failure> {
        let received = elapsed.received();
        // The answer stays in its connection and is read there; the rare kinds that
        // need the whole client take a copy.
        let request = match self.conns[i].answer().pending.purpose {
            // After the load: a workload reply that came too late for it (sent before a
            // deadline) is not the load's, nor is its write tracked.
            Purpose::Work(_) | Purpose::Asking | Purpose::Multi | Purpose::Exec if ctx.settling => {
                return Ok(());
            }
            Purpose::Work(request) if request.queued => {
                let answer = *self.conns[i].answer();
                return self.queued_reply(&answer, request.row, plan, ctx);
            }
            Purpose::Work(request) => request,
            Purpose::Asking | Purpose::Multi => return Ok(()),
            Purpose::Exec => {
                let answer = *self.conns[i].answer();
                self.exec_reply(i, &answer, received, ctx);
                return Ok(());
            }
            Purpose::Visibility(token) => {
                let conn = &self.conns[i];
                let answer = conn.answer();
                let value = answer.reply.text(conn.reply_bytes(answer));
                if let Some(vis) = self.visibility.as_mut() {
                    vis.answered(token, value, received, ctx);
                }
                return Ok(());
            }
            Purpose::Unsolicited => {
                let conn = &self.conns[i];
                let bytes = conn.reply_bytes(conn.answer());
                return Err(unsolicited(conn.answer(), bytes, plan, ctx, conn.peer()));
            }
            Purpose::TopologyRefresh if ctx.time_up => {
                // Read after the deadline: no connection opens for the new map.
                return Ok(());
            }
            Purpose::TopologyRefresh => {
                // A node that reports no host name means the one this client reached
                // it by.
                let conn = &self.conns[i];
                let host = match conn.endpoint() {
                    Endpoint::Tcp { host, .. } => host.clone(),
                    Endpoint::Unix(_) => String::new(),
                };
                let parsed = resp_value::value(conn.reply_bytes(conn.answer()))
                    .and_then(|(value, _)| cluster::slot_map(&value, &host).ok());
                if let Some(map) = parsed {
                    self.apply_slot_map(&map, plan, ctx);
                }
                return Ok(());
            }
        };
        if let Some(think) = self.think_time {
            self.resume_at = Some(received + think);
        }
        let conn = &self.conns[i];
        let answer = conn.answer();
        let bytes = conn.reply_bytes(answer);
        if let Some(row) = self.server_rows.map(|first| first + i) {
            record_server(answer, row, received, ctx);
        }
        let redirect = record_answer(
            answer,
            request,
            bytes,
            elapsed,
            plan,
            ctx,
            &mut self.series,
            &mut self.scan,
            conn.peer(),
        )?;
        let (intended, kind) = (answer.pending.intended, answer.reply.kind);
        if let (Some(seq), Op::Set { key_id, .. }, Some(vis)) =
            (request.stamp, request.op, self.visibility.as_mut())
            && redirect.is_none()
            && kind != ReplyKind::Error
        {
            vis.acknowledged(key_id, seq.get(), received, ctx);
        }
        match redirect {
            Some(redirect) => {
                let intended = ctx.health.is_some().then_some(intended);
                self.follow(i, redirect, request, intended, plan, ctx)?;
            }
            None => self.release_copy(request.op),
        }
        Ok(())
    }
}

/// A pool: records a reply in its member's row (`row`): count, latency, bytes, and an
/// error reply as an error; warm-up requests are left out.
fn record_server(answer: &Answer, row: usize, received: Instant, ctx: &mut ClientContext) {
    let pending = answer.pending;
    if pending.intended < ctx.measure_from || row >= ctx.stats.len() {
        return;
    }
    let stats = &mut ctx.stats[row];
    let latency_us = received
        .saturating_duration_since(pending.intended)
        .as_micros() as u64;
    if stats.service.is_some() {
        let service_us = received
            .saturating_duration_since(pending.sent())
            .as_micros() as u64;
        let len = answer.reply.len as u64;
        stats.record_paced(latency_us, service_us, u64::from(pending.tx), len);
    } else {
        stats.record(latency_us, u64::from(pending.tx), answer.reply.len as u64);
    }
    if answer.reply.kind == ReplyKind::Error {
        stats.errors += 1;
    }
}

/// A reply that answers no request (nothing was in flight): a server refusing the
/// connection (`-ERR max number of clients reached`) or out of step with the client.
/// Either way the connection cannot go on; under `ErrorReplies::Stop` an error reply is
/// kept as the one that stopped the run.
fn unsolicited(
    answer: &Answer,
    bytes: &[u8],
    plan: &Plan,
    ctx: &mut ClientContext,
    peer: &str,
) -> Failure {
    let reply = answer.reply;
    let text = reply.text(bytes);
    if reply.kind != ReplyKind::Error {
        return Failure::Broken(format!(
            "unexpected reply from {peer} with no request in flight"
        ));
    }
    let refusal = full_server(peer, text);
    let message = format!(
        "server {peer} sent an error with no request in flight: {}",
        String::from_utf8_lossy(text)
    );
    if plan.load.error_replies == ErrorReplies::Stop {
        ctx.error_reply.keep(peer, text);
        return refusal.unwrap_or(Failure::Fatal(message));
    }
    refusal.unwrap_or(Failure::Broken(message))
}

/// Records one reply to `request`: latency, bytes, hits and misses, errors, the client's
/// own series, verification and SCAN cursors. Returns a cluster redirection to follow,
/// if any; an error no reconnect can fix is a [`Failure::Fatal`].
#[allow(clippy::too_many_arguments)] // the disjoint parts of a client that a reply touches
fn record_answer(
    answer: &Answer,
    request: Request,
    bytes: &[u8],
    elapsed: &mut Elapsed,
    plan: &Plan,
    ctx: &mut ClientContext,
    series: &mut Option<Box<ClientSeries>>,
    scan: &mut Option<ScanState>,
    peer: &str,
) -> Result<Option<Redirect>, Failure> {
    let pending = answer.pending;
    let reply = answer.reply;
    let text = reply.text(bytes);
    let row = usize::from(request.row);
    // Response time: from when the request should have gone out (closed loop: when it did).
    let latency_us = elapsed.since(pending.intended);
    // A warm-up request is recorded where nothing reads it.
    let counted = pending.intended >= ctx.measure_from;
    let stats = match ctx.discard.as_deref_mut() {
        Some(discard) if !counted => &mut discard[row],
        _ => &mut ctx.stats[row],
    };
    if reply.kind == ReplyKind::Error && plan.server.cluster_mode {
        let redirect = cluster::parse_redirect(text);
        match &redirect {
            Some(Redirect::Moved { .. }) => stats.moved += 1,
            Some(Redirect::Ask { .. }) => stats.ask += 1,
            Some(Redirect::TryAgain) => stats.tryagain += 1,
            None => {}
        }
        // A request that will be resent is recorded once, when its real answer comes. One
        // whose last try got -TRYAGAIN again is answered: an error reply, recorded as any
        // other (counted, with the last try's latency, or in open loop from when it was
        // due; under `ErrorReplies::Stop` the run's end), where it went uncounted.
        let exhausted = matches!(redirect, Some(Redirect::TryAgain))
            && (request.tries >= route::TRYAGAIN_TRIES || matches!(request.op, Op::Probe));
        if redirect.is_some()
            && !exhausted
            && (matches!(
                request.op,
                Op::Set { .. }
                    | Op::Get { .. }
                    | Op::Verify { .. }
                    | Op::Template
                    | Op::Probe
                    | Op::MultiGet
            ) || held::resendable_stream(request.op))
        {
            return Ok(redirect);
        }
    }
    if stats.service.is_some() {
        let service_us = elapsed
            .received()
            .saturating_duration_since(pending.sent())
            .as_micros() as u64;
        stats.record_paced(
            latency_us,
            service_us,
            u64::from(pending.tx),
            reply.len as u64,
        );
    } else {
        stats.record_batched(latency_us, u64::from(pending.tx), reply.len as u64);
    }
    // An error reply is no latency a sample's reader can show (under `ErrorReplies::Stop`
    // it is the run's failure, reported as such): only successful replies are samples.
    if let Some(sink) = &plan.outputs.samples
        && reply.kind != ReplyKind::Error
    {
        // Never blocks the worker: a full channel loses the sample (see `SampleSink`).
        let _ = sink.try_send(Sample {
            intended: pending.intended,
            sent: pending.sent(),
            received: elapsed.received(),
        });
    }
    // The per-client files: one column group per command row (SET/GET/WAIT, or each
    // arbitrary command's).
    if let Some(series) = series.as_mut()
        && counted
    {
        series.record(
            ctx.second,
            row,
            latency_us,
            u64::from(pending.tx),
            reply.len as u64,
        );
    }
    if reply.kind != ReplyKind::Error
        && let Some(sizes) = stats.reply_sizes.as_deref_mut()
    {
        sizes.record(reply.elements as usize, 1);
    }
    debug_log!(
        2,
        "reply from {peer}: {} bytes ({:?}) after {latency_us} us",
        reply.len,
        reply.kind
    );
    if let Some(job) = ctx.verify {
        if let Op::Verify { index } = request.op {
            job.check(index, reply.kind, text);
        }
        return Ok(None);
    }
    if request.scan
        && let Some(state) = scan.as_mut()
    {
        state.on_reply(first_bulk(bytes).and_then(scan_cursor));
    }
    let (hits, misses) = match reply.kind {
        ReplyKind::Error => {
            // A full server answers the connection's first request with its refusal and
            // closes it: an error reply, and the connection's end, in the server's words.
            if let Some(failure) = full_server(peer, text) {
                stats.errors += 1;
                if plan.load.error_replies == ErrorReplies::Stop {
                    ctx.error_reply.keep(peer, text);
                }
                return Err(failure);
            }
            if plan.load.error_replies == ErrorReplies::Stop {
                ctx.error_reply.keep(peer, text);
                // The refusal in the server's words, and what to change.
                let hint = match is_auth_refusal(text) {
                    true => format!(" (use {})", plan.names.authenticate),
                    false => String::new(),
                };
                return Err(Failure::Fatal(format!(
                    "server {peer} replied with an error: {}{hint}",
                    String::from_utf8_lossy(text)
                )));
            }
            // A reply that ends the run is still an error reply, never a success: a
            // front end reporting what was measured must not count it as one.
            if let Some(failure) = auth_refusal(text, peer, plan) {
                stats.errors += 1;
                return Err(failure);
            }
            // With a reconnect policy the cluster may come back (a failover): the reply is
            // an error reply like another, and the run goes on.
            if text.starts_with(b"CLUSTERDOWN") && plan.load.shape.reconnect.is_none() {
                stats.errors += 1;
                return Err(Failure::Fatal(format!(
                    "the cluster is down ({peer}: {})",
                    String::from_utf8_lossy(text)
                )));
            }
            stats.errors += 1;
            ctx.errors.report(format_args!(
                "server {peer} replied with an error: {}",
                String::from_utf8_lossy(text)
            ));
            (0, 0)
        }
        _ => hits_and_misses(&reply, &request, plan),
    };
    stats.hits += hits;
    stats.misses += misses;
    if let Some(series) = series.as_mut()
        && counted
        && (hits > 0 || misses > 0)
    {
        series.hit(ctx.second, hits);
        series.miss(ctx.second, misses);
    }
    Ok(None)
}

/// Whether error reply `text` says the connection is not authenticated.
fn is_auth_refusal(text: &[u8]) -> bool {
    text.starts_with(b"NOAUTH")
        || text.ends_with(b"unauthenticated")
        || text.starts_with(b"Auth failure")
}

/// The run's failure when error reply `text` says the connection is not authenticated
/// (Redis `NOAUTH`, memcached -Y `unauthenticated`, memcached SASL `Auth failure.`):
/// no request on it can succeed, so every reply would be the same refusal.
pub(super) fn auth_refusal(text: &[u8], peer: &str, plan: &Plan) -> Option<Failure> {
    is_auth_refusal(text).then(|| {
        Failure::Fatal(format!(
            "server {peer} requires authentication: use {}",
            plan.names.authenticate
        ))
    })
}
