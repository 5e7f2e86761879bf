//! Runs of equal latencies held back from a histogram and put into it a handful at a
//! time, through exact counts of the small values.
//!
//! Recording into a latency histogram is one add to one of its counts, but at pipeline 16
//! with 50 connections that count's cache line has almost always been pushed out of the
//! caches by the time it is added to again (the kernel's socket work between two batches
//! touches far more memory than the caches hold), and each add waited for memory: sampled,
//! that single load was about a tenth of kvbench's user time. Held here and put in
//! together, the adds are independent loads one after another, which the processor
//! overlaps, so a handful of them cost about as long as one.
//!
//! Putting a run into the histogram itself (its bucket arithmetic, its total, minimum
//! and maximum) took about 75 instructions, once per reply at pipeline 1, where replies
//! seldom share a latency: more than the reply's decoding. A latency below
//! [`LOW_LIMIT_US`] is one the histogram keeps exactly (its first buckets count every
//! microsecond), so such runs are added to a plain array of counts, one add each, and
//! the array goes into the histogram when it is read (once a second).

use hdrhistogram::Histogram;

use crate::stats::LATENCY_SIGFIGS;

/// Runs held before they are put into the histogram together.
const HELD: usize = 16;

/// Latencies below this many microseconds are counted in [`HeldRuns`]' own array: the
/// histogram's first sub-bucket count at [`LATENCY_SIGFIGS`] (3: 2048), below which it
/// counts every value exactly, so the array loses nothing.
pub const LOW_LIMIT_US: u64 = 2048;

// 3 significant figures: the first 2 × 10^3 values rounded up to a power of two.
const _: () = assert!(LATENCY_SIGFIGS == 3);

/// The latest run (a latency and how many replies had it), the runs before it not yet
/// put, and the counts of small latencies put but not yet in the histogram.
#[derive(Clone, Debug, Default)]
pub struct HeldRuns {
    /// The run being counted.
    current: (u64, u64),
    /// Finished runs, `held[..len]`.
    held: [(u64, u64); HELD],
    len: usize,
    /// Replies per latency below [`LOW_LIMIT_US`] (indexed by it) since the last flush;
    /// made at the first put (rows recorded otherwise never need it).
    low: Option<Box<[u32]>>,
}

impl HeldRuns {
    /// Counts one more reply of latency `value` (at least 1); puts the held runs
    /// when there is no room left to hold another.
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
        if let Some(low) = self.low.as_deref_mut() {
            for (value, count) in low.iter_mut().enumerate() {
                if *count > 0 {
                    histogram.saturating_record_n(value as u64, u64::from(*count));
                    *count = 0;
                }
            }
        }
    }

    /// Puts the finished runs into the small latencies' counts, or the histogram.
    #[inline(never)]
    fn put(&mut self, histogram: &mut Histogram<u64>) {
        let low = self
            .low
            .get_or_insert_with(|| vec![0; LOW_LIMIT_US as usize].into_boxed_slice());
        for &(value, count) in &self.held[..self.len] {
            // A count that fits: a second's replies at one latency always do.
            match (low.get_mut(value as usize), u32::try_from(count)) {
                (Some(slot), Ok(count)) if *slot <= u32::MAX - count => *slot += count,
                _ => histogram.saturating_record_n(value, count),
            }
        }
        self.len = 0;
    }

    /// Forgets everything held (the histogram is being cleared too).
    pub fn clear(&mut self) {
        self.current = (0, 0);
        self.len = 0;
        if let Some(low) = self.low.as_deref_mut() {
            low.fill(0);
        }
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
        // Small values (counted apart until a flush) and large ones, both held.
        let mut value = 1u64;
        let (mut small, mut large) = (0, 0);
        for run in 0..200u64 {
            for _ in 0..run % 5 + 1 {
                held.add(value, &mut into);
                direct.record(value).unwrap();
            }
            if value < LOW_LIMIT_US {
                small += 1;
            } else {
                large += 1;
            }
            value = value * 7 % 10_007 + 1;
            if run % 37 == 0 {
                held.flush(&mut into);
                assert_eq!(into, direct, "after run {run}");
            }
        }
        assert!(
            small > 20 && large > 20,
            "{small} small runs, {large} large"
        );
        assert!(into.len() < direct.len(), "runs are held until a flush");
        held.flush(&mut into);
        assert_eq!(into, direct);
        held.flush(&mut into);
        assert_eq!(into, direct, "a second flush adds nothing");
        held.add(5, &mut into);
        held.add(LOW_LIMIT_US + 5, &mut into);
        held.add(7, &mut into);
        held.clear();
        held.flush(&mut into);
        assert_eq!(into, direct, "cleared runs are forgotten");
    }

    #[test]
    fn the_values_either_side_of_the_low_limit_land_in_their_own_buckets() {
        let (mut held, mut into) = (HeldRuns::default(), new_histogram());
        let mut direct = new_histogram();
        // Alternating, so every reply is a run of its own and goes through the puts; the
        // histogram counts 2 µs apart from the limit on, so the large ones keep clear of it.
        for i in 0..100u64 {
            for value in [1, LOW_LIMIT_US - 1, LOW_LIMIT_US, LOW_LIMIT_US + 100 + i] {
                held.add(value, &mut into);
                direct.record(value).unwrap();
            }
        }
        held.flush(&mut into);
        assert_eq!(into, direct);
        assert_eq!(into.count_at(LOW_LIMIT_US - 1), 100);
        assert_eq!(into.count_at(LOW_LIMIT_US), 100);
        assert_eq!((into.min(), into.len()), (1, 400));
    }
}
