//! Adds up the pieces of one row from many inputs into one [`Row`]: counts and rates summed,
//! latency from the sum of the histograms, seconds aligned by wall-clock second.

use hdrhistogram::Histogram;

use crate::error::Error;
use crate::results::{
    IntervalSummary, Row, ServiceInterval, ServiceRow, compress_histogram, latency_at_percentile_ms,
};
use crate::stats::RowName;

/// Per-second figures one input adds to a row (already per second: summed as they are).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    pub ops: f64,
    pub hits: f64,
    pub misses: f64,
    pub moved: f64,
    pub ask: f64,
    pub connection_errors: f64,
    pub tryagain: f64,
    pub kb: f64,
    pub kb_rx: f64,
    pub kb_tx: f64,
}

impl Rates {
    fn add(&mut self, o: &Rates) {
        self.ops += o.ops;
        self.hits += o.hits;
        self.misses += o.misses;
        self.moved += o.moved;
        self.ask += o.ask;
        self.connection_errors += o.connection_errors;
        self.tryagain += o.tryagain;
        self.kb += o.kb;
        self.kb_rx += o.kb_rx;
        self.kb_tx += o.kb_tx;
    }
}

/// One input's share of one row.
#[derive(Clone, Debug, Default)]
pub struct RowPiece<'a> {
    pub count: u64,
    pub connection_errors: u64,
    /// Cluster `-TRYAGAIN` replies and error replies.
    pub tryagain: u64,
    pub errors: u64,
    /// Open loop: the whole-run service-time histogram (`None` in closed loop).
    pub service: Option<&'a Histogram<u64>>,
    pub rates: Rates,
    /// Histograms whose sum is this input's whole-run latency for the row (one for a JSON
    /// row; every interval for a log). Empty when the row never ran.
    pub histograms: Vec<&'a Histogram<u64>>,
    pub seconds: Vec<SecondPiece<'a>>,
}

/// One input's figures for one wall-clock second of a row.
#[derive(Clone, Debug, Default)]
pub struct SecondPiece<'a> {
    /// The epoch second this interval is counted in: the one nearest its start.
    pub epoch_second: u64,
    pub count: u64,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    pub average_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub histogram: Option<&'a Histogram<u64>>,
    /// Open loop: the second's service times.
    pub service: Option<ServiceSecond<'a>>,
}

/// One input's service times for one second (open loop).
#[derive(Clone, Debug, Default)]
pub struct ServiceSecond<'a> {
    pub average_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub histogram: Option<&'a Histogram<u64>>,
}

/// The epoch second nearest to `epoch_ms` (a half second rounds up), so shards started
/// a few milliseconds apart around a whole second share their seconds.
pub fn nearest_second(epoch_ms: u64) -> u64 {
    epoch_ms.saturating_add(500) / 1000
}

/// The bucket layout every merged histogram uses: the coarsest of the inputs' (largest
/// lowest discernible value, fewest significant figures), reaching the largest highest
/// value. HdrHistogram buckets are power-of-two ranges split in power-of-two steps, so each
/// input bucket lies inside one bucket of this layout and adding is exact at its precision;
/// inputs with the same layout add bucket for bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    low: u64,
    high: u64,
    sigfig: u8,
}

impl Layout {
    /// The layout for `histograms`; kvbench's own when there are none.
    pub fn of<'a>(histograms: impl IntoIterator<Item = &'a Histogram<u64>>) -> Layout {
        let mut layout: Option<Layout> = None;
        for h in histograms {
            let l = layout.get_or_insert(Layout {
                low: h.low(),
                high: h.high(),
                sigfig: h.sigfig(),
            });
            l.low = l.low.max(h.low());
            l.high = l.high.max(h.high());
            l.sigfig = l.sigfig.min(h.sigfig());
        }
        layout.unwrap_or(Layout {
            low: 1,
            high: crate::stats::LATENCY_MAX_US,
            sigfig: crate::stats::LATENCY_SIGFIGS,
        })
    }

    /// An empty histogram of this layout that grows when a value needs it.
    pub fn empty(&self) -> Result<Histogram<u64>, Error> {
        let high = self.high.max(self.low.saturating_mul(2));
        let mut h = Histogram::new_with_bounds(self.low, high, self.sigfig).map_err(|e| {
            Error::run(format!(
                "cannot merge histograms with bounds {}..{} and {} significant figures: {e:?}",
                self.low, high, self.sigfig
            ))
        })?;
        h.auto(true);
        Ok(h)
    }

    /// The sum of `histograms` in this layout.
    pub fn sum<'a>(
        &self,
        histograms: impl IntoIterator<Item = &'a Histogram<u64>>,
    ) -> Result<Histogram<u64>, Error> {
        let mut sum = self.empty()?;
        for h in histograms {
            sum.add(h)
                .map_err(|e| Error::run(format!("cannot add histograms: {e:?}")))?;
        }
        Ok(sum)
    }
}

fn min_ms(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.min() as f64 / 1000.0
    }
}

fn max_ms(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.max() as f64 / 1000.0
    }
}

/// The merged seconds of a row: `first_second` (an epoch second) and the `count` after it.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub first_second: u64,
    pub seconds: u64,
    /// The merged run's start and finish (ms since the epoch): each merged interval starts
    /// at `start + i * 1000` and the last one ends no later than `finish`.
    pub start_epoch_ms: u64,
    pub finish_epoch_ms: u64,
}

/// The longest per-second series a merge builds: 7 days. The series is dense (one entry
/// per second, as the JSON writes it), so inputs whose seconds lie further apart (a
/// damaged file, or runs days apart) are refused rather than filled with empty seconds.
pub const MAX_SECONDS: u64 = 7 * 24 * 3600;

impl Window {
    /// A window of `seconds` seconds; an error when that is more than [`MAX_SECONDS`].
    pub fn checked(
        first_second: u64,
        seconds: u64,
        start_epoch_ms: u64,
        finish_epoch_ms: u64,
    ) -> Result<Window, Error> {
        if seconds > MAX_SECONDS {
            return Err(Error::usage(format!(
                "the inputs' seconds span {seconds} s (from epoch second {first_second}), more than the {MAX_SECONDS} s (7 days) a merge aligns"
            )));
        }
        Ok(Window {
            first_second,
            seconds,
            start_epoch_ms,
            finish_epoch_ms,
        })
    }
}

/// One merged second of one row.
fn merge_second(
    pieces: &[&SecondPiece],
    layout: &Layout,
    start_epoch_ms: u64,
    end_epoch_ms: u64,
    percentiles: &[f64],
) -> Result<IntervalSummary, Error> {
    let count: u64 = pieces.iter().map(|p| p.count).sum();
    let mut s = IntervalSummary {
        start_epoch_ms,
        end_epoch_ms,
        count,
        bytes_rx: pieces.iter().map(|p| p.bytes_rx).sum(),
        bytes_tx: pieces.iter().map(|p| p.bytes_tx).sum(),
        ..IntervalSummary::default()
    };
    let busy: Vec<&&SecondPiece> = pieces.iter().filter(|p| p.count > 0).collect();
    if count == 0 {
        return Ok(s);
    }
    s.service = merge_service_second(&busy, layout, percentiles)?;
    if busy.iter().all(|p| p.histogram.is_some()) {
        let h = layout.sum(busy.iter().filter_map(|p| p.histogram))?;
        s.avg_latency_ms = h.mean() / 1000.0;
        s.accumulated_latency_ms = s.avg_latency_ms * count as f64;
        s.min_latency_ms = min_ms(&h);
        s.max_latency_ms = max_ms(&h);
        s.percentiles_ms = percentiles
            .iter()
            .map(|&p| latency_at_percentile_ms(&h, p))
            .collect();
        s.max_latency_us = if h.is_empty() { 0 } else { h.max() };
        s.compressed_histogram = compress_histogram(&h);
    } else {
        // No histograms for this second: sums of latency (average times count) give the
        // true mean, min and max are exact; percentiles cannot be had, so none are given.
        let sum: f64 = busy
            .iter()
            .map(|p| p.average_ms.unwrap_or(0.0) * p.count as f64)
            .sum();
        s.avg_latency_ms = sum / count as f64;
        s.accumulated_latency_ms = sum;
        s.min_latency_ms = busy
            .iter()
            .filter_map(|p| p.min_ms)
            .fold(f64::INFINITY, f64::min);
        if !s.min_latency_ms.is_finite() {
            s.min_latency_ms = 0.0;
        }
        s.max_latency_ms = busy.iter().filter_map(|p| p.max_ms).fold(0.0, f64::max);
        s.max_latency_us = (s.max_latency_ms * 1000.0).round() as u64;
    }
    Ok(s)
}

/// The service times of one merged second: from the sum of the seconds' histograms
/// where every input has one, else the true mean, min and max and no percentiles; `None`
/// when no input measured service times (closed loop).
fn merge_service_second(
    busy: &[&&SecondPiece],
    layout: &Layout,
    percentiles: &[f64],
) -> Result<Option<Box<ServiceInterval>>, Error> {
    let parts: Vec<(u64, &ServiceSecond)> = busy
        .iter()
        .filter_map(|p| p.service.as_ref().map(|s| (p.count, s)))
        .collect();
    if parts.is_empty() {
        return Ok(None);
    }
    let count: u64 = parts.iter().map(|(c, _)| c).sum();
    let mut out = ServiceInterval::default();
    if parts.iter().all(|(_, s)| s.histogram.is_some()) {
        let h = layout.sum(parts.iter().filter_map(|(_, s)| s.histogram))?;
        out.avg_latency_ms = if h.is_empty() { 0.0 } else { h.mean() / 1000.0 };
        out.accumulated_latency_ms = out.avg_latency_ms * count as f64;
        out.min_latency_ms = min_ms(&h);
        out.max_latency_ms = max_ms(&h);
        out.percentiles_ms = percentiles
            .iter()
            .map(|&p| latency_at_percentile_ms(&h, p))
            .collect();
        out.max_latency_us = if h.is_empty() { 0 } else { h.max() };
        out.compressed_histogram = compress_histogram(&h);
    } else {
        let sum: f64 = parts.iter().map(|(c, s)| s.average_ms * *c as f64).sum();
        out.accumulated_latency_ms = sum;
        out.avg_latency_ms = if count == 0 { 0.0 } else { sum / count as f64 };
        out.min_latency_ms = parts
            .iter()
            .map(|(_, s)| s.min_ms)
            .fold(f64::INFINITY, f64::min);
        if !out.min_latency_ms.is_finite() {
            out.min_latency_ms = 0.0;
        }
        out.max_latency_ms = parts.iter().map(|(_, s)| s.max_ms).fold(0.0, f64::max);
        out.max_latency_us = (out.max_latency_ms * 1000.0).round() as u64;
    }
    Ok(Some(Box::new(out)))
}

/// The whole-run service times of a row: the sum of the pieces' service histograms, or
/// `None` when no piece has one (closed loop).
fn merge_service_row(
    pieces: &[RowPiece],
    layout: &Layout,
) -> Result<Option<Box<ServiceRow>>, Error> {
    if pieces.iter().all(|p| p.service.is_none()) {
        return Ok(None);
    }
    let h = layout.sum(pieces.iter().filter_map(|p| p.service))?;
    let count: u64 = pieces.iter().map(|p| p.count).sum();
    let avg = if h.is_empty() { 0.0 } else { h.mean() / 1000.0 };
    Ok(Some(Box::new(ServiceRow {
        avg_latency_ms: avg,
        accumulated_latency_ms: avg * count as f64,
        min_latency_ms: min_ms(&h),
        max_latency_ms: max_ms(&h),
        histogram: h,
    })))
}

/// The sum of `counts`, at most `u64::MAX`.
pub fn saturating_sum(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

/// Merges one row's pieces (one per input that has the row) into a [`Row`].
///
/// Count, connection errors and every rate are sums. The whole-run histogram is the sum
/// of the pieces' histograms in `layout`; the average, min and max come from it. Seconds
/// are summed per epoch second of `window`.
pub fn merge_row(
    name: RowName,
    pieces: &[RowPiece],
    layout: &Layout,
    window: &Window,
    percentiles: &[f64],
) -> Result<Row, Error> {
    let mut rates = Rates::default();
    for p in pieces {
        rates.add(&p.rates);
    }
    let histogram = layout.sum(pieces.iter().flat_map(|p| p.histograms.iter().copied()))?;
    let count: u64 = pieces.iter().map(|p| p.count).sum();
    let avg = if histogram.is_empty() {
        0.0
    } else {
        histogram.mean() / 1000.0
    };

    let mut by_second: Vec<Vec<&SecondPiece>> = vec![Vec::new(); window.seconds as usize];
    for piece in pieces {
        for s in &piece.seconds {
            let i = s.epoch_second.saturating_sub(window.first_second) as usize;
            if let Some(slot) = by_second.get_mut(i) {
                slot.push(s);
            }
        }
    }
    // An input with requests but no seconds (an `-x N` file's aggregate, which has no
    // series of its own): a series of the others' seconds alone would not add up to the
    // row's count, so the merged row has none rather than a misleading one.
    let unseen = pieces.iter().any(|p| p.count > 0 && p.seconds.is_empty());
    let mut series = Vec::with_capacity(by_second.len());
    for (i, seconds) in by_second.iter().enumerate().filter(|_| !unseen) {
        let start = window.start_epoch_ms + i as u64 * 1000;
        let end = (start + 1000).min(window.finish_epoch_ms.max(start));
        series.push(merge_second(seconds, layout, start, end, percentiles)?);
    }

    Ok(Row {
        name,
        count,
        ops_per_sec: rates.ops,
        hits_per_sec: rates.hits,
        misses_per_sec: rates.misses,
        moved_per_sec: rates.moved,
        ask_per_sec: rates.ask,
        // Counts a file states without a histogram to back them: saturating, so a damaged
        // file cannot overflow the merge.
        tryagain: saturating_sum(pieces.iter().map(|p| p.tryagain)),
        tryagain_per_sec: rates.tryagain,
        connection_errors: saturating_sum(pieces.iter().map(|p| p.connection_errors)),
        connection_errors_per_sec: rates.connection_errors,
        errors: saturating_sum(pieces.iter().map(|p| p.errors)),
        avg_latency_ms: avg,
        accumulated_latency_ms: avg * count as f64,
        min_latency_ms: min_ms(&histogram),
        max_latency_ms: max_ms(&histogram),
        kb_per_sec: rates.kb,
        kb_rx_per_sec: rates.kb_rx,
        kb_tx_per_sec: rates.kb_tx,
        histogram,
        series,
        service: merge_service_row(pieces, layout)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(sigfig: u8, low: u64, values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(low, 3_600_000_000, sigfig).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn nearest_second_rounds_half_up() {
        assert_eq!(nearest_second(999_998), 1000);
        assert_eq!(nearest_second(1_000_002), 1000);
        assert_eq!(nearest_second(1_000_499), 1000);
        assert_eq!(nearest_second(1_000_500), 1001);
    }

    #[test]
    fn layout_is_the_coarsest_and_adds_exactly() {
        let fine = hist(3, 1, &[100, 12_345]);
        let coarse = hist(2, 10, &[200]);
        let layout = Layout::of([&fine, &coarse]);
        assert_eq!(
            layout,
            Layout {
                low: 10,
                high: 3_600_000_000,
                sigfig: 2
            }
        );
        let sum = layout.sum([&fine, &coarse]).unwrap();
        assert_eq!(sum.len(), 3);
        // Same layout: bucket for bucket.
        let same = Layout::of([&fine]).sum([&fine, &fine]).unwrap();
        let mut twice = fine.clone();
        twice.add(&fine).unwrap();
        assert_eq!(same, twice);
        assert_eq!(same.max(), fine.max());
        // Nothing recorded: kvbench's layout.
        assert_eq!(Layout::of([]).sigfig, 3);
    }

    #[test]
    fn seconds_without_histograms_give_true_mean_min_max_and_no_percentiles() {
        let a = SecondPiece {
            epoch_second: 10,
            count: 1,
            average_ms: Some(1.0),
            min_ms: Some(1.0),
            max_ms: Some(1.0),
            ..SecondPiece::default()
        };
        let b = SecondPiece {
            epoch_second: 10,
            count: 3,
            bytes_rx: 7,
            average_ms: Some(3.0),
            min_ms: Some(2.0),
            max_ms: Some(4.0),
            ..SecondPiece::default()
        };
        let idle = SecondPiece {
            epoch_second: 10,
            ..SecondPiece::default()
        };
        let s = merge_second(&[&a, &b, &idle], &Layout::of([]), 10_000, 11_000, &[50.0]).unwrap();
        assert_eq!((s.count, s.bytes_rx), (4, 7));
        assert_eq!(s.avg_latency_ms, 2.5);
        assert_eq!((s.min_latency_ms, s.max_latency_ms), (1.0, 4.0));
        assert!(s.percentiles_ms.is_empty());
        assert!(s.compressed_histogram.is_empty());
    }

    #[test]
    fn seconds_with_histograms_take_everything_from_their_sum() {
        let h1 = hist(3, 1, &[100, 200]);
        let h2 = hist(3, 1, &[300]);
        let piece = |h| SecondPiece {
            epoch_second: 5,
            count: 2,
            histogram: Some(h),
            ..SecondPiece::default()
        };
        let (a, mut b) = (piece(&h1), piece(&h2));
        b.count = 1;
        let s = merge_second(&[&a, &b], &Layout::of([&h1]), 5000, 6000, &[50.0, 100.0]).unwrap();
        assert_eq!(s.count, 3);
        assert_eq!(s.percentiles_ms, [0.2, 0.3]);
        assert_eq!(
            (s.min_latency_ms, s.max_latency_ms, s.max_latency_us),
            (0.1, 0.3, 300)
        );
        assert!((s.avg_latency_ms - 0.2).abs() < 0.001);
        assert_eq!(
            crate::results::decode_histogram(&s.compressed_histogram)
                .unwrap()
                .len(),
            3
        );
    }
}
