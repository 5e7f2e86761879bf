//! The engine's clock readings on the request path: an [`Instant`] together with its
//! nanoseconds after a process-wide epoch, taken once and handed on.
//!
//! At pipeline 1 every request is one visit to its connection: a read, its reply
//! recorded, the next request written. Reading the clock for the reply and again for
//! the request, and turning each `Instant` into the in-flight queue's nanoseconds, came
//! to about a sixth of the client's user time on the bench VM (`perf record`: the
//! vDSO's `clock_gettime` 11 % of user samples, `Timespec` arithmetic 4 %). So a visit
//! reads the clock once, when its read returns, and the plain closed loop stamps the
//! requests it sends in the same visit with that reading: a closed-loop request is due
//! the moment the reply that freed its place was read, and what the client does between
//! the two (recording the reply, writing the request: well under a microsecond at
//! pipeline 1) is counted into its latency, as redis-benchmark counts a batch's time
//! from its start.

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
}
