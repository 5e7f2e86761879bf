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

use std::sync::OnceLock;
use std::time::Instant;

/// The instant [`Stamp::ns`] counts from: taken once, before the first connection is
/// made (see [`nanos_since_epoch`]).
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// The process's time origin for nanosecond stamps, fixed by its first call (which
/// the in-flight queue's constructor makes, so it comes before any request is sent).
#[inline]
pub fn epoch() -> Instant {
    *EPOCH.get_or_init(Instant::now)
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
        Stamp::of(Instant::now())
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
    fn only_a_reading_taken_after_its_read_stands_for_the_next_send() {
        let read = Stamp::now();
        assert_eq!(send_time_after_read(read, false), Some(read));
        assert_eq!(send_time_after_read(read, true), None);
    }
}
