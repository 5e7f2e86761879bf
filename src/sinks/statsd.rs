//! Live metrics for dashboards: StatsD gauges over UDP once a second, and Graphite event
//! annotations over HTTP when a run starts and ends (`--statsd-host` and friends).
//!
//! Every metric is one line, named and typed as memtier_benchmark names them:
//!
//! ```text
//! <prefix>.<label>.ops_sec:8344|g
//! <prefix>.<label>.latency_ms:0.120|ms
//! <prefix>.<label>.progress_pct:66.666667|g
//! <prefix>.<label>.latency_p99_9:0.311000|g
//! ```
//!
//! memtier sends one datagram per line; kvbench packs the lines of one tick into as few
//! datagrams as fit in [`MAX_DATAGRAM`] bytes, separated by `\n` (the StatsD multi-metric
//! packet format). Sending never blocks and never fails the run: a datagram the kernel
//! refuses is dropped and counted ([`StatsdSink::send_errors`]).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::Duration;

use crate::engine::observer::{RunEnd, RunObserver, RunStart, Second};
use crate::error::Error;
use crate::report::finite;
use crate::results::latency_at_percentile_ms;

/// Largest datagram sent, in bytes: fits one Ethernet frame with IPv6 and UDP headers
/// to spare, so no datagram is ever fragmented.
pub const MAX_DATAGRAM: usize = 1432;

/// Connect and write timeout of a Graphite event post, as memtier uses.
pub const GRAPHITE_TIMEOUT: Duration = Duration::from_secs(2);

/// What one tick publishes: the figures of the live progress line plus the latency
/// percentiles of the last second. "Last second" figures describe the interval just
/// ended; `*_avg` ones the whole run so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveMetrics {
    /// Requests per second in the last second (sent truncated to an integer).
    pub ops_sec: f64,
    /// Requests per second over the run so far (sent truncated to an integer).
    pub ops_sec_avg: f64,
    /// Bytes sent plus received per second in the last second (sent as an integer).
    pub bytes_sec: f64,
    /// Bytes sent plus received per second over the run so far (sent as an integer).
    pub bytes_sec_avg: f64,
    /// Open connections (memtier: clients per thread times running threads).
    pub connections: u64,
    /// How far the run is, 0-100.
    pub progress_pct: f64,
    /// Mean latency of the last second, milliseconds.
    pub latency_ms: f64,
    /// Mean latency over the run so far, milliseconds.
    pub latency_avg_ms: f64,
    /// `(percentile 0-100, latency in milliseconds)` of the last second, one per
    /// `--print-percentiles` value. Leave it empty when the second recorded nothing:
    /// memtier sends no percentile then.
    pub percentiles: Vec<(f64, f64)>,
    /// Connection errors so far; sent only when above 0.
    pub connection_errors: u64,
}

impl LiveMetrics {
    /// The figures of one merged second, as the progress line shows them, plus the
    /// latency at each of `percentiles` in that second (none when it recorded nothing,
    /// as memtier sends none then) and the connection errors so far.
    pub fn from_second(s: &Second<'_>, percentiles: &[f64]) -> LiveMetrics {
        let secs = s.elapsed.as_secs_f64().max(1e-9);
        LiveMetrics {
            ops_sec: s.last.count as f64,
            ops_sec_avg: s.so_far.count as f64 / secs,
            bytes_sec: (s.last.bytes_rx + s.last.bytes_tx) as f64,
            bytes_sec_avg: (s.so_far.bytes_rx + s.so_far.bytes_tx) as f64 / secs,
            connections: s.connections as u64,
            progress_pct: s.percent,
            latency_ms: s.last.avg_latency_ms(),
            latency_avg_ms: s.so_far.avg_latency_ms(),
            percentiles: if s.last.count > 0 {
                percentiles
                    .iter()
                    .map(|&p| (p, latency_at_percentile_ms(&s.last.latency, p)))
                    .collect()
            } else {
                Vec::new()
            },
            connection_errors: s.so_far.connection_errors,
        }
    }
}

/// Where live metrics go: the StatsD server and the Graphite HTTP port on the same host.
/// The host is resolved when the sink opens ([`StatsdSink::new`]); the prefix and label
/// are sanitized there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsdConfig {
    /// The host as given.
    pub host: String,
    /// UDP port of the StatsD server (default 8125).
    pub port: u16,
    /// First part of every metric name (default `memtier`; may be empty).
    pub prefix: String,
    /// Second part of every metric name and the `run:` tag of events (default `default`).
    pub run_label: String,
    /// HTTP port for Graphite event annotations on the same host (default 8080).
    pub graphite_port: u16,
}

/// The StatsD sink as a [`RunObserver`]: opens a [`StatsdSink`] as each run starts
/// (annotating the start), publishes every merged second, and zeroes the gauges and
/// annotates the end when the run finishes. Failing to open the sink is the run's error.
pub struct StatsdObserver {
    config: StatsdConfig,
    percentiles: Vec<f64>,
    sink: Option<StatsdSink>,
}

impl StatsdObserver {
    /// A sink for `config`, publishing the latency at each of `percentiles`.
    pub fn new(config: StatsdConfig, percentiles: Vec<f64>) -> Self {
        StatsdObserver {
            config,
            percentiles,
            sink: None,
        }
    }
}

impl RunObserver for StatsdObserver {
    fn run_started(&mut self, start: &RunStart) -> Result<(), String> {
        let sink = StatsdSink::new(&self.config).map_err(|e| e.to_string())?;
        sink.annotate_start(start.threads, start.clients_per_thread, start.run);
        self.sink = Some(sink);
        Ok(())
    }

    fn second(&mut self, second: &Second<'_>) {
        if let Some(sink) = self.sink.as_mut() {
            sink.publish(&LiveMetrics::from_second(second, &self.percentiles));
        }
    }

    fn run_finished(&mut self, end: &mut RunEnd) -> Result<(), String> {
        if let Some(mut sink) = self.sink.take() {
            sink.finish(end.run);
        }
        Ok(())
    }
}

/// A StatsD client on a non-blocking UDP socket, plus the Graphite event poster that
/// shares its host.
#[derive(Debug)]
pub struct StatsdSink {
    socket: UdpSocket,
    /// The StatsD server's resolved address.
    target: SocketAddr,
    /// The host as the user typed it, for messages and the HTTP `Host` header.
    host: String,
    graphite_port: u16,
    /// Sanitized run label, also the `run:<label>` tag of Graphite events.
    label: String,
    /// `<prefix>.<label>.` (or `<label>.` with an empty prefix), sanitized.
    name_prefix: String,
    /// The datagram being filled; reused across ticks.
    datagram: String,
    /// The line being formatted; reused across lines.
    line: String,
    sent: u64,
    send_errors: u64,
}

/// The StatsD server's address (an IPv4 one first, as memtier only speaks IPv4): a
/// front end calls it before the run too, so a host that does not resolve fails then,
/// not after the whole run.
pub fn resolve(cfg: &StatsdConfig) -> Result<SocketAddr, Error> {
    let cannot_resolve = || Error::usage(format!("cannot resolve StatsD host '{}'", cfg.host));
    let addrs: Vec<SocketAddr> = (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|_| cannot_resolve())?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(cannot_resolve)
}

impl StatsdSink {
    /// Resolves the StatsD host once (an IPv4 address first, as memtier only speaks IPv4)
    /// and opens a non-blocking UDP socket on an ephemeral port. Prints memtier's
    /// `statsd: initialized, ...` notice on stderr.
    ///
    /// An unresolvable host is a usage error; a socket the system refuses a run error.
    pub fn new(cfg: &StatsdConfig) -> Result<Self, Error> {
        let target = resolve(cfg)?;
        let local: SocketAddr = if target.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            ([0u16; 8], 0).into()
        };
        let socket_error = |e: io::Error| Error::run(format!("cannot open a StatsD socket: {e}"));
        let socket = UdpSocket::bind(local).map_err(socket_error)?;
        socket.set_nonblocking(true).map_err(socket_error)?;

        let label = if cfg.run_label.is_empty() {
            "default".to_string()
        } else {
            sanitize(&cfg.run_label, false)
        };
        let name_prefix = if cfg.prefix.is_empty() {
            format!("{label}.")
        } else {
            format!("{}.{label}.", sanitize(&cfg.prefix, true))
        };
        eprintln_safe!(
            "statsd: initialized, sending metrics to {}:{} with prefix '{}' run_label '{}'",
            cfg.host,
            cfg.port,
            cfg.prefix,
            label
        );
        Ok(StatsdSink {
            socket,
            target,
            host: cfg.host.clone(),
            graphite_port: cfg.graphite_port,
            label,
            name_prefix,
            datagram: String::with_capacity(MAX_DATAGRAM),
            line: String::with_capacity(256),
            sent: 0,
            send_errors: 0,
        })
    }

    /// Sends one tick's metrics, in memtier's order: `ops_sec`, `ops_sec_avg`,
    /// `bytes_sec`, `bytes_sec_avg` (integer gauges), `latency_ms`, `latency_avg_ms`
    /// (timings, `%.3f`), `connections` (integer gauge), `progress_pct` (gauge, `%.6f`),
    /// `connection_errors` (integer gauge, only when above 0) and one `latency_p<pct>`
    /// gauge (`%.6f`, dots in the percentile become `_`) per percentile.
    pub fn publish(&mut self, m: &LiveMetrics) {
        self.gauge_int("ops_sec", whole(m.ops_sec));
        self.gauge_int("ops_sec_avg", whole(m.ops_sec_avg));
        self.gauge_int("bytes_sec", whole(m.bytes_sec));
        self.gauge_int("bytes_sec_avg", whole(m.bytes_sec_avg));
        self.timing("latency_ms", m.latency_ms);
        self.timing("latency_avg_ms", m.latency_avg_ms);
        self.gauge_int("connections", m.connections);
        self.gauge_float("progress_pct", m.progress_pct);
        if m.connection_errors > 0 {
            self.gauge_int("connection_errors", m.connection_errors);
        }
        for &(percentile, ms) in &m.percentiles {
            let name = percentile_metric_name(percentile);
            self.gauge_float(&name, ms);
        }
        self.flush();
    }

    /// Ends run `run_number`: zeroes `ops_sec`, `ops_sec_avg`, `bytes_sec`,
    /// `bytes_sec_avg` and `progress_pct` so graphs drop to 0, then posts the
    /// "Benchmark Completed" event ([`StatsdSink::annotate_end`]; do not call it as
    /// well).
    pub fn finish(&mut self, run_number: u32) {
        for name in [
            "ops_sec",
            "ops_sec_avg",
            "bytes_sec",
            "bytes_sec_avg",
            "progress_pct",
        ] {
            self.gauge_int(name, 0);
        }
        self.flush();
        self.annotate_end(run_number);
    }

    /// Posts the "Benchmark Started" Graphite event for run `run`; a failure is a
    /// warning on stderr. Blocks for at most [`GRAPHITE_TIMEOUT`] twice (connect, write).
    pub fn annotate_start(&self, threads: usize, connections_per_thread: usize, run: u32) {
        let data = format!("threads={threads} connections={connections_per_thread} run={run}");
        self.annotate("Benchmark Started", "memtier,start", &data);
    }

    /// Posts the "Benchmark Completed" Graphite event for run `run`; a failure is a
    /// warning on stderr. [`StatsdSink::finish`] calls it.
    pub fn annotate_end(&self, run: u32) {
        self.annotate("Benchmark Completed", "memtier,end", &format!("run={run}"));
    }

    /// Datagrams the kernel accepted so far.
    pub fn datagrams_sent(&self) -> u64 {
        self.sent
    }

    /// Datagrams dropped so far (socket buffer full, no route, nobody listening...).
    pub fn send_errors(&self) -> u64 {
        self.send_errors
    }

    fn annotate(&self, what: &str, tags: &str, data: &str) {
        if let Err(e) = self.post_event(what, tags, data) {
            eprintln_safe!(
                "warning: cannot send Graphite event \"{what}\" to {}:{}: {e}",
                self.host,
                self.graphite_port
            );
        }
    }

    /// One HTTP/1.1 POST to `/events/`, fire and forget (the reply is not read), as
    /// memtier sends it:
    ///
    /// ```text
    /// POST /events/ HTTP/1.1
    /// Host: <host>:<graphite port>
    /// Content-Type: application/json
    /// Content-Length: <n>
    /// Connection: close
    ///
    /// {"what":"<what>","tags":"<tags>,run:<label>","data":"<data>"}
    /// ```
    fn post_event(&self, what: &str, tags: &str, data: &str) -> io::Result<()> {
        // `what`, `tags` and `data` are kvbench's own and the label is sanitized to
        // `[A-Za-z0-9_-]`, so nothing here needs JSON escaping.
        let body = format!(
            r#"{{"what":"{what}","tags":"{tags},run:{}","data":"{data}"}}"#,
            self.label
        );
        let request = format!(
            "POST /events/ HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            host_header(&self.host, self.graphite_port),
            body.len()
        );
        let addr = SocketAddr::new(self.target.ip(), self.graphite_port);
        let mut stream = TcpStream::connect_timeout(&addr, GRAPHITE_TIMEOUT)?;
        stream.set_write_timeout(Some(GRAPHITE_TIMEOUT))?;
        stream.write_all(request.as_bytes())?;
        stream.flush()
    }

    fn gauge_int(&mut self, name: &str, value: u64) {
        self.line.clear();
        let _ = write!(self.line, "{}{name}:{value}|g", self.name_prefix);
        self.push_line();
    }

    fn gauge_float(&mut self, name: &str, value: f64) {
        self.line.clear();
        let _ = write!(
            self.line,
            "{}{name}:{:.6}|g",
            self.name_prefix,
            non_negative(value)
        );
        self.push_line();
    }

    fn timing(&mut self, name: &str, ms: f64) {
        self.line.clear();
        let _ = write!(
            self.line,
            "{}{name}:{:.3}|ms",
            self.name_prefix,
            non_negative(ms)
        );
        self.push_line();
    }

    /// Appends the formatted line to the datagram, sending the datagram first when the
    /// line would not fit. A line longer than a datagram on its own is dropped and
    /// counted (configuration limits the prefix and label so this cannot happen).
    fn push_line(&mut self) {
        if self.line.len() > MAX_DATAGRAM {
            self.send_errors += 1;
            return;
        }
        let needed = self.line.len() + usize::from(!self.datagram.is_empty());
        if self.datagram.len() + needed > MAX_DATAGRAM {
            self.flush();
        }
        if !self.datagram.is_empty() {
            self.datagram.push('\n');
        }
        self.datagram.push_str(&self.line);
    }

    /// Sends the pending datagram, if any.
    fn flush(&mut self) {
        if self.datagram.is_empty() {
            return;
        }
        match self.socket.send_to(self.datagram.as_bytes(), self.target) {
            Ok(_) => self.sent += 1,
            Err(_) => self.send_errors += 1,
        }
        self.datagram.clear();
    }
}

/// memtier's sanitizing: every byte other than an ASCII letter, digit, `_` or `-` (and
/// `.` where `allow_dot`, for the prefix's hierarchy) becomes `_`.
pub fn sanitize(raw: &str, allow_dot: bool) -> String {
    raw.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (allow_dot && b == b'.') {
                char::from(b)
            } else {
                '_'
            }
        })
        .collect()
}

/// `latency_p50`, `latency_p99_9`, `latency_p99_99`: the percentile as C's `%g` prints it
/// (six significant digits, no trailing zeros), dots replaced by `_`.
pub fn percentile_metric_name(percentile: f64) -> String {
    let p = non_negative(percentile);
    let mut text = if p == 0.0 {
        "0".to_string()
    } else {
        let magnitude = p.log10().floor() as i32;
        let decimals = (5 - magnitude).max(0) as usize;
        let mut s = format!("{p:.decimals$}");
        if s.contains('.') {
            let kept = s.trim_end_matches('0').trim_end_matches('.').len();
            s.truncate(kept);
        }
        s
    };
    text = text.replace('.', "_");
    format!("latency_p{text}")
}

/// A rate as a whole number, truncated as memtier's integer cast does; NaN and
/// negatives are 0.
fn whole(x: f64) -> u64 {
    non_negative(x) as u64
}

/// `x`, or 0 when negative, NaN or infinite: a leading `-` would make a StatsD gauge a
/// relative change.
fn non_negative(x: f64) -> f64 {
    finite(x).max(0.0)
}

/// The `Host` header's value: `host:port`, an IPv6 literal in brackets (`[::1]:8080`,
/// RFC 7230), as the host was given (a name, an IPv4 or IPv6 address).
fn host_header(host: &str, port: u16) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.contains(':') {
        format!("[{bare}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;

    #[test]
    fn host_headers_bracket_ipv6_literals() {
        assert_eq!(host_header("127.0.0.1", 8080), "127.0.0.1:8080");
        assert_eq!(host_header("graphite.local", 81), "graphite.local:81");
        assert_eq!(host_header("::1", 18081), "[::1]:18081");
        assert_eq!(host_header("[::1]", 18081), "[::1]:18081");
    }

    #[test]
    fn sanitize_replaces_what_memtier_replaces() {
        assert_eq!(sanitize("run 1/a.b:c-d_e", false), "run_1_a_b_c-d_e");
        assert_eq!(sanitize("app.redis/x", true), "app.redis_x");
        // Byte by byte, as memtier's C loop: a two-byte character gives two `_`.
        assert_eq!(sanitize("é", false), "__");
    }

    #[test]
    fn percentile_names_match_percent_g() {
        for (p, want) in [
            (50.0, "latency_p50"),
            (99.0, "latency_p99"),
            (99.9, "latency_p99_9"),
            (99.99, "latency_p99_99"),
            (99.999, "latency_p99_999"),
            (0.0, "latency_p0"),
            (100.0, "latency_p100"),
            (12.5, "latency_p12_5"),
            // Six significant digits, as %g: 99.9999999 rounds to 100.
            (99.9999999, "latency_p100"),
            (f64::from(99.9_f32), "latency_p99_9"),
        ] {
            assert_eq!(percentile_metric_name(p), want, "{p}");
        }
    }

    #[test]
    fn whole_truncates_and_clamps() {
        assert_eq!(whole(8344.9), 8344);
        assert_eq!(whole(-3.0), 0);
        assert_eq!(whole(f64::NAN), 0);
        assert_eq!(non_negative(f64::INFINITY), 0.0);
    }

    #[test]
    fn from_second_copies_the_progress_figures() {
        let mut last = OpStats::new();
        for us in [200, 300] {
            last.record(us, 10, 40);
        }
        let mut so_far = last.clone();
        so_far.record(1000, 10, 40);
        so_far.connection_errors = 2;
        let rows = [last.clone()];
        let second = Second {
            run: 1,
            index: 1,
            elapsed: Duration::from_secs(2),
            percent: 50.0,
            threads_running: 2,
            connections: 8,
            connected: 7,
            rows: &rows,
            last: &last,
            so_far: &so_far,
        };
        let m = LiveMetrics::from_second(&second, &[50.0]);
        assert_eq!(
            m,
            LiveMetrics {
                ops_sec: 2.0,
                ops_sec_avg: 1.5,
                bytes_sec: 100.0,
                bytes_sec_avg: 75.0,
                connections: 8,
                progress_pct: 50.0,
                latency_ms: 0.25,
                latency_avg_ms: 0.5,
                percentiles: vec![(50.0, 0.2)],
                connection_errors: 2,
            }
        );
        let idle = OpStats::new();
        let quiet = Second {
            last: &idle,
            ..second
        };
        assert!(
            LiveMetrics::from_second(&quiet, &[50.0])
                .percentiles
                .is_empty()
        );
    }
}
