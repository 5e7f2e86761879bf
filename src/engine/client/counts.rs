//! What one reply counts, shared by the plain closed loop and the general record path:
//! its elapsed microseconds and its hits and misses.

use std::time::Instant;

use crate::engine::clock::Stamp;
use crate::engine::in_flight::Request;
use crate::plan::Plan;
use crate::protocol::{Expect, Reply, ReplyKind};
use crate::stats::rows;

/// Microseconds from a request's intended send time to when its reply was read,
/// computed once per send time: the replies to one pipelined batch share both.
pub(super) struct Elapsed {
    /// When the replies were read (the `Instant`, and its nanoseconds for compact
    /// entries).
    received: Stamp,
    /// The send time computed last and its microseconds (at first, `received` itself).
    last: (Instant, u64),
    /// The same for compact entries' send times, in nanoseconds after the epoch.
    last_ns: (u64, u64),
}

impl Elapsed {
    /// Nothing computed yet, for replies read at `received`.
    #[inline]
    pub(super) fn new(received: Stamp) -> Self {
        Elapsed {
            received,
            last: (received.at, 0),
            last_ns: (received.ns, 0),
        }
    }

    /// When the replies were read.
    #[inline(always)]
    pub(super) fn received(&self) -> Instant {
        self.received.at
    }

    /// Microseconds since `sent_ns` (nanoseconds after the in-flight queue's epoch), as
    /// [`since`](Self::since) counts them.
    #[inline(always)]
    pub(super) fn since_ns(&mut self, sent_ns: u64) -> u64 {
        if self.last_ns.0 == sent_ns {
            return self.last_ns.1;
        }
        let us = self.received.ns.saturating_sub(sent_ns) / 1000;
        self.last_ns = (sent_ns, us);
        us
    }

    #[inline(always)]
    pub(super) fn since(&mut self, from: Instant) -> u64 {
        if self.last.0 == from {
            return self.last.1;
        }
        let us = self.received.at.saturating_duration_since(from).as_micros() as u64;
        self.last = (from, us);
        us
    }
}

/// The hits and misses a reply that is not an error counts: reads only (SETs and
/// arbitrary commands count neither).
#[inline(always)]
pub(super) fn hits_and_misses(reply: &Reply, request: &Request, plan: &Plan) -> (u64, u64) {
    let is_get = plan.workload.arbitrary.is_none() && usize::from(request.row) == rows::GET;
    match reply.kind {
        _ if !is_get => (0, 0),
        ReplyKind::Array | ReplyKind::Nil if matches!(request.expect, Expect::MultiGet(_)) => {
            let keys = match request.expect {
                Expect::MultiGet(keys) => keys,
                _ => 1,
            };
            let misses = u64::from(reply.nil_elements.min(keys));
            (u64::from(keys) - misses, misses)
        }
        ReplyKind::Nil => (0, 1),
        // GETRANGE answers an empty string for a missing key.
        ReplyKind::Bulk if plan.load.shape.data_offset > 0 && reply.payload.1 == 0 => (0, 1),
        _ => (1, 0),
    }
}
