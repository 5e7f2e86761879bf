//! Replica visibility for one client: one write in N carries a stamp in its value (a
//! sequence number shared by every client of the process); once the primary acknowledges
//! it, the client polls the key on the other endpoint (its last connection) until that
//! stamp or a later one is there, and records the lag (acknowledgement → seen) in the
//! visibility stats row. Clients write the same keys (one seed by default), so a later
//! write of the key by another client may replace ours before the replica shows it: a
//! later stamp counts as seen, as replication applies the primary's writes in order (two
//! writes of one key racing on the primary within a round trip are the exception).
//! Tracked writes live in a fixed slab (no allocation per write, bounded memory); a
//! write that finds the slab full is counted as untracked, one not seen within the
//! timeout as a timeout.
//!
//! The visibility row's fields: `count` and the latency histogram are the visible
//! writes and their lag; `errors` counts timeouts; `misses` counts untracked writes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::debug_log;
use crate::engine::client::{Client, ClientContext};
use crate::engine::connection::Purpose;
use crate::plan::visibility::STAMP_LEN;
use crate::plan::{Plan, VisibilityProbe};
use crate::protocol::Key;

/// Tracked writes one client may have waiting at once.
const MAX_TRACKED: usize = 256;
/// Pause between two polls of a write not visible yet (the lag's resolution).
const POLL_INTERVAL: Duration = Duration::from_millis(1);

/// The last sequence number stamped, over every client of the process.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// One tracked write.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    key_id: u64,
    seq: u64,
    acked: Instant,
    next_poll: Instant,
    polling: bool,
}

/// One client's visibility state.
pub(super) struct Visibility {
    /// The index of the connection to the other endpoint.
    pub conn: usize,
    /// The stats row of the lag.
    row: usize,
    every: u64,
    timeout: Duration,
    writes: u64,
    slots: Vec<Option<Tracked>>,
    free: Vec<u32>,
    /// The stamped copy of a tracked write's value.
    pub value: Vec<u8>,
}

/// Writes `#SSSSSSSSSSSSSSSS#` (the sequence, 16 hex digits) into `out[..STAMP_LEN]`.
fn write_stamp(out: &mut [u8], seq: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out[0] = b'#';
    for d in 0..16 {
        out[1 + d] = HEX[((seq >> (60 - 4 * d)) & 0xf) as usize];
    }
    out[STAMP_LEN - 1] = b'#';
}

/// The sequence stamped at the start of `value`, if any.
fn read_stamp(value: &[u8]) -> Option<u64> {
    let stamp = value.get(..STAMP_LEN)?;
    if stamp[0] != b'#' || stamp[STAMP_LEN - 1] != b'#' {
        return None;
    }
    let text = std::str::from_utf8(&stamp[1..STAMP_LEN - 1]).ok()?;
    u64::from_str_radix(text, 16).ok()
}

impl Visibility {
    /// The state of client `client`, polling over connection `conn`, recording in `row`.
    pub fn new(probe: &VisibilityProbe, conn: usize, row: usize) -> Visibility {
        Visibility {
            conn,
            row,
            every: probe.every.max(1),
            timeout: probe.timeout,
            writes: 0,
            slots: vec![None; MAX_TRACKED],
            free: (0..MAX_TRACKED as u32).rev().collect(),
            value: Vec::new(),
        }
    }

    /// Called for each write: `Some(seq)` when this one is tracked, its value to be
    /// stamped with [`Visibility::stamp`].
    pub fn next_write(&mut self) -> Option<u64> {
        self.writes += 1;
        if !self.writes.is_multiple_of(self.every) {
            return None;
        }
        Some(SEQUENCE.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// `value` copied into the client's buffer with write `seq`'s stamp at its start.
    pub fn stamp(&mut self, value: &[u8], seq: u64) {
        self.value.clear();
        self.value.extend_from_slice(value);
        if self.value.len() >= STAMP_LEN {
            write_stamp(&mut self.value, seq);
        }
    }

    /// The primary acknowledged tracked write `seq` of key `key_id` at `acked`.
    pub fn acknowledged(&mut self, key_id: u64, seq: u64, acked: Instant, ctx: &mut ClientContext) {
        let Some(slot) = self.free.pop() else {
            if let Some(stats) = ctx.stats.get_mut(self.row) {
                stats.misses += 1;
            }
            return;
        };
        self.slots[slot as usize] = Some(Tracked {
            key_id,
            seq,
            acked,
            next_poll: acked,
            polling: false,
        });
    }

    /// Whether any tracked write is still waiting.
    pub fn is_waiting(&self) -> bool {
        self.free.len() < self.slots.len()
    }

    /// When the next poll is due, if one waits.
    pub fn next_poll(&self) -> Option<Instant> {
        if !self.is_waiting() {
            return None;
        }
        self.slots
            .iter()
            .flatten()
            .filter(|t| !t.polling)
            .map(|t| t.next_poll)
            .min()
    }

    fn release(&mut self, slot: u32) {
        self.slots[slot as usize] = None;
        self.free.push(slot);
    }

    /// The reply `value` to the poll of `slot` came at `received`.
    pub fn answered(
        &mut self,
        slot: u32,
        value: &[u8],
        received: Instant,
        ctx: &mut ClientContext,
    ) {
        let Some(tracked) = self.slots.get(slot as usize).copied().flatten() else {
            return;
        };
        // Writes replicate in order: a later write of the key there means ours landed.
        let seen = read_stamp(value).is_some_and(|seq| seq >= tracked.seq);
        let lag = received.saturating_duration_since(tracked.acked);
        debug_log!(
            2,
            "visibility poll {slot} (write {}): {} after {} us ({})",
            tracked.seq,
            if seen { "seen" } else { "not yet" },
            lag.as_micros(),
            String::from_utf8_lossy(&value[..value.len().min(STAMP_LEN)])
        );
        let measured = tracked.acked >= ctx.measure_from;
        if seen {
            if measured && let Some(stats) = ctx.stats.get_mut(self.row) {
                stats.record(lag.as_micros() as u64, 0, 0);
            }
            self.release(slot);
        } else if lag >= self.timeout {
            if measured && let Some(stats) = ctx.stats.get_mut(self.row) {
                stats.errors += 1;
            }
            self.release(slot);
        } else if let Some(Some(t)) = self.slots.get_mut(slot as usize) {
            t.polling = false;
            t.next_poll = received + POLL_INTERVAL;
        }
    }

    /// The slot of the next write due for a poll at `now`, marked as polling.
    fn take_due(&mut self, now: Instant) -> Option<(u32, u64)> {
        for (slot, entry) in self.slots.iter_mut().enumerate() {
            if let Some(t) = entry
                && !t.polling
                && t.next_poll <= now
            {
                t.polling = true;
                return Some((slot as u32, t.key_id));
            }
        }
        None
    }
}

impl Client {
    /// Sends a poll for every tracked write that is due, over the visibility connection.
    pub(super) fn poll_visibility(&mut self, plan: &Plan) {
        let Some(vis) = self.visibility.as_mut() else {
            return;
        };
        if !vis.is_waiting() || !self.conns[vis.conn].is_ready() {
            return;
        }
        let now = Instant::now();
        while let Some((slot, key_id)) = self.visibility.as_mut().and_then(|v| v.take_due(now)) {
            self.load_key(plan, key_id);
            let Some(conn) = self.visibility.as_ref().map(|v| v.conn) else {
                return;
            };
            let c = &mut self.conns[conn];
            let started = c.begin(now);
            let (codec, out) = c.encoder();
            codec.encode_get(out, Key::from(&self.key_buf), started.opaque);
            c.finish(started, Purpose::Visibility(slot), now, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_read_back() {
        let mut value = vec![b'x'; 40];
        write_stamp(&mut value, 0x12ab_ffff_fffe);
        assert_eq!(&value[..STAMP_LEN], b"#000012abfffffffe#");
        assert_eq!(read_stamp(&value), Some(0x12ab_ffff_fffe));
        assert_eq!(read_stamp(b"xxxxxxxxxxxxxxxxxxxxxxx"), None);
        assert_eq!(read_stamp(b"#short#"), None);
    }
}
