//! The endpoint's metrics state: once a second the run folds a merged second into running
//! totals, renders the exposition text, and publishes it for scrapes to read.
//!
//! # Why this never slows the run
//!
//! The run side (the runner's thread, never a worker's event loop) owns [`PrometheusMetrics`]
//! outright: accumulating and rendering need no lock. The finished text is then published
//! as an `Arc<String>` behind a `Mutex` that guards nothing but that pointer:
//!
//! ```text
//! run side, once a second:  render into a new String (no lock) -> lock, swap the Arc, unlock
//!                           -> drop the previous text (no lock)
//! scrape:                   lock, clone the Arc (a reference-count increment), unlock
//!                           -> write the bytes to the socket (no lock)
//! ```
//!
//! Either side holds the lock for a pointer swap or a counter increment, a few nanoseconds,
//! so neither can make the other wait for formatting or for a slow scraper's socket. This
//! is the arc-swap pattern with std alone; one swap a second does not justify a crate.

mod render;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use hdrhistogram::Histogram;

use super::settings::PrometheusSettings;

/// What one command did in one second, merged over all threads. Borrowed, so the run
/// hands its merged per-second stats over without copying histograms.
#[derive(Clone, Copy, Debug)]
pub struct CommandSecond<'a> {
    /// The command's name as the reports print it (`SET`, `GET`, an arbitrary command's
    /// name): the `command` label.
    pub command: &'a str,
    /// Requests completed (replies received).
    pub ops: u64,
    /// Reads that found their key.
    pub hits: u64,
    /// Reads that found nothing.
    pub misses: u64,
    /// Error replies from the server.
    pub errors: u64,
    /// Connection errors attributed to this command (summed over commands when rendered).
    pub connection_errors: u64,
    /// Bytes written to the server.
    pub bytes_sent: u64,
    /// Bytes read from the server.
    pub bytes_received: u64,
    /// Exact sum of this second's latencies, microseconds.
    pub latency_sum_us: u64,
    /// This second's latencies, microseconds (any bounds: only its recorded values are read).
    pub latency_us: &'a Histogram<u64>,
}

impl CommandSecond<'_> {
    fn is_idle(&self) -> bool {
        self.ops == 0
            && self.errors == 0
            && self.connection_errors == 0
            && self.bytes_sent == 0
            && self.bytes_received == 0
            && self.latency_us.is_empty()
    }
}

/// One merged second of the run, plus the gauges as they stand at its end. A sample with
/// no commands updates the gauges only (e.g. connections and threads back to 0 when a run
/// ends).
#[derive(Clone, Copy, Debug)]
pub struct SecondSample<'a> {
    pub commands: &'a [CommandSecond<'a>],
    /// Connection errors no command is to blame for (lost or refused with nothing in
    /// flight): in the total, on no command.
    pub other_connection_errors: u64,
    /// Connections open.
    pub connections: u64,
    /// Worker threads running.
    pub threads: u64,
    /// The run under way, 1-based (`--run-count`); 0 before the first.
    pub run: u32,
}

/// Facts fixed for the whole process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    /// `memtier_build_info{version=...}`.
    pub version: String,
    /// When the process started: `memtier_start_time_seconds`.
    pub start_time: SystemTime,
    /// `--run-count`: `memtier_configured_runs`.
    pub configured_runs: u32,
}

impl RunInfo {
    /// This binary's version, started now.
    pub fn new(configured_runs: u32) -> RunInfo {
        RunInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            start_time: SystemTime::now(),
            configured_runs,
        }
    }
}

/// One command's totals since the process started.
#[derive(Clone, Debug)]
pub(super) struct CommandTotals {
    pub(super) command: String,
    pub(super) ops: u64,
    pub(super) hits: u64,
    pub(super) misses: u64,
    pub(super) errors: u64,
    pub(super) latency_sum_us: u64,
    pub(super) latency_count: u64,
    /// Observations per bucket, not cumulative: `[i]` counts those above bound `i - 1` and
    /// at most bound `i`; the last slot those above every bound (only in `+Inf`).
    pub(super) per_bucket: Vec<u64>,
}

/// Totals since the process started (counters never reset, also across `--run-count`
/// runs, as Prometheus counters must not) and the latest gauges.
#[derive(Clone, Debug)]
pub(super) struct Totals {
    /// In the order commands were first active.
    pub(super) commands: Vec<CommandTotals>,
    pub(super) connection_errors: u64,
    pub(super) bytes_sent: u64,
    pub(super) bytes_received: u64,
    pub(super) connections: u64,
    pub(super) threads: u64,
    pub(super) run: u32,
}

/// The run side's state: feed it every merged second with [`PrometheusMetrics::update`];
/// hand [`PrometheusMetrics::exposition`] to the endpoint.
#[derive(Debug)]
pub struct PrometheusMetrics {
    layout: render::Layout,
    buckets_us: Vec<u64>,
    totals: Totals,
    exposition: Exposition,
}

impl PrometheusMetrics {
    /// Zero totals, already published: a scrape before the first second sees every family.
    pub fn new(settings: &PrometheusSettings, info: RunInfo) -> PrometheusMetrics {
        let layout = render::Layout::new(settings, &info);
        let totals = Totals {
            commands: Vec::new(),
            connection_errors: 0,
            bytes_sent: 0,
            bytes_received: 0,
            connections: 0,
            threads: 0,
            run: 0,
        };
        let first = layout.render(&totals, 0);
        PrometheusMetrics {
            layout,
            buckets_us: settings.buckets_us().to_vec(),
            totals,
            exposition: Exposition {
                current: Arc::new(Mutex::new(Arc::new(first))),
                taken: Arc::new(AtomicU64::new(0)),
            },
        }
    }

    /// The handle scrapes read; clone it freely.
    pub fn exposition(&self) -> Exposition {
        self.exposition.clone()
    }

    /// Adds one merged second to the totals, sets the gauges, and publishes the new text.
    /// A command appears from its first active second on (a row that never did anything,
    /// such as WAIT in most runs, is left out rather than shown as zeros).
    pub fn update(&mut self, sample: &SecondSample<'_>) {
        for second in sample.commands {
            self.add_command(second);
        }
        self.totals.connection_errors += sample.other_connection_errors;
        self.totals.connections = sample.connections;
        self.totals.threads = sample.threads;
        self.totals.run = sample.run;
        let previous_len = self.exposition.body().len();
        let text = self.layout.render(&self.totals, previous_len);
        self.exposition.replace(Arc::new(text));
    }

    fn add_command(&mut self, second: &CommandSecond<'_>) {
        let t = &mut self.totals;
        t.connection_errors += second.connection_errors;
        t.bytes_sent += second.bytes_sent;
        t.bytes_received += second.bytes_received;
        let index = match t.commands.iter().position(|c| c.command == second.command) {
            Some(index) => index,
            None if second.is_idle() => return,
            None => {
                t.commands.push(CommandTotals {
                    command: second.command.to_string(),
                    ops: 0,
                    hits: 0,
                    misses: 0,
                    errors: 0,
                    latency_sum_us: 0,
                    latency_count: 0,
                    per_bucket: vec![0; self.buckets_us.len() + 1],
                });
                t.commands.len() - 1
            }
        };
        let c = &mut t.commands[index];
        c.ops += second.ops;
        c.hits += second.hits;
        c.misses += second.misses;
        c.errors += second.errors;
        c.latency_sum_us += second.latency_sum_us;
        c.latency_count += second.latency_us.len();
        fold_histogram(second.latency_us, &self.buckets_us, &mut c.per_bucket);
    }
}

/// Adds each recorded value of `h` to the first bucket whose bound is at least the
/// value's HdrHistogram bin's lowest value. A bin is at most 0.1% wide (3 significant
/// figures) and exactly 1 µs below 2048 µs, so a value lands in the bucket a
/// `value <= le` test would pick, except values within that 0.1% above a bound.
fn fold_histogram(h: &Histogram<u64>, bounds_us: &[u64], per_bucket: &mut [u64]) {
    for v in h.iter_recorded() {
        let low = h.lowest_equivalent(v.value_iterated_to());
        let slot = bounds_us.partition_point(|&b| b < low);
        per_bucket[slot] += v.count_at_value();
    }
}

/// The published exposition text: the run side replaces it, scrapes read it (see the
/// module notes for why this is cheap for both).
#[derive(Clone, Debug)]
pub struct Exposition {
    current: Arc<Mutex<Arc<String>>>,
    /// Texts handed to scrapes so far (for `--prometheus-linger`'s wait).
    taken: Arc<AtomicU64>,
}

impl Exposition {
    /// How many scrapes have taken a text so far.
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }

    /// The latest text. The lock is held only to clone the `Arc`.
    pub fn body(&self) -> Arc<String> {
        self.taken.fetch_add(1, Ordering::AcqRel);
        // A panic elsewhere while holding this lock cannot leave the pointer half-written.
        let guard = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&guard)
    }

    fn replace(&self, text: Arc<String>) {
        let previous = {
            let mut guard = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *guard, text)
        };
        // Freed here, outside the lock (unless a scrape still holds it).
        drop(previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn fold_counts_each_value_once_in_its_bucket() {
        let bounds = [100, 1_000, 10_000];
        let mut per = vec![0; 4];
        fold_histogram(
            &hist(&[1, 100, 101, 999, 1_000, 5_000, 10_000, 10_010, 20_000]),
            &bounds,
            &mut per,
        );
        assert_eq!(per, [2, 3, 2, 2]);
    }

    #[test]
    fn fold_puts_a_bound_in_a_wide_bin_into_its_bucket() {
        // 2500 µs lives in a 2 µs wide bin [2500, 2501]; it must still count as <= 2500.
        let mut per = vec![0; 2];
        fold_histogram(&hist(&[2_500, 2_502]), &[2_500], &mut per);
        assert_eq!(per, [1, 1]);
    }

    #[test]
    fn publish_swaps_the_text_a_reader_sees() {
        let settings =
            PrometheusSettings::new("127.0.0.1:0".parse().unwrap(), Vec::new(), vec![1_000])
                .unwrap();
        let mut m = PrometheusMetrics::new(&settings, RunInfo::new(1));
        let reader = m.exposition();
        let before = reader.body();
        assert!(before.contains("memtier_run 0\n"), "{before}");
        let h = hist(&[10]);
        let idle = hist(&[]);
        let commands = [
            CommandSecond {
                command: "GET",
                ops: 1,
                hits: 1,
                misses: 0,
                errors: 0,
                connection_errors: 0,
                bytes_sent: 5,
                bytes_received: 7,
                latency_sum_us: 10,
                latency_us: &h,
            },
            CommandSecond {
                command: "WAIT",
                ops: 0,
                hits: 0,
                misses: 0,
                errors: 0,
                connection_errors: 0,
                bytes_sent: 0,
                bytes_received: 0,
                latency_sum_us: 0,
                latency_us: &idle,
            },
        ];
        m.update(&SecondSample {
            commands: &commands,
            other_connection_errors: 0,
            connections: 4,
            threads: 2,
            run: 1,
        });
        // The old text is untouched; the new one is what the next read gets.
        assert!(before.contains("memtier_run 0\n"));
        let after = reader.body();
        assert!(after.contains("memtier_run 1\n"), "{after}");
        assert!(
            after.contains("memtier_ops_total{command=\"GET\"} 1\n"),
            "{after}"
        );
        assert!(
            !after.contains("WAIT"),
            "an idle command is left out: {after}"
        );
    }
}
