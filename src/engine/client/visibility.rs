//! Replica visibility for one client: while the probe is on, every write's value starts
//! with a stamp (a sequence number shared by every client of the process), and one write
//! in N is tracked: once the primary acknowledges it, the client polls the key on the
//! other endpoint until the write is there, and records the lag (acknowledgement → seen)
//! in the visibility stats row.
//!
//! When is a tracked write `s` there? Writes of one key from several clients race, and a
//! stamp's order (taken when a request is built) need not be the primary's order of
//! applying them; replication keeps the primary's order. So, for the stamp `x` the other
//! endpoint shows, with `h` the last stamp taken when `s` was acknowledged:
//!
//! ```text
//! x == s          seen
//! x > h           seen: x was taken after s was applied, so was applied after it
//! other x         undecided (applied before or after s): GET the key on the primary;
//!                 if it still holds x, x is the key's last write and came after s:
//!                 seen (at the poll that showed x); otherwise poll again
//! no stamp        not yet (the key is not there)
//! ```
//!
//! Nothing is taken as seen that was not, and a racing write can no longer leave a
//! tracked write looking never seen. Tracked writes live in a fixed slab (no allocation
//! per write, bounded memory); a write that finds the slab full is counted as untracked,
//! one not seen within the timeout as a timeout. A poll whose connection dropped (or
//! whose endpoint stopped answering) is given up a second after the timeout (a timeout).
//! Polls start 1 ms apart and space out as the lag grows (a sixteenth of it, at most
//! 100 ms apart), so a lagging replica is not flooded.
//!
//! The visibility row's fields: `count` and the latency histogram are the visible
//! writes and their lag; `errors` counts timeouts; `misses` counts untracked writes.

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::debug_log;
use crate::engine::client::{Client, ClientContext};
use crate::engine::in_flight::Purpose;
use crate::plan::visibility::STAMP_LEN;
use crate::plan::{Plan, VisibilityProbe};
use crate::protocol::Key;

/// Tracked writes one client may have waiting at once.
const MAX_TRACKED: usize = 256;
/// Pause between two polls of a write not visible yet, at first (the lag's resolution
/// while it is short).
const POLL_INTERVAL: Duration = Duration::from_millis(1);
/// The pause grows with the lag so far, as a fraction 1/`POLL_BACKOFF_DIVISOR` of it: a
/// replica that lags seconds behind is not asked a thousand times a second per tracked
/// write, and a lag is still known to within about 6 % of itself.
const POLL_BACKOFF_DIVISOR: u32 = 16;
/// The pause never grows past this.
const MAX_POLL_INTERVAL: Duration = Duration::from_millis(100);

/// The pause before the next poll of a write acknowledged `lag` ago and not seen yet.
fn poll_interval(lag: Duration) -> Duration {
    (lag / POLL_BACKOFF_DIVISOR).clamp(POLL_INTERVAL, MAX_POLL_INTERVAL)
}
/// A poll unanswered this long past the timeout was lost with its connection.
const LOST_AFTER: Duration = Duration::from_secs(1);
/// The connection to the primary: visibility goes with one server only (no cluster, no
/// pool), so the workload's first connection.
const PRIMARY_CONN: usize = 0;

/// A poll's token in [`Purpose::Visibility`]: the slot (8 bits), whether it asks the
/// primary (1 bit), and the slot's generation (the rest), so the late answer of a poll
/// given up is not taken for the next write in that slot.
const SLOT_BITS: u32 = 8;
const PRIMARY_BIT: u32 = 1 << SLOT_BITS;
const GENERATION_SHIFT: u32 = SLOT_BITS + 1;

/// The last sequence number stamped, over every client of the process.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Where a tracked write's polling stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A poll of the other endpoint is due at `next_poll`.
    Waiting,
    /// A poll of the other endpoint is in flight.
    Polling,
    /// The other endpoint showed the undecided stamp `shown` at `at`: ask the primary.
    CheckDue { shown: u64, at: Instant },
    /// The primary is being asked whether it still holds `shown`.
    Checking { shown: u64, at: Instant },
}

/// One tracked write.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    key_id: u64,
    seq: u64,
    /// The last stamp taken when the write was acknowledged.
    horizon: u64,
    acked: Instant,
    next_poll: Instant,
    phase: Phase,
}

impl Tracked {
    /// When a poll in flight is taken as lost.
    fn lost_at(&self, timeout: Duration) -> Instant {
        self.acked + timeout + LOST_AFTER
    }
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
    generations: Vec<u32>,
    free: Vec<u32>,
    /// The stamped copy of the last write's value.
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

/// What the other endpoint's stamp says of tracked write `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shown {
    Seen,
    /// A write that may have come before or after `t` on the primary.
    Undecided(u64),
    NotYet,
}

fn judge(t: &Tracked, stamp: Option<u64>) -> Shown {
    match stamp {
        Some(x) if x == t.seq || x > t.horizon => Shown::Seen,
        Some(x) => Shown::Undecided(x),
        None => Shown::NotYet,
    }
}

/// The next poll to send: the slot's token, its key, and whether it goes to the primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Due {
    token: u32,
    key_id: u64,
    primary: bool,
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
            generations: vec![0; MAX_TRACKED],
            free: (0..MAX_TRACKED as u32).rev().collect(),
            value: Vec::new(),
        }
    }

    /// Called for each write with its `value`: copies it into [`Visibility::value`] with
    /// a fresh stamp at its start (every write is stamped, so that whatever write of a key
    /// the other endpoint shows can be placed), and returns `Some(seq)` when this write
    /// is tracked.
    pub fn stamp_next(&mut self, value: &[u8]) -> Option<NonZeroU64> {
        self.writes += 1;
        let seq = SEQUENCE.fetch_add(1, Ordering::SeqCst) + 1;
        self.value.clear();
        self.value.extend_from_slice(value);
        if self.value.len() >= STAMP_LEN {
            write_stamp(&mut self.value, seq);
        }
        // `seq` counts from 1, so it is never zero.
        NonZeroU64::new(seq).filter(|_| self.writes.is_multiple_of(self.every))
    }

    /// The primary acknowledged tracked write `seq` of key `key_id` at `acked`.
    pub fn acknowledged(&mut self, key_id: u64, seq: u64, acked: Instant, ctx: &mut ClientContext) {
        // Read after the acknowledgement: any later stamp is a write sent after ours was
        // applied.
        let horizon = SEQUENCE.load(Ordering::SeqCst);
        let Some(slot) = self.free.pop() else {
            if let Some(stats) = ctx.stats.get_mut(self.row) {
                stats.misses += 1;
            }
            return;
        };
        self.slots[slot as usize] = Some(Tracked {
            key_id,
            seq,
            horizon,
            acked,
            next_poll: acked,
            phase: Phase::Waiting,
        });
    }

    /// Whether any tracked write is still waiting.
    pub fn is_waiting(&self) -> bool {
        self.free.len() < self.slots.len()
    }

    /// Gives up every tracked write still waiting (a timeout each): the worker's wait
    /// after the load ran out.
    fn give_up(&mut self, ctx: &mut ClientContext) {
        for slot in 0..self.slots.len() as u32 {
            if let Some(t) = self.slots[slot as usize] {
                self.settle(slot, &t, None, ctx);
            }
        }
    }

    /// When the next poll (or the giving up of a lost one) is due, if one waits. While
    /// the other endpoint is not ready (connecting, or down and reconnecting) no poll can
    /// go out: a waiting write is next looked at when its timeout is up.
    pub fn next_poll(&self, replica_ready: bool) -> Option<Instant> {
        if !self.is_waiting() {
            return None;
        }
        self.slots
            .iter()
            .flatten()
            .map(|t| match t.phase {
                Phase::Waiting if replica_ready => t.next_poll,
                Phase::Waiting => t.acked + self.timeout,
                Phase::CheckDue { at, .. } => at,
                Phase::Polling | Phase::Checking { .. } => t.lost_at(self.timeout),
            })
            .min()
    }

    fn release(&mut self, slot: u32) {
        self.slots[slot as usize] = None;
        let generation = &mut self.generations[slot as usize];
        *generation = generation.wrapping_add(1) & (u32::MAX >> GENERATION_SHIFT);
        self.free.push(slot);
    }

    fn token(&self, slot: u32, primary: bool) -> u32 {
        (self.generations[slot as usize] << GENERATION_SHIFT)
            | if primary { PRIMARY_BIT } else { 0 }
            | slot
    }

    /// Records a tracked write seen at `at` within the timeout (else a timeout), if it was
    /// measured.
    fn settle(
        &mut self,
        slot: u32,
        t: &Tracked,
        seen_at: Option<Instant>,
        ctx: &mut ClientContext,
    ) {
        let measured = t.acked >= ctx.measure_from;
        if measured && let Some(stats) = ctx.stats.get_mut(self.row) {
            // Seen only after the timeout (the poll that showed it was answered late,
            // the other endpoint stalled): not visible within it, so a timeout, and no
            // lag beyond the timeout the user set.
            match seen_at.map(|at| at.saturating_duration_since(t.acked)) {
                Some(lag) if lag <= self.timeout => stats.record(lag.as_micros() as u64, 0, 0),
                _ => stats.errors += 1,
            }
        }
        self.release(slot);
    }

    /// The reply `value` to the poll `token` came at `received`.
    pub fn answered(
        &mut self,
        token: u32,
        value: &[u8],
        received: Instant,
        ctx: &mut ClientContext,
    ) {
        let slot = token & ((1 << SLOT_BITS) - 1);
        let primary = token & PRIMARY_BIT != 0;
        let Some(t) = self.slots.get(slot as usize).copied().flatten() else {
            return;
        };
        if token != self.token(slot, primary) {
            // The answer to a poll given up as lost.
            return;
        }
        let stamp = read_stamp(value);
        let verdict = match (primary, t.phase) {
            (true, Phase::Checking { shown, at }) if stamp == Some(shown) => Some(at),
            (true, _) => None,
            (false, _) => match judge(&t, stamp) {
                Shown::Seen => Some(received),
                Shown::Undecided(shown) => {
                    if let Some(Some(t)) = self.slots.get_mut(slot as usize) {
                        t.phase = Phase::CheckDue {
                            shown,
                            at: received,
                        };
                    }
                    debug_log!(2, "visibility: write {} undecided ({shown})", t.seq);
                    return;
                }
                Shown::NotYet => None,
            },
        };
        let lag = received.saturating_duration_since(t.acked);
        debug_log!(
            2,
            "visibility poll {slot} (write {}, {}): {} after {} us ({})",
            t.seq,
            if primary { "primary" } else { "replica" },
            if verdict.is_some() { "seen" } else { "not yet" },
            lag.as_micros(),
            String::from_utf8_lossy(&value[..value.len().min(STAMP_LEN)])
        );
        if verdict.is_some() {
            self.settle(slot, &t, verdict, ctx);
        } else if lag >= self.timeout {
            self.settle(slot, &t, None, ctx);
        } else if let Some(Some(t)) = self.slots.get_mut(slot as usize) {
            t.phase = Phase::Waiting;
            t.next_poll = received + poll_interval(lag);
        }
    }

    /// The next poll due at `now` whose connection is ready, marked as sent; polls lost
    /// with their connection are given up (timeouts) on the way.
    fn take_due(
        &mut self,
        now: Instant,
        ready: (bool, bool),
        ctx: &mut ClientContext,
    ) -> Option<Due> {
        let (replica_ready, primary_ready) = ready;
        for slot in 0..self.slots.len() as u32 {
            let Some(t) = self.slots[slot as usize] else {
                continue;
            };
            let (phase, primary) = match t.phase {
                Phase::Waiting if replica_ready && t.next_poll <= now => (Phase::Polling, false),
                Phase::CheckDue { shown, at } if primary_ready => {
                    (Phase::Checking { shown, at }, true)
                }
                Phase::Polling | Phase::Checking { .. } if now >= t.lost_at(self.timeout) => {
                    self.settle(slot, &t, None, ctx);
                    continue;
                }
                // The other endpoint was not there to ask before the timeout.
                Phase::Waiting if !replica_ready && now >= t.acked + self.timeout => {
                    self.settle(slot, &t, None, ctx);
                    continue;
                }
                _ => continue,
            };
            if let Some(Some(t)) = self.slots.get_mut(slot as usize) {
                t.phase = phase;
            }
            return Some(Due {
                token: self.token(slot, primary),
                key_id: t.key_id,
                primary,
            });
        }
        None
    }
}

/// How long a tracked write acknowledged now may wait at most before it is settled
/// (seen, or a timeout: its poll given up as lost at the latest).
pub fn longest_visibility_wait(probe: &VisibilityProbe) -> Duration {
    probe.timeout + LOST_AFTER
}

impl Client {
    /// Whether no tracked write waits any more (or the client tracks none).
    pub fn visibility_settled(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| !v.is_waiting())
    }

    /// After the load: when the client next wants [`on_timer`](Client::on_timer) for
    /// its tracked writes (a poll, the giving up of a lost one, a connection to
    /// reopen); the workload's own timers (pace, think time) no longer count.
    pub fn visibility_timer(&self) -> Option<Instant> {
        let vis = self.visibility.as_ref()?;
        let poll = vis.next_poll(self.conns[vis.conn].is_ready());
        let conns = self.conns.iter().filter_map(|c| c.timer());
        poll.into_iter().chain(conns).min()
    }

    /// Gives up the tracked writes still waiting, as timeouts: the worker's wait after
    /// the load ran past [`longest_visibility_wait`].
    pub fn give_up_visibility(&mut self, ctx: &mut ClientContext) {
        if let Some(vis) = self.visibility.as_mut() {
            vis.give_up(ctx);
        }
    }

    /// Sends every poll that is due: GETs of tracked writes' keys on the other endpoint,
    /// and of undecided ones on the primary.
    pub(super) fn poll_visibility(&mut self, plan: &Plan, ctx: &mut ClientContext) {
        let Some(vis) = self.visibility.as_ref() else {
            return;
        };
        // Also while the other endpoint is down: writes waiting on it time out.
        if !vis.is_waiting() {
            return;
        }
        let replica = vis.conn;
        let ready = (
            self.conns[replica].is_ready(),
            self.conns[PRIMARY_CONN].is_ready(),
        );
        let now = Instant::now();
        while let Some(due) = self
            .visibility
            .as_mut()
            .and_then(|v| v.take_due(now, ready, ctx))
        {
            self.load_key(plan, due.key_id);
            let c = &mut self.conns[if due.primary { PRIMARY_CONN } else { replica }];
            let started = c.begin(now);
            let (codec, out) = c.encoder();
            codec.encode_get(out, Key::from(&self.key_buf), started.opaque);
            c.finish(started, Purpose::Visibility(due.token), now, now);
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

    fn tracked(seq: u64, horizon: u64) -> Tracked {
        let now = Instant::now();
        Tracked {
            key_id: 1,
            seq,
            horizon,
            acked: now,
            next_poll: now,
            phase: Phase::Waiting,
        }
    }

    #[test]
    fn a_stamp_is_placed_against_the_write_and_its_horizon() {
        // Write 10, acknowledged when stamps up to 14 had been taken.
        let t = tracked(10, 14);
        assert_eq!(judge(&t, Some(10)), Shown::Seen);
        assert_eq!(judge(&t, Some(15)), Shown::Seen, "taken after the ack");
        // Taken before the ack: before or after write 10 on the primary.
        assert_eq!(judge(&t, Some(9)), Shown::Undecided(9));
        assert_eq!(judge(&t, Some(12)), Shown::Undecided(12));
        assert_eq!(judge(&t, Some(14)), Shown::Undecided(14));
        assert_eq!(judge(&t, None), Shown::NotYet);
    }

    #[test]
    fn polls_back_off_with_the_lag() {
        assert_eq!(poll_interval(Duration::ZERO), POLL_INTERVAL);
        assert_eq!(poll_interval(Duration::from_millis(10)), POLL_INTERVAL);
        assert_eq!(
            poll_interval(Duration::from_millis(160)),
            Duration::from_millis(10)
        );
        assert_eq!(poll_interval(Duration::from_secs(30)), MAX_POLL_INTERVAL);
    }

    #[test]
    fn tokens_carry_slot_side_and_generation() {
        let probe = VisibilityProbe {
            endpoint: crate::plan::Endpoint::Unix("x".into()),
            every: 1,
            timeout: Duration::from_secs(1),
        };
        let mut vis = Visibility::new(&probe, 1, 0);
        let first = vis.token(255, true);
        assert_eq!(first & 0xff, 255);
        assert_ne!(first & PRIMARY_BIT, 0);
        vis.release(255);
        let second = vis.token(255, true);
        assert_ne!(first, second, "a new generation after release");
        assert_eq!(second & 0xff, 255);
        vis.generations[3] = u32::MAX >> GENERATION_SHIFT;
        vis.release(3);
        assert_eq!(
            vis.generations[3], 0,
            "the generation wraps within its bits"
        );
    }
}
