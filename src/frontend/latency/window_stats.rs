//! The figures of one sampling window: exact min, max, sum and count, and an HdrHistogram
//! (microseconds) for percentiles.

use hdrhistogram::Histogram;

use crate::stats::new_histogram;

/// What the samples of one window (or of the whole probe, in live mode) add up to.
///
/// min, max and the sum are kept exactly beside the histogram: the histogram's own min and
/// max are bucket values (3 significant figures), and an average of bucket values is not
/// the average of the samples.
#[derive(Clone, Debug)]
pub struct WindowStats {
    count: u64,
    sum_us: u64,
    min_us: u64,
    max_us: u64,
    histogram: Histogram<u64>,
}

impl Default for WindowStats {
    fn default() -> Self {
        Self::new()
    }
}

impl WindowStats {
    /// An empty window.
    pub fn new() -> Self {
        WindowStats {
            count: 0,
            sum_us: 0,
            min_us: 0,
            max_us: 0,
            histogram: new_histogram(),
        }
    }

    /// Adds one reply's latency in microseconds.
    pub fn record(&mut self, latency_us: u64) {
        if self.count == 0 {
            self.min_us = latency_us;
            self.max_us = latency_us;
        } else {
            self.min_us = self.min_us.min(latency_us);
            self.max_us = self.max_us.max(latency_us);
        }
        self.count += 1;
        self.sum_us = self.sum_us.saturating_add(latency_us);
        self.histogram.saturating_record(latency_us);
    }

    /// Forgets every sample, keeping the histogram's memory.
    pub fn reset(&mut self) {
        self.count = 0;
        self.sum_us = 0;
        self.min_us = 0;
        self.max_us = 0;
        self.histogram.reset();
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest sample in microseconds (0 when empty).
    pub fn min_us(&self) -> u64 {
        self.min_us
    }

    /// Largest sample in microseconds (0 when empty).
    pub fn max_us(&self) -> u64 {
        self.max_us
    }

    /// Sum of all samples in microseconds.
    pub fn sum_us(&self) -> u64 {
        self.sum_us
    }

    /// Exact mean in microseconds (0 when empty, never NaN).
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_us as f64 / self.count as f64
        }
    }

    /// The latency at or below which `percentile` percent (0-100) of the samples fall, in
    /// microseconds, as the histogram resolves it (0 when empty), within the exact min and
    /// max (a bucket's highest equivalent value can pass the largest sample: 3935 for 3934).
    ///
    /// The rank is computed from the percent directly: `99.9 / 100` is 0.9990000000000001
    /// in floating point, which would push p99.9 of 1000 samples to the 1000th.
    pub fn percentile_us(&self, percentile: f64) -> u64 {
        let total = self.histogram.len();
        if total == 0 {
            return 0;
        }
        let exact = percentile.clamp(0.0, 100.0) * total as f64 / 100.0;
        // A hair of tolerance absorbs the representation error of the percent itself.
        let rank = ((exact - 1e-9).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        let mut value = self.histogram.max();
        for v in self.histogram.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                value = v.value_iterated_to();
                break;
            }
        }
        value.clamp(self.min_us, self.max_us)
    }

    /// The samples as an HdrHistogram in microseconds.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_window_is_all_zero() {
        let w = WindowStats::new();
        assert_eq!(
            (w.count(), w.min_us(), w.max_us(), w.sum_us()),
            (0, 0, 0, 0)
        );
        assert_eq!(w.mean_us(), 0.0);
        assert_eq!(w.percentile_us(99.0), 0);
    }

    #[test]
    fn keeps_exact_min_max_and_mean() {
        let mut w = WindowStats::new();
        for v in [120, 95, 4_000_123, 0, 250] {
            w.record(v);
        }
        assert_eq!(w.count(), 5);
        assert_eq!(w.min_us(), 0);
        // The histogram would round this to 3 significant figures; the window does not.
        assert_eq!(w.max_us(), 4_000_123);
        assert_eq!(w.sum_us(), 4_000_588);
        assert!((w.mean_us() - 800_117.6).abs() < 1e-6);
        assert_eq!(w.percentile_us(50.0), 120);
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let mut w = WindowStats::new();
        for v in 1..=1000 {
            w.record(v);
        }
        assert_eq!(w.percentile_us(50.0), 500);
        assert_eq!(w.percentile_us(99.0), 990);
        assert_eq!(w.percentile_us(99.9), 999);
        assert_eq!(w.percentile_us(99.95), 1000);
        assert_eq!(w.percentile_us(100.0), 1000);
        assert_eq!(w.percentile_us(0.01), 1);
    }

    #[test]
    fn percentiles_stay_within_the_exact_max() {
        // 3934 µs falls in a bucket whose highest equivalent value is 3935.
        let mut w = WindowStats::new();
        for us in [26, 97, 3934] {
            w.record(us);
        }
        assert_eq!(w.max_us(), 3934);
        assert_eq!(w.percentile_us(99.0), 3934);
        assert_eq!(w.percentile_us(100.0), 3934);
        assert_eq!(w.percentile_us(0.01), 26);
    }

    #[test]
    fn reset_starts_a_new_window() {
        let mut w = WindowStats::new();
        w.record(500);
        w.reset();
        w.record(7);
        assert_eq!((w.count(), w.min_us(), w.max_us()), (1, 7, 7));
        assert_eq!(w.histogram().len(), 1);
    }
}
