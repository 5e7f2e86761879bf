//! The live progress line printed on stderr once a second, as memtier prints it.

use std::time::Duration;

use crate::engine::Second;
use crate::report::finite;

/// What the progress line reports about the run so far. "Last second" figures describe the
/// interval just ended; `avg_*` ones the whole run so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// 1-based run number (`-x`).
    pub run_number: u32,
    /// How far the run is, 0-100 (by time or by requests).
    pub percent: f64,
    /// Whole seconds since the run started.
    pub elapsed_secs: u64,
    /// Worker threads still running.
    pub threads: usize,
    /// Connections per thread (`-c`): memtier's `conns` is its `clients` setting, not
    /// the total over the threads (`-t 2 -c 2` shows `2 conns`).
    pub connections: usize,
    /// Requests completed so far.
    pub ops: u64,
    pub ops_per_sec: f64,
    pub avg_ops_per_sec: f64,
    /// Bytes sent plus received per second.
    pub bytes_per_sec: f64,
    pub avg_bytes_per_sec: f64,
    /// Mean latency of the last second, milliseconds.
    pub latency_ms: f64,
    pub avg_latency_ms: f64,
}

impl Progress {
    /// The figures of one merged second of a run of `clients_per_thread` clients a thread.
    pub fn from_second(s: &Second<'_>, clients_per_thread: usize) -> Progress {
        let elapsed_secs = s.elapsed.as_secs_f64().max(1e-9);
        Progress {
            run_number: s.run,
            percent: s.percent,
            elapsed_secs: s.elapsed.as_secs(),
            threads: s.threads_running,
            connections: clients_per_thread,
            ops: s.so_far.count,
            ops_per_sec: s.last.count as f64,
            avg_ops_per_sec: s.so_far.count as f64 / elapsed_secs,
            bytes_per_sec: (s.last.bytes_rx + s.last.bytes_tx) as f64,
            avg_bytes_per_sec: (s.so_far.bytes_rx + s.so_far.bytes_tx) as f64 / elapsed_secs,
            latency_ms: s.last.avg_latency_ms(),
            avg_latency_ms: s.so_far.avg_latency_ms(),
        }
    }

    /// The line for second `s` of a run whose last line was `previous` (`None` before
    /// its first). A run's end is mostly a part of a second (the replies read just past a
    /// `--test-time` deadline, a count run's last requests), and its "last second"
    /// figures are over that part: a count run's last 400 ms read as 40 % of its rate, a
    /// deadline's few milliseconds of replies as a rate per second (none as `0 ops/sec`
    /// and `0.00 msec latency`, which reads as a stall). A part of [`SHORT_PART`] or more
    /// is scaled to a second; a shorter one repeats the rate and latency of the line
    /// before, as memtier's last line does, with the totals and averages up to date.
    pub fn following(
        s: &Second<'_>,
        clients_per_thread: usize,
        previous: Option<&Progress>,
    ) -> Progress {
        let mut progress = Progress::from_second(s, clients_per_thread);
        let second_start = Duration::from_secs(u64::from(s.index));
        let part = s.elapsed.saturating_sub(second_start);
        if s.threads_running > 0 || part >= Duration::from_secs(1) {
            return progress;
        }
        match previous {
            Some(before) if part < SHORT_PART => {
                progress.ops_per_sec = before.ops_per_sec;
                progress.bytes_per_sec = before.bytes_per_sec;
                progress.latency_ms = before.latency_ms;
            }
            _ => {
                let per_second = 1.0 / part.as_secs_f64().max(1e-3);
                progress.ops_per_sec *= per_second;
                progress.bytes_per_sec *= per_second;
            }
        }
        progress
    }
}

/// A run's last part of a second shorter than this has too few requests for a rate of
/// its own (see [`Progress::following`]).
const SHORT_PART: Duration = Duration::from_millis(100);

/// Formats the line without its trailing `\r` (the caller adds it):
///
/// ```text
/// [RUN #1 67%,   2 secs]  1 threads  1 conns:       17465 ops,    8344 (avg:    8730) ops/sec, 353.93KB/sec (avg: 370.32KB/sec),  0.12 (avg:  0.11) msec latency
/// ```
///
/// Ops/sec are truncated to whole numbers; bandwidth is shown in KB, MB or GB (powers of
/// 1024) whichever keeps it below 1024. NaN or infinite inputs print as 0.
pub fn progress_line(p: &Progress) -> String {
    format!(
        "[RUN #{} {:.0}%, {:3} secs] {:2} threads {:2} conns: {:11} ops, {:7} (avg: {:7}) ops/sec, {}/sec (avg: {}/sec), {:5.2} (avg: {:5.2}) msec latency",
        p.run_number,
        finite(p.percent),
        p.elapsed_secs,
        p.threads,
        p.connections,
        p.ops,
        whole(p.ops_per_sec),
        whole(p.avg_ops_per_sec),
        bandwidth(p.bytes_per_sec),
        bandwidth(p.avg_bytes_per_sec),
        finite(p.latency_ms),
        finite(p.avg_latency_ms),
    )
}

/// A non-negative rate as a whole number, truncated as memtier's integer cast does.
fn whole(x: f64) -> u64 {
    finite(x).max(0.0) as u64
}

/// `353.93KB`, `2.63MB`, `1.20GB`: bytes per second in the largest unit (of 1024) that
/// leaves at least 1.
fn bandwidth(bytes: f64) -> String {
    const KB: f64 = 1024.0;
    let b = finite(bytes).max(0.0);
    if b >= KB * KB * KB {
        format!("{:.2}GB", b / (KB * KB * KB))
    } else if b >= KB * KB {
        format!("{:.2}MB", b / (KB * KB))
    } else {
        format!("{:.2}KB", b / KB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::TIMED_STDERR;
    use crate::stats::OpStats;

    fn sample_line(i: usize) -> &'static str {
        TIMED_STDERR
            .lines()
            .nth(3)
            .unwrap()
            .split('\r')
            .nth(i)
            .unwrap()
    }

    #[test]
    fn matches_memtier_timed_run_lines() {
        let first = Progress {
            run_number: 1,
            percent: 100.0 / 3.0,
            elapsed_secs: 1,
            threads: 1,
            connections: 1,
            ops: 9119,
            ops_per_sec: 9117.4,
            avg_ops_per_sec: 9117.9,
            bytes_per_sec: 386.70 * 1024.0,
            avg_bytes_per_sec: 386.70 * 1024.0,
            latency_ms: 0.11,
            avg_latency_ms: 0.11,
        };
        assert_eq!(progress_line(&first), sample_line(0));
        let second = Progress {
            percent: 200.0 / 3.0,
            elapsed_secs: 2,
            ops: 17465,
            ops_per_sec: 8344.0,
            avg_ops_per_sec: 8730.5,
            bytes_per_sec: 353.93 * 1024.0,
            avg_bytes_per_sec: 370.32 * 1024.0,
            latency_ms: 0.12,
            avg_latency_ms: 0.11,
            ..first
        };
        assert_eq!(progress_line(&second), sample_line(1));
        assert_eq!(
            progress_line(&second),
            "[RUN #1 67%,   2 secs]  1 threads  1 conns:       17465 ops,    8344 (avg:    8730) ops/sec, 353.93KB/sec (avg: 370.32KB/sec),  0.12 (avg:  0.11) msec latency"
        );
    }

    /// memtier's `conns` is `-c` (clients per thread): `default.stderr`, a run of `-t 2
    /// -c 2`, ends on `0 threads  2 conns`, not the 4 connections of both threads.
    #[test]
    fn conns_are_the_clients_of_one_thread() {
        let mut last = OpStats::new();
        last.record(90, 40, 20);
        let rows = [last.clone()];
        let second = Second {
            run: 1,
            index: 0,
            elapsed: Duration::from_millis(17),
            percent: 100.0,
            threads_running: 0,
            connections: 4,
            connected: 0,
            rows: &rows,
            last: &last,
            so_far: &last,
        };
        let p = Progress::from_second(&second, 2);
        assert_eq!((p.threads, p.connections, p.ops), (0, 2, 1));
        assert!(
            progress_line(&p)
                .starts_with("[RUN #1 100%,   0 secs]  0 threads  2 conns:           1 ops,"),
            "{}",
            progress_line(&p)
        );
    }

    /// A second of one thread's run, `count` requests of 1 ms each in it, merged
    /// `elapsed` into the run.
    fn ending_second(
        index: u32,
        elapsed_ms: u64,
        threads_running: usize,
        last: &OpStats,
        so_far: &OpStats,
    ) -> Progress {
        let rows = [last.clone()];
        let second = Second {
            run: 1,
            index,
            elapsed: Duration::from_millis(elapsed_ms),
            percent: 100.0,
            threads_running,
            connections: 1,
            connected: 1,
            rows: &rows,
            last,
            so_far,
        };
        let previous = Progress {
            ops_per_sec: 8344.0,
            bytes_per_sec: 1000.0,
            latency_ms: 0.12,
            ..Progress::default()
        };
        Progress::following(&second, 1, (index > 0).then_some(&previous))
    }

    fn stats_of(count: u64) -> OpStats {
        let mut stats = OpStats::new();
        for _ in 0..count {
            stats.record(1000, 10, 10);
        }
        stats
    }

    /// The part of a second after a deadline (3.004 s into a 3 s run, the replies read
    /// past it) repeats the line before's rate and latency, as memtier's last line does,
    /// with the totals up to date: it printed `0 ops/sec` and `0.00 msec latency`. A
    /// longer part is scaled to a second.
    #[test]
    fn the_part_of_a_second_a_run_ends_on_repeats_the_figures_before_it() {
        let (empty, so_far) = (OpStats::new(), stats_of(26_001));
        let tail = ending_second(3, 3_004, 0, &empty, &so_far);
        assert_eq!(tail.ops_per_sec, 8344.0);
        assert_eq!(tail.latency_ms, 0.12);
        assert_eq!(tail.ops, 26_001);
        assert!(
            progress_line(&tail).contains(" 8344 (avg:"),
            "{}",
            progress_line(&tail)
        );
        // A whole second, threads running or not, keeps its own figures.
        let whole = ending_second(2, 3_001, 0, &stats_of(40), &so_far);
        assert_eq!(whole.ops_per_sec, 40.0);
        let running = ending_second(3, 3_004, 1, &stats_of(40), &so_far);
        assert_eq!(running.ops_per_sec, 40.0);
        // A run over within its first second: its 250 ms scaled to a second; so is a
        // count run's last 400 ms.
        let short = ending_second(0, 250, 0, &stats_of(40), &stats_of(40));
        assert_eq!(short.ops_per_sec, 160.0);
        assert_eq!(short.latency_ms, 1.0);
        let count_end = ending_second(3, 3_400, 0, &stats_of(40), &so_far);
        assert_eq!(count_end.ops_per_sec.round(), 100.0);
        assert_eq!(count_end.latency_ms, 1.0);
    }

    #[test]
    fn bandwidth_switches_units() {
        assert_eq!(bandwidth(0.0), "0.00KB");
        assert_eq!(bandwidth(2.63 * 1024.0 * 1024.0), "2.63MB");
        assert_eq!(bandwidth(1.5 * 1024.0 * 1024.0 * 1024.0), "1.50GB");
    }

    #[test]
    fn nan_inputs_print_zero() {
        let line = progress_line(&Progress {
            percent: f64::NAN,
            ops_per_sec: f64::INFINITY,
            avg_bytes_per_sec: f64::NAN,
            latency_ms: f64::NAN,
            ..Progress::default()
        });
        assert!(
            !line.to_lowercase().contains("nan") && !line.contains("inf"),
            "{line}"
        );
        assert!(line.starts_with("[RUN #0 0%,   0 secs]"), "{line}");
    }
}
