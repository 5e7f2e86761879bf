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
pub use crate::stats::ReplySizes;

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
    /// The previous row's commands and interval, for the rate of a short last row.
    previous: Option<(u64, Duration)>,
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
            previous: None,
        }
    }

    /// Adds `tick` to the totals and returns its progress row: right-aligned columns, then
    /// a tab and a carriage return (no newline).
    pub fn row(&mut self, tick: &Tick) -> String {
        self.commands += tick.commands;
        self.errors += tick.errors;
        // A row a second, as redis-zbench-go ticks; the last row ends with the run and may
        // cover a few milliseconds only, whose burst of replies (a pipeline's, an EXEC's)
        // would read as a rate many times the real one: it is taken over the previous
        // row's second as well.
        let (commands, interval) = match self.previous {
            Some((commands, interval)) if tick.interval < Duration::from_secs(1) => {
                (commands + tick.commands, interval + tick.interval)
            }
            _ => (tick.commands, tick.interval),
        };
        self.previous = Some((tick.commands, tick.interval));
        let secs = interval.as_secs_f64();
        let rate = if secs > 0.0 {
            commands as f64 / secs
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
    /// Load: elements per ZADD sent, for "Average zcard"; `None` for a query, and for a
    /// load whose every ZADD was answered with an error (no set was added).
    pub average_zcard: Option<f64>,
    /// Query: the reply-size histogram.
    pub reply_sizes: Option<&'a ReplySizes>,
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
    if let Some(average) = s.average_zcard {
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

/// The line printed when `signal` stops the run, before the summary: redis-zbench-go's
/// words for Ctrl-C (the only signal it catches); SIGTERM and SIGHUP (a dropped ssh or
/// tmux session), which would kill redis-zbench-go, are named for what they were.
pub fn interrupted(signal: i32) -> &'static str {
    match signal {
        libc::SIGTERM => "\nreceived SIGTERM - shutting down\n",
        libc::SIGHUP => "\nreceived SIGHUP - shutting down\n",
        _ => "\nreceived Ctrl-c - shutting down\n",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::zbench::flags::{ZbenchCommand, parse};

    fn spec(args: &[&str]) -> ZbenchSpec {
        match parse(args.iter().map(|s| s.to_string())) {
            Ok(ZbenchCommand::Run(spec)) => *spec,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn histogram(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 90_000_000, 3).expect("bounds");
        for &(value, count) in values {
            h.record_n(value, count).expect("in range");
        }
        h
    }

    #[test]
    fn header_lines() {
        let load = spec(&["-mode", "load", "-r", "1000000", "-p", "6379"]);
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(
            header(&load),
            format!(
                "Using kvbench zbench (version {version})\n\
                 Total clients: 50. Commands per client: 20000 Total commands: 1000000\n\
                 Using random seed: 12345\n\
                 Each ZSET contains between 1 and 10 elements.\n\
                 Keyspace range: 1000000 keys. [0 ; 1000000]\n"
            )
        );
        let query = spec(&[
            "-mode",
            "query",
            "-p",
            "6379",
            "-pipeline",
            "100",
            "-c",
            "10",
            "-multi",
            "-rps",
            "10000",
            "-n",
            "100000",
            "-r",
            "1000000",
        ]);
        assert_eq!(
            header(&query),
            format!(
                "Using kvbench zbench (version {version})\n\
                 Total clients: 10. Commands per client: 10000 Total commands: 100000\n\
                 Using random seed: 12345\n"
            )
        );
        let shifted = spec(&["-mode", "load", "-r", "1000", "-r-start", "500", "-c", "3"]);
        assert!(header(&shifted).contains("Commands per client: 333 Total commands: 1000\n"));
        assert!(header(&shifted).ends_with("Keyspace range: 1000 keys. [500 ; 1500]\n"));
    }

    /// The progress table as redis-zbench-go's README shows it (its tab shown as spaces).
    #[test]
    fn progress_table_matches_the_readme() {
        assert_eq!(
            progress_header(),
            "                 Test time                    Total Commands              \
             Total Errors                      Command Rate           p50 lat. (msec)\n"
        );
        let mut progress = Progress::new(1_000_000);
        let first = progress.row(&Tick {
            elapsed: Duration::from_millis(17_000),
            interval: Duration::from_secs(17),
            commands: 1_000_000 - 1371,
            errors: 0,
            p50_us: 808,
        });
        assert!(
            first.starts_with("                       17s [99.9%] "),
            "{first:?}"
        );
        let last = progress.row(&Tick {
            elapsed: Duration::from_millis(18_000),
            interval: Duration::from_micros(1_000_145),
            commands: 1371,
            errors: 0,
            p50_us: 808,
        });
        assert_eq!(
            last,
            "                       18s [100.0%]                   1000000                         \
             0 [0.0%]                   1370.80                      0.81\t\r"
        );
    }

    #[test]
    fn progress_percentages_without_nan() {
        let mut progress = Progress::new(200);
        let row = progress.row(&Tick {
            elapsed: Duration::from_secs(1),
            interval: Duration::from_secs(1),
            commands: 0,
            errors: 0,
            p50_us: 0,
        });
        assert!(row.contains(" [0.0%] ") && !row.contains("NaN"), "{row:?}");
        let row = progress.row(&Tick {
            elapsed: Duration::from_secs(2),
            interval: Duration::from_millis(500),
            commands: 50,
            errors: 5,
            p50_us: 1500,
        });
        assert!(row.contains(" [25.0%] "), "{row:?}");
        assert!(row.contains(" [10.0%] "), "{row:?}");
        // A half-second last row's rate is over the previous second too: 50 in 1.5 s.
        assert!(
            row.contains(" 33.33 ") && row.ends_with(" 1.50\t\r"),
            "{row:?}"
        );
    }

    #[test]
    fn a_short_last_row_is_no_burst_rate() {
        let mut progress = Progress::new(100_000);
        progress.row(&Tick {
            elapsed: Duration::from_secs(9),
            interval: Duration::from_secs(1),
            commands: 10_000,
            errors: 0,
            p50_us: 50_000,
        });
        // The last EXEC replies, 4 ms after the tick: 100 commands are no 25000/s.
        let last = progress.row(&Tick {
            elapsed: Duration::from_millis(9_004),
            interval: Duration::from_millis(4),
            commands: 100,
            errors: 0,
            p50_us: 50_000,
        });
        assert!(last.contains(" 10059.76 "), "{last:?}");
        // A run shorter than a second has only its own interval.
        let mut progress = Progress::new(100);
        let only = progress.row(&Tick {
            elapsed: Duration::from_millis(200),
            interval: Duration::from_millis(200),
            commands: 100,
            errors: 0,
            p50_us: 100,
        });
        assert!(only.contains(" 500.00 "), "{only:?}");
    }

    /// The load summary as redis-zbench-go's README shows it, plus "Average zcard".
    #[test]
    fn load_summary_matches_the_readme() {
        let latency = histogram(&[(808, 50), (1200, 45), (1582, 5)]);
        let text = summary(&Summary {
            duration: Duration::from_micros(18_000_200),
            issued: 1_000_000,
            errors: 0,
            latency_us: &latency,
            average_zcard: Some(3.412),
            reply_sizes: None,
        });
        assert_eq!(
            text,
            "\n#################################################\n\
             Total Duration 18.000 Seconds\n\
             Total Issued commands 1000000\n\
             Total Errors 0\n\
             Throughput summary: 55555 requests per second\n\
             Average zcard 3 elements\n\
             Latency summary (msec):\n          \
             p50       p95       p99\n        \
             0.808     1.200     1.582\n"
        );
    }

    /// The query summary's reply histogram as redis-zbench-go's README shows it.
    #[test]
    fn reply_histogram_matches_the_readme() {
        let counts = [51962, 9774, 5124, 5276, 5088, 5152, 4943, 4694, 4547, 3440];
        let sizes = ReplySizes::from_counts(counts.to_vec());
        let latency = histogram(&[(2529, 50), (3509, 45), (6083, 5)]);
        let text = summary(&Summary {
            duration: Duration::from_millis(9001),
            issued: 100_000,
            errors: 0,
            latency_us: &latency,
            average_zcard: None,
            reply_sizes: Some(&sizes),
        });
        assert!(text.contains("Throughput summary: 11110 requests per second\n"));
        assert!(text.contains("\n        2.529     3.509     6.083\n"));
        assert!(!text.contains("zcard"));
        assert!(text.ends_with(
            "        2.529     3.509     6.083\n\
             #################################################\n\
             Printing reply histogram\n\
             Size: 0\tCount: 51962. (% 51.96)\n\
             Size: 1\tCount: 9774. (% 9.77)\n\
             Size: 2\tCount: 5124. (% 5.12)\n\
             Size: 3\tCount: 5276. (% 5.28)\n\
             Size: 4\tCount: 5088. (% 5.09)\n\
             Size: 5\tCount: 5152. (% 5.15)\n\
             Size: 6\tCount: 4943. (% 4.94)\n\
             Size: 7\tCount: 4694. (% 4.69)\n\
             Size: 8\tCount: 4547. (% 4.55)\n\
             Size: 9\tCount: 3440. (% 3.44)\n\
             --------------------------------------------------\n\
             Total processed replies 100000\n"
        ));
    }

    #[test]
    fn reply_sizes_record_merge_and_skip_unseen() {
        let mut a = ReplySizes::with_max(2);
        a.record(0, 3);
        a.record(5, 1);
        let mut b = ReplySizes::default();
        b.record(5, 2);
        b.record(1, 4);
        a.merge(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), [(0, 3), (1, 4), (5, 3)]);
        assert_eq!(a.total(), 10);
        let text = reply_histogram(&a);
        assert!(!text.contains("Size: 2\t"));
        assert!(text.contains("Size: 5\tCount: 3. (% 30.00)\n"));
        assert!(text.ends_with("Total processed replies 10\n"));
    }

    #[test]
    fn an_empty_run_prints_zeros() {
        let latency = histogram(&[]);
        let text = summary(&Summary {
            duration: Duration::ZERO,
            issued: 0,
            errors: 0,
            latency_us: &latency,
            average_zcard: Some(0.0),
            reply_sizes: Some(&ReplySizes::default()),
        });
        assert!(text.contains("Throughput summary: 0 requests per second\n"));
        assert!(text.contains("Average zcard 0 elements\n"));
        assert!(text.contains("        0.000     0.000     0.000\n"));
        assert!(text.ends_with("Total processed replies 0\n"));
        assert!(!text.contains("NaN"));
    }

    #[test]
    fn interrupt_line() {
        assert_eq!(
            interrupted(libc::SIGINT),
            "\nreceived Ctrl-c - shutting down\n"
        );
        assert_eq!(
            interrupted(libc::SIGTERM),
            "\nreceived SIGTERM - shutting down\n"
        );
        assert_eq!(
            interrupted(libc::SIGHUP),
            "\nreceived SIGHUP - shutting down\n"
        );
    }
}
