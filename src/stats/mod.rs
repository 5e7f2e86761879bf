//! Per-command counters and latency histograms: recorded by workers, merged by the runner.
//!
//! In open loop a request has two latencies: its response time (intended send → reply,
//! the headline `latency`) and its service time (actual send → reply, `service`). Closed
//! loop sends when it intends to, so it keeps one histogram and pays for one.

pub mod client_series;
pub mod held_runs;
pub mod reply_sizes;
pub mod rows;
pub mod schedule;

pub use client_series::ClientSeries;
pub use held_runs::HeldRuns;
pub use reply_sizes::ReplySizes;
pub use rows::RowName;
pub use schedule::ScheduleStats;

use hdrhistogram::Histogram;

/// Highest latency a histogram holds, in microseconds (one hour); larger values saturate.
pub const LATENCY_MAX_US: u64 = 3_600_000_000;
/// Significant figures kept by every latency histogram.
pub const LATENCY_SIGFIGS: u8 = 3;

/// Creates an empty latency histogram with kvbench's fixed bounds (no resizing on the hot path).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_US, LATENCY_SIGFIGS)
        .expect("constant histogram bounds are valid")
}

/// What one command (SET, GET, WAIT, an arbitrary command...) did during an interval.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// Replies received (requests completed).
    pub count: u64,
    /// GETs that found a value (per key for multi-key gets).
    pub hits: u64,
    /// GETs that found nothing.
    pub misses: u64,
    /// Error replies from the server.
    pub errors: u64,
    /// Connection errors attributed to this command.
    pub connection_errors: u64,
    /// Cluster `MOVED` redirections received.
    pub moved: u64,
    /// Cluster `ASK` redirections received.
    pub ask: u64,
    /// Cluster `-TRYAGAIN` replies received (each request retried after a back-off).
    pub tryagain: u64,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    /// Sum of all latencies, in microseconds (exact, unlike the histogram mean).
    pub latency_sum_us: u64,
    /// Latencies in microseconds (response times in open loop).
    pub latency: Histogram<u64>,
    /// Open loop only: service times (actual send → reply); `None` in closed loop.
    pub service: Option<Box<ServiceTimes>>,
    /// Latencies recorded with [`record_batched`](Self::record_batched) and not yet in
    /// `latency`: runs of one value and how many times it came.
    runs: HeldRuns,
    /// How many elements each reply had, when the plan asks (`None`: not counted, and
    /// no cost).
    pub reply_sizes: Option<Box<ReplySizes>>,
}

/// Service times of an open-loop interval.
#[derive(Clone, Debug)]
pub struct ServiceTimes {
    /// Sum of all service times, microseconds.
    pub sum_us: u64,
    /// Service times in microseconds.
    pub histogram: Histogram<u64>,
}

impl Default for ServiceTimes {
    fn default() -> Self {
        ServiceTimes {
            sum_us: 0,
            histogram: new_histogram(),
        }
    }
}

impl ServiceTimes {
    /// Mean service time in milliseconds, 0 when nothing was recorded.
    pub fn avg_ms(&self) -> f64 {
        if self.histogram.is_empty() {
            0.0
        } else {
            self.sum_us as f64 / self.histogram.len() as f64 / 1000.0
        }
    }
}

impl Default for OpStats {
    fn default() -> Self {
        Self::new()
    }
}

impl OpStats {
    pub fn new() -> Self {
        OpStats {
            count: 0,
            hits: 0,
            misses: 0,
            errors: 0,
            connection_errors: 0,
            moved: 0,
            ask: 0,
            tryagain: 0,
            bytes_rx: 0,
            bytes_tx: 0,
            latency_sum_us: 0,
            latency: new_histogram(),
            service: None,
            runs: HeldRuns::default(),
            reply_sizes: None,
        }
    }

    /// Stats that keep service times beside response times (open loop).
    pub fn open_loop() -> Self {
        OpStats {
            service: Some(Box::default()),
            ..OpStats::new()
        }
    }

    /// Records one completed open-loop request: its response time (from its intended
    /// send time) and its service time (from its actual send time).
    #[inline]
    pub fn record_paced(
        &mut self,
        response_us: u64,
        service_us: u64,
        bytes_tx: u64,
        bytes_rx: u64,
    ) {
        self.record(response_us, bytes_tx, bytes_rx);
        if let Some(service) = self.service.as_deref_mut() {
            service.sum_us += service_us;
            service.histogram.saturating_record(service_us.max(1));
        }
    }

    /// Records one completed request.
    #[inline]
    pub fn record(&mut self, latency_us: u64, bytes_tx: u64, bytes_rx: u64) {
        self.count += 1;
        self.bytes_tx += bytes_tx;
        self.bytes_rx += bytes_rx;
        self.latency_sum_us += latency_us;
        self.latency.saturating_record(latency_us.max(1));
    }

    /// Records one completed request like [`record`](Self::record), except that its
    /// latency reaches the histogram later, with the run of equal latencies it belongs
    /// to: the replies to a pipelined batch, read at once, share theirs, and one
    /// histogram update per run costs a sixteenth of one per reply at pipeline 16 (the
    /// runs go in a handful at a time, see [`HeldRuns`]). Call
    /// [`flush_latencies`](Self::flush_latencies) before the histogram is read.
    #[inline]
    pub fn record_batched(&mut self, latency_us: u64, bytes_tx: u64, bytes_rx: u64) {
        self.count += 1;
        self.bytes_tx += bytes_tx;
        self.bytes_rx += bytes_rx;
        self.latency_sum_us += latency_us;
        self.runs.add(latency_us.max(1), &mut self.latency);
    }

    /// Puts the latencies [`record_batched`](Self::record_batched) holds back into the
    /// histogram.
    pub fn flush_latencies(&mut self) {
        self.runs.flush(&mut self.latency);
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &OpStats) {
        self.count += other.count;
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
        self.connection_errors += other.connection_errors;
        self.moved += other.moved;
        self.ask += other.ask;
        self.tryagain += other.tryagain;
        self.bytes_rx += other.bytes_rx;
        self.bytes_tx += other.bytes_tx;
        self.latency_sum_us += other.latency_sum_us;
        self.latency
            .add(&other.latency)
            .expect("histograms share the same bounds");
        if let Some(from) = other.service.as_deref() {
            let into = self.service.get_or_insert_with(Box::default);
            into.sum_us += from.sum_us;
            into.histogram
                .add(&from.histogram)
                .expect("histograms share the same bounds");
        }
        if let Some(from) = other.reply_sizes.as_deref() {
            self.reply_sizes
                .get_or_insert_with(Box::default)
                .merge(from);
        }
    }

    /// Clears all counts, keeping the histogram's memory.
    pub fn reset(&mut self) {
        self.runs.clear();
        self.count = 0;
        self.hits = 0;
        self.misses = 0;
        self.errors = 0;
        self.connection_errors = 0;
        self.moved = 0;
        self.ask = 0;
        self.tryagain = 0;
        self.bytes_rx = 0;
        self.bytes_tx = 0;
        self.latency_sum_us = 0;
        self.latency.reset();
        if let Some(service) = self.service.as_deref_mut() {
            service.sum_us = 0;
            service.histogram.reset();
        }
        if let Some(sizes) = self.reply_sizes.as_deref_mut() {
            sizes.reset();
        }
    }

    /// Mean latency in milliseconds, 0 when nothing was recorded.
    pub fn avg_latency_ms(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.latency_sum_us as f64 / self.count as f64 / 1000.0
        }
    }

    /// Latency at percentile `p` (0-100) in milliseconds, 0 when empty.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.latency.is_empty() {
            0.0
        } else {
            self.latency.value_at_quantile(p / 100.0) as f64 / 1000.0
        }
    }

    pub fn min_ms(&self) -> f64 {
        if self.latency.is_empty() {
            0.0
        } else {
            self.latency.min() as f64 / 1000.0
        }
    }

    pub fn max_ms(&self) -> f64 {
        if self.latency.is_empty() {
            0.0
        } else {
            self.latency.max() as f64 / 1000.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_latencies_reach_the_histogram_when_flushed() {
        let mut batched = OpStats::new();
        let mut direct = OpStats::new();
        for latency in [5, 5, 5, 0, 1, 7, 7, 5, 3_600_000_000_000] {
            batched.record_batched(latency, 10, 20);
            direct.record(latency, 10, 20);
        }
        batched.flush_latencies();
        batched.flush_latencies();
        assert_eq!(batched.latency, direct.latency);
        assert_eq!(batched.count, direct.count);
        assert_eq!(batched.latency_sum_us, direct.latency_sum_us);
        assert_eq!(
            (batched.bytes_tx, batched.bytes_rx),
            (direct.bytes_tx, direct.bytes_rx)
        );
    }
}
