//! The engine's clock readings on the request path: an [`Instant`] together with its
//! nanoseconds after a process-wide epoch, taken once and handed on.
//!
//! At pipeline 1 every request is one visit to its connection: a read, its reply
//! recorded, the next request written. Reading the clock for the reply and again for
//! the request, and turning each `Instant` into the in-flight queue's nanoseconds, came
//! to about a sixth of the client's user time on the bench VM (`perf record`: the
//! vDSO's `clock_gettime` 11 % of user samples, `Timespec` arithmetic 4 %). So a read
//! that reads the clock after it returns hands that reading on, and the plain closed
//! loop stamps the batch it writes in the same visit with it: a closed-loop request is
//! due the moment the reply that freed its place was read, and what the client does
//! between the two (decoding and recording the replies of that read, writing the batch:
//! well under a microsecond at pipeline 1, one or two at pipeline 16) is counted into the
//! batch's latency, as redis-benchmark counts a batch's time from its start. A read whose
//! receive time is the poll's (the first event of a wake-up) hands nothing on, and its
//! batch reads the clock (see [`send_time_after_read`]).
//!
//! Turning an `Instant` into nanoseconds through std (a checked subtraction and its
//! normalising) took about 60 instructions, more than reading the clock: at pipeline 1
//! a twentieth of a visit. So [`Stamp::now`] reads `CLOCK_MONOTONIC` itself (the clock
//! `Instant` reads on Linux), subtracts the epoch's reading in integers, and makes the
//! `Instant` as the epoch plus those nanoseconds: the same `Instant` as std's reading at
//! that moment, exactly. That needs the epoch's `Instant` as seconds and nanoseconds,
//! which std shows only in its `Debug` form; when that form is not the clock's reading
//! (checked against two readings around it), stamps take std's way.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The instant [`Stamp::ns`] counts from, and the same moment as `CLOCK_MONOTONIC`
/// seconds and nanoseconds when known (see the module's notes).
struct Epoch {
    at: Instant,
    raw: Option<(i64, i64)>,
}

/// Taken once, before the first connection is made (see [`nanos_since_epoch`]).
static EPOCH: OnceLock<Epoch> = OnceLock::new();

impl Epoch {
    fn new() -> Epoch {
        let before = monotonic();
        let at = Instant::now();
        let after = monotonic();
        let raw = debug_reading(at).filter(|&shown| before <= shown && shown <= after);
        Epoch { at, raw }
    }
}

/// `CLOCK_MONOTONIC` now, as seconds and nanoseconds.
#[inline(always)]
fn monotonic() -> (i64, i64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_MONOTONIC always exists on
    // Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec, ts.tv_nsec)
}

/// The seconds and nanoseconds `Instant`'s `Debug` form shows (on Linux
/// `Instant { tv_sec: 8907, tv_nsec: 897177895 }`), if it has that form.
fn debug_reading(at: Instant) -> Option<(i64, i64)> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let shown = format!("{at:?}");
    let field = |name: &str| -> Option<i64> {
        let rest = &shown[shown.find(name)? + name.len()..];
        let digits = rest.trim_start_matches([':', ' ']);
        let end = digits.find(|c: char| !c.is_ascii_digit())?;
        digits[..end].parse().ok()
    };
    Some((field("tv_sec")?, field("tv_nsec")?)).filter(|&(_, ns)| ns < 1_000_000_000)
}

/// The process's time origin for nanosecond stamps, fixed by its first call (which
/// the in-flight queue's constructor makes, so it comes before any request is sent).
#[inline]
pub fn epoch() -> Instant {
    EPOCH.get_or_init(Epoch::new).at
}

/// `at` as nanoseconds after the epoch (0 for anything before it, which a request sent
/// after its connection was made never is). A u64 of nanoseconds spans five centuries.
#[inline]
pub fn nanos_since_epoch(at: Instant) -> u64 {
    let since = at.saturating_duration_since(epoch());
    // Seconds and nanoseconds in u64 arithmetic (`as_nanos` goes through u128).
    since
        .as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(since.subsec_nanos()))
}

/// One reading of the clock, in both the forms the request path wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub at: Instant,
    /// `at` as nanoseconds after the epoch (see [`nanos_since_epoch`]).
    pub ns: u64,
}

impl Stamp {
    /// Reads the clock.
    #[inline]
    pub fn now() -> Stamp {
        let epoch = EPOCH.get_or_init(Epoch::new);
        let Some((epoch_secs, epoch_nanos)) = epoch.raw else {
            return Stamp::of(Instant::now());
        };
        let (secs, nanos) = monotonic();
        // Never before the epoch: the clock is monotonic.
        let ns = ((secs - epoch_secs) * 1_000_000_000 + (nanos - epoch_nanos)).max(0) as u64;
        Stamp {
            at: epoch.at + Duration::from_nanos(ns),
            ns,
        }
    }

    /// `at` with its nanoseconds.
    #[inline]
    pub fn of(at: Instant) -> Stamp {
        Stamp {
            at,
            ns: nanos_since_epoch(at),
        }
    }
}

/// The send time a read leaves for the batch written after it in the same visit: its
/// own reading when the clock was read after the read, none when `polled` (the receive
/// time is the poll's, taken before the read: the read call itself and the replies'
/// handling would be counted into the next request's latency, so that batch reads the
/// clock).
#[inline]
pub fn send_time_after_read(received: Stamp, polled: bool) -> Option<Stamp> {
    (!polled).then_some(received)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_before_the_epoch_are_its_start() {
        let early = epoch().checked_sub(Duration::from_secs(1));
        if let Some(early) = early {
            assert_eq!(nanos_since_epoch(early), 0);
        }
        let later = epoch() + Duration::from_nanos(1_234_567_891);
        assert_eq!(nanos_since_epoch(later), 1_234_567_891);
    }

    #[test]
    fn a_stamp_keeps_its_instant_and_nanoseconds_together() {
        let at = epoch() + Duration::from_micros(2_500);
        let stamp = Stamp::of(at);
        assert_eq!(stamp.at, at);
        assert_eq!(stamp.ns, 2_500_000);
        let now = Stamp::now();
        assert_eq!(now.ns, nanos_since_epoch(now.at));
    }

    #[test]
    fn a_stamp_is_the_instant_std_reads_at_that_moment() {
        if cfg!(target_os = "linux") {
            let epoch = EPOCH.get_or_init(Epoch::new);
            assert!(epoch.raw.is_some(), "the epoch's reading is known on Linux");
        }
        for _ in 0..1000 {
            let before = Instant::now();
            let stamp = Stamp::now();
            let after = Instant::now();
            assert!(before <= stamp.at && stamp.at <= after);
            assert_eq!(stamp.ns, nanos_since_epoch(stamp.at));
        }
    }

    #[test]
    fn the_debug_form_shows_an_instant_to_the_nanosecond() {
        let at = Instant::now();
        if let Some((secs, nanos)) = debug_reading(at) {
            assert!(secs > 0 && nanos < 1_000_000_000);
            // Shown to the nanosecond: a nanosecond later shows one more.
            let later = debug_reading(at + Duration::from_nanos(1));
            let expected = if nanos == 999_999_999 {
                (secs + 1, 0)
            } else {
                (secs, nanos + 1)
            };
            assert_eq!(later, Some(expected));
        }
    }

    #[test]
    fn only_a_reading_taken_after_its_read_stands_for_the_next_send() {
        let read = Stamp::now();
        assert_eq!(send_time_after_read(read, false), Some(read));
        assert_eq!(send_time_after_read(read, true), None);
    }
}
