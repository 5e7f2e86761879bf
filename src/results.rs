//! The figures of finished runs as every report shows them: rows of rates, latencies and series.
//!
//! The runner turns raw merged [`OpStats`](crate::stats::OpStats) into one [`Results`] per run
//! (`ALL STATS`, `RUN #i RESULTS`), and [`aggregate`] builds BEST, WORST and
//! AGGREGATED AVERAGE from several. Reports (`report::{table,json,hdr}`) read only these.

use hdrhistogram::Histogram;

/// The name of a table row and of its histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowName {
    /// Table/JSON row name: `Sets`, `Gets`, `Waits`, `Hsets`, `Totals`.
    pub row: String,
    /// Histogram name: `SET`, `GET`, `WAIT`, `HSET`; file names use it (`P_SET_command_run_1.txt`).
    pub hist: String,
    /// Whether the Hits/sec and Misses/sec cells apply (GET-like rows and Totals).
    pub has_hits: bool,
}

/// One second (or the last partial second) of one row.
#[derive(Clone, Debug, Default)]
pub struct IntervalSummary {
    /// Start and end of the interval, milliseconds since the Unix epoch.
    pub start_epoch_ms: u64,
    pub end_epoch_ms: u64,
    pub count: u64,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    pub avg_latency_ms: f64,
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    /// Latencies at `OutputConfig::print_percentiles`, same order, in milliseconds.
    pub percentiles_ms: Vec<f64>,
    /// Highest latency in the interval, microseconds (the `.hgrm` Interval_Max column).
    pub max_latency_us: u64,
    /// The interval's histogram, V2 compressed and base64 encoded (`HISTF...`).
    pub compressed_histogram: String,
}

/// One row of a results table, with everything JSON and HDR files need.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: RowName,
    pub count: u64,
    pub ops_per_sec: f64,
    pub hits_per_sec: f64,
    pub misses_per_sec: f64,
    pub connection_errors: u64,
    pub connection_errors_per_sec: f64,
    /// Error replies received.
    pub errors: u64,
    pub avg_latency_ms: f64,
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    pub kb_per_sec: f64,
    pub kb_rx_per_sec: f64,
    pub kb_tx_per_sec: f64,
    /// Whole-run latency histogram, microseconds.
    pub histogram: Histogram<u64>,
    /// One entry per second of the run.
    pub series: Vec<IntervalSummary>,
}

/// One titled block of results: `ALL STATS`, `RUN #2 RESULTS`, `BEST RUN RESULTS`, ...
#[derive(Clone, Debug)]
pub struct Results {
    pub title: String,
    /// 1-based run number, used in HDR file names (`_run_N`); aggregates use the best run's.
    pub run_number: u32,
    pub start_epoch_ms: u64,
    pub finish_epoch_ms: u64,
    pub duration_ms: u64,
    pub interrupted: bool,
    /// Command rows in display order, `Totals` last.
    pub rows: Vec<Row>,
}
