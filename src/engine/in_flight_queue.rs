//! A connection's queue of requests in flight, in the order their replies will come.
//!
//! Most requests are the plain closed loop's SETs and GETs: the queue keeps those as
//! 32-byte entries (two to a cache line) and every other request as a full [`Pending`]
//! in a second queue beside, which an entry of kind [`Kind::Full`] stands for. Each
//! reply reads its request back after the other connections of the worker have had
//! their turn, by which time the entry has usually left the first-level cache: with
//! 80-byte entries that cost one and a quarter cache misses per reply at pipeline 16
//! and 50 connections (callgrind's cache model), more than anything else a reply did.
//!
//! A compact entry keeps what its full form would say (the key, the value size, the
//! times), so a reply the plain path declines (an error reply) reads the same request
//! back as it was sent.

use std::collections::VecDeque;
use std::time::Duration;

use crate::engine::clock::epoch;
use crate::engine::generator::Op;
use crate::engine::in_flight::{Pending, Purpose, Request};
use crate::engine::prefetch::{IN_FLIGHT_LINES, prefetch_slice};
use crate::protocol::Expect;
use crate::stats::rows;

/// What a compact entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// A plain GET of `key_id`.
    Get,
    /// A plain SET of `key_id` with a value of `value_size` bytes and no expiry.
    Set,
    /// The plan's request template.
    Template,
    /// Any other request: the next full entry of the queue beside.
    Full,
}

/// A plain request, as the plain closed loop sends it: counted in its command's row, sent
/// when it was intended, for the first time, outside MULTI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlainRequest {
    Get { key_id: u64 },
    Set { key_id: u64, value_size: u32 },
    Template,
}

impl PlainRequest {
    /// The plain request `op` is, if it is one a compact entry can keep (a SET with an
    /// expiry, or a value size past u32, is not).
    #[inline(always)]
    pub fn of(op: Op) -> Option<PlainRequest> {
        match op {
            Op::Get { key_id } => Some(PlainRequest::Get { key_id }),
            Op::Set {
                key_id,
                value_size,
                expiry_secs: 0,
            } => u32::try_from(value_size)
                .ok()
                .map(|value_size| PlainRequest::Set { key_id, value_size }),
            Op::Template => Some(PlainRequest::Template),
            _ => None,
        }
    }
}

/// One request in flight: a plain request whole, or a stand-in for a full entry.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// When it was sent (and intended to be), nanoseconds after the epoch.
    sent_ns: u64,
    key_id: u64,
    value_size: u32,
    /// Bytes it took on the wire.
    tx: u32,
    /// The sequence number a memcache binary reply echoes.
    opaque: u32,
    kind: Kind,
}

impl Entry {
    /// What recording this entry's reply needs, if it is a compact entry (not a
    /// stand-in for a full one).
    #[inline(always)]
    pub fn plain(&self) -> Option<PlainEntry> {
        if self.kind == Kind::Full {
            return None;
        }
        // A comparison, not a match: the match was a jump per reply.
        let row = if self.kind == Kind::Get {
            rows::GET
        } else {
            rows::SET
        };
        Some(PlainEntry {
            sent_ns: self.sent_ns,
            tx: self.tx,
            opaque: self.opaque,
            row: row as u8,
        })
    }
}

/// A compact entry lent to the reply loop: what recording its reply needs.
#[derive(Clone, Copy, Debug)]
pub struct PlainEntry {
    /// When it was sent, nanoseconds after the epoch (see [`nanos_since_epoch`](crate::engine::clock::nanos_since_epoch)).
    pub sent_ns: u64,
    /// Bytes it took on the wire.
    pub tx: u32,
    /// The sequence number a memcache binary reply echoes.
    pub opaque: u32,
    /// Its stats row.
    pub row: u8,
}

impl PlainEntry {
    /// What the decoder reads for its reply: a one-key read's, or a store's.
    #[inline(always)]
    pub fn expect(&self) -> Expect {
        if usize::from(self.row) == rows::GET {
            Expect::Get
        } else {
            Expect::Store
        }
    }
}

/// A request in flight lent to the reply loop.
#[derive(Clone, Copy, Debug)]
pub enum Lent<'a> {
    /// A plain request (its reply is a one-key read's or a store's).
    Plain(PlainEntry),
    Full(&'a Pending),
}

impl Lent<'_> {
    /// What the decoder reads for this request's reply.
    #[inline(always)]
    pub fn expect(&self) -> Expect {
        match self {
            Lent::Plain(entry) => entry.expect(),
            Lent::Full(pending) => pending.purpose.expect(),
        }
    }

    /// The sequence number a memcache binary reply to it echoes.
    #[inline(always)]
    pub fn opaque(&self) -> u32 {
        match self {
            Lent::Plain(entry) => entry.opaque,
            Lent::Full(pending) => pending.opaque,
        }
    }
}

/// A position in the queue, for the reply loop's walk from the front: the entry, and the
/// full entry the next stand-in is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    entry: usize,
    full: usize,
}

impl Cursor {
    /// Entries walked past.
    pub fn taken(&self) -> usize {
        self.entry
    }

    /// The cursor moved past `n` compact entries.
    #[inline(always)]
    pub fn past_plain(self, n: usize) -> Cursor {
        Cursor {
            entry: self.entry + n,
            full: self.full,
        }
    }

    /// The cursor moved past the request `lent` at it.
    #[inline(always)]
    pub fn past(self, lent: &Lent) -> Cursor {
        Cursor {
            entry: self.entry + 1,
            full: self.full + usize::from(matches!(lent, Lent::Full(_))),
        }
    }
}

/// The queue: compact entries, and the full entries their stand-ins are for.
///
/// The compact entries are a `Vec` read from `head`: a push is the `Vec`'s push, and
/// the answered requests leave by moving `head` (the buffer is emptied when they all have
/// and moved down when the answered ones are half of it), where a ring's push and drain
/// each worked out where its ends wrapped.
#[derive(Debug)]
pub struct InFlight {
    entries: Vec<Entry>,
    /// The oldest request in flight: `entries[..head]` are answered.
    head: usize,
    full: VecDeque<Pending>,
}

impl InFlight {
    /// An empty queue with room for `capacity` entries.
    pub fn new(capacity: usize) -> InFlight {
        epoch();
        InFlight {
            entries: Vec::with_capacity(capacity),
            head: 0,
            full: VecDeque::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len() - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.head == self.entries.len()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.head = 0;
        self.full.clear();
    }

    /// The requests in flight, oldest first.
    #[inline(always)]
    fn live(&self) -> &[Entry] {
        &self.entries[self.head..]
    }

    /// Queues any request, kept whole.
    pub fn push(&mut self, pending: Pending) {
        self.full.push_back(pending);
        self.entries.push(Entry {
            sent_ns: 0,
            key_id: 0,
            value_size: 0,
            tx: 0,
            opaque: pending.opaque,
            kind: Kind::Full,
        });
    }

    /// Queues a plain request sent (as intended) at `sent_ns` after the epoch.
    #[inline(always)]
    pub fn push_plain(&mut self, request: PlainRequest, opaque: u32, tx: u32, sent_ns: u64) {
        let (kind, key_id, value_size) = match request {
            PlainRequest::Get { key_id } => (Kind::Get, key_id, 0),
            PlainRequest::Set { key_id, value_size } => (Kind::Set, key_id, value_size),
            PlainRequest::Template => (Kind::Template, 0, 0),
        };
        self.entries.push(Entry {
            sent_ns,
            key_id,
            value_size,
            tx,
            opaque,
            kind,
        });
    }

    /// Asks the processor for the entries of the oldest requests (see
    /// [`prefetch`](crate::engine::prefetch)): the replies about to be read are theirs.
    #[inline(always)]
    pub fn prefetch_oldest(&self) {
        prefetch_slice(self.live(), IN_FLIGHT_LINES);
    }

    /// The oldest request's opaque (what a memcache binary reply to it echoes).
    #[inline(always)]
    pub fn front_opaque(&self) -> Option<u32> {
        self.live().first().map(|entry| entry.opaque)
    }

    /// What the decoder reads for the oldest request's reply.
    pub fn front_expect(&self) -> Option<Expect> {
        self.lend(Cursor::default()).map(|lent| lent.expect())
    }

    /// The oldest request, whole.
    pub fn front(&self) -> Option<Pending> {
        let entry = self.live().first()?;
        Some(self.whole(entry, self.full.front()))
    }

    /// Takes the oldest request off the queue, whole.
    pub fn pop_front(&mut self) -> Option<Pending> {
        let entry = *self.live().first()?;
        self.drop_entries(1);
        let full = match entry.kind {
            Kind::Full => self.full.pop_front(),
            _ => None,
        };
        Some(self.whole(&entry, full.as_ref()))
    }

    /// Takes the oldest request off the queue, unread (a caller that has read it with
    /// [`front`](Self::front) already).
    pub fn discard_front(&mut self) {
        let Some(&entry) = self.live().first() else {
            return;
        };
        self.drop_entries(1);
        if entry.kind == Kind::Full {
            self.full.pop_front();
        }
    }

    /// Every request in flight, oldest first, whole.
    pub fn iter(&self) -> impl Iterator<Item = Pending> + '_ {
        let mut fulls = self.full.iter();
        self.live().iter().map(move |entry| match entry.kind {
            Kind::Full => *fulls.next().expect("a stand-in has its full entry"),
            _ => self.whole(entry, None),
        })
    }

    /// The request at `cursor`, lent.
    #[inline(always)]
    pub fn lend(&self, cursor: Cursor) -> Option<Lent<'_>> {
        debug_assert!(self.full.len() <= self.len());
        let entry = self.live().get(cursor.entry)?;
        match entry.plain() {
            Some(plain) => Some(Lent::Plain(plain)),
            None => self.full.get(cursor.full).map(Lent::Full),
        }
    }

    /// The entries in flight, oldest first: the reply loop walks a run of compact
    /// entries over this slice rather than by [`lend`](Self::lend), an index per entry.
    #[inline(always)]
    pub fn front_run(&self) -> &[Entry] {
        self.live()
    }

    /// Removes the requests before `cursor`.
    #[inline(always)]
    pub fn drop_before(&mut self, cursor: Cursor) {
        self.drop_entries(cursor.entry);
        if cursor.full > 0 {
            self.full.drain(..cursor.full);
        }
    }

    /// Removes the `n` oldest compact entries (stand-ins included; their full entries
    /// are the caller's to remove).
    #[inline(always)]
    fn drop_entries(&mut self, n: usize) {
        debug_assert!(n <= self.len());
        self.head += n;
        if self.head == self.entries.len() {
            // All answered (at pipeline 16 against Redis, nearly every read).
            self.entries.clear();
            self.head = 0;
        } else if self.head * 2 >= self.entries.capacity() {
            // A queue that never empties (a pipeline refilled per reply): the answered
            // half goes, before a push would have grown the buffer.
            self.compact();
        }
    }

    /// Moves the requests in flight to the start of the buffer.
    #[cold]
    fn compact(&mut self) {
        self.entries.drain(..self.head);
        self.head = 0;
    }

    /// The full form of `entry` (`full`: the full entry a stand-in is for).
    fn whole(&self, entry: &Entry, full: Option<&Pending>) -> Pending {
        let (op, row, expect) = match entry.kind {
            Kind::Get => (
                Op::Get {
                    key_id: entry.key_id,
                },
                rows::GET,
                Expect::Get,
            ),
            Kind::Set => (
                Op::Set {
                    key_id: entry.key_id,
                    value_size: entry.value_size as usize,
                    expiry_secs: 0,
                },
                rows::SET,
                Expect::Store,
            ),
            Kind::Template => (Op::Template, rows::SET, Expect::Store),
            Kind::Full => return *full.expect("a stand-in has its full entry"),
        };
        let at = epoch() + Duration::from_nanos(entry.sent_ns);
        let request = Request::plain(op, row, expect);
        Pending::sent_as_intended(Purpose::Work(request), entry.opaque, entry.tx, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::nanos_since_epoch;
    use crate::engine::in_flight::Redirects;
    use std::time::Instant;

    fn work(op: Op) -> Pending {
        let request = Request::plain(op, rows::GET, Expect::Get);
        Pending::new(
            Purpose::Work(request),
            7,
            30,
            Instant::now(),
            Instant::now(),
        )
    }

    #[test]
    fn entries_stay_two_to_a_cache_line() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }

    #[test]
    fn plain_requests_read_back_as_sent() {
        let mut queue = InFlight::new(4);
        let sent = Instant::now();
        let sent_ns = nanos_since_epoch(sent);
        let get = Op::Get { key_id: 42 };
        let set = Op::Set {
            key_id: 9_999_999,
            value_size: 100_000,
            expiry_secs: 0,
        };
        for (i, op) in [get, set, Op::Template].into_iter().enumerate() {
            let request = PlainRequest::of(op).expect("plain");
            queue.push_plain(request, i as u32, 30 + i as u32, sent_ns);
        }
        assert_eq!(queue.len(), 3);
        let expected = [
            (get, rows::GET, Expect::Get),
            (set, rows::SET, Expect::Store),
            (Op::Template, rows::SET, Expect::Store),
        ];
        for (i, (op, row, expect)) in expected.into_iter().enumerate() {
            assert_eq!(queue.front_opaque(), Some(i as u32));
            assert_eq!(queue.front_expect(), Some(expect));
            let pending = queue.pop_front().expect("queued");
            let Purpose::Work(request) = pending.purpose else {
                panic!("not a workload request: {pending:?}");
            };
            assert_eq!(request.op, op);
            assert_eq!(usize::from(request.row), row);
            assert_eq!(request.expect, expect);
            assert_eq!(request.redirects, Redirects::None);
            assert!(!request.queued && !request.scan && request.stamp.is_none());
            assert_eq!(pending.tx, 30 + i as u32);
            assert_eq!(pending.intended, sent);
            assert_eq!(pending.sent(), sent);
        }
        assert!(queue.pop_front().is_none());
    }

    #[test]
    fn requests_a_compact_entry_cannot_keep_are_not_plain() {
        let with_expiry = Op::Set {
            key_id: 1,
            value_size: 10,
            expiry_secs: 5,
        };
        assert_eq!(PlainRequest::of(with_expiry), None);
        assert_eq!(PlainRequest::of(Op::Probe), None);
        assert_eq!(PlainRequest::of(Op::Verify { index: 3 }), None);
        if usize::BITS > 32 {
            let huge = Op::Set {
                key_id: 1,
                value_size: u32::MAX as usize + 1,
                expiry_secs: 0,
            };
            assert_eq!(PlainRequest::of(huge), None);
        }
    }

    #[test]
    fn a_queue_refilled_as_it_is_answered_keeps_its_order_in_bounded_room() {
        // A pipeline of 16 refilled per read, never empty: answered requests leave from
        // the front while new ones join at the back, thousands of times.
        let mut queue = InFlight::new(16);
        let (mut next, mut oldest) = (0u32, 0u32);
        for _ in 0..16 {
            queue.push_plain(PlainRequest::Get { key_id: 0 }, next, 10, 0);
            next += 1;
        }
        for round in 0..5000 {
            let answered = 1 + round % 7;
            for _ in 0..answered {
                assert_eq!(queue.front_opaque(), Some(oldest));
                oldest += 1;
                queue.discard_front();
            }
            for _ in 0..answered {
                queue.push_plain(PlainRequest::Get { key_id: 0 }, next, 10, 0);
                next += 1;
            }
            assert_eq!(queue.len(), 16);
            let walked: Vec<u32> = queue.front_run().iter().map(|e| e.opaque).collect();
            assert_eq!(walked, (oldest..next).collect::<Vec<_>>());
        }
        assert!(
            queue.entries.capacity() <= 64,
            "{}",
            queue.entries.capacity()
        );
        let mut cursor = Cursor::default();
        while let Some(lent) = queue.lend(cursor) {
            cursor = cursor.past(&lent);
        }
        queue.drop_before(cursor);
        assert!(queue.is_empty() && queue.front().is_none());
    }

    #[test]
    fn full_and_compact_entries_keep_their_order() {
        let mut queue = InFlight::new(2);
        let sent_ns = nanos_since_epoch(Instant::now());
        let full = [work(Op::Probe), work(Op::Verify { index: 5 })];
        queue.push_plain(PlainRequest::Get { key_id: 1 }, 0, 10, sent_ns);
        queue.push(full[0]);
        queue.push_plain(PlainRequest::Get { key_id: 2 }, 2, 10, sent_ns);
        queue.push(full[1]);
        // The reply loop's walk lends each in turn.
        let mut cursor = Cursor::default();
        let mut kinds = Vec::new();
        while let Some(lent) = queue.lend(cursor) {
            kinds.push(match lent {
                Lent::Plain(entry) => format!("plain {}", entry.row),
                Lent::Full(pending) => format!("full {}", lent.opaque() + pending.tx - 30),
            });
            cursor = cursor.past(&lent);
        }
        assert_eq!(kinds, ["plain 1", "full 7", "plain 1", "full 7"]);
        let ops: Vec<Op> = queue
            .iter()
            .map(|p| match p.purpose {
                Purpose::Work(r) => r.op,
                _ => Op::Probe,
            })
            .collect();
        assert_eq!(
            ops,
            [
                Op::Get { key_id: 1 },
                Op::Probe,
                Op::Get { key_id: 2 },
                Op::Verify { index: 5 }
            ]
        );
        // Dropping the first two leaves the second plain GET and the second full entry.
        let mut cursor = Cursor::default();
        for _ in 0..2 {
            let lent = queue.lend(cursor).expect("queued");
            cursor = cursor.past(&lent);
        }
        assert_eq!(cursor.taken(), 2);
        queue.drop_before(cursor);
        assert_eq!(queue.len(), 2);
        assert!(matches!(
            queue.pop_front().map(|p| p.purpose),
            Some(Purpose::Work(r)) if r.op == Op::Get { key_id: 2 }
        ));
        assert!(matches!(
            queue.pop_front().map(|p| p.purpose),
            Some(Purpose::Work(r)) if r.op == Op::Verify { index: 5 }
        ));
        assert!(queue.is_empty());
        queue.push(full[0]);
        queue.push_plain(PlainRequest::Template, 9, 10, sent_ns);
        queue.discard_front();
        assert_eq!(queue.front_opaque(), Some(9));
        assert!(queue.iter().all(|p| p.opaque == 9));
        queue.push(full[1]);
        queue.clear();
        assert!(queue.is_empty() && queue.pop_front().is_none());
    }
}
