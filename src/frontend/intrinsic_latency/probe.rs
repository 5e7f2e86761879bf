//! The intrinsic-latency measurement: time a short busy computation over and over and
//! keep the longest run, which is how long the machine kept this thread from running.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::error::Error;

/// Rounds of the busy computation per run: a few nanoseconds, so a run is mostly the two
/// clock reads around it (as in redis-cli, whose compiler drops its unused busy work) and
/// any run much longer than the average was preempted or interrupted.
const ROUNDS: u32 = 4;

/// What a finished (or interrupted) test measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    /// Runs of the busy computation.
    pub runs: u64,
    /// Wall time from the first run's start to the last run's end, in nanoseconds.
    pub elapsed_ns: u64,
    /// The longest run in whole microseconds.
    pub max_us: u64,
}

/// Runs the busy loop until `duration` has passed or `stop()` says so, calling
/// `on_new_max` with each new longest run (whole microseconds, above 0); an error from it
/// ends the test.
pub fn measure(
    duration: Duration,
    stop: impl Fn() -> bool,
    mut on_new_max: impl FnMut(u64) -> Result<(), Error>,
) -> Result<Totals, Error> {
    let start = Instant::now();
    let mut runs = 0u64;
    let mut max_us = 0u64;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    loop {
        let before = Instant::now();
        state = busy(black_box(state));
        let after = Instant::now();
        runs += 1;
        // Whole microseconds, as redis-cli reports: a run under 1 µs is no latency.
        let took_us = u64::try_from(after.duration_since(before).as_micros()).unwrap_or(u64::MAX);
        if took_us > max_us {
            max_us = took_us;
            on_new_max(max_us)?;
        }
        let elapsed = after.duration_since(start);
        if elapsed > duration || stop() {
            black_box(state);
            return Ok(Totals {
                runs,
                elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
                max_us,
            });
        }
    }
}

/// A fixed amount of integer work the compiler cannot skip: xorshift rounds, each
/// depending on the last.
fn busy(mut x: u64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..ROUNDS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum = sum.wrapping_add(x);
    }
    black_box(sum ^ x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn runs_for_the_duration_and_reports_increasing_maxima() {
        let mut maxima = Vec::new();
        let totals = measure(
            Duration::from_millis(100),
            || false,
            |m| {
                maxima.push(m);
                Ok(())
            },
        )
        .expect("measure");
        assert!(totals.runs > 1_000, "{totals:?}");
        assert!(totals.elapsed_ns > 100_000_000, "{totals:?}");
        assert!(maxima.windows(2).all(|w| w[0] < w[1]), "{maxima:?}");
        assert_eq!(maxima.last().copied().unwrap_or(0), totals.max_us);
        assert!(maxima.iter().all(|&m| m > 0));
    }

    #[test]
    fn stops_when_asked() {
        let calls = Cell::new(0u32);
        let totals = measure(
            Duration::from_secs(3600),
            || {
                calls.set(calls.get() + 1);
                calls.get() >= 10
            },
            |_| Ok(()),
        )
        .expect("measure");
        assert_eq!(totals.runs, 10);
    }

    #[test]
    fn an_output_error_ends_the_test() {
        let err = measure(
            Duration::from_secs(3600),
            || false,
            |_| Err(Error::run("stdout closed")),
        )
        .expect_err("first maximum fails");
        assert_eq!(err.to_string(), "stdout closed");
    }

    #[test]
    fn busy_work_depends_on_its_input() {
        assert_ne!(busy(1), busy(2));
        assert_eq!(busy(7), busy(7));
    }
}
