//! The typed model of a result file: what kvbench's and memtier_benchmark's JSON and the
//! HdrHistogram interval logs hold, as read, before any merging or rendering.

use hdrhistogram::Histogram;

use super::ordered::Json;
use crate::results::Unanswered;

/// One file read by [`super::read_file`].
#[derive(Clone, Debug)]
pub struct ResultFile {
    /// The file's name as the user gave it; every error message starts with it.
    pub name: String,
    pub content: Content,
}

/// What a result file turned out to be.
#[derive(Clone, Debug)]
pub enum Content {
    /// A kvbench or memtier_benchmark `--json-out-file` document.
    Json(JsonResult),
    /// An HdrHistogram interval log: a `.hgrm` file or a `--hdr-log` file.
    IntervalLog(IntervalLog),
}

/// A `--json-out-file` document (format version 2, kvbench's or memtier_benchmark's).
#[derive(Clone, Debug)]
pub struct JsonResult {
    /// The `"configuration"` object, every entry in file order.
    pub configuration: Vec<(String, Json)>,
    /// The configuration facts merging needs, typed.
    pub config: ConfigFacts,
    pub run_info: RunInformation,
    /// Every results block, in file order: `ALL STATS`, or `RUN #i RESULTS`..., `BEST RUN
    /// RESULTS`, `WORST RUN RESULTS`, `AGGREGATED AVERAGE RESULTS (N runs)`.
    pub blocks: Vec<Block>,
    /// A rate sweep's curve (kvbench's `"Rate Steps"`), when the run was one.
    pub rate_steps: Option<RateSteps>,
}

/// kvbench's `"Rate Steps"` object: a rate sweep's latency-throughput curve.
///
/// ```text
/// "Rate Steps": {"SLO": "p99:5", "Highest Rate Held": 20000, "Planned Steps": 4,
///   "Steps": [{"Target Rate": 10000, "Achieved Rate": 9998.20, "p50.00": 0.120,
///              "p99.00": 0.410, "p99.90": 0.950, "Late": 0, "Unfinished": 0,
///              "SLO Value": 0.410, "Held": "true"}, ...]}
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateSteps {
    /// `"SLO"` as written (`p99:5`), when the sweep had an objective.
    pub slo: Option<String>,
    /// `"Highest Rate Held"`: `None` when absent, or `null` (no step held the objective).
    pub highest_rate_held: Option<u64>,
    /// `"Planned Steps"`: the sweep stops early at the first step that breaks the objective.
    pub planned_steps: Option<u64>,
    /// `"Interrupted": "true"`: Ctrl-C ended the sweep in its last step.
    pub interrupted: bool,
    /// The steps that ran, in order.
    pub steps: Vec<RateStep>,
}

/// One step of [`RateSteps`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateStep {
    /// `"Target Rate"`: requests per second aimed at, all connections together.
    pub target_per_sec: f64,
    /// `"Achieved Rate"`: requests answered per second.
    pub achieved_per_sec: f64,
    /// Response-time percentiles over the step (`p50.00`, `p99.00`, `p99.90`), ms.
    pub percentiles: Vec<Percentile>,
    /// `"Late"`: requests sent late; `"Unfinished"`: requests the step ended before
    /// answering.
    pub late: Option<u64>,
    pub unfinished: Option<u64>,
    /// `"SLO Value"` (ms) and `"Held"`, with an objective.
    pub slo_value_ms: Option<f64>,
    pub held: Option<bool>,
}

impl RateStep {
    /// The step's latency at percentile `percent` (ms), when the file gives it.
    pub fn percentile_ms(&self, percent: f64) -> Option<f64> {
        find_percentile(&self.percentiles, percent)
    }
}

/// The latency written for `percent` in `points` (keys carry two decimals, so `99.9`
/// matches `p99.90`).
pub fn find_percentile(points: &[Percentile], percent: f64) -> Option<f64> {
    points
        .iter()
        .find(|p| (p.percent - percent).abs() < 0.005)
        .map(|p| p.latency_ms)
}

/// Typed configuration entries (absent when the file lacks them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigFacts {
    /// `"protocol"`: `redis`, `resp2`, `resp3`, `memcache_text`, `memcache_binary`.
    pub protocol: Option<String>,
    /// `"run_count"` (`-x`).
    pub run_count: Option<u64>,
    /// `"threads"` and `"clients"` (per thread).
    pub threads: Option<u64>,
    pub clients: Option<u64>,
}

/// The `"run information"` object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunInformation {
    pub threads: Option<u64>,
    pub connections_per_thread: Option<u64>,
    /// `"Requests per client"` (`-n`), or else `"Seconds"` (`--test-time`).
    pub requests_per_client: Option<u64>,
    pub seconds: Option<u64>,
    pub format_version: Option<u64>,
}

/// Which results block this is, from its title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// `ALL STATS`: the only run.
    AllStats,
    /// `RUN #i RESULTS` (1-based).
    Run(u32),
    Best,
    Worst,
    /// `AGGREGATED AVERAGE RESULTS (N runs)`.
    Aggregated(u32),
    /// Any other title holding a `"Runtime"` object.
    Other,
}

impl BlockKind {
    /// The kind of a block titled `title`.
    pub fn from_title(title: &str) -> BlockKind {
        let number = |s: &str| s.trim().parse::<u32>().ok();
        if title == "ALL STATS" {
            BlockKind::AllStats
        } else if title == "BEST RUN RESULTS" {
            BlockKind::Best
        } else if title == "WORST RUN RESULTS" {
            BlockKind::Worst
        } else if let Some(n) = title
            .strip_prefix("RUN #")
            .and_then(|s| s.strip_suffix(" RESULTS"))
            .and_then(number)
        {
            BlockKind::Run(n)
        } else if let Some(n) = title
            .strip_prefix("AGGREGATED AVERAGE RESULTS (")
            .and_then(|s| s.strip_suffix(" runs)"))
            .and_then(number)
        {
            BlockKind::Aggregated(n)
        } else {
            BlockKind::Other
        }
    }
}

/// One results block.
#[derive(Clone, Debug)]
pub struct Block {
    pub title: String,
    pub kind: BlockKind,
    pub runtime: Runtime,
    /// Command rows in table order, `Totals` last.
    pub rows: Vec<RowData>,
    /// The `"SET": [{"<=msec", "percent"}, ...]` arrays, when the run did not hide them.
    pub distributions: Vec<Distribution>,
    /// kvbench's open-loop `"Schedule"` object, when the run had a rate.
    pub schedule: Option<ScheduleData>,
    /// kvbench's `"Servers"` object (a pool): one row per member, keyed `host:port`.
    pub servers: Vec<RowData>,
    /// kvbench's `"Replica Visibility"` object (`--visibility-from`).
    pub visibility: Option<VisibilityData>,
    /// kvbench's closed-loop `"Unfinished"` object, when the run ended with requests
    /// unanswered.
    pub unfinished: Option<UnfinishedData>,
}

/// kvbench's `"Unfinished"` object: what a closed-loop run left unanswered at its end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnfinishedData {
    /// `"In Flight At End"` and `"Oldest Age"` (ms, to the µs).
    pub unanswered: Unanswered,
    /// `"Warning"`, written when they hide a stall.
    pub warning: Option<String>,
}

/// kvbench's `"Schedule"` object: how an open-loop run kept its schedule.
#[derive(Clone, Debug, Default)]
pub struct ScheduleData {
    /// `"Target Rate"`: requests per second aimed at (this process's share under `--shard`).
    pub target_per_sec: u64,
    /// `"Rate Set"` is `per connection` (`--rate-limiting`) rather than `in all`.
    pub per_connection: bool,
    /// `"Arrival"`: `uniform` or `poisson`.
    pub arrival: String,
    pub achieved_per_sec: f64,
    pub sent: u64,
    pub late: u64,
    /// `"Late Waiting For Connection"`.
    pub late_blocked: u64,
    pub unsent_at_end: u64,
    pub in_flight_at_end: u64,
    /// `"Lag"` > `"Compressed Histogram"` (µs): actual minus intended send time.
    pub lag: Option<Histogram<u64>>,
    /// `"Unfinished Age"` > `"Compressed Histogram"` (µs): how old each unfinished request
    /// was when the run ended (written by kvbench since merges of sweeps need it).
    pub unfinished_age: Option<Histogram<u64>>,
}

/// kvbench's `"Replica Visibility"` object.
#[derive(Clone, Debug)]
pub struct VisibilityData {
    pub timeouts: u64,
    pub untracked: u64,
    /// The lag as a row (its count is the writes seen, its histogram the lag, µs).
    pub lag: RowData,
}

/// A row's (or a second's) `"Service Latency"` object: open-loop service times.
#[derive(Clone, Debug, Default)]
pub struct ServiceData {
    pub average_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    pub percentiles: Vec<Percentile>,
    /// The compressed histogram (µs), when written (every row; seconds since kvbench
    /// writes them there too).
    pub histogram: Option<Histogram<u64>>,
}

impl Block {
    /// The `Totals` row (always the last; the reader checks it is there).
    pub fn totals(&self) -> Option<&RowData> {
        self.rows.last()
    }

    /// Every row but `Totals`.
    pub fn command_rows(&self) -> &[RowData] {
        &self.rows[..self.rows.len().saturating_sub(1)]
    }
}

/// The `"Runtime"` object. memtier writes zeros for its AGGREGATED block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Runtime {
    /// Milliseconds since the Unix epoch.
    pub start_epoch_ms: u64,
    pub finish_epoch_ms: u64,
    pub duration_ms: u64,
    pub interrupted: bool,
    /// `"Stopped by error"`: kvbench's, only in a run an error ended early.
    pub stopped_by: Option<String>,
}

/// One percentile point: `"p99.90": 0.311` is `{ percent: 99.9, latency_ms: 0.311 }`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percentile {
    pub percent: f64,
    pub latency_ms: f64,
}

/// One row of a results block (`Sets`, `Gets`, `Hsets`, ..., `Totals`), every figure as
/// written (latencies in milliseconds, rates per second).
#[derive(Clone, Debug)]
pub struct RowData {
    /// The row's name: `Sets`.
    pub name: String,
    /// The histogram's name: `SET` (from the block's distribution arrays, or derived from
    /// the row name); `FULL_RUN` for `Totals`.
    pub hist_name: String,
    /// Whether the table shows Hits/sec and Misses/sec for this row (`Gets` and `Totals`
    /// of a SET/GET workload; no row of an arbitrary-command workload).
    pub has_hits: bool,
    pub count: u64,
    pub ops_per_sec: f64,
    pub hits_per_sec: f64,
    pub misses_per_sec: f64,
    /// `MOVED/sec` and `ASK/sec`: present only in `--cluster-mode` results.
    pub moved_per_sec: Option<f64>,
    pub ask_per_sec: Option<f64>,
    pub connection_errors_per_sec: f64,
    pub connection_errors: u64,
    /// `"Latency"` (memtier writes 0 in Totals).
    pub latency_ms: f64,
    pub average_latency_ms: f64,
    /// `"Accumulated Latency"`: whole milliseconds, truncated by the writer.
    pub accumulated_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    pub kb_per_sec: f64,
    pub kb_rx_per_sec: f64,
    pub kb_tx_per_sec: f64,
    /// `"TRYAGAIN"` and `"TRYAGAIN/sec"` (kvbench, cluster mode).
    pub tryagain: u64,
    pub tryagain_per_sec: f64,
    /// `"Errors"`: error replies (kvbench writes it in a pool member's row).
    pub errors: u64,
    /// `"Service Latency"` (kvbench, open loop).
    pub service: Option<ServiceData>,
    /// The `"Time-Serie"`, one entry per second of the run, ordered by second.
    pub series: Vec<Second>,
    /// `"Percentile Latencies"`, in file order.
    pub percentiles: Vec<Percentile>,
    /// The decoded `"Compressed Histogram"` (microseconds); `None` when the file has none.
    /// For the `Totals` of memtier's AGGREGATED block, which memtier writes empty, the sum
    /// of the command rows' histograms.
    pub histogram: Option<Histogram<u64>>,
}

/// One entry of a row's `"Time-Serie"`.
#[derive(Clone, Debug, Default)]
pub struct Second {
    /// The entry's key: seconds since the block's start time.
    pub offset: u64,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    pub count: u64,
    /// Latency figures; writers leave them out of a second with no requests.
    pub average_latency_ms: Option<f64>,
    pub accumulated_latency_ms: Option<f64>,
    pub min_latency_ms: Option<f64>,
    pub max_latency_ms: Option<f64>,
    pub percentiles: Vec<Percentile>,
    /// A compressed histogram of the second, when the writer put one in (kvbench does;
    /// memtier_benchmark 2.2 does not).
    pub histogram: Option<Histogram<u64>>,
    /// `"Service Latency"` of the second (kvbench, open loop).
    pub service: Option<ServiceData>,
}

/// One distribution array of a block: `"SET": [{"<=msec": 0.015, "percent": 0.0}, ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    pub name: String,
    /// `(<=msec, percent)` points in file order.
    pub points: Vec<(f64, f64)>,
}

/// An HdrHistogram interval log.
#[derive(Clone, Debug, Default)]
pub struct IntervalLog {
    /// The title comment kvbench and memtier put first: `SET command`, `Full Run command`.
    pub title: Option<String>,
    /// `#[Histogram log format version 1.3]`: `1.3`.
    pub format_version: Option<String>,
    /// `#[StartTime: ...]` and `#[BaseTime: ...]`, milliseconds since the epoch.
    pub start_time_ms: Option<u64>,
    pub base_time_ms: Option<u64>,
    /// Every interval line, in file order.
    pub intervals: Vec<Interval>,
    /// Titled for service times (an open-loop run's `..._service.hgrm`), not response
    /// times: the two mean different things and never merge together.
    pub service: bool,
}

impl IntervalLog {
    /// The command an untagged line of this log belongs to, from a `.hgrm` title
    /// (`#[SET command HDR latency histogram results]`); `None` for the whole run
    /// (`Full Run command`) or a log without such a title.
    pub fn title_command(&self) -> Option<&str> {
        let command = self.title.as_deref()?.strip_suffix(" command")?;
        (command != "Full Run").then_some(command)
    }
}

/// One interval line, its times made absolute.
#[derive(Clone, Debug)]
pub struct Interval {
    /// `Tag=SET,...`: the command; `None` on an untagged line.
    pub tag: Option<String>,
    /// Milliseconds since the epoch.
    pub start_epoch_ms: u64,
    pub end_epoch_ms: u64,
    /// The `Interval_Max` column as written (its unit is the writer's choice).
    pub max: f64,
    /// Microseconds, as kvbench and memtier record them.
    pub histogram: Histogram<u64>,
}
