//! redis-benchmark's latency figures from an HdrHistogram: its bucket layout and the walks
//! and statistics of the C HdrHistogram library it prints with, reproduced exactly.
//!
//! redis-benchmark records each latency in microseconds into a C `hdr_histogram` with a
//! lowest discernible value of 10 µs (so the finest bucket is 8 µs wide) and `--precision`
//! significant figures (default 3). Its report then walks that histogram:
//!
//! ```text
//! Latency by percentile distribution:   percentile iterator, one tick per half distance
//!   50.000% <= 0.031 milliseconds (cumulative count 1124)
//!     (bucket's highest equivalent value; a line only when the count moved, or at the end)
//! Cumulative distribution of latencies: linear iterator, 100 µs steps, 1000 µs once the
//!   97.900% <= 0.103 milliseconds (cumulative count 1958)     bucket passes 2000 µs
//! Summary: avg (bucket medians), min (lowest equivalent, 0 if the 0-7 µs bucket has a
//!   count), p50/p95/p99 (count rounded to nearest, highest equivalent), max
//! ```
//!
//! [`RbHistogram`] re-buckets kvbench's histogram into that layout. kvbench's histograms
//! have 1 µs resolution and 3 significant figures, so at the default precision each
//! redis-benchmark bucket is a union of kvbench buckets and every figure comes out as the
//! C library would compute it from the same latencies. Unlike redis-benchmark, latencies
//! above 3 s are not clamped: the layout grows to hold the largest one.

use hdrhistogram::Histogram;

/// redis-benchmark's lowest discernible latency, in microseconds.
const LOWEST_US: u64 = 10;
/// redis-benchmark's highest trackable latency (it clamps above it; kvbench grows past it).
const HIGHEST_US: u64 = 3_000_000;

/// A latency histogram in redis-benchmark's bucket layout, with the C library's walks.
#[derive(Clone, Debug)]
pub struct RbHistogram {
    unit_magnitude: u32,
    sub_bucket_half_count_magnitude: u32,
    sub_bucket_half_count: u64,
    sub_bucket_count: u64,
    sub_bucket_mask: u64,
    counts: Vec<u64>,
    total: u64,
    /// Lowest non-zero latency recorded (`u64::MAX` when none).
    min_value: u64,
    /// Highest latency recorded (0 when none).
    max_value: u64,
}

/// One printed line of a distribution: `{percent}% <= {value} milliseconds (cumulative count {cumulative})`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistributionLine {
    /// The percentile (0-100) the line reports.
    pub percent: f64,
    /// The bucket's highest equivalent value, microseconds.
    pub value_us: u64,
    /// Requests at or below the bucket.
    pub cumulative: u64,
}

impl RbHistogram {
    /// An empty histogram with redis-benchmark's layout for `precision` significant
    /// figures (1 to 4), able to hold `highest_us`.
    pub fn new(precision: u8, highest_us: u64) -> Self {
        let precision = u32::from(precision.clamp(1, 4));
        let single_unit_resolution = 2 * 10u64.pow(precision);
        // ceil(log2(x)) for an x that is never a power of two.
        let sub_bucket_count_magnitude = 64 - single_unit_resolution.leading_zeros();
        let half_magnitude = sub_bucket_count_magnitude.max(1) - 1;
        let unit_magnitude = 63 - LOWEST_US.leading_zeros();
        let sub_bucket_count = 1u64 << (half_magnitude + 1);
        let sub_bucket_half_count = sub_bucket_count / 2;
        let highest = highest_us.max(HIGHEST_US);
        let mut smallest_untrackable = sub_bucket_count << unit_magnitude;
        let mut bucket_count = 1u64;
        while smallest_untrackable <= highest {
            smallest_untrackable <<= 1;
            bucket_count += 1;
        }
        let counts_len = (bucket_count + 1) * sub_bucket_half_count;
        RbHistogram {
            unit_magnitude,
            sub_bucket_half_count_magnitude: half_magnitude,
            sub_bucket_half_count,
            sub_bucket_count,
            sub_bucket_mask: (sub_bucket_count - 1) << unit_magnitude,
            counts: vec![0; counts_len as usize],
            total: 0,
            min_value: u64::MAX,
            max_value: 0,
        }
    }

    /// Re-bucket a kvbench latency histogram (microseconds) into redis-benchmark's layout.
    pub fn from_hdr(hist: &Histogram<u64>, precision: u8) -> Self {
        let mut rb = RbHistogram::new(precision, hist.max());
        for v in hist.iter_recorded() {
            rb.record_n(v.value_iterated_to(), v.count_at_value());
        }
        if !hist.is_empty() {
            // The extremes as recorded, not as bucketed, as the C library keeps them.
            rb.max_value = hist.max();
            let min_nz = hist.min_nz();
            rb.min_value = if min_nz == 0 { u64::MAX } else { min_nz };
        }
        rb
    }

    /// Record `count` latencies of `value_us` microseconds.
    pub fn record_n(&mut self, value_us: u64, count: u64) {
        if count == 0 {
            return;
        }
        let index = self.counts_index_for(value_us).min(self.counts.len() - 1);
        self.counts[index] += count;
        self.total += count;
        if value_us != 0 {
            self.min_value = self.min_value.min(value_us);
        }
        self.max_value = self.max_value.max(value_us);
    }

    /// Number of latencies recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    fn bucket_index(&self, value: u64) -> u32 {
        let pow2ceiling = 64 - (value | self.sub_bucket_mask).leading_zeros();
        pow2ceiling - self.unit_magnitude - (self.sub_bucket_half_count_magnitude + 1)
    }

    fn sub_bucket_index(&self, value: u64, bucket: u32) -> u64 {
        value >> (bucket + self.unit_magnitude)
    }

    fn counts_index_for(&self, value: u64) -> usize {
        let bucket = self.bucket_index(value);
        let sub = self.sub_bucket_index(value, bucket);
        let base = u64::from(bucket + 1) << self.sub_bucket_half_count_magnitude;
        (base + sub - self.sub_bucket_half_count) as usize
    }

    fn value_at_index(&self, index: usize) -> u64 {
        let index = index as u64;
        let mut bucket = (index >> self.sub_bucket_half_count_magnitude) as i64 - 1;
        let mut sub = (index & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count;
        if bucket < 0 {
            sub -= self.sub_bucket_half_count;
            bucket = 0;
        }
        sub << (bucket as u32 + self.unit_magnitude)
    }

    fn lowest_equivalent(&self, value: u64) -> u64 {
        let bucket = self.bucket_index(value);
        self.sub_bucket_index(value, bucket) << (bucket + self.unit_magnitude)
    }

    fn equivalent_range(&self, value: u64) -> u64 {
        let bucket = self.bucket_index(value);
        let sub = self.sub_bucket_index(value, bucket);
        let adjusted = if sub >= self.sub_bucket_count {
            bucket + 1
        } else {
            bucket
        };
        1 << (self.unit_magnitude + adjusted)
    }

    fn highest_equivalent(&self, value: u64) -> u64 {
        self.lowest_equivalent(value) + self.equivalent_range(value) - 1
    }

    fn median_equivalent(&self, value: u64) -> u64 {
        self.lowest_equivalent(value) + (self.equivalent_range(value) >> 1)
    }

    /// `hdr_min`: 0 when the lowest bucket holds a count, else the lowest equivalent of
    /// the smallest latency; 0 when empty.
    pub fn min(&self) -> u64 {
        if self.counts[0] > 0 || self.min_value == u64::MAX {
            return 0;
        }
        self.lowest_equivalent(self.min_value)
    }

    /// `hdr_max`: the highest equivalent of the largest latency; 0 when empty.
    pub fn max(&self) -> u64 {
        if self.max_value == 0 {
            return 0;
        }
        self.highest_equivalent(self.max_value)
    }

    /// `hdr_mean`: the count-weighted mean of the buckets' median values, microseconds;
    /// 0 when empty (where the C library divides by zero).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let sum: u64 = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| c * self.median_equivalent(self.value_at_index(i)))
            .sum();
        sum as f64 / self.total as f64
    }

    /// `hdr_value_at_percentile`: the bucket holding the request at `percentile` (0-100),
    /// counted to the nearest request; its highest equivalent value (lowest for 0).
    pub fn value_at_percentile(&self, percentile: f64) -> u64 {
        if self.total == 0 {
            // The C library answers 0.007 ms here; nothing was measured, so say 0.
            return 0;
        }
        let requested = percentile.min(100.0);
        let wanted = (((requested / 100.0) * self.total as f64) + 0.5) as u64;
        let wanted = wanted.max(1);
        let mut running = 0;
        let mut value = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            running += c;
            if running >= wanted {
                value = self.value_at_index(i);
                break;
            }
        }
        if percentile == 0.0 {
            self.lowest_equivalent(value)
        } else {
            self.highest_equivalent(value)
        }
    }

    /// The "Latency by percentile distribution" lines redis-benchmark prints: the
    /// percentile iterator with one tick per half distance, a line whenever the cumulative
    /// count moved, and every line that reaches the total.
    pub fn percentile_distribution(&self) -> Vec<DistributionLine> {
        let mut lines = Vec::new();
        if self.total == 0 {
            return lines;
        }
        let mut iter = Walk::new(self);
        let mut seen_last = false;
        let mut to_iterate_to = 0.0f64;
        let mut percentile;
        let mut previous = None;
        loop {
            if !iter.has_next() {
                if seen_last {
                    break;
                }
                seen_last = true;
                percentile = 100.0;
            } else {
                if iter.index.is_none() && !iter.basic_next() {
                    break;
                }
                percentile = loop {
                    let current = (100.0 * iter.cumulative as f64) / self.total as f64;
                    if iter.count != 0 && to_iterate_to <= current {
                        let reported = to_iterate_to;
                        let ticks =
                            (((100.0 / (100.0 - to_iterate_to)).ln() / 2f64.ln()) as i64) + 1;
                        let half_distance = 2f64.powi(ticks as i32) as i64;
                        to_iterate_to += 100.0 / half_distance as f64;
                        break reported;
                    }
                    if !iter.basic_next() {
                        // Out of buckets: the C iterator reports its last state again.
                        break to_iterate_to;
                    }
                };
            }
            if previous != Some(iter.cumulative) || iter.cumulative == self.total {
                lines.push(DistributionLine {
                    percent: percentile,
                    value_us: iter.highest_equivalent,
                    cumulative: iter.cumulative,
                });
            }
            previous = Some(iter.cumulative);
        }
        lines
    }

    /// The "Cumulative distribution of latencies" lines redis-benchmark prints: the linear
    /// iterator in 100 µs steps, switched to 1000 µs steps once a reported bucket passes
    /// 2 ms, a line whenever the cumulative count moved, and every line at the total.
    pub fn cumulative_distribution(&self) -> Vec<DistributionLine> {
        let mut lines = Vec::new();
        if self.total == 0 {
            return lines;
        }
        let mut iter = Walk::new(self);
        let mut step = 100u64;
        let mut level = step;
        let mut level_lowest = self.lowest_equivalent(level);
        let mut previous = None;
        loop {
            if !(iter.has_next() || iter.next_value_above(level_lowest)) {
                break;
            }
            loop {
                if iter.value >= level_lowest {
                    level += step;
                    level_lowest = self.lowest_equivalent(level);
                    break;
                }
                if !iter.move_next() {
                    break;
                }
            }
            let percent = (iter.cumulative as f64 / self.total as f64) * 100.0;
            if previous != Some(iter.cumulative) || iter.cumulative == self.total {
                lines.push(DistributionLine {
                    percent,
                    value_us: iter.highest_equivalent,
                    cumulative: iter.cumulative,
                });
            }
            // Past 2 ms, 0.1 ms steps add noise: redis-benchmark widens them. The step
            // already taken stays, the next ones are 1 ms.
            if iter.highest_equivalent > 2000 {
                step = 1000;
            }
            previous = Some(iter.cumulative);
        }
        lines
    }
}

/// The C library's basic iterator over every bucket, in order.
struct Walk<'a> {
    h: &'a RbHistogram,
    index: Option<usize>,
    count: u64,
    cumulative: u64,
    value: u64,
    highest_equivalent: u64,
}

impl<'a> Walk<'a> {
    fn new(h: &'a RbHistogram) -> Self {
        Walk {
            h,
            index: None,
            count: 0,
            cumulative: 0,
            value: 0,
            highest_equivalent: 0,
        }
    }

    fn has_next(&self) -> bool {
        self.cumulative < self.h.total
    }

    fn next_index(&self) -> usize {
        self.index.map_or(0, |i| i + 1)
    }

    fn move_next(&mut self) -> bool {
        let index = self.next_index();
        self.index = Some(index);
        if index >= self.h.counts.len() {
            return false;
        }
        self.count = self.h.counts[index];
        self.cumulative += self.count;
        self.value = self.h.value_at_index(index);
        self.highest_equivalent = self.h.highest_equivalent(self.value);
        true
    }

    fn basic_next(&mut self) -> bool {
        if !self.has_next() || self.next_index() > self.h.counts.len() {
            return false;
        }
        self.move_next();
        true
    }

    fn next_value_above(&self, bound: u64) -> bool {
        if self.index.is_some_and(|i| i >= self.h.counts.len()) {
            return false;
        }
        self.h.value_at_index(self.next_index()) > bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rb(values: &[(u64, u64)]) -> RbHistogram {
        let mut h = RbHistogram::new(3, 0);
        for &(v, n) in values {
            h.record_n(v, n);
        }
        h
    }

    #[test]
    fn layout_matches_redis_benchmark() {
        let h = RbHistogram::new(3, 0);
        // 8 µs units, 2048 sub-buckets, 9 buckets to reach 3 s.
        assert_eq!(h.unit_magnitude, 3);
        assert_eq!(h.sub_bucket_count, 2048);
        assert_eq!(h.counts.len(), 10 * 1024);
        assert_eq!(h.highest_equivalent(31), 31);
        assert_eq!(h.highest_equivalent(24), 31);
        assert_eq!(h.lowest_equivalent(100), 96);
        assert_eq!(h.highest_equivalent(5180), 5183);
        assert_eq!(h.highest_equivalent(20_000), 20_015);
        // Larger latencies grow the layout instead of being clamped.
        let big = RbHistogram::new(3, 10_000_000);
        assert!(big.counts.len() > h.counts.len());
        assert!(big.counts_index_for(9_999_999) < big.counts.len());
    }

    #[test]
    fn summary_statistics() {
        let h = rb(&[(9, 1), (31, 2), (100, 1)]);
        assert_eq!(h.min(), 8);
        assert_eq!(h.max(), 103);
        assert_eq!(h.value_at_percentile(50.0), 31);
        assert_eq!(h.value_at_percentile(99.0), 103);
        assert_eq!(h.value_at_percentile(0.0), 8);
        // Medians: 12, 28, 28, 100.
        assert!((h.mean() - 42.0).abs() < 1e-9, "{}", h.mean());
        // A latency in the first bucket makes min 0, as in the C library.
        assert_eq!(rb(&[(3, 1), (50, 1)]).min(), 0);
        let empty = RbHistogram::new(3, 0);
        assert_eq!((empty.min(), empty.max(), empty.mean()), (0, 0, 0.0));
        assert_eq!(empty.value_at_percentile(50.0), 0);
        assert!(empty.percentile_distribution().is_empty());
        assert!(empty.cumulative_distribution().is_empty());
    }

    #[test]
    fn percentile_walk_reports_first_bucket_and_the_end_twice() {
        let h = rb(&[
            (15, 70),
            (31, 1046),
            (39, 427),
            (55, 358),
            (71, 45),
            (191, 24),
            (5191, 30),
        ]);
        let lines = h.percentile_distribution();
        let shown: Vec<(String, u64, u64)> = lines
            .iter()
            .map(|l| (format!("{:.3}", l.percent), l.value_us, l.cumulative))
            .collect();
        assert_eq!(shown[0], ("0.000".to_string(), 15, 70));
        assert_eq!(shown[1], ("50.000".to_string(), 31, 1116));
        let n = shown.len();
        assert_eq!(shown[n - 1], ("100.000".to_string(), 5191, 2000));
        assert_eq!(shown[n - 2].2, 2000);
        assert!(shown[n - 2].0 != "100.000");
        // Counts only grow, and a line repeats a count only at the total.
        for pair in shown.windows(2) {
            assert!(pair[0].2 < pair[1].2 || pair[1].2 == 2000, "{shown:?}");
        }
    }

    #[test]
    fn cumulative_walk_widens_steps_past_two_ms() {
        let h = rb(&[
            (50, 10),
            (150, 10),
            (1999, 10),
            (2005, 10),
            (2150, 10),
            (6000, 10),
        ]);
        let values: Vec<u64> = h
            .cumulative_distribution()
            .iter()
            .map(|l| l.value_us)
            .collect();
        // 2103 is not shown: nothing arrived between 2007 and 2103.
        assert_eq!(values, [103, 207, 2007, 3103, 6103]);
        let last = *h.cumulative_distribution().last().unwrap();
        assert_eq!((last.percent, last.cumulative), (100.0, 60));
    }

    #[test]
    fn from_kvbench_histogram_keeps_counts_and_extremes() {
        let mut src = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in [9u64, 31, 31, 2049, 250_000] {
            src.record(v).unwrap();
        }
        let h = RbHistogram::from_hdr(&src, 3);
        assert_eq!(h.total(), 5);
        assert_eq!(h.min(), 8);
        assert_eq!(h.value_at_percentile(50.0), 31);
        assert_eq!(h.max(), h.highest_equivalent(250_000));
        let direct = rb(&[(9, 1), (31, 2), (2049, 1), (250_000, 1)]);
        assert_eq!(h.counts, direct.counts);
        assert_eq!(
            h.percentile_distribution(),
            direct.percentile_distribution()
        );
    }
}
