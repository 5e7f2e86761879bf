//! `--client-stats`: what one client did, second by second, kept beside the worker's
//! per-thread stats (the report writes it as a CSV file per client).

use hdrhistogram::Histogram;

use crate::stats::LATENCY_MAX_US;

/// Significant figures of each client's latency histograms: two keep one histogram near
/// 26 KB (three would need about 200 KB), which matters with thousands of clients.
pub const CLIENT_STATS_SIGFIGS: u8 = 2;

/// One row's figures in one second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowSecond {
    pub requests: u64,
    pub latency_sum_us: u64,
    pub bytes_tx: u64,
    pub bytes_rx: u64,
}

/// What one client did: per second and per stats row (the built-in
/// [`rows::SET`](crate::stats::rows::SET), `GET`, `WAIT`, or one per arbitrary command
/// row) the requests,
/// latency sum and bytes, the GET hits and misses per second, plus one full-run latency
/// histogram per row.
///
/// Recording allocates only when a second beyond the stored ones starts (the per-second
/// vectors grow by one row's worth, 32 bytes a row) and on a row's first request (its
/// histogram, [`CLIENT_STATS_SIGFIGS`] significant figures). Rows past the count given
/// at creation (a pool's or the visibility lag's) are ignored.
#[derive(Clone, Debug, Default)]
pub struct ClientSeries {
    rows: usize,
    /// `second * rows + row`.
    figures: Vec<RowSecond>,
    /// Per second: GET hits, misses.
    hits_misses: Vec<[u64; 2]>,
    latency: Vec<Option<Histogram<u64>>>,
}

impl ClientSeries {
    /// An empty series of `rows` stats rows; allocates nothing per second until the
    /// first request.
    pub fn new(rows: usize) -> Self {
        ClientSeries {
            rows,
            figures: Vec::new(),
            hits_misses: Vec::new(),
            latency: vec![None; rows],
        }
    }

    /// The stats rows kept.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Records one completed request of `row` in second `second` of the run (0-based):
    /// its latency in microseconds and the bytes it sent and received.
    #[inline]
    pub fn record(&mut self, second: u32, row: usize, latency_us: u64, tx: u64, rx: u64) {
        if row >= self.rows {
            return;
        }
        let i = self.slot(second) + row;
        let r = &mut self.figures[i];
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
        self.slot(second);
        self.hits_misses[second as usize][0] += n;
    }

    /// Counts `n` GET misses in second `second`.
    #[inline]
    pub fn miss(&mut self, second: u32, n: u64) {
        self.slot(second);
        self.hits_misses[second as usize][1] += n;
    }

    /// Seconds from 0 to the last one anything was recorded in.
    pub fn seconds(&self) -> usize {
        self.hits_misses.len()
    }

    /// Every row's figures in second `second` (empty past the last one).
    pub fn second(&self, second: usize) -> &[RowSecond] {
        let start = second * self.rows;
        self.figures.get(start..start + self.rows).unwrap_or(&[])
    }

    /// GET hits and misses in second `second`.
    pub fn hits_misses(&self, second: usize) -> (u64, u64) {
        self.hits_misses
            .get(second)
            .map_or((0, 0), |&[hits, misses]| (hits, misses))
    }

    /// The full-run latency histogram of `row`, if it saw a request.
    pub fn latency(&self, row: usize) -> Option<&Histogram<u64>> {
        self.latency.get(row).and_then(Option::as_ref)
    }

    /// Requests of `row` in the whole run (0 for rows not kept).
    pub fn requests(&self, row: usize) -> u64 {
        if row >= self.rows {
            return 0;
        }
        (0..self.seconds())
            .map(|s| self.second(s)[row].requests)
            .sum()
    }

    /// Where second `second`'s rows start in `figures`, grown to hold it.
    #[inline]
    fn slot(&mut self, second: u32) -> usize {
        let i = second as usize;
        if i >= self.hits_misses.len() {
            self.grow_to(i);
        }
        i * self.rows
    }

    #[cold]
    fn grow_to(&mut self, i: usize) {
        self.hits_misses.resize(i + 1, [0, 0]);
        self.figures
            .resize((i + 1) * self.rows, RowSecond::default());
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
    use crate::stats::rows;

    #[test]
    fn seconds_and_rows_are_counted_apart() {
        let mut s = ClientSeries::new(rows::COUNT);
        s.record(0, rows::SET, 100, 50, 5);
        s.record(0, rows::SET, 201, 50, 5);
        s.record(0, rows::GET, 1_500_000, 20, 40);
        s.hit(0, 1);
        s.miss(0, 2);
        // Second 1 idle; second 2 has one WAIT.
        s.record(2, rows::WAIT, 7, 10, 4);
        // Out-of-range rows are ignored, not a panic.
        s.record(2, 7, 1, 1, 1);
        assert_eq!(s.seconds(), 3);
        assert_eq!(
            (s.requests(rows::SET), s.requests(rows::GET), s.requests(7)),
            (2, 1, 0)
        );
        assert_eq!(s.second(1), [RowSecond::default(); 3]);
        assert_eq!(s.second(2)[rows::WAIT].latency_sum_us, 7);
        assert_eq!(s.second(3), []);
        assert_eq!(s.hits_misses(0), (1, 2));
        assert_eq!(s.hits_misses(1), (0, 0));
    }

    #[test]
    fn any_number_of_rows() {
        let mut s = ClientSeries::new(5);
        s.record(1, 4, 10, 1, 2);
        s.record(1, 0, 30, 1, 2);
        assert_eq!((s.rows(), s.seconds()), (5, 2));
        assert_eq!(s.second(1)[4].requests, 1);
        assert_eq!(s.requests(0), 1);
        assert!(s.latency(4).is_some() && s.latency(3).is_none());
    }

    #[test]
    fn histograms_are_two_significant_figures_and_lazy() {
        let mut s = ClientSeries::new(rows::COUNT);
        assert!(s.latency.iter().all(Option::is_none));
        s.record(0, rows::SET, 12_345, 0, 0);
        let h = s.latency(rows::SET).unwrap();
        assert_eq!(h.sigfig(), CLIENT_STATS_SIGFIGS);
        assert!(s.latency(rows::GET).is_none() && s.latency(rows::WAIT).is_none());
    }
}
