//! Runs of equal latencies held back from a histogram and put into it a handful at a
//! time.
//!
//! Recording into a latency histogram is one add to one of its counts, but at pipeline 16
//! with 50 connections that count's cache line has almost always been pushed out of the
//! caches by the time it is added to again (the kernel's socket work between two batches
//! touches far more memory than the caches hold), and each add waited for memory: sampled,
//! that single load was about a tenth of kvbench's user time. Held here and put in
//! together, the adds are independent loads one after another, which the processor
//! overlaps, so a handful of them cost about as long as one.

use hdrhistogram::Histogram;

/// Runs held before they are put into the histogram together.
const HELD: usize = 16;

/// The latest run (a latency and how many replies had it) and the runs before it not yet
/// in the histogram.
#[derive(Clone, Debug, Default)]
pub struct HeldRuns {
    /// The run being counted.
    current: (u64, u64),
    /// Finished runs, `held[..len]`.
    held: [(u64, u64); HELD],
    len: usize,
}

impl HeldRuns {
    /// Counts one more reply of latency `value` (at least 1); puts the held runs into
    /// `histogram` when there is no room left to hold another.
    #[inline(always)]
    pub fn add(&mut self, value: u64, histogram: &mut Histogram<u64>) {
        if self.current.0 != value {
            if self.current.1 > 0 {
                if self.len == HELD {
                    self.put(histogram);
                }
                self.held[self.len] = self.current;
                self.len += 1;
            }
            self.current = (value, 0);
        }
        self.current.1 += 1;
    }

    /// Puts every run held, and the current one, into `histogram`.
    pub fn flush(&mut self, histogram: &mut Histogram<u64>) {
        self.put(histogram);
        let (value, count) = self.current;
        if count > 0 {
            histogram.saturating_record_n(value, count);
            self.current.1 = 0;
        }
    }

    /// Puts the finished runs into `histogram`.
    #[inline(never)]
    fn put(&mut self, histogram: &mut Histogram<u64>) {
        for &(value, count) in &self.held[..self.len] {
            histogram.saturating_record_n(value, count);
        }
        self.len = 0;
    }

    /// Forgets everything held (the histogram is being cleared too).
    pub fn clear(&mut self) {
        *self = HeldRuns::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn held_runs_reach_the_histogram_as_each_value_was_added() {
        let (mut held, mut into) = (HeldRuns::default(), new_histogram());
        let mut direct = new_histogram();
        // Runs of every length from 1, far more of them than are held at once.
        let mut value = 1u64;
        for run in 0..200u64 {
            for _ in 0..run % 5 + 1 {
                held.add(value, &mut into);
                direct.record(value).unwrap();
            }
            value = value * 7 % 10_007 + 1;
            if run % 37 == 0 {
                held.flush(&mut into);
                assert_eq!(into, direct, "after run {run}");
            }
        }
        assert!(into.len() < direct.len(), "runs are held until a flush");
        held.flush(&mut into);
        assert_eq!(into, direct);
        held.flush(&mut into);
        assert_eq!(into, direct, "a second flush adds nothing");
        held.add(5, &mut into);
        held.clear();
        held.flush(&mut into);
        assert_eq!(into, direct, "cleared runs are forgotten");
    }
}
