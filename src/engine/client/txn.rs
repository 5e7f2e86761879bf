//! A stream's batches as transactions (`BatchWrap::MultiExec`): when a client opens and
//! closes one, and how EXEC's reply is recorded, one entry per queued command.
//!
//! ```text
//! MULTI   +OK          not recorded
//! cmd     +QUEUED      kept (row, intended and sent times, bytes), not recorded yet
//! EXEC    *k ...       entry i records queued command i: latency intended -> EXEC's reply,
//!                      error or not, its element count; -EXECABORT (or nil): every queued
//!                      command is an error
//! ```

use std::time::Instant;

use crate::engine::client::record::auth_refusal;
use crate::engine::client::{Client, ClientContext};
use crate::engine::connection::{Answer, Failure};
use crate::engine::in_flight::Purpose;
use crate::plan::Plan;
use crate::protocol::ReplyKind;
use crate::protocol::resp_encode;
use crate::protocol::resp_value::{Token, elements};

/// A command answered `+QUEUED` (or refused at queue time), waiting for EXEC's reply.
#[derive(Clone, Copy, Debug)]
pub(super) struct Queued {
    row: u8,
    intended: Instant,
    sent: Instant,
    tx: u32,
    rx: u32,
    /// The server refused it when queueing (the transaction will abort).
    refused: bool,
}

/// One client's transaction state (a client has at most one transaction at a time).
#[derive(Debug, Default)]
pub(super) struct Transaction {
    /// The connection of the open or unanswered transaction.
    pub conn: usize,
    /// MULTI sent, EXEC not yet: more commands may join.
    pub open: bool,
    /// Commands sent in the open transaction.
    pub commands: usize,
    /// EXEC sent, its reply not in: no new batch yet.
    pub awaiting_exec: bool,
    /// The commands queued so far, in order.
    pub queued: Vec<Queued>,
}

impl Transaction {
    /// Forgets the transaction (its connection failed: its commands are lost).
    pub fn reset(&mut self) {
        self.open = false;
        self.commands = 0;
        self.awaiting_exec = false;
        self.queued.clear();
    }

    /// Whether a transaction stops a new command from going to connection `i` now.
    pub fn blocks(&self, i: usize, pipeline: usize) -> bool {
        self.awaiting_exec || (self.open && (self.conn != i || self.commands >= pipeline))
    }
}

impl Client {
    /// Writes MULTI on connection `i` when no transaction is open there.
    pub(super) fn open_transaction(&mut self, i: usize, sent: Instant) {
        if self.txn.open {
            return;
        }
        let conn = &mut self.conns[i];
        let started = conn.begin(sent);
        resp_encode::encode_command(conn.encoder().1, &[b"MULTI"]);
        conn.finish(started, Purpose::Multi, sent, sent);
        self.txn.open = true;
        self.txn.conn = i;
        self.txn.commands = 0;
        self.txn.queued.clear();
    }

    /// Writes EXEC for the open transaction, if any.
    pub(super) fn close_transaction(&mut self, sent: Instant) {
        if !self.txn.open {
            return;
        }
        let conn = &mut self.conns[self.txn.conn];
        let started = conn.begin(sent);
        resp_encode::encode_command(conn.encoder().1, &[b"EXEC"]);
        conn.finish(started, Purpose::Exec, sent, sent);
        self.txn.open = false;
        self.txn.awaiting_exec = true;
    }

    /// A queued command's reply (`+QUEUED`, or an error refusing it): kept for EXEC. A
    /// refusal for want of authentication fails the run, as outside a transaction; the
    /// transaction's commands are then lost unrecorded, as on a failed connection.
    pub(super) fn queued_reply(
        &mut self,
        answer: &Answer,
        row: u8,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), Failure> {
        let refused = answer.reply.kind == ReplyKind::Error;
        if refused {
            let bytes = self.conns[self.txn.conn].reply_bytes(answer);
            let text = answer.reply.text(bytes);
            let peer = self.conns[self.txn.conn].peer();
            if let Some(failure) = auth_refusal(text, peer, plan) {
                return Err(failure);
            }
            if text.starts_with(b"MOVED") || text.starts_with(b"ASK") {
                let row = usize::from(row);
                if row < ctx.stats.len() {
                    if text.starts_with(b"MOVED") {
                        ctx.stats[row].moved += 1;
                    } else {
                        ctx.stats[row].ask += 1;
                    }
                }
            }
            ctx.errors.report(format_args!(
                "server {} refused a command in MULTI: {}",
                self.conns[self.txn.conn].peer(),
                String::from_utf8_lossy(text)
            ));
        }
        let pending = answer.pending;
        self.txn.queued.push(Queued {
            row,
            intended: pending.intended,
            sent: pending.sent(),
            tx: pending.tx,
            rx: answer.reply.len as u32,
            refused,
        });
        Ok(())
    }

    /// EXEC's reply on connection `i`: every queued command recorded.
    pub(super) fn exec_reply(
        &mut self,
        i: usize,
        answer: &Answer,
        received: Instant,
        ctx: &mut ClientContext,
    ) {
        let bytes = self.conns[i].reply_bytes(answer);
        let queued = &self.txn.queued;
        // EXEC's own bytes are shared among its commands.
        let rx_share = answer.reply.len as u64 / queued.len().max(1) as u64;
        let mut results = if answer.reply.kind == ReplyKind::Array {
            elements(bytes)
        } else {
            None
        };
        if results.is_none() {
            ctx.errors.report(format_args!(
                "server {} aborted a transaction: {}",
                self.conns[i].peer(),
                String::from_utf8_lossy(answer.reply.text(bytes))
            ));
        }
        let peer = self.conns[i].peer();
        for q in queued {
            // Without an array, every command failed with the transaction.
            let (failed, size) = match results.as_mut().and_then(Iterator::next) {
                Some((Token::Error(text), _)) => {
                    // As an error reply outside a transaction is reported.
                    ctx.errors.report(format_args!(
                        "server {peer} replied with an error: {}",
                        String::from_utf8_lossy(text)
                    ));
                    (true, 0)
                }
                Some((_, size)) => (q.refused, size),
                None => (true, 0),
            };
            let row = usize::from(q.row);
            let latency_us = received.saturating_duration_since(q.intended).as_micros() as u64;
            let counted = q.intended >= ctx.measure_from;
            let stats = match ctx.discard.as_deref_mut() {
                Some(discard) if !counted => &mut discard[row],
                _ => &mut ctx.stats[row],
            };
            let rx = u64::from(q.rx) + rx_share;
            if stats.service.is_some() {
                let service_us = received.saturating_duration_since(q.sent).as_micros() as u64;
                stats.record_paced(latency_us, service_us, u64::from(q.tx), rx);
            } else {
                stats.record(latency_us, u64::from(q.tx), rx);
            }
            if failed {
                stats.errors += 1;
            } else if let Some(sizes) = stats.reply_sizes.as_deref_mut() {
                sizes.record(size, 1);
            }
        }
        self.txn.reset();
    }
}
