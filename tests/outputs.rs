//! Live and per-client outputs: StatsD datagrams and Graphite events caught by sockets the
//! test owns, `--client-stats` CSV files read back from disk, and how the flags of both
//! (and `-D`) validate into memtier's settings.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use common::TestDir;
use kvbench::error::Error;
use kvbench::frontend::memtier::{Parsed, Settings, parse_args};
use kvbench::report::client_stats::{PER_SECOND_HEADER, write_files};
use kvbench::sinks::statsd::{LiveMetrics, MAX_DATAGRAM, StatsdConfig, StatsdSink};
use kvbench::stats::ClientSeries;
use kvbench::stats::rows;

// ---------------------------------------------------------------- StatsD

/// A StatsD server stand-in: a UDP socket on 127.0.0.1 and a sink configured to reach it.
struct Statsd {
    server: UdpSocket,
    sink: StatsdSink,
}

impl Statsd {
    fn new(prefix: &str, label: &str, graphite_port: u16) -> Statsd {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        server
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let cfg = StatsdConfig {
            host: "127.0.0.1".to_string(),
            port: server.local_addr().unwrap().port(),
            prefix: prefix.to_string(),
            run_label: label.to_string(),
            graphite_port,
        };
        let sink = StatsdSink::new(&cfg).unwrap();
        Statsd { server, sink }
    }

    /// Every datagram that arrives until none has for 200 ms (at most 5 s in all).
    fn datagrams(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = [0u8; 65536];
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            match self.server.recv(&mut buf) {
                Ok(n) => out.push(String::from_utf8(buf[..n].to_vec()).unwrap()),
                Err(_) => break,
            }
        }
        out
    }

    /// The metric lines of every datagram that arrives, in order; checks each datagram's size.
    fn lines(&self) -> Vec<String> {
        let datagrams = self.datagrams();
        for d in &datagrams {
            assert!(d.len() <= MAX_DATAGRAM, "datagram of {} bytes", d.len());
            assert!(!d.is_empty() && !d.ends_with('\n'), "{d:?}");
        }
        datagrams
            .iter()
            .flat_map(|d| d.split('\n'))
            .map(String::from)
            .collect()
    }
}

fn sample_metrics() -> LiveMetrics {
    LiveMetrics {
        ops_sec: 8344.9,
        ops_sec_avg: 8730.5,
        bytes_sec: 362_424.32,
        bytes_sec_avg: 379_207.68,
        connections: 4,
        progress_pct: 200.0 / 3.0,
        latency_ms: 0.12,
        latency_avg_ms: 0.1149,
        percentiles: vec![(50.0, 0.1), (99.0, 0.247), (99.9, 0.311)],
        connection_errors: 0,
    }
}

#[test]
fn statsd_lines_carry_memtier_names_types_and_formats() {
    let mut statsd = Statsd::new("memtier", "default", 1);
    statsd.sink.publish(&sample_metrics());
    let got = statsd.lines();
    let want = [
        "memtier.default.ops_sec:8344|g",
        "memtier.default.ops_sec_avg:8730|g",
        "memtier.default.bytes_sec:362424|g",
        "memtier.default.bytes_sec_avg:379207|g",
        "memtier.default.latency_ms:0.120|ms",
        "memtier.default.latency_avg_ms:0.115|ms",
        "memtier.default.connections:4|g",
        "memtier.default.progress_pct:66.666667|g",
        "memtier.default.latency_p50:0.100000|g",
        "memtier.default.latency_p99:0.247000|g",
        "memtier.default.latency_p99_9:0.311000|g",
    ];
    assert_eq!(got, want);
    assert_eq!(statsd.sink.send_errors(), 0);
    assert_eq!(statsd.sink.datagrams_sent(), 1);
}

#[test]
fn statsd_connection_errors_only_when_some_and_no_percentiles_when_empty() {
    let mut statsd = Statsd::new("memtier", "default", 1);
    let mut m = sample_metrics();
    m.percentiles.clear();
    m.connection_errors = 3;
    statsd.sink.publish(&m);
    let got = statsd.lines();
    assert!(
        got.contains(&"memtier.default.connection_errors:3|g".to_string()),
        "{got:?}"
    );
    assert!(!got.iter().any(|l| l.contains("latency_p")), "{got:?}");
    assert!(
        !got.iter().any(|l| l.ends_with("|c")),
        "no counters: {got:?}"
    );

    m.connection_errors = 0;
    statsd.sink.publish(&m);
    let got = statsd.lines();
    assert!(
        !got.iter().any(|l| l.contains("connection_errors")),
        "{got:?}"
    );
}

#[test]
fn statsd_prefix_and_label_are_sanitized() {
    let mut statsd = Statsd::new("my app/x.y", "run #1: é", 1);
    statsd.sink.publish(&LiveMetrics::default());
    let got = statsd.lines();
    // Prefix keeps its dots; the label loses everything but [A-Za-z0-9_-], byte by byte.
    assert_eq!(got[0], "my_app_x.y.run__1____.ops_sec:0|g");
    // NaN-free zeros everywhere for an empty tick.
    assert!(got.contains(&"my_app_x.y.run__1____.latency_ms:0.000|ms".to_string()));
    assert!(got.contains(&"my_app_x.y.run__1____.progress_pct:0.000000|g".to_string()));

    // An empty prefix leaves the label first; an empty label becomes "default".
    let mut statsd = Statsd::new("", "", 1);
    statsd.sink.publish(&LiveMetrics::default());
    assert_eq!(statsd.lines()[0], "default.ops_sec:0|g");
}

#[test]
fn statsd_many_percentiles_split_into_datagrams_that_fit() {
    let mut statsd = Statsd::new("memtier", "default", 1);
    let mut m = sample_metrics();
    m.percentiles = (1..=200).map(|i| (f64::from(i) / 2.0, 1.0)).collect();
    statsd.sink.publish(&m);
    let datagrams = statsd.datagrams();
    assert!(datagrams.len() > 1, "{} datagram(s)", datagrams.len());
    let lines: Vec<&str> = datagrams.iter().flat_map(|d| d.split('\n')).collect();
    for d in &datagrams {
        assert!(d.len() <= MAX_DATAGRAM, "{}", d.len());
    }
    assert_eq!(lines.len(), 8 + 200);
    assert!(lines.contains(&"memtier.default.latency_p0_5:1.000000|g"));
    assert!(lines.contains(&"memtier.default.latency_p100:1.000000|g"));
    let names: BTreeSet<&str> = lines.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(names.len(), lines.len(), "a metric sent twice");
}

#[test]
fn statsd_finish_zeroes_the_gauges_and_posts_the_end_event() {
    let graphite = Graphite::listen();
    let mut statsd = Statsd::new("memtier", "nightly", graphite.port);
    statsd.sink.finish(3);
    let got = statsd.lines();
    assert_eq!(
        got,
        [
            "memtier.nightly.ops_sec:0|g",
            "memtier.nightly.ops_sec_avg:0|g",
            "memtier.nightly.bytes_sec:0|g",
            "memtier.nightly.bytes_sec_avg:0|g",
            "memtier.nightly.progress_pct:0|g",
        ]
    );
    let event = graphite.request();
    assert_eq!(
        event.json,
        serde_json::json!({
            "what": "Benchmark Completed",
            "tags": "memtier,end,run:nightly",
            "data": "run=3",
        })
    );
}

#[test]
fn statsd_unresolvable_host_is_a_usage_error() {
    let cfg = StatsdConfig {
        host: "nonexistent.invalid".to_string(),
        port: 8125,
        prefix: "memtier".to_string(),
        run_label: "default".to_string(),
        graphite_port: 8080,
    };
    let err = StatsdSink::new(&cfg).unwrap_err();
    assert_eq!(
        err,
        Error::usage("cannot resolve StatsD host 'nonexistent.invalid'")
    );
}

#[test]
fn statsd_nobody_listening_is_not_an_error() {
    // A UDP port nobody reads: sends are fire and forget; the sink keeps going.
    let port = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let cfg = StatsdConfig {
        host: "127.0.0.1".to_string(),
        port,
        prefix: "memtier".to_string(),
        run_label: "default".to_string(),
        graphite_port: 1,
    };
    let mut sink = StatsdSink::new(&cfg).unwrap();
    for _ in 0..3 {
        sink.publish(&sample_metrics());
    }
    assert_eq!(sink.datagrams_sent() + sink.send_errors(), 3);
}

// ---------------------------------------------------------------- Graphite

/// One HTTP request caught by [`Graphite`].
struct Request {
    head: String,
    body: String,
    json: serde_json::Value,
}

/// A Graphite events endpoint stand-in: accepts one connection and reads it to the end.
struct Graphite {
    port: u16,
    handle: JoinHandle<String>,
}

impl Graphite {
    fn listen() -> Graphite {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut text = String::new();
            stream.read_to_string(&mut text).unwrap();
            text
        });
        Graphite { port, handle }
    }

    fn request(self) -> Request {
        let text = self.handle.join().unwrap();
        let (head, body) = text
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("no end of headers in {text:?}"));
        let json = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
        Request {
            head: head.to_string(),
            body: body.to_string(),
            json,
        }
    }
}

#[test]
fn graphite_start_event_is_a_well_formed_post() {
    let graphite = Graphite::listen();
    let port = graphite.port;
    let statsd = Statsd::new("memtier", "ci run", port);
    statsd.sink.annotate_start(4, 50, 2);
    let req = graphite.request();
    assert_eq!(
        req.head,
        format!(
            "POST /events/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close",
            req.body.len()
        )
    );
    assert_eq!(
        req.body,
        r#"{"what":"Benchmark Started","tags":"memtier,start,run:ci_run","data":"threads=4 connections=50 run=2"}"#
    );
    assert_eq!(req.json["what"], "Benchmark Started");
}

#[test]
fn graphite_end_event_names_the_run() {
    let graphite = Graphite::listen();
    let statsd = Statsd::new("memtier", "default", graphite.port);
    statsd.sink.annotate_end(7);
    let req = graphite.request();
    assert_eq!(
        req.body,
        r#"{"what":"Benchmark Completed","tags":"memtier,end,run:default","data":"run=7"}"#
    );
}

#[test]
fn graphite_unreachable_is_only_a_warning() {
    // Nothing listens: the post fails at once (refused) and the call returns.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut statsd = Statsd::new("memtier", "default", port);
    let start = Instant::now();
    statsd.sink.annotate_start(1, 1, 1);
    statsd.sink.finish(1);
    // Refused at once; even two posts that each waited out the 2 s timeout stay below.
    assert!(start.elapsed() < Duration::from_secs(10));
    // The zeros still went out.
    assert_eq!(statsd.lines().len(), 5);
}

// ---------------------------------------------------------------- client stats

/// The `Latency (<= msec),Percent` rows of one `Full-Test <name> Latency` block.
fn latency_block<'a>(csv: &'a str, name: &str) -> Vec<&'a str> {
    let title = format!("\nFull-Test {name} Latency\nLatency (<= msec),Percent\n");
    let after = csv
        .split(title.as_str())
        .nth(1)
        .unwrap_or_else(|| panic!("no {name} block in:\n{csv}"));
    after.split("\n\n").next().unwrap().lines().collect()
}

#[test]
fn client_stats_files_per_client_with_rows_and_latency_blocks() {
    let dir = TestDir::new("outputs");
    let prefix = dir.file("cs").to_string_lossy().into_owned();

    // Client 0 of thread 0: 3 seconds of SETs and GETs.
    let mut a = ClientSeries::new(3);
    for second in 0..3u32 {
        for i in 0..10u64 {
            a.record(second, rows::SET, 100 + i, 60, 5);
            a.record(second, rows::GET, 200 + i, 30, 45);
        }
        a.hit(second, 7);
        a.miss(second, 3);
    }
    // Client 1 of thread 1: one GET in second 1 only.
    let mut b = ClientSeries::new(3);
    b.record(1, rows::GET, 2_500, 30, 9);
    b.miss(1, 1);

    write_files(&prefix, 2, &[(0, 0, a), (1, 1, b)], None).unwrap();
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["cs-2-0-0.csv", "cs-2-1-1.csv"]);

    let csv = fs::read_to_string(dir.file("cs-2-0-0.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "Per-Second Benchmark Data");
    assert_eq!(lines[1], PER_SECOND_HEADER);
    assert_eq!(
        PER_SECOND_HEADER,
        "Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,\
         SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,GET Total Bytes TX,\
         GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT Average Latency"
    );
    // Mean SET latency 104.5 µs -> 0.000104 s; GET 204.5 µs -> 0.000204 s.
    for (second, line) in lines[2..5].iter().enumerate() {
        assert_eq!(
            *line,
            format!("{second},10,0.000104,650,600,50,10,0.000204,750,300,450,3,7,0,0.000000")
        );
    }
    assert_eq!(lines[5], "", "one row per second, then a blank line");

    let get = latency_block(&csv, "GET");
    assert_eq!(get.first(), Some(&"   0.200,0.000"));
    assert_eq!(get.last(), Some(&"   0.209,100.000"));
    for row in &get {
        let (ms, pct) = row.split_once(',').unwrap();
        assert_eq!(ms.len(), 8, "%8.3f: {row:?}");
        assert_eq!(pct.split_once('.').unwrap().1.len(), 3, "%.3f: {row:?}");
    }
    let pcts: Vec<f64> = get
        .iter()
        .map(|r| r.split_once(',').unwrap().1.parse().unwrap())
        .collect();
    assert!(pcts.windows(2).all(|w| w[0] <= w[1]), "{pcts:?}");
    let set = latency_block(&csv, "SET");
    assert_eq!(set.first(), Some(&"   0.100,0.000"));
    assert_eq!(set.last(), Some(&"   0.109,100.000"));
    assert!(latency_block(&csv, "WAIT").is_empty());
    // Blocks come in memtier's order: GET, SET, WAIT.
    let order: Vec<usize> = ["GET", "SET", "WAIT"]
        .iter()
        .map(|n| csv.find(&format!("Full-Test {n} Latency")).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]));

    // The idle second 0 of client 1 is a row of zeros.
    let csv = fs::read_to_string(dir.file("cs-2-1-1.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[2],
        "0,0,0.000000,0,0,0,0,0.000000,0,0,0,0,0,0,0.000000"
    );
    assert_eq!(
        lines[3],
        "1,0,0.000000,0,0,0,1,0.002500,39,30,9,1,0,0,0.000000"
    );
    assert_eq!(lines[4], "");
    // 2 significant figures: 2500 µs lies in the bucket [2496, 2511].
    assert_eq!(latency_block(&csv, "GET").last(), Some(&"   2.511,100.000"));
}

#[test]
fn client_stats_unwritable_prefix_names_the_file() {
    let err = write_files(
        "/nonexistent-kvbench-dir/cs",
        1,
        &[(0, 0, ClientSeries::new(3))],
        None,
    )
    .unwrap_err();
    assert!(
        err.message()
            .starts_with("cannot write /nonexistent-kvbench-dir/cs-1-0-0.csv: "),
        "{}",
        err.message()
    );
}

// ---------------------------------------------------------------- configuration

fn config(args: &[&str]) -> Result<Settings, Error> {
    let argv: Vec<String> = std::iter::once("kvbench")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    match parse_args(argv) {
        Ok(Parsed::Run(cli)) => Settings::from_cli(&cli),
        Ok(Parsed::Print(text)) => panic!("{args:?}: expected a run, got:\n{text}"),
        Err(e) => Err(e),
    }
}

fn shown<'a>(c: &'a Settings, name: &str) -> &'a str {
    c.shown
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in shown"))
}

#[test]
fn config_statsd_defaults_and_values() {
    let c = config(&["--statsd-host=localhost"]).unwrap();
    assert_eq!(
        c.output.statsd,
        Some(StatsdConfig {
            host: "localhost".to_string(),
            port: 8125,
            prefix: "memtier".to_string(),
            run_label: "default".to_string(),
            graphite_port: 8080,
        })
    );
    let c = config(&[
        "--statsd-host",
        "stats.example",
        "--statsd-port=9125",
        "--statsd-prefix=bench.redis",
        "--statsd-run-label=nightly-1",
        "--graphite-port=80",
    ])
    .unwrap();
    assert_eq!(
        c.output.statsd,
        Some(StatsdConfig {
            host: "stats.example".to_string(),
            port: 9125,
            prefix: "bench.redis".to_string(),
            run_label: "nightly-1".to_string(),
            graphite_port: 80,
        })
    );
    // Companions without a host do nothing (a warning, as memtier ignores them).
    let c = config(&["--statsd-port=9125", "--statsd-run-label=x"]).unwrap();
    assert_eq!(c.output.statsd, None);
    assert_eq!(config(&[]).unwrap().output.statsd, None);
}

#[test]
fn config_statsd_bad_values_are_refused() {
    let long = format!("--statsd-prefix={}", "p".repeat(129));
    let cases: &[(&[&str], &str)] = &[
        (
            &["--statsd-host=localhost", "--statsd-port=0"],
            "statsd-port must be a number in the range [1-65535].",
        ),
        (
            &["--statsd-host=localhost", "--statsd-port=70000"],
            "statsd-port must be a number in the range [1-65535].",
        ),
        (
            &["--statsd-host=localhost", "--graphite-port=http"],
            "graphite-port must be a number in the range [1-65535].",
        ),
        (&["--statsd-host="], "--statsd-host needs a host name."),
        (
            &["--statsd-host=localhost", &long],
            "statsd-prefix must be at most 128 characters.",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(
            config(args).map(|_| ()),
            Err(Error::usage(*want)),
            "args {args:?}"
        );
    }
}

#[test]
fn config_client_stats_and_debug() {
    let c = config(&["--client-stats=out/cs", "-D", "-D"]).unwrap();
    assert_eq!(c.output.client_stats.as_deref(), Some("out/cs"));
    assert_eq!(c.output.debug, 2);
    assert_eq!(shown(&c, "client_stats"), "\"out/cs\"");
    assert_eq!(shown(&c, "debug"), "2");

    let c = config(&[]).unwrap();
    assert_eq!(c.output.client_stats, None);
    assert_eq!(c.output.debug, 0);
    assert_eq!(shown(&c, "client_stats"), "null");
    assert_eq!(shown(&c, "debug"), "0");

    assert_eq!(
        config(&["--client-stats="]).map(|_| ()),
        Err(Error::usage("--client-stats needs a file name prefix."))
    );
}
