//! redis-benchmark's text, byte for byte: the per-test block, the `-q` line, the `--csv`
//! header and rows, the live progress line, and the fixed banners around them.
//!
//! ```text
//! ====== SET ======                                  normal block (one per test)
//!   100000 requests completed in 1.16 seconds
//!   50 parallel clients
//!   3 bytes payload
//!   keep alive: 1
//!   host configuration "save": 3600 1 300 100 60 10000
//!   host configuration "appendonly": no
//!   multi-thread: no
//!
//! Latency by percentile distribution:
//! 0.000% <= 0.079 milliseconds (cumulative count 2)
//! ...
//! Cumulative distribution of latencies:
//! 0.027% <= 0.103 milliseconds (cumulative count 27)
//! ...
//! Summary:
//!   throughput summary: 85763.29 requests per second
//!   latency summary (msec):
//!           avg       min       p50       p95       p99       max
//!         0.303     0.072     0.287     0.575     0.991     1.879
//! SET: 85763.29 requests per second, p50=0.287 msec                 -q
//! "SET","85763.29","0.303","0.072","0.287","0.575","0.991","1.879"   --csv
//! SET: rps=84312.0 (overall: 85012.3) avg_msec=0.301 (overall: 0.303)\r   live, on a TTY
//! ```
//!
//! Every figure comes from [`RbHistogram`], so the walks and roundings are
//! redis-benchmark's; this module only lays the text out. Nothing here touches a socket.

use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::latency::{DistributionLine, RbHistogram};

/// Which of redis-benchmark's three layouts to print (`--csv` wins over `-q`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// The full per-test block.
    #[default]
    Normal,
    /// `-q`: one line per test.
    Quiet,
    /// `--csv`: a header, then one row per test.
    Csv,
}

/// The settings redis-benchmark reads from a server with `CONFIG GET` before the tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// `CONFIG GET save` (may be empty).
    pub save: String,
    /// `CONFIG GET appendonly`.
    pub appendonly: String,
}

/// What the normal block reports about the server(s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerInfo {
    /// One server; `None` when its configuration could not be read (lines left out).
    Single(Option<HostConfig>),
    /// `--cluster`: each master's configuration, in the order the masters were listed;
    /// `None` for a master that could not be read (its lines are left out).
    Cluster(Vec<Option<HostConfig>>),
}

/// What stays the same for every test of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    /// `-c`.
    pub clients: u32,
    /// `-k`.
    pub keep_alive: bool,
    /// Threads as redis-benchmark counts them: 0 for its default single event loop,
    /// else `--threads` (in cluster mode, the number of masters when not given).
    pub threads: u32,
    /// The server(s) benchmarked.
    pub server: ServerInfo,
    /// `--precision`: significant figures of the latency histogram (1 to 4).
    pub precision: u8,
}

/// One finished test.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// The test's title (`SET`, `MSET (10 keys)`, an arbitrary command's words).
    pub title: String,
    /// Requests completed.
    pub requests: u64,
    /// From the first request sent to the last reply.
    pub elapsed: Duration,
    /// The "bytes payload" figure (see [`super::suite::Test::payload_bytes`]).
    pub payload_bytes: usize,
    /// Latency of every request, microseconds.
    pub latency: Histogram<u64>,
}

/// A cluster master as the start-of-run banner lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterInfo {
    /// The node ID, when known.
    pub name: Option<String>,
    /// Host as the cluster reports it.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// The `--csv` header line.
pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n";

/// Printed once at the start when `-k 0` is given.
pub const KEEPALIVE_WARNING: &str = "WARNING: Keepalive disabled. You probably need 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux and 'sudo sysctl -w net.inet.tcp.msl=1000' for Mac OS X in order to use a lot of clients/requests\n";

/// What follows the last test of the default suite: an empty line, except in CSV.
pub fn suite_footer(mode: OutputMode) -> &'static str {
    match mode {
        OutputMode::Csv => "",
        OutputMode::Normal | OutputMode::Quiet => "\n",
    }
}

/// The `--cluster` banner: the masters found, before any test.
pub fn cluster_masters(masters: &[MasterInfo]) -> String {
    let mut out = format!("Cluster has {} master nodes:\n\n", masters.len());
    for (i, m) in masters.iter().enumerate() {
        let _ = write!(out, "Master {i}: ");
        if let Some(name) = &m.name {
            let _ = write!(out, "{name} ");
        }
        let _ = writeln!(out, "{}:{}", m.host, m.port);
    }
    out.push('\n');
    out
}

/// The `-I` banner.
pub fn idle_banner(clients: u32) -> String {
    format!("Creating {clients} idle connections and waiting forever (Ctrl+C when done)\n")
}

/// The `-I` status, rewritten in place every 250 ms.
pub fn idle_status(live_clients: u32) -> String {
    format!("clients: {live_clients}\r")
}

/// A latency in microseconds as milliseconds with three decimals, exactly.
fn ms(us: u64) -> String {
    format!("{}.{:03}", us / 1000, us % 1000)
}

fn requests_per_second(test: &TestResult) -> f64 {
    test.requests as f64 / test.elapsed.as_secs_f64()
}

/// The figures of the summary, `--csv` and `-q`, all from one re-bucketed histogram.
struct Summary {
    rps: f64,
    avg_ms: f64,
    min: u64,
    p50: u64,
    p95: u64,
    p99: u64,
    max: u64,
}

impl Summary {
    fn of(test: &TestResult, hist: &RbHistogram) -> Self {
        Summary {
            rps: requests_per_second(test),
            avg_ms: hist.mean() / 1000.0,
            min: hist.min(),
            p50: hist.value_at_percentile(50.0),
            p95: hist.value_at_percentile(95.0),
            p99: hist.value_at_percentile(99.0),
            max: hist.max(),
        }
    }
}

/// One test's output in `mode`: the whole block, the `-q` line or the CSV row.
pub fn render_test(run: &RunInfo, test: &TestResult, mode: OutputMode) -> String {
    let hist = RbHistogram::from_hdr(&test.latency, run.precision);
    let s = Summary::of(test, &hist);
    match mode {
        OutputMode::Quiet => format!(
            "{}: {:.2} requests per second, p50={} msec\n",
            test.title,
            s.rps,
            ms(s.p50)
        ),
        OutputMode::Csv => format!(
            "\"{}\",\"{:.2}\",\"{:.3}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"\n",
            // redis-benchmark writes the title raw; doubling quotes keeps the row valid CSV.
            test.title.replace('"', "\"\""),
            s.rps,
            s.avg_ms,
            ms(s.min),
            ms(s.p50),
            ms(s.p95),
            ms(s.p99),
            ms(s.max)
        ),
        OutputMode::Normal => render_block(run, test, &hist, &s),
    }
}

fn render_block(run: &RunInfo, test: &TestResult, hist: &RbHistogram, s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "====== {} ======", test.title);
    let _ = writeln!(
        out,
        "  {} requests completed in {:.2} seconds",
        test.requests,
        test.elapsed.as_secs_f64()
    );
    let _ = writeln!(out, "  {} parallel clients", run.clients);
    let _ = writeln!(out, "  {} bytes payload", test.payload_bytes);
    let _ = writeln!(out, "  keep alive: {}", u8::from(run.keep_alive));
    match &run.server {
        ServerInfo::Single(Some(cfg)) => {
            let _ = writeln!(out, "  host configuration \"save\": {}", cfg.save);
            let _ = writeln!(
                out,
                "  host configuration \"appendonly\": {}",
                cfg.appendonly
            );
        }
        ServerInfo::Single(None) => {}
        ServerInfo::Cluster(nodes) => {
            let _ = writeln!(out, "  cluster mode: yes ({} masters)", nodes.len());
            for (i, cfg) in nodes.iter().enumerate() {
                let Some(cfg) = cfg else { continue };
                let save = if cfg.save.is_empty() {
                    "NONE"
                } else {
                    &cfg.save
                };
                let _ = writeln!(out, "  node [{i}] configuration:");
                let _ = writeln!(out, "    save: {save}");
                let _ = writeln!(out, "    appendonly: {}", cfg.appendonly);
            }
        }
    }
    let _ = writeln!(
        out,
        "  multi-thread: {}",
        if run.threads > 0 { "yes" } else { "no" }
    );
    if run.threads > 0 {
        let _ = writeln!(out, "  threads: {}", run.threads);
    }
    out.push_str("\nLatency by percentile distribution:\n");
    push_lines(&mut out, &hist.percentile_distribution());
    out.push_str("\nCumulative distribution of latencies:\n");
    push_lines(&mut out, &hist.cumulative_distribution());
    out.push_str("\nSummary:\n");
    let _ = writeln!(
        out,
        "  throughput summary: {:.2} requests per second",
        s.rps
    );
    out.push_str("  latency summary (msec):\n");
    let _ = writeln!(
        out,
        "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "avg", "min", "p50", "p95", "p99", "max"
    );
    let _ = writeln!(
        out,
        "    {:>9.3} {:>9} {:>9} {:>9} {:>9} {:>9}",
        s.avg_ms,
        ms(s.min),
        ms(s.p50),
        ms(s.p95),
        ms(s.p99),
        ms(s.max)
    );
    out
}

fn push_lines(out: &mut String, lines: &[DistributionLine]) {
    for l in lines {
        let _ = writeln!(
            out,
            "{:.3}% <= {} milliseconds (cumulative count {})",
            l.percent,
            ms(l.value_us),
            l.cumulative
        );
    }
}

/// The mean of `hist` (microseconds) as redis-benchmark computes it, in milliseconds.
pub fn mean_ms(hist: &Histogram<u64>, precision: u8) -> f64 {
    RbHistogram::from_hdr(hist, precision).mean() / 1000.0
}

/// Whether redis-benchmark shows the live line in `mode`: not with `--csv`. (kvbench
/// also shows it only when standard output is a terminal.)
pub fn shows_live_line(mode: OutputMode) -> bool {
    mode != OutputMode::Csv
}

/// How often the live line (and `-I`'s `clients:` status) is rewritten.
pub const LIVE_LINE_INTERVAL: Duration = Duration::from_millis(250);

/// One tick of the live line: the last interval and the test so far.
#[derive(Clone, Copy, Debug)]
pub struct LiveSample<'a> {
    /// The test's title.
    pub title: &'a str,
    /// Requests completed during the interval.
    pub interval_requests: u64,
    /// The interval's length.
    pub interval: Duration,
    /// Requests completed since the test started.
    pub total_requests: u64,
    /// Time since the test started.
    pub elapsed: Duration,
    /// Mean latency of the interval, milliseconds (see [`mean_ms`]).
    pub interval_avg_ms: f64,
    /// Mean latency since the test started, milliseconds.
    pub overall_avg_ms: f64,
}

/// The live progress line redis-benchmark rewrites in place (every 250 ms) while a test
/// runs; kvbench shows it only when standard output is a terminal.
#[derive(Clone, Debug, Default)]
pub struct LiveLine {
    /// Bytes of the line last printed, which the next one must blank out.
    last_len: usize,
}

impl LiveLine {
    /// The text that replaces the previous line with `sample`'s.
    pub fn update(&mut self, sample: &LiveSample) -> String {
        let rate = |n: u64, d: Duration| {
            let secs = d.as_secs_f64();
            if secs > 0.0 { n as f64 / secs } else { 0.0 }
        };
        let line = format!(
            "{}: rps={:.1} (overall: {:.1}) avg_msec={:.3} (overall: {:.3})\r",
            sample.title,
            rate(sample.interval_requests, sample.interval),
            rate(sample.total_requests, sample.elapsed),
            sample.interval_avg_ms,
            sample.overall_avg_ms
        );
        let mut out = self.clear();
        self.last_len = line.len();
        out.push_str(&line);
        out
    }

    /// Blank out the last line (before a test's result is printed); empty when nothing
    /// was printed.
    pub fn clear(&mut self) -> String {
        if self.last_len == 0 {
            return String::new();
        }
        let out = format!("{}\r", " ".repeat(self.last_len));
        self.last_len = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        h
    }

    fn run() -> RunInfo {
        RunInfo {
            clients: 5,
            keep_alive: true,
            threads: 0,
            server: ServerInfo::Single(Some(HostConfig {
                save: String::new(),
                appendonly: "no".into(),
            })),
            precision: 3,
        }
    }

    fn test(title: &str) -> TestResult {
        TestResult {
            title: title.into(),
            requests: 2000,
            elapsed: Duration::from_millis(31),
            payload_bytes: 3,
            latency: hist(&[
                (15, 71),
                (31, 1053),
                (39, 419),
                (55, 358),
                (71, 45),
                (191, 24),
                (1711, 15),
                (2831, 8),
                (5175, 5),
                (5183, 1),
                (5191, 1),
            ]),
        }
    }

    #[test]
    fn normal_block_layout() {
        let text = render_test(&run(), &test("SET"), OutputMode::Normal);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..10],
            [
                "====== SET ======",
                "  2000 requests completed in 0.03 seconds",
                "  5 parallel clients",
                "  3 bytes payload",
                "  keep alive: 1",
                "  host configuration \"save\": ",
                "  host configuration \"appendonly\": no",
                "  multi-thread: no",
                "",
                "Latency by percentile distribution:",
            ]
        );
        assert_eq!(
            lines[10],
            "0.000% <= 0.015 milliseconds (cumulative count 71)"
        );
        assert_eq!(
            lines[11],
            "50.000% <= 0.031 milliseconds (cumulative count 1124)"
        );
        let summary = lines.iter().position(|l| *l == "Summary:").unwrap();
        assert_eq!(
            lines[summary + 1],
            "  throughput summary: 64516.13 requests per second"
        );
        assert_eq!(lines[summary + 2], "  latency summary (msec):");
        assert_eq!(
            lines[summary + 3],
            "          avg       min       p50       p95       p99       max"
        );
        assert!(
            lines[summary + 4].starts_with("        0."),
            "{}",
            lines[summary + 4]
        );
        assert!(lines[summary + 4].ends_with("     0.008     0.031     0.055     1.711     5.191"));
        assert_eq!(lines.len(), summary + 5);
        let cumulative = lines
            .iter()
            .position(|l| *l == "Cumulative distribution of latencies:")
            .unwrap();
        assert_eq!(
            lines[cumulative + 1],
            "97.300% <= 0.103 milliseconds (cumulative count 1946)"
        );
        assert_eq!(
            lines[summary - 2],
            "100.000% <= 6.103 milliseconds (cumulative count 2000)"
        );
    }

    #[test]
    fn cluster_and_threads_lines() {
        let mut info = run();
        info.threads = 3;
        info.server = ServerInfo::Cluster(vec![
            Some(HostConfig {
                save: String::new(),
                appendonly: "no".into(),
            }),
            None,
            Some(HostConfig {
                save: "3600 1".into(),
                appendonly: "yes".into(),
            }),
        ]);
        let text = render_test(&info, &test("GET"), OutputMode::Normal);
        assert!(text.contains(
            "  keep alive: 1\n  cluster mode: yes (3 masters)\n  node [0] configuration:\n    save: NONE\n    appendonly: no\n  node [2] configuration:\n    save: 3600 1\n    appendonly: yes\n  multi-thread: yes\n  threads: 3\n\nLatency"
        ), "{text}");
    }

    #[test]
    fn quiet_and_csv() {
        assert_eq!(
            render_test(&run(), &test("SET"), OutputMode::Quiet),
            "SET: 64516.13 requests per second, p50=0.031 msec\n"
        );
        let row = render_test(
            &run(),
            &test("eval return redis.call(\"ping\") 0"),
            OutputMode::Csv,
        );
        assert!(
            row.starts_with("\"eval return redis.call(\"\"ping\"\") 0\",\"64516.13\",\"0."),
            "{row}"
        );
        assert!(
            row.ends_with(",\"0.008\",\"0.031\",\"0.055\",\"1.711\",\"5.191\"\n"),
            "{row}"
        );
        assert_eq!(CSV_HEADER.matches(',').count(), 7);
        assert_eq!(suite_footer(OutputMode::Csv), "");
        assert_eq!(suite_footer(OutputMode::Quiet), "\n");
    }

    #[test]
    fn banners() {
        let masters = [
            MasterInfo {
                name: Some("b596".into()),
                host: "127.0.0.1".into(),
                port: 17103,
            },
            MasterInfo {
                name: None,
                host: "127.0.0.1".into(),
                port: 17102,
            },
        ];
        assert_eq!(
            cluster_masters(&masters),
            "Cluster has 2 master nodes:\n\nMaster 0: b596 127.0.0.1:17103\nMaster 1: 127.0.0.1:17102\n\n"
        );
        assert_eq!(
            idle_banner(3),
            "Creating 3 idle connections and waiting forever (Ctrl+C when done)\n"
        );
        assert_eq!(idle_status(3), "clients: 3\r");
    }

    #[test]
    fn live_line_blanks_the_previous_one() {
        assert!(shows_live_line(OutputMode::Quiet) && !shows_live_line(OutputMode::Csv));
        let mut live = LiveLine::default();
        assert_eq!(live.clear(), "");
        let sample = LiveSample {
            title: "SET",
            interval_requests: 0,
            interval: Duration::ZERO,
            total_requests: 100,
            elapsed: Duration::from_millis(250),
            interval_avg_ms: 0.0,
            overall_avg_ms: 0.0791,
        };
        let first = live.update(&sample);
        assert_eq!(
            first,
            "SET: rps=0.0 (overall: 400.0) avg_msec=0.000 (overall: 0.079)\r"
        );
        let second = live.update(&sample);
        assert_eq!(second, format!("{}\r{first}", " ".repeat(first.len())));
        assert_eq!(live.clear(), format!("{}\r", " ".repeat(first.len())));
        assert_eq!(live.clear(), "");
    }
}
