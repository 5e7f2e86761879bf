//! The text of `kvbench intrinsic-latency`, byte for byte as redis-cli prints it:
//!
//! ```text
//! Max latency so far: 41 microseconds.
//! Max latency so far: 6609 microseconds.
//!
//! 12000481 total runs (avg latency: 0.0833 microseconds / 83.33 nanoseconds per run).
//! Worst run took 98068x longer than the average latency.
//! ```
//!
//! The average divides the time actually measured by the runs; redis-cli divides the
//! requested duration, which is the same for a full run and wrong after Ctrl-C.

use std::fmt::Write as _;

use super::probe::Totals;

/// The line printed at each new maximum.
pub fn new_max(max_us: u64, out: &mut String) {
    let _ = writeln!(out, "Max latency so far: {max_us} microseconds.");
}

/// The blank line and the two summary lines.
pub fn summary(totals: &Totals, out: &mut String) {
    let runs = totals.runs.max(1);
    // The same order of operations as redis-cli, so equal inputs print equal digits.
    let avg_us = totals.elapsed_ns as f64 / 1000.0 / runs as f64;
    let avg_ns = avg_us * 1e3;
    let worst = if avg_us > 0.0 {
        totals.max_us as f64 / avg_us
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "\n{} total runs (avg latency: {avg_us:.4} microseconds / {avg_ns:.2} nanoseconds per run).",
        totals.runs
    );
    let _ = writeln!(
        out,
        "Worst run took {worst:.0}x longer than the average latency."
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("testdata/redis-cli.txt");

    /// The number after `prefix` in `text`.
    fn number_after(text: &str, prefix: &str) -> u64 {
        let at = text.find(prefix).expect("prefix") + prefix.len();
        text[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|d| d.parse().ok())
            .expect("a number")
    }

    #[test]
    fn matches_redis_cli_byte_for_byte() {
        // redis-cli --intrinsic-latency 1: its average is over exactly one second.
        let maxima: Vec<u64> = FIXTURE
            .lines()
            .filter_map(|l| l.strip_prefix("Max latency so far: "))
            .map(|l| number_after(l, ""))
            .collect();
        let runs = FIXTURE
            .lines()
            .find(|l| l.contains("total runs"))
            .map(|l| number_after(l, ""))
            .expect("runs line");
        let mut out = String::new();
        for &m in &maxima {
            new_max(m, &mut out);
        }
        summary(
            &Totals {
                runs,
                elapsed_ns: 1_000_000_000,
                max_us: *maxima.last().expect("a maximum"),
            },
            &mut out,
        );
        assert_eq!(out, FIXTURE);
    }

    #[test]
    fn zero_maximum_prints_zero_not_nan() {
        let mut out = String::new();
        summary(
            &Totals {
                runs: 4,
                elapsed_ns: 400,
                max_us: 0,
            },
            &mut out,
        );
        assert_eq!(
            out,
            "\n4 total runs (avg latency: 0.1000 microseconds / 100.00 nanoseconds per run).\n\
             Worst run took 0x longer than the average latency.\n"
        );
    }
}
