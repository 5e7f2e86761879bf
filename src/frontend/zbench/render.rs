//! zbench's text output in redis-zbench-go's layout, byte for byte where its code fixes it:
//! the header, the per-second progress table, the summary block and the reply histogram.
//!
//! ```text
//! Using kvbench zbench (version 0.1.0)
//! Total clients: 50. Commands per client: 20000 Total commands: 1000000
//! Using random seed: 12345
//! Each ZSET contains between 1 and 10 elements.        (load only)
//! Keyspace range: 1000000 keys. [0 ; 1000000]          (load only)
//!                  Test time                    Total Commands ... p50 lat. (msec)
//!                        18s [100.0%]   1000000   0 [0.0%]   55555.00   0.81  <TAB><CR>
//!
//! #################################################
//! Total Duration 18.000 Seconds
//! Total Issued commands 1000000
//! Total Errors 0
//! Throughput summary: 55555 requests per second
//! Average zcard 3 elements                              (load only)
//! Latency summary (msec):
//!           p50       p95       p99
//!         0.808     1.200     1.582
//! #################################################    (query only, from here)
//! Printing reply histogram
//! Size: 0<TAB>Count: 51962. (% 51.96)
//! --------------------------------------------------
//! Total processed replies 100000
//! ```
//!
//! Progress rows end in a tab and a carriage return (no newline), as redis-zbench-go's do,
//! so on a terminal each second overwrites the last. Differences, on purpose: the first
//! line names kvbench; an error percentage with no command yet is `0.0`, not `NaN`; the
//! reply histogram's percentages are of the replies it counts (so they add up to 100 even
//! when some commands failed), and only sizes seen are listed.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::flags::{Mode, ZbenchSpec};

/// The line between the progress table and the summary, and before the histogram.
const RULE: &str = "#################################################";
/// The line under the reply histogram.
const DASHES: &str = "--------------------------------------------------";

/// The lines printed before the run starts.
pub fn header(spec: &ZbenchSpec) -> String {
    let total = total_commands(spec);
    let per_client = total / u64::from(spec.clients.max(1));
    let mut out = format!(
        "Using kvbench zbench (version {})\n\
         Total clients: {}. Commands per client: {per_client} Total commands: {total}\n\
         Using random seed: {}\n",
        env!("CARGO_PKG_VERSION"),
        spec.clients,
        spec.seed,
    );
    if spec.mode == Mode::Load {
        out.push_str(&format!(
            "Each ZSET contains between {} and {} elements.\n\
             Keyspace range: {} keys. [{} ; {}]\n",
            spec.elements.min,
            spec.elements.max,
            spec.keyspace.len,
            spec.keyspace.start,
            spec.keyspace.end(),
        ));
    }
    out
}

/// Commands the run issues: one ZADD per key when loading, `-n` when querying.
pub fn total_commands(spec: &ZbenchSpec) -> u64 {
    match spec.mode {
        Mode::Load => spec.keyspace.len,
        Mode::Query(_) => spec.requests,
    }
}

/// The progress table's column titles (one line).
pub fn progress_header() -> String {
    format!(
        "{:>26} {:>7} {:>25} {:>25} {:>7} {:>25} {:>25}\n",
        "Test time", " ", "Total Commands", "Total Errors", "", "Command Rate", "p50 lat. (msec)"
    )
}

/// The running totals behind the progress table; fed once a second.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Commands the run will issue, for the completion percentage.
    limit: u64,
    commands: u64,
    errors: u64,
}

/// One second's worth of counts, as the engine reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// Time since the run started.
    pub elapsed: Duration,
    /// Length of the interval this tick covers (about a second).
    pub interval: Duration,
    /// Commands completed in the interval (MULTI and EXEC not counted).
    pub commands: u64,
    /// Of those, the ones answered with an error.
    pub errors: u64,
    /// Median latency of every command so far, in microseconds.
    pub p50_us: u64,
}

impl Progress {
    /// Totals at zero, for a run of `limit` commands.
    pub fn new(limit: u64) -> Self {
        Progress {
            limit,
            commands: 0,
            errors: 0,
        }
    }

    /// Adds `tick` to the totals and returns its progress row: right-aligned columns, then
    /// a tab and a carriage return (no newline).
    pub fn row(&mut self, tick: &Tick) -> String {
        self.commands += tick.commands;
        self.errors += tick.errors;
        let secs = tick.interval.as_secs_f64();
        let rate = if secs > 0.0 {
            tick.commands as f64 / secs
        } else {
            0.0
        };
        let done = percent(self.commands, self.limit);
        let failed = percent(self.errors, self.commands);
        format!(
            "{:>25.0}s {} {:>25} {:>25} [{:3.1}%] {:>25.2} {:>25.2}\t\r",
            tick.elapsed.as_secs_f64(),
            format_args!("[{done:3.1}%]"),
            self.commands,
            self.errors,
            failed,
            rate,
            tick.p50_us as f64 / 1000.0,
        )
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

/// What the run measured, for the summary block.
#[derive(Clone, Copy, Debug)]
pub struct Summary<'a> {
    /// From the first request sent to the last reply received.
    pub duration: Duration,
    /// Commands issued (MULTI and EXEC not counted).
    pub issued: u64,
    /// Of those, the ones answered with an error.
    pub errors: u64,
    /// Every command's latency in microseconds.
    pub latency_us: &'a Histogram<u64>,
    /// Load: elements the ZADDs carried, for "Average zcard".
    pub added_elements: Option<u64>,
    /// Query: the reply-size histogram.
    pub reply_sizes: Option<&'a ReplySizes>,
}

/// How many replies had each number of elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplySizes {
    /// `counts[n]` replies had `n` elements.
    counts: Vec<u64>,
}

impl ReplySizes {
    /// No replies yet, with room for sizes up to `max` before growing.
    pub fn with_max(max: usize) -> Self {
        ReplySizes {
            counts: vec![0; max + 1],
        }
    }

    /// From per-size counts (`counts[n]` replies had `n` elements).
    pub fn from_counts(counts: Vec<u64>) -> Self {
        ReplySizes { counts }
    }

    /// Counts `n` more replies of `size` elements.
    pub fn record(&mut self, size: usize, n: u64) {
        if size >= self.counts.len() {
            self.counts.resize(size + 1, 0);
        }
        self.counts[size] += n;
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &ReplySizes) {
        for (size, &n) in other.counts.iter().enumerate() {
            if n > 0 {
                self.record(size, n);
            }
        }
    }

    /// Replies counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `(size, count)` for every size seen, smallest first.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(size, &n)| (size, n))
    }
}

/// The summary block after the progress table (it starts with the newline that ends the
/// last progress row), with "Average zcard" for a load and the reply histogram for a query.
pub fn summary(s: &Summary<'_>) -> String {
    let secs = s.duration.as_secs_f64();
    let throughput = if secs > 0.0 {
        s.issued as f64 / secs
    } else {
        0.0
    };
    let ms = |q: f64| s.latency_us.value_at_quantile(q) as f64 / 1000.0;
    let mut out = format!(
        "\n{RULE}\n\
         Total Duration {secs:.3} Seconds\n\
         Total Issued commands {}\n\
         Total Errors {}\n\
         Throughput summary: {throughput:.0} requests per second\n",
        s.issued, s.errors,
    );
    if let Some(elements) = s.added_elements {
        let average = if s.issued > 0 {
            elements as f64 / s.issued as f64
        } else {
            0.0
        };
        out.push_str(&format!("Average zcard {average:.0} elements\n"));
    }
    out.push_str(&format!(
        "Latency summary (msec):\n    {:>9} {:>9} {:>9}\n    {:>9.3} {:>9.3} {:>9.3}\n",
        "p50",
        "p95",
        "p99",
        ms(0.50),
        ms(0.95),
        ms(0.99),
    ));
    if let Some(sizes) = s.reply_sizes {
        out.push_str(&reply_histogram(sizes));
    }
    out
}

/// The reply-size histogram: one line per size seen, then the total.
pub fn reply_histogram(sizes: &ReplySizes) -> String {
    let total = sizes.total();
    let mut out = format!("{RULE}\nPrinting reply histogram\n");
    for (size, count) in sizes.iter() {
        // redis-zbench-go computes the share in float32; so does this, for the same digits.
        let share = count as f32 / total as f32 * 100.0;
        out.push_str(&format!("Size: {size}\tCount: {count}. (% {share:.2})\n"));
    }
    out.push_str(&format!("{DASHES}\nTotal processed replies {total}\n"));
    out
}

/// The line printed when Ctrl-C stops the run, before the summary.
pub fn interrupted() -> &'static str {
    "\nreceived Ctrl-c - shutting down\n"
}
