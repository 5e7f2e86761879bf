//! The HTML report's input: finished runs as the page shows them, whatever tool wrote them.
//!
//! Nothing here knows a file format. A front end (kvbench's or memtier_benchmark's JSON,
//! merged results, a rate sweep) fills a [`Report`] and hands it to
//! [`render_page`](super::page::render_page). Latencies in tables and series are
//! milliseconds, as every kvbench and memtier report prints them; histograms hold
//! microseconds, as kvbench records them.

use hdrhistogram::Histogram;

/// Everything one HTML page shows: one run, or several to compare (the first is the
/// baseline every ratio is taken against).
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The page's heading and `<title>`; empty means "kvbench report".
    pub title: String,
    /// In the order the user named them; the first is the baseline.
    pub runs: Vec<Run>,
}

/// The runs behind an aggregate's figures (see [`Run::averaged_over_runs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Averaged {
    /// N runs: `-x N`'s aggregate, or a merge of files of N runs each.
    Runs(u32),
    /// A merge of files of different run counts (`-x 3` with `-x 2`): each file's name
    /// and runs. Its counts are all their runs', its rates one mean run of each added.
    Mixed(Vec<(String, u32)>),
}

/// One benchmark run (or one results block of a file, such as `BEST RUN RESULTS`).
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// How the page names the run in legends and table headers, e.g. the file name.
    pub label: String,
    /// The run's settings as key/value text, in the order to show them
    /// (e.g. the JSON `configuration` object, then `run information`).
    pub config: Vec<(String, String)>,
    /// The arbitrary commands (`--command`) the run sent, in the order given; empty for
    /// SET/GET, or when the source does not say (memtier's files, older kvbench ones).
    pub commands: Vec<CommandLine>,
    /// The run was cut short (Ctrl-C, SIGTERM): the page says so next to its label.
    pub interrupted: bool,
    /// The error that ended the run early (the file's `"Stopped by error"`), if one did.
    pub stopped_by: Option<String>,
    /// Closed loop: the warning that the requests the run left unanswered hide a stall
    /// (the file's `"Unfinished"` > `"Warning"`), which the figures cannot show.
    pub unanswered_warning: Option<String>,
    /// The ALL STATS rows in table order, `Totals` last.
    pub rows: Vec<Row>,
    /// The figures stand for several runs (`-x N`: memtier's `AGGREGATED AVERAGE
    /// RESULTS (N runs)`, or a merge of such files): counts are the runs' summed, rates
    /// their mean, latencies those of all their requests together. `None` for one run.
    pub averaged_over_runs: Option<Averaged>,
    /// The rate sweep's measured curve, when the run was one.
    pub sweep: Option<RateSweep>,
    /// A pool's per-server rows (`host:port`, every command together), in the order
    /// given; empty without a pool.
    pub servers: Vec<Row>,
    /// Replica visibility (`--visibility-from`), when the run measured it.
    pub visibility: Option<Visibility>,
    /// Open loop: each row's service time (actual send to reply; `rows` hold the response
    /// time, from the intended send), same names; empty without a rate.
    pub service: Vec<Row>,
    /// Open loop: how the run kept its schedule.
    pub schedule: Option<Schedule>,
}

/// One arbitrary command as the run sent it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommandLine {
    /// As given (`hset __key__ f __data__`).
    pub command: String,
    /// Sent this many times in a row (`--command-ratio`), when the source says.
    pub ratio: Option<u64>,
    /// How its keys were picked, as the page shows it (`S (sequential)`), when the source
    /// says.
    pub key_pattern: Option<String>,
}

/// How an open-loop run kept its schedule (kvbench's `"Schedule"`).
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    /// Requests per second aimed at, in all (with `--rate-limiting` too, which sets it per
    /// connection).
    pub target_per_sec: u64,
    pub per_connection: bool,
    /// `uniform` or `poisson`.
    pub arrival: String,
    pub achieved_per_sec: f64,
    pub sent: u64,
    /// Sent more than 1 ms after their intended time, and of those, the ones that waited
    /// for a connection (the rest waited for the generator).
    pub late: u64,
    pub late_waiting_for_connection: u64,
    /// When the run ended: requests due but never sent, and sent but not answered (in
    /// no latency figure).
    pub unsent_at_end: u64,
    pub in_flight_at_end: u64,
    /// Send lag (actual minus intended send time) percentiles, milliseconds.
    pub lag_p50_ms: Option<f64>,
    pub lag_p99_ms: Option<f64>,
    pub lag_p999_ms: Option<f64>,
}

/// How long tracked writes took to become visible on another endpoint.
#[derive(Clone, Debug)]
pub struct Visibility {
    /// The lag as a row: its count is the writes seen, its latencies the lag.
    pub lag: Row,
    /// Tracked writes never seen within the timeout.
    pub timeouts: u64,
    /// Writes left untracked because too many were waiting already.
    pub untracked: u64,
}

/// One row of the ALL STATS table (`Sets`, `Gets`, `Waits`, `Hsets`, ..., `Totals`) with
/// its per-second series and whole-run latency histogram.
#[derive(Clone, Debug)]
pub struct Row {
    /// The row's name as the table prints it; charts use it too.
    pub name: String,
    /// Requests of this type completed.
    pub count: u64,
    pub ops_per_sec: f64,
    /// `None` where the table shows `---` (rows that are not reads).
    pub hits_per_sec: Option<f64>,
    pub misses_per_sec: Option<f64>,
    /// Mean and percentile latencies, ms; `None` when the source does not give one, or
    /// the row ran no requests (the table shows `---`).
    pub avg_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
    /// Bytes sent plus received, KB (1024 bytes) per second.
    pub kb_per_sec: f64,
    /// One entry per second of the run, in order; empty when the source has none
    /// (e.g. aggregated results of several runs). A final partial second too short to mean
    /// anything (kvbench's and memtier's JSON end with a sliver of a few milliseconds,
    /// usually empty) is best left out: its rate would plot as a plunge to zero.
    pub per_second: Vec<SecondPoint>,
    /// The row's whole-run latency histogram in microseconds, from which the page draws
    /// the percentile spectrum; `None` when the source has none.
    pub histogram: Option<Histogram<u64>>,
    /// Error replies and connection errors (shown for a pool's servers).
    pub errors: u64,
    pub connection_errors: u64,
    /// Cluster `-TRYAGAIN` replies, each retried (the table shows them where any).
    pub tryagain: u64,
}

/// One second (or the last, possibly partial, second) of one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecondPoint {
    /// Whole seconds since the run started (the JSON `Time-Serie` key).
    pub second: u64,
    /// Requests completed in that second divided by its length in seconds.
    pub ops_per_sec: f64,
    /// That second's latency percentiles, ms; `None` when it completed no request.
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

/// A rate sweep: the same load at rising target rates, one step each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateSweep {
    /// In the order they ran (normally rising target rate).
    pub steps: Vec<SweepStep>,
    /// The objective as written (`p99:5`), when the sweep had one.
    pub slo: Option<String>,
    /// With an objective: the highest target rate whose step held it (`None`: none did).
    pub highest_rate_held: Option<u64>,
    /// The steps the sweep planned; it stops at the first that breaks the objective.
    pub planned_steps: Option<u64>,
    /// `I/N` when the file is one shard of a sweep split over N processes: its targets
    /// and rates are that shard's share of the whole.
    pub shard: Option<String>,
}

/// One step of a [`RateSweep`]: what was asked, what was achieved, at what latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepStep {
    /// Requests per second asked for (all connections together).
    pub target_ops_per_sec: f64,
    /// Requests per second completed.
    pub achieved_ops_per_sec: f64,
    /// Latency percentiles over the step, ms.
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    /// Requests sent late, and requests the step ended before answering, when written.
    pub late: Option<u64>,
    pub unfinished: Option<u64>,
    /// With an objective: whether the step held it.
    pub held: Option<bool>,
}

impl Row {
    /// A row with only a name and zeroes, for builders to fill field by field.
    pub fn named(name: &str) -> Row {
        Row {
            name: name.to_string(),
            count: 0,
            ops_per_sec: 0.0,
            hits_per_sec: None,
            misses_per_sec: None,
            avg_ms: None,
            p50_ms: None,
            p99_ms: None,
            p999_ms: None,
            kb_per_sec: 0.0,
            per_second: Vec::new(),
            histogram: None,
            errors: 0,
            connection_errors: 0,
            tryagain: 0,
        }
    }

    /// Whether this is the `Totals` row (compared case-insensitively).
    pub fn is_totals(&self) -> bool {
        is_totals_name(&self.name)
    }
}

/// The names of `rows` (several runs' rows of one kind), each command once in the order
/// first seen, whatever tool spelled it, and `Totals` last: the order of the page's tables.
pub fn names_in_table_order<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        if !names.iter().any(|n| same_row_name(n, &row.name)) {
            names.push(row.name.clone());
        }
    }
    if let Some(i) = names.iter().position(|n| is_totals_name(n)) {
        let totals = names.remove(i);
        names.push(totals);
    }
    names
}

/// Whether a row name is the `Totals` row's (compared case-insensitively).
pub fn is_totals_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("totals")
}

/// Whether two runs' rows are the same command's, so the report compares them on one
/// line: the same name, or one command in the two tools' spellings. memtier's rows say
/// `Sets`, `Gets` or `Lpushs` (capitalised, an `s` added); redis-benchmark's say `SET`,
/// `GET`, `LPUSH`. Names that differ otherwise stay apart.
pub fn same_row_name(a: &str, b: &str) -> bool {
    a == b || command_of(a) == command_of(b)
}

/// The command a row name stands for, in capitals: memtier's `Sets` is `SET`.
fn command_of(name: &str) -> String {
    let memtier_style = name.bytes().any(|b| b.is_ascii_lowercase());
    let stem = match name.strip_suffix('s') {
        Some(stem) if memtier_style && !stem.is_empty() => stem,
        _ => name,
    };
    stem.to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_names_match_across_the_tools_spellings() {
        for (a, b) in [
            ("SET", "Sets"),
            ("GET", "Gets"),
            ("LPUSH", "Lpushs"),
            ("ZADD", "Zadds"),
        ] {
            assert!(same_row_name(a, b), "{a} {b}");
            assert!(same_row_name(b, a), "{b} {a}");
        }
        assert!(same_row_name("Totals", "Totals"));
        for (a, b) in [
            ("SET", "Gets"),
            ("SETS", "SET"),
            ("EXISTS", "EXIST"),
            ("s", ""),
        ] {
            assert!(!same_row_name(a, b), "{a} {b}");
        }
        assert!(same_row_name("MSET (10 keys)", "MSET (10 keys)"));
        assert!(!same_row_name("MSET (10 keys)", "MSET (10 key)"));
    }
}
