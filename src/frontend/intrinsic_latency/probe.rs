//! The intrinsic-latency measurement: time a short busy computation over and over and
//! keep the longest run, which is how long the machine kept this thread from running.
//!
//! A run is timed as redis-cli times it: two clock readings in whole microseconds (from
//! one origin), subtracted. A run of a few nanoseconds that happens to cross a microsecond
//! boundary is then 1 µs, which is why redis-cli's first line is nearly always `Max
//! latency so far: 1 microseconds.`; rounding each run's true length down instead made the
//! first maximum the first real stall (often 7 to 18 µs), so the lines did not compare.

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
    /// Wall time from the test's start to the last run's end, in nanoseconds.
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
    on_new_max: impl FnMut(u64) -> Result<(), Error>,
) -> Result<Totals, Error> {
    let start = Instant::now();
    let clock = || u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    measure_on(clock, duration, stop, on_new_max)
}

/// [`measure`] on `clock`, nanoseconds since the test's start (monotonic).
fn measure_on(
    mut clock: impl FnMut() -> u64,
    duration: Duration,
    stop: impl Fn() -> bool,
    mut on_new_max: impl FnMut(u64) -> Result<(), Error>,
) -> Result<Totals, Error> {
    let duration_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let mut runs = 0u64;
    let mut max_us = 0u64;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    loop {
        let before_ns = clock();
        state = busy(black_box(state));
        let after_ns = clock();
        runs += 1;
        let took_us = run_us(before_ns, after_ns);
        if took_us > max_us {
            max_us = took_us;
            on_new_max(max_us)?;
        }
        if after_ns > duration_ns || stop() {
            black_box(state);
            return Ok(Totals {
                runs,
                elapsed_ns: after_ns,
                max_us,
            });
        }
    }
}

/// A run's length as redis-cli measures it: the readings at its ends (nanoseconds from
/// one origin) each in whole microseconds, subtracted (see the module).
fn run_us(before_ns: u64, after_ns: u64) -> u64 {
    (after_ns / 1000).saturating_sub(before_ns / 1000)
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
    fn a_run_is_the_difference_of_whole_microsecond_readings() {
        for (before, after, us) in [
            // A few nanoseconds across a boundary: 1, as redis-cli's ustime() gives.
            (999, 1_003, 1),
            (4_999_990, 5_000_010, 1),
            // Inside one microsecond: 0, however long it really was.
            (1_000, 1_999, 0),
            // 7.9 µs: 8 here, as redis-cli counts it (7 when the length was rounded).
            (1_500, 9_400, 8),
            // 6.2 µs: 7, a boundary more than its length.
            (2_900, 9_100, 7),
            (0, 0, 0),
        ] {
            assert_eq!(run_us(before, after), us, "{before}..{after}");
        }
    }

    #[test]
    fn the_first_maximum_is_the_first_run_across_a_microsecond() {
        // Runs of 40 ns each, the 25th crossing 1 µs: its 40 ns are redis-cli's 1 µs.
        let mut now = 0u64;
        let clock = || {
            now += 20;
            now
        };
        let mut maxima = Vec::new();
        let totals = measure_on(
            clock,
            Duration::from_micros(3),
            || false,
            |m| {
                maxima.push(m);
                Ok(())
            },
        )
        .expect("measure");
        assert_eq!(maxima, [1]);
        assert_eq!(totals.max_us, 1);
        // The first run to end past 3 µs ends the test; the time the average divides is
        // that run's end.
        assert_eq!(totals.runs, 76);
        assert_eq!(totals.elapsed_ns, 3_040);
    }

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
