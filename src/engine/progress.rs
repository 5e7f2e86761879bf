//! Live progress between the per-second snapshots: each worker publishes its running
//! totals (requests answered, their latency sum, connections up) in atomics of its own,
//! and the runner adds them up as often as the plan asks (`Outputs::progress_every`) for
//! the observer's [`crate::engine::RunObserver::progress`] (a live line rewritten every
//! 250 ms, an idle mode's connection count).
//!
//! Only the owning worker writes its counters (plain relaxed stores, no read-modify-write
//! shared between threads), once per pass of its event loop.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// One worker's running totals; aligned to its own cache line so workers do not share one.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct WorkerProgress {
    requests: AtomicU64,
    latency_sum_us: AtomicU64,
    connected: AtomicU32,
}

impl WorkerProgress {
    /// Publish the worker's totals since the run started.
    #[inline]
    pub fn publish(&self, requests: u64, latency_sum_us: u64) {
        self.requests.store(requests, Ordering::Relaxed);
        self.latency_sum_us.store(latency_sum_us, Ordering::Relaxed);
    }

    /// Publish how many of the worker's clients have a connection up.
    pub fn publish_connected(&self, connected: u32) {
        self.connected.store(connected, Ordering::Relaxed);
    }
}

/// The run so far, all workers together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The run (1-based).
    pub run: u32,
    /// Time since the run started.
    pub elapsed: Duration,
    /// Requests answered so far.
    pub requests: u64,
    /// Sum of their latencies, microseconds (exact: mean = sum / requests).
    pub latency_sum_us: u64,
    /// Clients with a connection up, as last published (refreshed at each progress tick).
    pub connected: u32,
}

impl Progress {
    /// The totals of `workers` at `elapsed` into run `run`.
    pub fn sum(run: u32, elapsed: Duration, workers: &[std::sync::Arc<WorkerProgress>]) -> Self {
        let mut p = Progress {
            run,
            elapsed,
            ..Progress::default()
        };
        for w in workers {
            p.requests += w.requests.load(Ordering::Relaxed);
            p.latency_sum_us += w.latency_sum_us.load(Ordering::Relaxed);
            p.connected += w.connected.load(Ordering::Relaxed);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn sums_every_worker() {
        let a = Arc::new(WorkerProgress::default());
        let b = Arc::new(WorkerProgress::default());
        a.publish(10, 1000);
        b.publish(5, 500);
        b.publish_connected(3);
        let p = Progress::sum(2, Duration::from_millis(250), &[a, b]);
        assert_eq!(
            (p.run, p.requests, p.latency_sum_us, p.connected),
            (2, 15, 1500, 3)
        );
        assert_eq!(std::mem::align_of::<WorkerProgress>(), 64);
    }
}
