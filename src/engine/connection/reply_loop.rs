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
            Stop::Invalid(why) => Err(self.invalid_reply(why)),
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

    /// Whether [`take_plain`](Self::take_plain) may take any reply at all: when it
    /// declines every one (its rows keep reply sizes, say), the run before the general
    /// loop is skipped rather than decoding each reply twice.
    fn takes_plain(&self) -> bool {
        true
    }
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
    mut window: Window,
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
    let (run, stop) = take_run(&mut window, inflight, &mut decode, opaque_of, take);
    if let Some(stop) = stop {
        return (Cursor::default().past_plain(run), stop);
    }
    let mut taken = Cursor::default().past_plain(run);
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

/// The first part of [`drain`]: the run of compact entries at the front of the queue with
/// the replies the plain way takes (nearly every reply of a plain load), walked over the
/// queue's slice ([`InFlight::front_run`]) with the buffer's position in a register.
/// The first entry or reply it does not take (a full entry, an error reply, RESP3 push
/// data, an opaque out of step, a declined reply) it leaves to the general loop after,
/// undecoded as far as the decoder is concerned: a decoder is at rest after a whole
/// reply. Returns how many entries it walked past, and why the drain must stop if it
/// must (the buffer ends in a partial reply, or holds bytes that are not a reply).
#[inline(always)]
fn take_run<D, T>(
    window: &mut Window,
    inflight: &InFlight,
    decode: &mut D,
    opaque_of: Option<OpaqueOf>,
    take: &mut T,
) -> (usize, Option<Stop>)
where
    D: FnMut(&[u8], Expect) -> Decode,
    T: Take,
{
    if !take.takes_plain() {
        return (0, None);
    }
    let buf = window.buf;
    let mut start = *window.start;
    let mut run = 0;
    // The small replies since the last large one: counted once at the end from where
    // the last large one was, rather than a saturating add per reply.
    let mut small_from = None;
    let mut stop = None;
    for entry in inflight.front_run() {
        if start >= buf.len() {
            break;
        }
        let Some(plain) = entry.plain() else {
            break;
        };
        let reply = match decode(&buf[start..], plain.expect()) {
            Decode::Complete(reply) => reply,
            Decode::Incomplete => {
                stop = Some(Stop::Drained);
                break;
            }
            Decode::Invalid(why) => {
                stop = Some(Stop::Invalid(why));
                break;
            }
        };
        if reply.kind == ReplyKind::Push
            || opaque_of.is_some_and(|opaque_of| {
                opaque_of(&buf[start..start + reply.len]) != Some(plain.opaque)
            })
            || !take.take_plain(&plain, &reply)
        {
            break;
        }
        start += reply.len;
        run += 1;
        if reply.len > window.small {
            small_from = Some(run);
        }
    }
    *window.start = start;
    *window.small_replies = match small_from {
        Some(from) => (run - from) as u32,
        None => window.small_replies.saturating_add(run as u32),
    };
    (run, stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::generator::Op;
    use crate::engine::in_flight::{Purpose, Request};
    use crate::engine::in_flight_queue::PlainRequest;
    use crate::protocol::RespDecoder;
    use crate::stats::rows;
    use std::time::Instant;

    /// Takes every reply but errors (as the plain recorder does), noting what it took.
    #[derive(Default)]
    struct Noted {
        plain: Vec<(u32, ReplyKind)>,
        full: Vec<(u32, ReplyKind)>,
    }

    impl Take for Noted {
        fn take(&mut self, pending: &Pending, reply: &Reply) -> bool {
            let took = reply.kind != ReplyKind::Error;
            if took {
                self.full.push((pending.opaque, reply.kind));
            }
            took
        }

        fn take_plain(&mut self, entry: &PlainEntry, reply: &Reply) -> bool {
            let took = reply.kind != ReplyKind::Error;
            if took {
                self.plain.push((entry.opaque, reply.kind));
            }
            took
        }
    }

    fn queue_of(kinds: &str) -> InFlight {
        let mut queue = InFlight::new(4);
        for (opaque, kind) in kinds.chars().enumerate() {
            let opaque = opaque as u32;
            match kind {
                'g' => queue.push_plain(PlainRequest::Get { key_id: 1 }, opaque, 10, 0),
                's' => queue.push_plain(
                    PlainRequest::Set {
                        key_id: 1,
                        value_size: 3,
                    },
                    opaque,
                    10,
                    0,
                ),
                _ => {
                    let request = Request::plain(Op::Get { key_id: 1 }, rows::GET, Expect::Get);
                    let now = Instant::now();
                    queue.push(Pending::new(Purpose::Work(request), opaque, 10, now, now));
                }
            }
        }
        queue
    }

    /// Drains `bytes` against requests `kinds` (g: plain GET, s: plain SET, f: full):
    /// the entries walked, why it stopped, where the next reply starts, what was taken.
    fn drained(kinds: &str, bytes: &[u8]) -> (usize, Stop, usize, Noted) {
        let queue = queue_of(kinds);
        let mut decoder = RespDecoder::new();
        let (mut start, mut small_replies, mut noted) = (0, 0, Noted::default());
        let window = Window {
            buf: bytes,
            start: &mut start,
            small_replies: &mut small_replies,
            small: 1024,
        };
        let (taken, stop) = drain(window, &queue, |b, _| decoder.decode(b), None, &mut noted);
        (taken.taken(), stop, start, noted)
    }

    #[test]
    fn a_run_of_plain_replies_is_taken_whole() {
        let bytes = b"$-1\r\n+OK\r\n$3\r\nabc\r\n";
        let (taken, stop, start, noted) = drained("gsg", bytes);
        assert_eq!((taken, start), (3, bytes.len()));
        assert!(matches!(stop, Stop::Drained));
        let kinds = [ReplyKind::Nil, ReplyKind::Simple, ReplyKind::Bulk];
        assert_eq!(
            noted.plain,
            vec![(0, kinds[0]), (1, kinds[1]), (2, kinds[2])]
        );
    }

    #[test]
    fn a_partial_reply_ends_the_run_where_it_starts() {
        let (taken, stop, start, noted) = drained("ggg", b"$-1\r\n$-1\r\n$3\r\nab");
        assert_eq!((taken, start, noted.plain.len()), (2, 10, 2));
        assert!(matches!(stop, Stop::Drained));
    }

    #[test]
    fn an_error_reply_mid_run_is_declined_at_its_offset() {
        let (taken, stop, start, noted) = drained("gsg", b"$-1\r\n-ERR no\r\n$-1\r\n");
        // The declined reply is passed over (the caller keeps it from its offset).
        assert_eq!((taken, start, noted.plain.len()), (1, 14, 1));
        let Stop::Declined(reply, at) = stop else {
            panic!("not declined");
        };
        assert_eq!((reply.kind, at), (ReplyKind::Error, 5));
    }

    #[test]
    fn push_data_and_full_entries_go_on_after_the_run() {
        // RESP3 push data answers no request; the full entry's reply is taken the
        // general way, and the plain one after it too.
        let bytes = b"$-1\r\n>2\r\n+a\r\n+b\r\n+OK\r\n$-1\r\n";
        let (taken, stop, start, noted) = drained("gfg", bytes);
        assert_eq!((taken, start), (3, bytes.len()));
        assert!(matches!(stop, Stop::Drained));
        assert_eq!(noted.plain, vec![(0, ReplyKind::Nil), (2, ReplyKind::Nil)]);
        assert_eq!(noted.full, vec![(1, ReplyKind::Simple)]);
    }

    /// Declines every compact entry's reply and says so up front.
    struct FullOnly(Noted);

    impl Take for FullOnly {
        fn take(&mut self, pending: &Pending, reply: &Reply) -> bool {
            self.0.take(pending, reply)
        }

        fn take_plain(&mut self, _: &PlainEntry, _: &Reply) -> bool {
            false
        }

        fn takes_plain(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_taker_of_no_plain_reply_skips_the_run() {
        let queue = queue_of("gg");
        let mut decoder = RespDecoder::new();
        let (mut start, mut small_replies) = (0, 0);
        let window = Window {
            buf: b"$-1\r\n$-1\r\n",
            start: &mut start,
            small_replies: &mut small_replies,
            small: 1024,
        };
        let mut decodes = 0;
        let decode = |b: &[u8], _| {
            decodes += 1;
            decoder.decode(b)
        };
        let (taken, stop) = drain(
            window,
            &queue,
            decode,
            None,
            &mut FullOnly(Noted::default()),
        );
        // The general loop declines the first reply, decoded once.
        assert_eq!((taken.taken(), start, decodes), (0, 5, 1));
        assert!(matches!(stop, Stop::Declined(..)));
    }

    #[test]
    fn bytes_that_are_no_reply_stop_the_drain() {
        let (taken, stop, _, _) = drained("gg", b"$-1\r\n?what\r\n");
        assert_eq!(taken, 1);
        assert!(matches!(stop, Stop::Invalid(_)));
    }

    /// The small-reply count after draining `bytes` against plain GETs, from `before`,
    /// with replies over `small` bytes counted as large.
    fn small_replies_after(bytes: &[u8], small: usize, before: u32) -> u32 {
        let queue = queue_of("gggg");
        let mut decoder = RespDecoder::new();
        let (mut start, mut small_replies) = (0, before);
        let window = Window {
            buf: bytes,
            start: &mut start,
            small_replies: &mut small_replies,
            small,
        };
        let decode = |b: &[u8], _| decoder.decode(b);
        drain(window, &queue, decode, None, &mut Noted::default());
        small_replies
    }

    #[test]
    fn small_replies_are_counted_across_the_run_and_reset_by_a_large_one() {
        let bytes = b"$-1\r\n$6\r\nabcdef\r\n$-1\r\n$-1\r\n";
        // The 12-byte reply is past `small`: only the two after it count.
        assert_eq!(small_replies_after(bytes, 8, 7), 2);
        assert_eq!(small_replies_after(&bytes[..5], 8, 7), 8);
    }
}
