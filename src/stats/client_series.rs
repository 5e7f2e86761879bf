//! `--client-stats`: what one client did, second by second, kept beside the worker's
//! per-thread stats (the report writes it as a CSV file per client).

use hdrhistogram::Histogram;

use crate::stats::{LATENCY_MAX_US, rows};

/// Significant figures of each client's latency histograms: two keep one histogram near
/// 26 KB (three would need about 200 KB), which matters with thousands of clients.
pub const CLIENT_STATS_SIGFIGS: u8 = 2;

/// One row's (SET, GET or WAIT) figures in one second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowSecond {
    pub requests: u64,
    pub latency_sum_us: u64,
    pub bytes_tx: u64,
    pub bytes_rx: u64,
}

/// Everything one client did in one second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Second {
    /// Indexed by built-in row ([`rows::SET`], [`rows::GET`], [`rows::WAIT`]).
    pub rows: [RowSecond; rows::COUNT],
    /// GET hits and misses (per key for multi-key gets).
    pub hits: u64,
    pub misses: u64,
}

/// What one client did: per second and per built-in row ([`rows::SET`], [`rows::GET`],
/// [`rows::WAIT`]) the requests, latency sum, bytes and GET hits/misses, plus one
/// full-run latency histogram per row.
///
/// Recording allocates only when a second beyond the stored ones starts (the per-second
/// vector grows; about 112 bytes per second) and on a row's first request (its
/// histogram, [`CLIENT_STATS_SIGFIGS`] significant figures). Rows other than the three
/// built-in ones are ignored: arbitrary-command files are not written yet.
#[derive(Clone, Debug, Default)]
pub struct ClientSeries {
    seconds: Vec<Second>,
    latency: [Option<Histogram<u64>>; rows::COUNT],
}

impl ClientSeries {
    /// An empty series; allocates nothing until the first request.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one completed request of `row` in second `second` of the run (0-based):
    /// its latency in microseconds and the bytes it sent and received.
    #[inline]
    pub fn record(&mut self, second: u32, row: usize, latency_us: u64, tx: u64, rx: u64) {
        if row >= rows::COUNT {
            return;
        }
        let r = &mut self.second_mut(second).rows[row];
        r.requests += 1;
        r.latency_sum_us += latency_us;
        r.bytes_tx += tx;
        r.bytes_rx += rx;
        self.latency[row]
            .get_or_insert_with(new_client_histogram)
            .saturating_record(latency_us.max(1));
    }

    /// Counts `n` GET hits in second `second`.
    #[inline]
    pub fn hit(&mut self, second: u32, n: u64) {
        self.second_mut(second).hits += n;
    }

    /// Counts `n` GET misses in second `second`.
    #[inline]
    pub fn miss(&mut self, second: u32, n: u64) {
        self.second_mut(second).misses += n;
    }

    /// Every second from 0 to the last one anything was recorded in.
    pub fn seconds(&self) -> &[Second] {
        &self.seconds
    }

    /// The full-run latency histogram of built-in `row`, if it saw a request.
    pub fn latency(&self, row: usize) -> Option<&Histogram<u64>> {
        self.latency.get(row).and_then(Option::as_ref)
    }

    /// Requests of `row` in the whole run (0 for rows beyond the built-in ones).
    pub fn requests(&self, row: usize) -> u64 {
        if row >= rows::COUNT {
            return 0;
        }
        self.seconds.iter().map(|s| s.rows[row].requests).sum()
    }

    #[inline]
    fn second_mut(&mut self, second: u32) -> &mut Second {
        let i = second as usize;
        if i >= self.seconds.len() {
            self.grow_to(i);
        }
        &mut self.seconds[i]
    }

    #[cold]
    fn grow_to(&mut self, i: usize) {
        self.seconds.resize(i + 1, Second::default());
    }
}

/// An empty histogram with the bounds of [`crate::stats`] and
/// [`CLIENT_STATS_SIGFIGS`] significant figures.
fn new_client_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_US, CLIENT_STATS_SIGFIGS)
        .expect("constant histogram bounds are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_rows_are_counted_apart() {
        let mut s = ClientSeries::new();
        s.record(0, rows::SET, 100, 50, 5);
        s.record(0, rows::SET, 201, 50, 5);
        s.record(0, rows::GET, 1_500_000, 20, 40);
        s.hit(0, 1);
        s.miss(0, 2);
        // Second 1 idle; second 2 has one WAIT.
        s.record(2, rows::WAIT, 7, 10, 4);
        // Out-of-range rows are ignored, not a panic.
        s.record(2, 7, 1, 1, 1);
        assert_eq!(s.seconds().len(), 3);
        assert_eq!(
            (s.requests(rows::SET), s.requests(rows::GET), s.requests(7)),
            (2, 1, 0)
        );
        assert_eq!(s.seconds()[1], Second::default());
        assert_eq!((s.seconds()[0].hits, s.seconds()[0].misses), (1, 2));
    }

    #[test]
    fn histograms_are_two_significant_figures_and_lazy() {
        let mut s = ClientSeries::new();
        assert!(s.latency.iter().all(Option::is_none));
        s.record(0, rows::SET, 12_345, 0, 0);
        let h = s.latency(rows::SET).unwrap();
        assert_eq!(h.sigfig(), CLIENT_STATS_SIGFIGS);
        assert!(s.latency(rows::GET).is_none() && s.latency(rows::WAIT).is_none());
    }
}
