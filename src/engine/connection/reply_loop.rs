//! The plain path's reply loop: the complete replies at the front of a connection's read
//! buffer matched in turn with the requests in flight, by one protocol's decoder chosen
//! once per batch (the loop is compiled once per decoder, with no protocol `match` per
//! reply), the requests read where they wait in the queue rather than copied out of it.
//! Anything the loop does not handle (set-up replies, a reply with nothing in flight)
//! it leaves for [`Connection`](crate::engine::connection::Connection)'s general decoding.

use crate::engine::connection::{Connection, Failure};
use crate::engine::in_flight::Pending;
use crate::engine::in_flight_queue::{Cursor, InFlight, Lent, PlainEntry};
use crate::plan::Plan;
use crate::protocol::{
    Codec, Decode, Expect, Reply, ReplyKind, binary_expect, memcache_binary, text_expect,
};

impl Connection {
    /// [`drain_answers`](Self::drain_answers) for the plain path: the same contract, the
    /// replies decoded by the loop below made for this connection's protocol; set-up
    /// replies and anything unusual go the general way.
    pub fn drain_plain(&mut self, plan: &Plan, take: &mut impl Take) -> Result<bool, Failure> {
        if !self.setup.is_empty() {
            return self.drain_answers(plan, |pending, reply| take.take(pending, reply));
        }
        let window = Window {
            buf: &self.rbuf[..self.rend],
            start: &mut self.rstart,
            small_replies: &mut self.small_replies,
            small: self.read_size / 2,
        };
        let inflight = &self.inflight;
        let (taken, stop) = match &mut self.codec {
            Codec::Resp(decoder) => drain(window, inflight, |b, _| decoder.decode(b), None, take),
            Codec::MemcacheText(decoder) => drain(
                window,
                inflight,
                |b, e| decoder.decode(b, text_expect(e)),
                None,
                take,
            ),
            Codec::MemcacheBinary(decoder) => drain(
                window,
                inflight,
                |b, e| decoder.decode(b, binary_expect(e)),
                Some(memcache_binary::opaque_of),
                take,
            ),
        };
        self.inflight.drop_before(taken);
        match stop {
            Stop::Drained => {
                if self.rstart == self.rend {
                    self.rstart = 0;
                    self.rend = 0;
                    self.shrink_read_buffer();
                }
                Ok(false)
            }
            Stop::Declined(reply, start) => {
                self.keep_answer(reply, start);
                Ok(true)
            }
            Stop::General => self.drain_answers(plan, |pending, reply| take.take(pending, reply)),
            Stop::Invalid(why) => Err(Failure::Broken(format!(
                "invalid reply from {}: {why}",
                self.peer
            ))),
            Stop::OutOfStep(opaque, expected) => Err(Failure::Broken(format!(
                "invalid reply from {}: answers request {opaque}, expected {expected}",
                self.peer
            ))),
        }
    }
}

/// What takes each reply with its request: records it and says so, or declines it
/// (nothing recorded) for the general path.
pub trait Take {
    fn take(&mut self, pending: &Pending, reply: &Reply) -> bool;

    /// [`take`](Self::take) for a plain request kept compact in the queue.
    fn take_plain(&mut self, entry: &PlainEntry, reply: &Reply) -> bool;
}

/// Reads the opaque a reply echoes (memcache binary).
type OpaqueOf = fn(&[u8]) -> Option<u32>;

/// Why the loop stopped.
enum Stop {
    /// The buffer holds no more complete reply.
    Drained,
    /// `take` declined this reply (it started at this offset of the buffer): the caller
    /// keeps it, with the request after the `taken` ones, for the general path.
    Declined(Reply, usize),
    /// Bytes are left that the general decoding must look at (no request in flight).
    General,
    /// The reply cannot be decoded: the connection cannot go on.
    Invalid(&'static str),
    /// A memcache binary reply echoed this opaque where the request in flight had that.
    OutOfStep(u32, u32),
}

/// What the loop moves through: the read buffer's filled part and where the next reply
/// starts in it, and the count of small replies (see the connection's read buffer).
struct Window<'a> {
    buf: &'a [u8],
    start: &'a mut usize,
    small_replies: &'a mut u32,
    /// Replies larger than this reset `small_replies`.
    small: usize,
}

/// Decodes replies with `decode` from `window` against the requests of `inflight` in
/// order, handing each with its request to `take` until it declines one, the buffer runs
/// out or something needs the general path. Returns where the answered requests end
/// (the caller removes them from the front of the queue) and why it stopped.
/// `opaque_of` reads the opaque a reply echoes, for a protocol whose replies do.
#[inline(always)]
fn drain<D, T>(
    window: Window,
    inflight: &InFlight,
    mut decode: D,
    opaque_of: Option<OpaqueOf>,
    take: &mut T,
) -> (Cursor, Stop)
where
    D: FnMut(&[u8], Expect) -> Decode,
    T: Take,
{
    let buf = window.buf;
    let mut taken = Cursor::default();
    while *window.start < buf.len() {
        let Some(lent) = inflight.lend(taken) else {
            return (taken, Stop::General);
        };
        let start = *window.start;
        let reply = match decode(&buf[start..], lent.expect()) {
            Decode::Incomplete => break,
            Decode::Invalid(why) => return (taken, Stop::Invalid(why)),
            Decode::Complete(reply) => reply,
        };
        *window.start = start + reply.len;
        if reply.len > window.small {
            *window.small_replies = 0;
        } else {
            *window.small_replies = window.small_replies.saturating_add(1);
        }
        if reply.kind == ReplyKind::Push {
            // RESP3 out-of-band data (e.g. invalidations) answers no request.
            continue;
        }
        if let Some(opaque_of) = opaque_of
            && let Some(opaque) = opaque_of(&buf[start..start + reply.len])
            && opaque != lent.opaque()
        {
            return (taken, Stop::OutOfStep(opaque, lent.opaque()));
        }
        let took = match lent {
            Lent::Plain(entry) => take.take_plain(&entry, &reply),
            Lent::Full(pending) => take.take(pending, &reply),
        };
        if !took {
            return (taken, Stop::Declined(reply, start));
        }
        taken = taken.past(&lent);
    }
    (taken, Stop::Drained)
}
